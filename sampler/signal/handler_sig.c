/*
 * signal/handler_sig.c — SIGNAL PATH. Everything in sample_handler() runs in signal context on an
 * arbitrary thread: only async-signal-safe work on preallocated memory — no malloc, no locks,
 * no stdio, no JVM calls (the thread's JNIEnv comes from its registration), no thread-local
 * variables (a dlopen'ed library's TLS can allocate on first touch). errno is preserved. A
 * signal that arrives late, for a thread that has ended, or after shutdown finds its slot not
 * PENDING, or not its thread's, and returns. Everything that reads memory the thread does not
 * own (code bytes, stacks, the JVM's structures) runs under the fault guard (guard.h). The
 * build checks the undefined symbols of every *_sig.c object, wherever it lives, against an
 * allow-list (tests/sampler/check_signal_symbols.py).
 */
#include "handler.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "codecache.h"
#include "codemap.h"
#include "guard.h"
#include "hotspot.h"
#include "native.h"
#include "objects.h"
#include "platform.h"
#include "registry.h"
#include "sample.h"
#include "sample_walk.h"
#include "stubwalk.h"

/* Set up before sampling (handler_install, handler_set_hotspot); read-only in the handler. */
static struct {
  asgct_fn asgct;
  int depth;
  pid_t pid;
  _Atomic int active;
  struct handler_counters counters;
  struct hotspot_layout hotspot; /* valid once anchor_on is set */
  _Atomic int anchor_on;
  _Atomic int native_on;         /* walk native frames too */
  struct codecache_layout cache; /* the code cache's reader (handler_set_codecache) */
  _Atomic int cache_on;          /* cache is set */
  _Atomic int cache_check;       /* the map's compiled methods are checked against it */
  int sig;                       /* installed for this signal, 0 when not installed */
  struct sigaction previous;     /* what the signal did before */
} handler;

/* How far into a stub its frame record may be pushed but fp not yet set to it: the first
 * instruction pushes it (x86-64: 1 byte; aarch64: 4), the PC is then right after it. */
#define STUB_PROLOGUE_BYTES 8

/* What the handler must undo when a fault interrupts a sample: the frame anchor it rewrote,
 * the objects table it entered. */
struct undo {
  volatile uintptr_t *last_sp, *last_pc, *last_fp;
  uintptr_t sp, fp;
  int anchor;     /* the anchor is rewritten */
  int objects;    /* inside objects_enter */
  unsigned token; /* objects_enter's */
};

/* Where pc is in the code the VM generated: the code map's entry; else — code compiled since the
 * map last heard, its CompiledMethodLoad not posted yet — the nmethod HotSpot's code cache has
 * there, with its inline chain at pc (the first debug information at or after it, as the map's
 * records give it), read under guards nested in the sample's own: thread tid, the handler's
 * mask (guard.h: a fault is the innermost guard's, an -EFAULT for the read, and the sample
 * goes on). Stubs come from the map only: their names are DynamicCodeGenerated's. The
 * nmethod's code is left in r->cache_code for the sampler thread to put into the map. 1 with
 * *hit filled, else 0. */
static int code_at(uintptr_t pc, struct codemap_hit *hit, struct sample_record *r, pid_t tid,
                   uint64_t mask) {
  int mapped = codemap_lookup(pc, hit);
  if (mapped && (hit->kind != CODEMAP_NMETHOD ||
                 !atomic_load_explicit(&handler.cache_check, memory_order_relaxed)))
    return 1;
  if (!atomic_load_explicit(&handler.cache_on, memory_order_acquire)) return mapped;
  struct codecache_layout l;
  codecache_bind_to(&handler.cache, &l, tid, mask);
  struct codecache_blob b;
  int rc = codecache_find(&l, pc, &b);
  if (mapped) { /* no CompiledMethodUnload: the map's entry may be code freed since, and pc in
                   another compilation now — the map's answer is kept when the blob is its own */
    if (rc == -EFAULT ||
        (rc == 0 && b.is_nmethod && b.code_begin == hit->start &&
         (hit->compile_id <= 0 || codecache_compile_id(&l, &b) == hit->compile_id)))
      return 1;
    atomic_fetch_add_explicit(&handler.counters.code_stale, 1, memory_order_relaxed);
  }
  if (rc != 0 || !b.is_nmethod || !b.jmethod_id || pc < b.code_begin || pc >= b.code_end) return 0;
  struct codecache_frame f[CODEMAP_MAX_INLINE];
  int n = codecache_scopes(&l, &b, pc, f, CODEMAP_MAX_INLINE);
  if (n == -ENOSPC) n = CODEMAP_MAX_INLINE; /* the innermost frames, as the map cuts a chain */
  if (n == -ENOENT) n = 0;                  /* no debug information after pc: the method alone */
  if (n < 0) return 0;                      /* a table that does not read: being freed */
  for (int i = 0; i < n; i++)
    if (!f[i].jmethod_id) n = 0; /* a frame with no name yet: the map leaves such records out */
  hit->kind = CODEMAP_NMETHOD;
  hit->start = b.code_begin;
  hit->end = b.code_end;
  hit->method = (jmethodID)b.jmethod_id;
  hit->name = NULL;
  hit->name_id = 0;
  hit->frame_words = 0;
  hit->interpreter = 0;
  hit->generation = 0;
  hit->ninline = n;
  for (int i = 0; i < n; i++) {
    hit->inl_method[i] = (jmethodID)f[i].jmethod_id;
    hit->inl_bci[i] = f[i].bci;
  }
  r->cache_code = b.code_begin;
  return 1;
}

/* The JavaThread `env` lies in, when it is this very thread's: its stack holds the interrupted
 * sp `usp` and its OSThread names `tid` (a registration that went stale, or an env that is not
 * the thread's own, names a JavaThread that may be running elsewhere). Sets *hi and *size to
 * its stack's top and size. NULL otherwise, or when the anchor walk is off. */
static char *own_java_thread(JNIEnv *env, pid_t tid, uintptr_t usp, uintptr_t *hi, size_t *size) {
  if (!atomic_load_explicit(&handler.anchor_on, memory_order_acquire)) return NULL;
  const struct hotspot_layout *l = &handler.hotspot;
  char *thread = (char *)env - l->env;
  *hi = *(volatile uintptr_t *)(thread + l->stack_base);
  *size = *(volatile size_t *)(thread + l->stack_size);
  const char *os = *(const char *const volatile *)(thread + l->osthread);
  if (usp >= *hi || *hi - usp > *size || !os || *(const volatile int32_t *)(os + l->os_tid) != tid)
    return NULL;
  return thread;
}

/* The call out of Java the thread is in: its frame anchor's last Java sp (*sp) and the return
 * address below it (*ret), which together name the Java frame the call left and where in it.
 * 1 when the anchor is set and lies on the thread's stack above usp, else 0. Reads only. */
static int current_call(const char *thread, uintptr_t usp, uintptr_t hi, size_t size, uintptr_t *sp,
                        uintptr_t *ret) {
  const struct hotspot_layout *l = &handler.hotspot;
  *sp = *(volatile uintptr_t *)(thread + l->anchor + l->last_sp);
  if (!*sp || *sp % sizeof(uintptr_t) || *sp <= usp || *sp > hi || hi - *sp > size) return 0;
  *ret = ((const volatile uintptr_t *)*sp)[-1];
  return 1;
}

/* AsyncGetCallTrace answered -3 (unknown not Java): the thread may be running VM code that
 * Java called — then its frame anchor has the last Java sp but no pc (see hotspot.h). The
 * handler fills the pc in as the VM itself would (the return address at sp[-1], which must
 * lie in code the VM generated), walks, and puts the anchor back as it was. When that last
 * frame is a runtime stub (an allocation slow path of C1/C2 code), AsyncGetCallTrace cannot
 * walk it (HotSpot deems a stub's frame never complete), so the anchor is set one frame
 * further, to the compiled caller: its sp is the stub's sp plus the stub's fixed frame size,
 * its pc and saved fp the two words below that. Every word read lies on this thread's stack
 * above the interrupted sp. The thread is in the VM and interrupted by us, so nobody else
 * reads or writes its anchor meanwhile (a safepoint or handshake waits for a thread in the
 * VM). The same holds in _thread_in_vm_trans, where the thread leaves the call (its
 * transition back to Java polls for a safepoint; the anchor stands until the call returns,
 * and a safepoint or handshake counts such a thread as running and waits for it).
 * The anchor is touched only when `env` is this very thread's (own_java_thread: else the
 * handler would write into another thread's anchor while that thread runs); a refusal is
 * counted. Returns 1 when the walk gave frames; r->walk->hit is then where the VM call returns to. */
static int walk_from_anchor(struct sample_record *r, const ucontext_t *uc, JNIEnv *env, pid_t tid,
                            uint64_t mask, volatile struct undo *u) {
  if (!atomic_load_explicit(&handler.anchor_on, memory_order_acquire)) return 0;
  const struct hotspot_layout *l = &handler.hotspot;
  char *thread = (char *)env - l->env;
  int state = *(volatile int *)(thread + l->state);
  if (state != l->in_vm && (state != l->in_vm_trans || l->in_vm_trans < 0)) return 0;
  uintptr_t hi, usp = plat_uc_sp(uc);
  size_t size;
  if (!own_java_thread(env, tid, usp, &hi, &size)) {
    atomic_fetch_add_explicit(&handler.counters.anchor_refused, 1, memory_order_relaxed);
    return 0;
  }
  volatile uintptr_t *last_sp = (volatile uintptr_t *)(thread + l->anchor + l->last_sp);
  volatile uintptr_t *last_pc = (volatile uintptr_t *)(thread + l->anchor + l->last_pc);
  volatile uintptr_t *last_fp =
      l->last_fp >= 0 ? (volatile uintptr_t *)(thread + l->anchor + l->last_fp) : NULL;
  uintptr_t sp = *last_sp;
  /* an older frame than the interrupted one, on this thread's stack */
  if (!sp || *last_pc || sp % sizeof(uintptr_t) || sp <= usp || sp > hi || hi - sp > size) return 0;
  uintptr_t pc = ((const uintptr_t *)sp)[-1], fp = last_fp ? *last_fp : 0;
  if (!code_at(pc, &r->walk->hit, r, tid, mask)) return 0;
  uintptr_t walk_sp = sp, walk_pc = pc, walk_fp = fp;
  if (r->walk->hit.kind == CODEMAP_STUB && r->walk->hit.frame_words > 0) {
    struct codemap_hit caller;
    walk_sp = sp + (uintptr_t)r->walk->hit.frame_words * sizeof(uintptr_t);
    if (!last_fp || walk_sp > hi) return 0;
    walk_pc = ((const uintptr_t *)walk_sp)[-1];
    walk_fp = ((const uintptr_t *)walk_sp)[-2];
    if (!code_at(walk_pc, &caller, r, tid, mask) || caller.kind != CODEMAP_NMETHOD) return 0;
  }
  u->last_sp = last_sp;
  u->last_pc = last_pc;
  u->last_fp = last_fp;
  u->sp = sp;
  u->fp = fp;
  atomic_signal_fence(memory_order_seq_cst);
  u->anchor = 1;
  if (last_fp) *last_fp = walk_fp;
  *last_sp = walk_sp;
  *last_pc = walk_pc;
  atomic_signal_fence(memory_order_seq_cst);
  asgct_trace trace = {env, 0, r->walk->frames};
  handler.asgct(&trace, handler.depth, (void *)uc);
  atomic_signal_fence(memory_order_seq_cst);
  *last_pc = 0;
  *last_sp = sp;
  if (last_fp) *last_fp = fp;
  atomic_signal_fence(memory_order_seq_cst);
  u->anchor = 0;
  if (trace.num_frames <= 0) return 0;
  r->num_frames = trace.num_frames;
  r->pc = walk_pc;
  r->recovered = RECOVERY_ANCHOR;
  return 1;
}

/* AsyncGetCallTrace walked a thread outside Java code from its frame anchor, and the anchor's
 * last frame is a runtime stub whose frame stubwalk made walkable (for allocation samples,
 * stubwalk.h): the walk described the stub's compiled caller by the next debug information after
 * its return address, not by the call (forte.cpp) — another bci, often another inline chain.
 * The allocation callback corrects that; the handler cannot (the call site's chain is decoded
 * and kept under a lock). Returns 1 then: the sample stays what it was before the stub was
 * changed, not walkable (-4). Reads only. */
static int under_changed_stub(const struct thread_slot *s, const ucontext_t *uc) {
  if (!stubwalk_any()) return 0; /* no allocation run has decided a stub: nothing to read */
  uintptr_t hi, sp, ret, usp = plat_uc_sp(uc);
  size_t size;
  const char *thread = own_java_thread(s->env, s->tid, usp, &hi, &size);
  const struct hotspot_layout *l = &handler.hotspot;
  if (!thread || (l->in_java >= 0 && *(const volatile int *)(thread + l->state) == l->in_java))
    return 0;
  return current_call(thread, usp, hi, size, &sp, &ret) && stubwalk_changed_at(ret);
}

/* AsyncGetCallTrace failed for slot s at uc: find where the PC is (the compiled-code map);
 * if it is a stub or intrinsic, find its Java caller and walk from there. The caller is tried
 * three ways: as if the stub had set up no frame (return address at sp / in lr); through a
 * frame record at fp ([fp] saved fp, [fp+8] return address); and, in a stub's first
 * instructions only, through a frame record at sp: HotSpot's stubs begin by pushing one
 * (enter(): x86-64 `push rbp`, aarch64 `stp x29, x30, [sp, #-16]!`) and set fp to it one
 * instruction later — a PC between the two finds the caller's return address at sp+8, not at
 * sp nor at fp. The records are read only when they lie in the thread's known stack, or in
 * the page of sp. */
static void recover(struct sample_record *r, const struct thread_slot *s, const ucontext_t *uc,
                    JNIEnv *env, uint64_t mask, volatile struct undo *u) {
  r->fail_code = r->num_frames;
  if (r->num_frames == ASGCT_UNKNOWN_NOT_JAVA) {
    if (walk_from_anchor(r, uc, env, s->tid, mask, u)) return;
    r->walk->hit.kind = CODEMAP_NONE; /* what the anchor pointed at is not where the PC is */
  }
  if (!code_at(plat_uc_pc(uc), &r->walk->hit, r, s->tid, mask) || r->walk->hit.kind != CODEMAP_STUB)
    return;
  uintptr_t sp = plat_uc_sp(uc), fp = plat_uc_fp(uc);
  uintptr_t hi =
      s->stack_hi && sp >= s->stack_lo && sp < s->stack_hi ? s->stack_hi : (sp | 4095) + 1;
  struct {
    uintptr_t pc, sp, fp;
  } cand[3];
  int n = 0;
  cand[n].pc = plat_uc_leaf_return(uc, &cand[n].sp);
  cand[n].fp = fp;
  n++;
  uintptr_t rec[2] = {fp, sp}; /* frame records: at fp; at sp in the prologue */
  uintptr_t into = plat_uc_pc(uc) - r->walk->hit.start;
  int nrec = into > 0 && into <= STUB_PROLOGUE_BYTES ? 2 : 1;
  for (int k = 0; k < nrec; k++) {
    uintptr_t at = rec[k];
    if (at < sp || at % sizeof(uintptr_t) || at + 2 * sizeof(uintptr_t) > hi) continue;
    cand[n].pc = ((const uintptr_t *)at)[1];
    cand[n].sp = at + 2 * sizeof(uintptr_t);
    cand[n].fp = ((const uintptr_t *)at)[0];
    n++;
  }
  /* aarch64: a stub that has pushed its frame record (stp x29, x30) still holds the return
   * address in lr, and the leaf candidate pairs it with the stub's own sp — the caller's frame
   * would be walked twice (Scenarios.trig;Scenarios.trig;libmDsin). The record that saved the
   * same return address has the caller's sp. */
  for (int k = 1; k < n; k++)
    if (cand[k].pc == cand[0].pc && cand[k].sp > cand[0].sp) {
      cand[0] = cand[k];
      break;
    }
  ucontext_t copy = *uc;
  for (int i = 0; i < n; i++) {
    struct codemap_hit caller;
    if (!code_at(cand[i].pc, &caller, r, s->tid, mask)) continue; /* not code the VM made */
    plat_uc_set_frame(&copy, cand[i].pc, cand[i].sp, cand[i].fp);
    asgct_trace trace = {env, 0, r->walk->frames};
    handler.asgct(&trace, handler.depth, &copy);
    if (trace.num_frames > 0) {
      r->num_frames = trace.num_frames;
      r->pc = cand[i].pc;
      r->recovered = RECOVERY_STUB_CALLER;
      return;
    }
  }
}

/* The thread runs native code that Java code called without leaving Java (a leaf call from
 * compiled code: no frame anchor, the thread stays _thread_in_Java — HotSpot's C math routines
 * on aarch64, GC barriers' slow paths; or a VM call on its way back, already _thread_in_Java
 * in its epilogue). AsyncGetCallTrace starts from the native registers and, where that code
 * keeps no frame record, reaches Java through a stale frame pointer: it fails, or skips the
 * Java caller (aarch64's Math.log: samples in __ieee754_log lost the compiled method that
 * called it). The native walk ended at that caller's return address, with its sp and fp
 * (end): when that is compiled code whose method is not the walk's first frame, or the
 * interpreter and the walk failed, walk again from it. A failed second walk after a first
 * that gave frames may have written over them: the sample is then attributed to the compiled
 * code (r->walk->hit) like any failed walk there; after a failed first walk it stays as it was.
 * Reads the thread (state, stack bounds) only. */
static void walk_from_native_caller(struct sample_record *r, const struct thread_slot *s,
                                    const ucontext_t *uc, const struct native_end *end,
                                    uint64_t mask) {
  if (r->nnative <= 0 || end->stop != NATIVE_STOP_UNKNOWN || !end->sp) return;
  uintptr_t hi, usp = plat_uc_sp(uc);
  size_t size;
  const char *thread = own_java_thread(s->env, s->tid, usp, &hi, &size);
  const struct hotspot_layout *l = &handler.hotspot;
  if (!thread || l->in_java < 0 || *(const volatile int *)(thread + l->state) != l->in_java ||
      end->sp < usp || end->sp >= hi)
    return;
  struct codemap_hit hit;
  if (!code_at(end->pc, &hit, r, s->tid, mask)) return;
  int before = r->num_frames;
  if (hit.kind == CODEMAP_NMETHOD) {
    jmethodID at = hit.ninline > 0 ? hit.inl_method[0] : hit.method;
    if (before > 0 && r->walk->frames[0].method_id == at) return; /* it found the caller */
  } else if (hit.kind != CODEMAP_STUB || !hit.interpreter || before > 0) {
    return;
  }
  ucontext_t copy = *uc;
  plat_uc_set_frame(&copy, end->pc, end->sp, end->fp);
  asgct_trace trace = {s->env, 0, r->walk->frames};
  handler.asgct(&trace, handler.depth, &copy);
  if (trace.num_frames <= 0 && before <= 0) return;
  r->fail_code = before;
  r->num_frames = trace.num_frames;
  r->pc = end->pc;
  r->walk->hit = hit;
  r->recovered = trace.num_frames > 0 ? RECOVERY_NATIVE_CALLER : RECOVERY_NONE;
}

/* Keeps the walk just taken as the one of the call out of Java the thread is in (its frames
 * stay in r->walk->frames until a later walk writes there), or forgets the last one: a walk that
 * failed may have written part of r->walk->frames. */
static void remember_call(struct sample_record *r, const struct thread_slot *s,
                          const ucontext_t *uc) {
  uintptr_t hi, sp, ret, usp = plat_uc_sp(uc);
  size_t size;
  const char *thread = r->num_frames > 0 ? own_java_thread(s->env, s->tid, usp, &hi, &size) : NULL;
  if (thread && current_call(thread, usp, hi, size, &sp, &ret)) {
    r->call_sp = sp;
    r->call_ret = ret;
    r->call_pc = r->pc;
    r->call_frames = r->num_frames;
  } else {
    r->call_frames = 0;
  }
}

/* AsyncGetCallTrace answered -2 (GC active: it walks no thread while a collection runs) or -4
 * (not walkable not Java: a thread blocked in a runtime stub's VM call, whose frame it deems
 * never complete). A thread still in the call out of Java its last walk was taken in — the
 * same frame anchor: last Java sp and the return address below it, so the same Java frame at
 * the same place — has the same Java frames above it, and they are still in r->walk->frames (these
 * answers write no frame before they give up, or — a -2 for a method found invalid mid-walk —
 * the same frames). Only reads. 1 when they are given again. */
static int same_call(struct sample_record *r, const struct thread_slot *s, const ucontext_t *uc) {
  uintptr_t hi, sp, ret, usp = plat_uc_sp(uc);
  size_t size;
  if (r->call_frames <= 0 ||
      (r->num_frames != ASGCT_GC_ACTIVE && r->num_frames != ASGCT_NOT_WALKABLE_NOT_JAVA))
    return 0;
  const char *thread = own_java_thread(s->env, s->tid, usp, &hi, &size);
  if (!thread || !current_call(thread, usp, hi, size, &sp, &ret) || sp != r->call_sp ||
      ret != r->call_ret)
    return 0;
  r->fail_code = r->num_frames;
  r->num_frames = r->call_frames;
  r->pc = r->call_pc;
  r->recovered = RECOVERY_SAME_CALL;
  return 1;
}

/* The risky part of one sample, under the fault guard: the look at the interrupted
 * instruction (plat_uc_in_syscall reads code bytes, which may be execute-only), then, when the
 * sample is walked, the walks (AsyncGetCallTrace, a stack read, the native walk). A fault comes
 * back here (guard.h): in the first part the sample goes on as not in a system call; in the
 * walks the anchor and the objects table are put back as they were and the sample is kept as
 * [fault during sample] (with the native frames, when the fault came after their walk). The
 * guard is this handler's: its signal mask is the interrupted one plus `sig` (the handler's
 * sa_mask is empty), known without a system call. With no guard slot free, nothing risky runs:
 * a walk is dropped (r->dropped, counted by guard_full). Inside AsyncGetCallTrace the JVM is
 * asked first about a fault (its SafeFetch probes are its own). */
static void take_sample(struct thread_slot *s, struct sample_record *r, const ucontext_t *uc,
                        int sig) {
  volatile struct undo u = {0};
  struct native_end end = {0};
  struct guard g;
  uint64_t mask = guard_mask_of(&uc->uc_sigmask) | 1ull << (sig - 1);
  int fault = guard_enter(&g, s->tid, mask);
  if (fault == GUARD_FULL) {
    r->in_syscall = 0;
    r->dropped = r->walked;
    return;
  }
  r->in_syscall = fault ? 0 : (uint8_t)plat_uc_in_syscall(uc);
  if (!r->walked) {
    guard_leave(&g);
    return;
  }
  fault = guard_rearm(&g);
  if (!fault) {
    if (atomic_load_explicit(&handler.native_on, memory_order_relaxed)) {
      uint64_t t0 = plat_mono_ns();
      u.token = objects_enter();
      u.objects = 1;
      int n = native_walk(uc, s->stack_lo, s->stack_hi, r->native_pcs, handler.depth,
                          &r->walk->memo, &end);
      r->native_stop = end.stop;
      r->native_general = end.general;
      r->native_end_pc = end.pc;
      r->nnative = n;
      u.objects = 0;
      objects_exit(u.token);
      r->native_ns = plat_mono_ns() - t0;
    }
    if (!s->env) {
      r->num_frames = ASGCT_NOT_JAVA_THREAD;
    } else {
      /* AsyncGetCallTrace and its retries in recover(): the JVM's probes fault there */
      asgct_trace trace = {s->env, 0, r->walk->frames};
      g.vm_first = 1;
      handler.asgct(&trace, handler.depth, (void *)uc);
      r->num_frames = trace.num_frames;
      if (trace.num_frames > 0 && under_changed_stub(s, uc))
        r->num_frames = ASGCT_NOT_WALKABLE_NOT_JAVA;
      if (!same_call(r, s, uc)) {
        if (trace.num_frames <= 0) recover(r, s, uc, s->env, mask, &u);
        if (!r->recovered) walk_from_native_caller(r, s, uc, &end, mask);
        g.vm_first = 0;
        remember_call(r, s, uc);
      }
      g.vm_first = 0;
    }
  } else {
    g.vm_first = 0;
    if (u.anchor) {
      *u.last_pc = 0;
      *u.last_sp = u.sp;
      if (u.last_fp) *u.last_fp = u.fp;
    }
    if (u.objects) {
      objects_exit(u.token);
      r->native_stop = NATIVE_STOP_FAULT;
      native_walk_cut(); /* libunwind may have left a pool object behind (native.h) */
    }
    r->num_frames = ASGCT_SAMPLE_FAULT;
    r->call_frames = 0; /* the frames may be half written */
    r->recovered = RECOVERY_NONE;
    r->walk->hit.kind = CODEMAP_NONE;
  }
  guard_leave(&g);
}

static void sample_handler(int sig, siginfo_t *si, void *ucv) {
  int saved_errno = errno;
  uint64_t t0 = plat_mono_ns();
  const ucontext_t *uc = ucv;

  /* the sampler's signal, or the CPU-time timer it armed on this thread (plat_cpu_timer_*):
   * either carries the slot in its value */
  int by_timer = si->si_code == SI_TIMER;
  if (!by_timer && (si->si_code != SI_QUEUE || si->si_pid != handler.pid)) {
    atomic_fetch_add_explicit(&handler.counters.foreign, 1, memory_order_relaxed);
    goto out;
  }
  struct thread_slot *s = registry_slot(si->si_value.sival_int);
  /* A signal on another thread than the slot's — a late one, for a thread that has given its
   * slot up (ThreadEnd runs before the thread is gone) — takes nothing: the request, if any,
   * is the slot's new thread's, and its record is that thread's. */
  if (s && s->tid != plat_gettid()) {
    atomic_fetch_add_explicit(&handler.counters.wrong_tid, 1, memory_order_relaxed);
    goto out;
  }
  uint32_t w = s ? atomic_load_explicit(&s->handshake, memory_order_acquire) : 0;
  if (!s || !atomic_load_explicit(&handler.active, memory_order_relaxed) ||
      !handshake_claim(&s->handshake, w)) {
    atomic_fetch_add_explicit(&handler.counters.stray, 1, memory_order_relaxed);
    goto out;
  }

  struct sample_record *r = s->record;
  r->by_timer = (uint8_t)by_timer;
  uint64_t sum = plat_regs_checksum(uc);
  r->moved = sum != r->checksum;
  r->checksum = sum;
  r->walked = r->moved || s->mode == SAMPLE_CAPTURE;
  r->dropped = 0;
  r->walk->hit.kind = CODEMAP_NONE; /* this sample's recovery, if any, starts from nothing */
  r->recovered = RECOVERY_NONE;
  r->cache_code = 0;
  r->pc = plat_uc_pc(uc);
  r->sp = plat_uc_sp(uc);
  r->nnative = 0;
  r->native_stop = NATIVE_STOP_OFF;
  r->native_general = 0;
  r->native_end_pc = 0;
  r->native_ns = 0;
  take_sample(s, r, uc, sig);
  r->start_ns = t0;
  /* the thread's CPU clock at exit (a system call): only a capture's accounting needs it */
  r->cpu_exit = s->mode == SAMPLE_CAPTURE ? plat_self_cpu_ns() : 0;
  r->end_ns = plat_mono_ns();
  handshake_answer(&s->handshake, w);
  atomic_fetch_add_explicit(&handler.counters.acks, 1, memory_order_relaxed);
out:
  errno = saved_errno;
}

int handler_install(int sig, asgct_fn asgct, int depth) {
  struct sigaction old, sa;
  if (sigaction(sig, NULL, &old) != 0) return -errno;
  if ((old.sa_flags & SA_SIGINFO) ? old.sa_sigaction != sample_handler
                                  : (old.sa_handler != SIG_DFL && old.sa_handler != SIG_IGN))
    return -EBUSY;
  handler.asgct = asgct;
  handler.depth = depth;
  handler.pid = getpid();
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = sample_handler;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&sa.sa_mask);
  if (sigaction(sig, &sa, NULL) != 0) return -errno;
  if (!handler.sig) handler.previous = old; /* a second install (tests) keeps the first's */
  handler.sig = sig;
  return 0;
}

int handler_installed(void) {
  struct sigaction cur;
  if (!handler.sig || sigaction(handler.sig, NULL, &cur) != 0) return 0;
  return (cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == sample_handler;
}

void handler_uninstall(void) {
  if (!handler.sig) return;
  sigaction(handler.sig, &handler.previous, NULL);
  handler.sig = 0;
  atomic_store(&handler.cache_on, 0); /* set again by who installs it next */
  atomic_store(&handler.cache_check, 0);
}

void handler_set_hotspot(const struct hotspot_layout *l) {
  handler.hotspot = *l;
  atomic_store_explicit(&handler.anchor_on, 1, memory_order_release);
}

void handler_set_native(int on) { atomic_store(&handler.native_on, on); }

void handler_set_codecache(const struct codecache_layout *l) {
  atomic_store(&handler.cache_on, 0);
  if (!l || l->scopes_why || !l->read || !l->mask) return;
  handler.cache = *l; /* before sampling: no handler reads it meanwhile */
  atomic_store_explicit(&handler.cache_on, 1, memory_order_release);
}

void handler_check_code(int on) { atomic_store(&handler.cache_check, on); }

void handler_set_active(int on) { atomic_store(&handler.active, on); }

const struct handler_counters *handler_counters(void) { return &handler.counters; }
