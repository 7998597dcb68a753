/*
 * stubwalk.c — marks the runtime stub at the top of a thread's frame anchor complete for
 * HotSpot's profiling walkers (see stubwalk.h), so that an allocation sample's stack comes
 * from AsyncGetCallTrace instead of JVMTI's GetStackTrace.
 *
 * Why the claim is true. HotSpot's C2 (PhaseOutput::install_stub) and C1 (Runtime1::
 * generate_blob) create their runtime stubs with _frame_complete_offset = frame_never_safe (-1):
 * "never safe for profile stack walking", a blanket answer, not a statement about any pc. The
 * pc we claim from is the return address of the stub's call into the VM that the VM itself
 * left in the thread's anchor: the VM's own walks (GC roots, deoptimization, exceptions,
 * GetStackTrace) treat the stub's frame at that pc as complete — _frame_size words, with an oop
 * map at that pc (C1 stubs: the saved registers that hold oops). From there to the stub's
 * epilogue the frame stays as built; pcs before it (the prologue, which builds the frame) stay
 * "not complete": we claim pc - code_begin, not 0. One claim per stub, lowered only to an earlier
 * return address of a later sample (a stub with several calls into the VM).
 *
 * What reads the field (HotSpot 17–25 sources): CodeBlob::is_frame_complete_at, asked by
 * frame::safe_for_sender (AsyncGetCallTrace's walk, forte.cpp; JFR's sampler on 17/21,
 * jfrGetCallTrace.cpp; pd_get_top_frame_for_profiling; the error reporter's stack printing) and,
 * for nmethods only, by the stack-banging and entry-barrier code. GC, safepoints and
 * deoptimization never read it: they walk from the anchor with frame::sender and the oop maps,
 * whatever the field says — the store changes no frame, no anchor, no oop. JFR 25's CPU-time
 * sampler asserts (debug builds) that a request it built is not never-safe and, with a stub's pc
 * (not an nmethod), walks from the thread's anchor at its next safepoint anyway.
 *
 * What a walker on another thread might now get wrong: a thread interrupted (a signal, in Java
 * state) in the stub's epilogue after the VM call returned — the few instructions that pop the
 * frame before `ret` — is "complete" there too, and safe_for_sender computes the sender from
 * the frame size: it reads a word of the caller's frame as the return address; every read is
 * checked against the thread's stack and the sender must be a compiled method's code, or the
 * walk is refused. The same holds for every nmethod's epilogue (its frame-complete offset has
 * no end either): a wrong stack for a sample landing there, as AsyncGetCallTrace already risks
 * for compiled code, never a fault. Before the change such samples failed (-4/-5) and were
 * attributed to the stub by the code map. And a walker that reaches the stub's compiled caller
 * through the stub (AsyncGetCallTrace on a thread outside Java code, from its anchor) describes
 * it by the next debug information after the return address (forte.cpp
 * is_decipherable_compiled_frame: the frame is not the anchor's, so its pc is taken as a random
 * one): stubwalk_exact_top corrects that for our callback; our signal handler keeps such samples
 * not walkable, as before (stubwalk_changed_at); another AsyncGetCallTrace user gets those
 * frames where it got -4.
 *
 * Why not move the anchor (as the signal handler's walk_from_anchor does for a thread in the
 * VM): this thread is _thread_in_native here, so a safepoint or GC proceeds beside it and walks
 * its stack from that anchor — moved, it would skip the stub's frame and its oops.
 *
 * The store: the field is 4 (JDK 17, 21) or 2 (JDK 25) bytes, aligned; a same-bytes write
 * through the kernel first proves the page writable (a JVM that mapped its code W^X refuses
 * it: then nothing is changed), then one atomic aligned store, so a concurrent reader sees the
 * old value or the new, never a torn one. Runtime stubs live until the JVM exits.
 */
#include "stubwalk.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <string.h>

#include "codecache.h"
#include "hotspot.h"
#include "platform.h"
#include "stubwalk_internal.h"

/* The table (stubwalk_internal.h) is written under this mutex. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic uint64_t changed;

/* The return address at the top of the anchor of the thread at java_thread (its
 * _last_Java_pc, or the word below _last_Java_sp when that is 0), and the anchor's sp. 0 when
 * there is none. Only for the calling thread's own anchor, held still while it runs a JVMTI
 * callback: the word below its sp is in a live frame of its own stack (a plain load). */
static uintptr_t anchor_top(const struct hotspot_layout *l, const void *java_thread,
                            uintptr_t *sp) {
  const char *anchor = (const char *)java_thread + l->anchor;
  uintptr_t pc;
  memcpy(sp, anchor + l->last_sp, sizeof *sp);
  memcpy(&pc, anchor + l->last_pc, sizeof pc);
  if (!pc && *sp && *sp % sizeof(uintptr_t) == 0) pc = ((const uintptr_t *)*sp)[-1];
  return *sp ? pc : 0;
}

/* The blob of code that holds pc: a table entry, or a new one (the code cache read; a blob
 * that is not to be changed is remembered with header 0). Index, or -1 (not in a blob, the
 * table full). the mutex held. */
static int blob_of(const struct hotspot_layout *l, const struct codecache_layout *cc,
                   uintptr_t pc) {
  int i = stubwalk_entry_at(pc);
  if (i >= 0) return i;
  struct codecache_blob b;
  i = atomic_load(&stubwalk_table.n);
  if (i == STUBWALK_MAX || codecache_find(cc, pc, &b) != 0) return -1;
  /* a frame of fixed size: runtime stubs (and the VM's singleton blobs, whose completeness
   * safe_for_sender does not ask); not an nmethod, nor a buffer or adapter blob (no frame) */
  int32_t frame = 0;
  if (b.is_nmethod || l->blob_frame_size < 0 ||
      plat_read_memory(b.blob + (uintptr_t)l->blob_frame_size, &frame, sizeof frame) != 0 ||
      frame <= 0 || frame > 4096)
    b.blob = 0;
  stubwalk_table.seen[i].begin = b.code_begin;
  stubwalk_table.seen[i].end = b.code_end;
  stubwalk_table.seen[i].header = b.blob;
  stubwalk_table.seen[i].frame_words = frame;
  atomic_store(&stubwalk_table.seen[i].ours, -1);
  atomic_store_explicit(&stubwalk_table.n, i + 1, memory_order_release);
  return i;
}

int stubwalk_complete_top(const struct hotspot_layout *l, const struct codecache_layout *cc,
                          const void *java_thread) {
  if (!java_thread || !cc || l->blob_frame_complete < 0) return 0;
  uintptr_t sp, pc = anchor_top(l, java_thread, &sp);
  if (!pc) return 0;
  int rc = 0;
  pthread_mutex_lock(&lock);
  int i = blob_of(l, cc, pc);
  int32_t ours = i < 0 ? -1 : atomic_load(&stubwalk_table.seen[i].ours);
  if (i < 0 || !stubwalk_table.seen[i].header ||
      (ours >= 0 && pc - stubwalk_table.seen[i].begin >= (uintptr_t)ours))
    goto out;
  int r = hotspot_blob_complete_from(l, stubwalk_table.seen[i].header, stubwalk_table.seen[i].begin,
                                     stubwalk_table.seen[i].end - stubwalk_table.seen[i].begin, pc,
                                     ours);
  if (r == 1) {
    if (ours < 0) atomic_fetch_add(&changed, 1);
    atomic_store(&stubwalk_table.seen[i].ours, (int32_t)(pc - stubwalk_table.seen[i].begin));
    rc = 1;
  } else if (r < 0 && r != -EINVAL) {
    stubwalk_table.seen[i].header =
        0; /* HotSpot's own offset, or not writable: left as it is for good */
  }
out:
  pthread_mutex_unlock(&lock);
  return rc;
}

/* The inline chains of a compiled caller at a stub call's return address ret: as
 * AsyncGetCallTrace describes it (near: the debug information after ret) and as the call's own
 * (exact), for the nmethod at blob of compilation compile_id. Kept per ret (the nmethod
 * decoded once, not at every sample), checked at each use: the same nmethod (its compile id,
 * compile_id() below) and the walk's frames equal to near. */
struct chains {
  uintptr_t ret, blob;
  int32_t compile_id;
  int nn, ne; /* nn 0: no debug information after ret */
  struct codecache_frame near[STUBWALK_INLINE], exact[STUBWALK_INLINE];
};

#define STUBWALK_CHAINS 64 /* call sites kept, direct-mapped by ret */

static struct {
  pthread_mutex_t lock;
  struct chains at[STUBWALK_CHAINS];
} cache = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* The calling thread's id and signal mask, asked once per thread for the code cache's guarded
 * reads (a JVMTI callback's thread keeps its mask; a fault under another mask would go to the
 * JVM, and none is expected: the blob read is an nmethod's header seen live before). */
static __thread pid_t own_tid;
static __thread uint64_t own_mask;

/* The compile id of the nmethod whose header is at blob, or -1: a plain copy under the fault
 * guard when cc has one (codecache.h), else through the kernel (a system call: several µs
 * here, as much as the walk). */
static int32_t compile_id(const struct hotspot_layout *l, const struct codecache_layout *cc,
                          uintptr_t blob) {
  int32_t id;
  if (l->nm_compile_id < 0) return -1;
  const void *at = (const void *)(blob + (uintptr_t)l->nm_compile_id);
  if (cc->read && cc->mask) {
    if (!own_tid) {
      own_tid = plat_gettid();
      own_mask = cc->mask();
    }
    int rc = cc->read(&id, at, sizeof id, own_tid, own_mask);
    if (rc == 0) return id;
    if (rc == -EFAULT) return -1;
  }
  return plat_read_memory((uintptr_t)at, &id, sizeof id) == 0 ? id : -1;
}

/* Fills *c for ret from the code cache. 0; 1 when ret is not in an nmethod (nothing to
 * correct); -1 when it cannot be read. */
static int decode(const struct hotspot_layout *l, const struct codecache_layout *cc, uintptr_t ret,
                  struct chains *c) {
  struct codecache_layout own; /* bound once for the reads below (codecache_bind) */
  codecache_bind(cc, &own);
  struct codecache_blob b;
  if (codecache_find(&own, ret, &b) != 0) return -1;
  if (!b.is_nmethod) return 1; /* the interpreter: walked from its own bcp */
  c->ret = ret;
  c->blob = b.blob;
  c->compile_id = compile_id(l, cc, b.blob);
  c->nn = codecache_scopes(&own, &b, ret + 1, c->near, STUBWALK_INLINE);
  c->ne = codecache_scopes(&own, &b, ret, c->exact, STUBWALK_INLINE);
  /* no debug information after ret (the call is the nmethod's last): AsyncGetCallTrace finds
   * none near, and describes the frame by its own pc's — the call's chain, checked as such */
  if (c->nn == -ENOENT) c->nn = 0;
  if (c->compile_id < 0 || c->nn < 0 || c->ne <= 0) return -1;
  for (int k = 0; k < c->ne; k++)
    if (!c->exact[k].jmethod_id) return -1;
  return 0;
}

/* frames[0..n) with the walk's top chain c->near replaced by the call's own, c->exact (up to
 * depth frames); returns the new count, or -1 when the walk's top frames are not c->near. */
static int exact_frames(const struct chains *c, struct stubwalk_frame *frames, int n, int depth) {
  /* the walk's top frames must be the chain AsyncGetCallTrace was to find: the near one, or
   * the call's own when there is none */
  int nn = c->nn ? c->nn : c->ne;
  const struct codecache_frame *want = c->nn ? c->near : c->exact;
  if (nn > n) return -1;
  for (int k = 0; k < nn; k++)
    if (frames[k].method != want[k].jmethod_id || frames[k].bci != want[k].bci) return -1;
  /* the callers below the nmethod's chain stay; its chain becomes the call's own */
  int ne = c->ne < depth ? c->ne : depth, rest = n - nn,
      keep = depth - ne < rest ? depth - ne : rest;
  memmove(frames + ne, frames + nn, (size_t)keep * sizeof *frames);
  for (int k = 0; k < ne; k++)
    frames[k] = (struct stubwalk_frame){.method = c->exact[k].jmethod_id, .bci = c->exact[k].bci};
  return ne + keep;
}

int stubwalk_exact_top(const struct hotspot_layout *l, const struct codecache_layout *cc,
                       const void *java_thread, struct stubwalk_frame *frames, int n, int depth) {
  if (!java_thread || !cc || atomic_load_explicit(&stubwalk_table.n, memory_order_acquire) == 0)
    return n;
  uintptr_t sp, pc = anchor_top(l, java_thread, &sp);
  int i = pc ? stubwalk_entry_at(pc) : -1;
  if (i < 0 || atomic_load(&stubwalk_table.seen[i].ours) < 0)
    return n; /* not through a stub of ours */
  /* the stub's caller, as HotSpot finds it: the return address at the top of the stub's frame
   * (the stub's live frame on this thread's own stack: a plain load) */
  uintptr_t ret = ((const uintptr_t *)sp)[stubwalk_table.seen[i].frame_words - 1];
  struct chains *slot = &cache.at[(ret >> 2) % STUBWALK_CHAINS];
  /* a hit is used in place, under the lock (not copied out: the chains are ~800 bytes), once
   * its nmethod is seen to be the same (a guarded read of its compile id: a fault is contained
   * there, and the lock let go as always) */
  pthread_mutex_lock(&cache.lock);
  int m = slot->ret == ret && compile_id(l, cc, slot->blob) == slot->compile_id
              ? exact_frames(slot, frames, n, depth)
              : -2; /* not kept, or another nmethod now: decoded below */
  pthread_mutex_unlock(&cache.lock);
  if (m != -2) return m;
  struct chains c;
  int rc = decode(l, cc, ret, &c);
  if (rc) return rc > 0 ? n : -1;
  pthread_mutex_lock(&cache.lock);
  *slot = c;
  pthread_mutex_unlock(&cache.lock);
  return exact_frames(&c, frames, n, depth);
}

uint64_t stubwalk_changed(void) { return atomic_load(&changed); }
