/*
 * handler.c — SIGNAL HANDLER CODE. Everything in sample_handler() runs in signal context on
 * an arbitrary Java thread: only async-signal-safe work on preallocated memory — no malloc,
 * no locks, no stdio, no JVMTI, no thread-local variables (a dlopen'ed library's TLS can
 * allocate on first touch). errno is preserved. A signal that arrives late, for a thread that
 * has ended, or after shutdown finds its slot not PENDING and returns.
 */
#include "handler.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "codemap.h"
#include "platform.h"
#include "registry.h"

static struct {
  asgct_fn asgct;
  JavaVM *vm;
  pid_t pid;
  _Atomic int active;
  struct handler_counters counters;
} hs;

/* AsyncGetCallTrace failed for slot s at uc: find where the PC is (the compiled-code map);
 * if it is a stub or intrinsic, find its Java caller and walk from there. The caller is tried
 * two ways: as if the stub had set up no frame (return address at sp / in lr), and through a
 * frame record at fp ([fp] saved fp, [fp+8] return address) — the latter only when the record
 * lies in the thread's known stack, or in the page of sp. */
static void recover(struct reg_slot *s, const ucontext_t *uc, JNIEnv *env) {
  s->fail_code = s->num_frames;
  if (!codemap_lookup(plat_uc_pc(uc), &s->hit) || s->hit.kind != CODEMAP_STUB) return;
  uintptr_t sp = plat_uc_sp(uc), fp = plat_uc_fp(uc);
  uintptr_t hi = s->stack_hi && sp >= s->stack_lo && sp < s->stack_hi ? s->stack_hi : (sp | 4095) + 1;
  struct {
    uintptr_t pc, sp, fp;
  } cand[2];
  int n = 0;
  cand[n].pc = plat_uc_leaf_return(uc, &cand[n].sp);
  cand[n].fp = fp;
  n++;
  if (fp >= sp && fp % sizeof(uintptr_t) == 0 && fp + 2 * sizeof(uintptr_t) <= hi) {
    cand[n].pc = ((const uintptr_t *)fp)[1];
    cand[n].sp = fp + 2 * sizeof(uintptr_t);
    cand[n].fp = ((const uintptr_t *)fp)[0];
    n++;
  }
  ucontext_t copy = *uc;
  for (int i = 0; i < n; i++) {
    struct codemap_hit caller;
    if (!codemap_lookup(cand[i].pc, &caller)) continue; /* not code the VM generated */
    plat_uc_set_frame(&copy, cand[i].pc, cand[i].sp, cand[i].fp);
    asgct_trace trace = {env, 0, s->frames};
    hs.asgct(&trace, registry_depth(), &copy);
    if (trace.num_frames > 0) {
      s->num_frames = trace.num_frames;
      s->pc = cand[i].pc;
      s->recovered = 1;
      return;
    }
  }
}

static void sample_handler(int sig, siginfo_t *si, void *ucv) {
  (void)sig;
  int saved_errno = errno;
  uint64_t t0 = plat_mono_ns();
  const ucontext_t *uc = ucv;

  if (si->si_code != SI_QUEUE || si->si_pid != hs.pid) {
    atomic_fetch_add_explicit(&hs.counters.foreign, 1, memory_order_relaxed);
    goto out;
  }
  struct reg_slot *s = registry_slot(si->si_value.sival_int);
  uint32_t w = s ? atomic_load_explicit(&s->req, memory_order_acquire) : 0;
  if (!s || !atomic_load_explicit(&hs.active, memory_order_relaxed) || REQ_STATE(w) != REQ_PENDING ||
      !atomic_compare_exchange_strong(&s->req, &w, (REQ_SEQ(w) << 3) | REQ_BUSY)) {
    atomic_fetch_add_explicit(&hs.counters.stray, 1, memory_order_relaxed);
    goto out;
  }

  s->wrong_thread = s->tid != plat_gettid();
  if (s->wrong_thread) { /* cannot happen while slots are locked around signals; be safe */
    atomic_fetch_add_explicit(&hs.counters.wrong_tid, 1, memory_order_relaxed);
    s->walked = 0;
    s->moved = 0;
    s->num_frames = ASGCT_THREAD_EXIT;
  } else {
    uint64_t sum = plat_regs_checksum(uc);
    int moved = sum != s->checksum;
    s->moved = moved;
    s->checksum = sum;
    s->in_syscall = plat_uc_in_syscall(uc);
    s->walked = moved || s->mode == REQ_CAPTURE;
    s->hit.kind = CODEMAP_NONE; /* this sample's recovery, if any, starts from nothing */
    s->recovered = 0;
    s->pc = plat_uc_pc(uc);
    if (s->walked) {
      JNIEnv *env = NULL;
      if ((*hs.vm)->GetEnv(hs.vm, (void **)&env, JNI_VERSION_1_6) != JNI_OK || !env) {
        s->num_frames = ASGCT_NOT_JAVA_THREAD;
      } else {
        asgct_trace trace = {env, 0, s->frames};
        hs.asgct(&trace, registry_depth(), (void *)uc);
        s->num_frames = trace.num_frames;
        if (trace.num_frames <= 0) recover(s, uc, env);
      }
    }
  }
  s->start_ns = t0;
  s->cpu_exit = plat_self_cpu_ns();
  s->end_ns = plat_mono_ns();
  atomic_store_explicit(&s->req, (REQ_SEQ(w) << 3) | REQ_DONE, memory_order_release);
  atomic_fetch_add_explicit(&hs.counters.acks, 1, memory_order_relaxed);
out:
  errno = saved_errno;
}

int handler_install(int sig, asgct_fn asgct, JavaVM *vm) {
  struct sigaction old, sa;
  if (sigaction(sig, NULL, &old) != 0) return -errno;
  if ((old.sa_flags & SA_SIGINFO) ? old.sa_sigaction != sample_handler
                                  : (old.sa_handler != SIG_DFL && old.sa_handler != SIG_IGN))
    return -EBUSY;
  hs.asgct = asgct;
  hs.vm = vm;
  hs.pid = getpid();
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = sample_handler;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&sa.sa_mask);
  if (sigaction(sig, &sa, NULL) != 0) return -errno;
  return 0;
}

void handler_set_active(int on) { atomic_store(&hs.active, on); }

const struct handler_counters *handler_counters(void) { return &hs.counters; }
