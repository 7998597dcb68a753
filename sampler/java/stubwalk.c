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
 * attributed to the stub by the code map.
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

#define STUBWALK_MAX 128 /* stubs decided; allocation paths use a handful */

static struct {
  pthread_mutex_t lock;
  int n;
  struct {
    uintptr_t begin, end; /* the stub's code */
    uintptr_t header;     /* its blob, 0: not to be changed */
    int32_t ours;         /* the offset we wrote, -1: none */
  } seen[STUBWALK_MAX];
  _Atomic uint64_t changed;
} sw = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* The blob of code that holds pc: a table entry, or a new one (the code cache read; a blob
 * that is not to be changed is remembered with header 0). Index, or -1 (not in a blob, the
 * table full). sw.lock held. */
static int blob_of(const struct hotspot_layout *l, const struct codecache_layout *cc,
                   uintptr_t pc) {
  for (int i = 0; i < sw.n; i++)
    if (pc >= sw.seen[i].begin && pc < sw.seen[i].end) return i;
  struct codecache_blob b;
  if (sw.n == STUBWALK_MAX || codecache_find(cc, pc, &b) != 0) return -1;
  /* a frame of fixed size: runtime stubs (and the VM's singleton blobs, whose completeness
   * safe_for_sender does not ask); not an nmethod, nor a buffer or adapter blob (no frame) */
  int32_t frame = 0;
  if (b.is_nmethod || l->blob_frame_size < 0 ||
      plat_read_memory(b.blob + (uintptr_t)l->blob_frame_size, &frame, sizeof frame) != 0 ||
      frame <= 0 || frame > 4096)
    b.blob = 0;
  int i = sw.n++;
  sw.seen[i].begin = b.code_begin;
  sw.seen[i].end = b.code_end;
  sw.seen[i].header = b.blob;
  sw.seen[i].ours = -1;
  return i;
}

int stubwalk_complete_top(const struct hotspot_layout *l, const struct codecache_layout *cc,
                          const void *java_thread) {
  if (!java_thread || !cc || l->blob_frame_complete < 0) return 0;
  const char *anchor = (const char *)java_thread + l->anchor;
  uintptr_t sp, pc;
  memcpy(&sp, anchor + l->last_sp, sizeof sp);
  memcpy(&pc, anchor + l->last_pc, sizeof pc);
  /* the word below the anchor's sp: this thread's own stack, its frame held still while the
   * thread runs this callback */
  if (!pc && sp && sp % sizeof(uintptr_t) == 0 &&
      plat_read_memory(sp - sizeof pc, &pc, sizeof pc) != 0)
    return 0;
  if (!pc) return 0;
  int rc = 0;
  pthread_mutex_lock(&sw.lock);
  int i = blob_of(l, cc, pc);
  if (i < 0 || !sw.seen[i].header ||
      (sw.seen[i].ours >= 0 && pc - sw.seen[i].begin >= (uintptr_t)sw.seen[i].ours))
    goto out;
  int r = hotspot_blob_complete_from(l, sw.seen[i].header, sw.seen[i].begin,
                                     sw.seen[i].end - sw.seen[i].begin, pc, sw.seen[i].ours);
  if (r == 1) {
    if (sw.seen[i].ours < 0) atomic_fetch_add(&sw.changed, 1);
    sw.seen[i].ours = (int32_t)(pc - sw.seen[i].begin);
    rc = 1;
  } else if (r < 0 && r != -EINVAL) {
    sw.seen[i].header = 0; /* HotSpot's own offset, or not writable: left as it is for good */
  }
out:
  pthread_mutex_unlock(&sw.lock);
  return rc;
}

uint64_t stubwalk_changed(void) { return atomic_load(&sw.changed); }
