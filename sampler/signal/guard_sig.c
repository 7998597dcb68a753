/*
 * signal/guard_sig.c — SIGNAL PATH: the fault handler and the guard table (see guard.h). The fault
 * handler runs for every SIGSEGV/SIGBUS of the process — the JVM raises them on purpose (its
 * implicit null checks, its stack banging, SafeFetch) — so the common case costs one atomic
 * load before the JVM's handler is called with the same arguments. The table holds each
 * guard's thread id beside its pointer: the fault handler compares ids in the table and
 * follows only its own thread's pointer (a guard lives on its thread's stack, which another
 * thread may leave or unmap at any time). guard_read takes such a guard around one copy, for
 * readers of memory that may be gone (the code-cache reader, sampler/java/codecache*).
 */
#include "guard.h"

#include <errno.h>
#include <signal.h>
#include <string.h>

#include "platform.h"

#define GUARD_SLOTS 256

static struct {
  struct {
    _Atomic pid_t tid;       /* the owner, 0 when free */
    struct guard *_Atomic g; /* on the owner's stack: read only by the owner */
  } slot[GUARD_SLOTS];
  atomic_int active; /* guards registered now */
  _Atomic uint64_t faults, vm_handled, full;
  struct sigaction previous[2]; /* SIGSEGV, SIGBUS */
  _Atomic guard_vm_handler_fn vm_handler;
  int installed;
  atomic_int ready; /* installed, for guard_read on any thread */
} guards;

uint64_t guard_mask_of(const sigset_t *set) {
  /* the kernel's sigset is one 64-bit word on x86-64 and aarch64, the first of glibc's */
  uint64_t m;
  memcpy(&m, set, sizeof m);
  return m;
}

uint64_t guard_mask_now(void) {
  sigset_t set;
  sigemptyset(&set);
  sigprocmask(SIG_BLOCK, NULL, &set);
  return guard_mask_of(&set);
}

/* A free slot of the table for g: 0, or -ENOSPC (not counted). */
static int take_slot(struct guard *g, pid_t tid, uint64_t mask) {
  g->mask = mask;
  g->vm_first = 0;
  /* start where this thread's id points: threads seldom meet on one slot */
  unsigned start = (unsigned)tid % GUARD_SLOTS;
  for (unsigned k = 0; k < GUARD_SLOTS; k++) {
    unsigned i = (start + k) % GUARD_SLOTS;
    pid_t none = 0;
    if (atomic_load_explicit(&guards.slot[i].tid, memory_order_relaxed) == 0 &&
        atomic_compare_exchange_strong(&guards.slot[i].tid, &none, tid)) {
      g->slot = (int)i;
      atomic_store_explicit(&guards.slot[i].g, g, memory_order_release);
      atomic_fetch_add(&guards.active, 1);
      return 0;
    }
  }
  return -ENOSPC;
}

int guard_register(struct guard *g, pid_t tid, uint64_t mask) {
  if (take_slot(g, tid, mask) == 0) return 0;
  atomic_fetch_add_explicit(&guards.full, 1, memory_order_relaxed);
  return -ENOSPC;
}

int guard_installed(void) { return atomic_load_explicit(&guards.ready, memory_order_acquire); }

int guard_read(void *dst, const void *src, size_t len, pid_t tid, uint64_t mask) {
  if (!guard_installed()) return -ENOSYS;
  struct guard g;
  if (take_slot(&g, tid, mask) != 0) return -ENOSPC;
  volatile int rc = -EFAULT; /* kept across the jump back */
  if (sigsetjmp(g.env, 0) == 0) {
    memcpy(dst, src, len);
    rc = 0;
  }
  guard_leave(&g);
  return rc;
}

void guard_leave(struct guard *g) {
  int i = g->slot;
  atomic_store_explicit(&guards.slot[i].g, NULL, memory_order_relaxed);
  atomic_store_explicit(&guards.slot[i].tid, 0, memory_order_release);
  atomic_fetch_sub(&guards.active, 1);
}

/* Calls the handler that was there before ours, as the kernel would have. */
static void chain(int sig, siginfo_t *si, void *uc) {
  const struct sigaction *prev = &guards.previous[sig == SIGBUS];
  if (prev->sa_flags & SA_SIGINFO) {
    prev->sa_sigaction(sig, si, uc);
  } else if (prev->sa_handler == SIG_DFL) {
    /* the default action: put it back and return; the fault happens again, and kills */
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigaction(sig, &dfl, NULL);
  } else if (prev->sa_handler != SIG_IGN) {
    prev->sa_handler(sig);
  }
}

/* The guard of the calling thread registered for signal mask `mask` (the same signal depth),
 * or NULL. Reads only the table, then the thread's own guards. Of several (a guard_read inside
 * a sample's guard: same thread, same mask), the innermost: the one lowest on the thread's
 * stack (it grows down on x86-64 and aarch64), taken last and left first — a fault in the inner
 * code is the inner guard's, whatever slots the two took. */
static struct guard *own_guard(uint64_t mask) {
  pid_t tid = plat_gettid();
  struct guard *inner = NULL;
  for (int i = 0; i < GUARD_SLOTS; i++) {
    if (atomic_load_explicit(&guards.slot[i].tid, memory_order_acquire) != tid) continue;
    struct guard *g = atomic_load_explicit(&guards.slot[i].g, memory_order_relaxed);
    if (g && g->mask == mask && (!inner || (uintptr_t)g < (uintptr_t)inner)) inner = g;
  }
  return inner;
}

static void on_fault(int sig, siginfo_t *si, void *ucv) {
  ucontext_t *uc = ucv;
  /* raised by the CPU (si_code > 0), while some guard is registered */
  if (si->si_code > 0 && atomic_load_explicit(&guards.active, memory_order_acquire) > 0) {
    /* at the same signal depth as the guarded code: a nested handler's fault is not ours */
    struct guard *g = own_guard(guard_mask_of(&uc->uc_sigmask));
    if (g) {
      guard_vm_handler_fn vm = atomic_load_explicit(&guards.vm_handler, memory_order_relaxed);
      if (g->vm_first && vm && vm(sig, si, ucv, 0)) {
        atomic_fetch_add_explicit(&guards.vm_handled, 1, memory_order_relaxed);
        return; /* the JVM's own probe (SafeFetch): it continues where the JVM put it */
      }
      atomic_fetch_add_explicit(&guards.faults, 1, memory_order_relaxed);
      /* back to the mask the guarded code ran with: the jump does not restore one
       * (sigsetjmp(env, 0) keeps the entry free of system calls), and this handler runs
       * with the JVM's sa_mask added */
      sigprocmask(SIG_SETMASK, &uc->uc_sigmask, NULL);
      siglongjmp(g->env, sig);
    }
  }
  chain(sig, si, ucv);
}

int guard_install(void) {
  if (guards.installed) return 0;
  static const int sigs[2] = {SIGSEGV, SIGBUS};
  for (int k = 0; k < 2; k++) {
    struct sigaction sa;
    if (sigaction(sigs[k], NULL, &guards.previous[k]) != 0) return -errno;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_fault;
    /* as the JVM's handler asked (alternate stack, restart), and always with siginfo */
    sa.sa_flags = (guards.previous[k].sa_flags & (SA_ONSTACK | SA_RESTART)) | SA_SIGINFO;
    sa.sa_mask = guards.previous[k].sa_mask;
    if (sigaction(sigs[k], &sa, NULL) != 0) {
      int e = errno;
      if (k) sigaction(SIGSEGV, &guards.previous[0], NULL);
      return -e;
    }
  }
  guards.installed = 1;
  atomic_store_explicit(&guards.ready, 1, memory_order_release);
  return 0;
}

void guard_uninstall(void) {
  if (!guards.installed) return;
  atomic_store_explicit(&guards.ready, 0, memory_order_release);
  sigaction(SIGSEGV, &guards.previous[0], NULL);
  sigaction(SIGBUS, &guards.previous[1], NULL);
  guards.installed = 0;
}

void guard_set_vm_handler(guard_vm_handler_fn fn) { atomic_store(&guards.vm_handler, fn); }

uint64_t guard_faults(void) { return atomic_load(&guards.faults); }

uint64_t guard_vm_handled(void) { return atomic_load(&guards.vm_handled); }

uint64_t guard_full(void) { return atomic_load(&guards.full); }
