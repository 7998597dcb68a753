/*
 * signal/guard.c — SIGNAL PATH: the fault handler and the guard table (see guard.h). The fault
 * handler runs for every SIGSEGV/SIGBUS of the process — the JVM raises them on purpose (its
 * implicit null checks, its stack banging) — so the common case costs one atomic load before
 * the JVM's handler is called with the same arguments.
 */
#include "../guard.h"

#include <errno.h>
#include <signal.h>
#include <string.h>

#include "platform.h"

#define GUARD_SLOTS 256

static struct {
  struct guard *_Atomic slot[GUARD_SLOTS];
  atomic_int active; /* guards registered now */
  _Atomic uint64_t faults, unguarded;
  struct sigaction previous[2]; /* SIGSEGV, SIGBUS */
  int installed;
} guards;

void guard_register(struct guard *g, pid_t tid) {
  g->tid = tid;
  g->slot = -1;
  for (int i = 0; i < GUARD_SLOTS; i++) {
    struct guard *none = NULL;
    if (atomic_compare_exchange_strong(&guards.slot[i], &none, g)) {
      g->slot = i;
      atomic_fetch_add(&guards.active, 1);
      return;
    }
  }
  atomic_fetch_add_explicit(&guards.unguarded, 1, memory_order_relaxed);
}

void guard_leave(struct guard *g, int faulted) {
  if (faulted) {
    /* the jump out of the fault handler left its signals blocked in this thread: a later fault
     * (the JVM's own, on purpose) must find them deliverable */
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGSEGV);
    sigaddset(&set, SIGBUS);
    sigprocmask(SIG_UNBLOCK, &set, NULL);
  }
  if (g->slot >= 0) {
    atomic_store(&guards.slot[g->slot], NULL);
    atomic_fetch_sub(&guards.active, 1);
    g->slot = -1;
  }
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

static void on_fault(int sig, siginfo_t *si, void *uc) {
  if (atomic_load_explicit(&guards.active, memory_order_acquire) > 0) {
    pid_t tid = plat_gettid();
    for (int i = 0; i < GUARD_SLOTS; i++) {
      struct guard *g = atomic_load_explicit(&guards.slot[i], memory_order_acquire);
      if (g && g->tid == tid) {
        atomic_fetch_add_explicit(&guards.faults, 1, memory_order_relaxed);
        siglongjmp(g->env, sig);
      }
    }
  }
  chain(sig, si, uc);
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
  return 0;
}

void guard_uninstall(void) {
  if (!guards.installed) return;
  sigaction(SIGSEGV, &guards.previous[0], NULL);
  sigaction(SIGBUS, &guards.previous[1], NULL);
  guards.installed = 0;
}

uint64_t guard_faults(void) { return atomic_load(&guards.faults); }

uint64_t guard_unguarded(void) { return atomic_load(&guards.unguarded); }
