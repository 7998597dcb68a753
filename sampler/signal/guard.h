/*
 * guard.h — faults contained: a SIGSEGV or SIGBUS raised by the code of a sample (inside
 * AsyncGetCallTrace, a stack read, the native walk, the look at the interrupted instruction)
 * returns to the code that took the guard instead of crashing the JVM. The code registers a
 * guard (its thread id, the signal mask it runs with, a jump buffer) for the risky part; the
 * fault handler, installed in front of the JVM's own and chained to it, jumps back into the
 * guard only when the fault is the guarded code's own:
 *   - raised by the CPU (si_code > 0), not sent by kill/tgkill/sigqueue;
 *   - on the thread that registered the guard, found through a table that holds the thread
 *     id itself (no other thread's stack is read);
 *   - at the same signal depth: the fault's saved signal mask equals the guard's. A handler of
 *     another signal that runs nested inside the guarded code (and blocks its own signal, or
 *     more, as every handler does unless SA_NODEFER with an empty sa_mask) faults with a
 *     different mask: its fault goes on to the JVM; of several guards of the thread at that
 *     depth (a guard_read inside a sample's guard), the innermost — the lowest on the stack;
 *   - not one the JVM handles itself: while g->vm_first is set (the sample is inside
 *     AsyncGetCallTrace) the JVM's handler is asked first (its JVM_handle_linux_signal, told
 *     not to abort): HotSpot's SafeFetch probes fault on purpose and continue where HotSpot
 *     puts them. Only what it does not handle is contained.
 * Every other fault is passed to the JVM's handler untouched.
 * The jump restores the signal mask the guarded code ran with (the fault's saved mask): a
 * contained fault leaves no signal blocked, on a handler's thread as on the sampler thread.
 * When every slot of the table is taken, nothing is registered: the caller must not run the
 * risky code (it drops the sample; guard_full counts it).
 *
 * Use:
 *     struct guard g;
 *     int f = guard_enter(&g, tid, mask);
 *     if (f == GUARD_FULL) { ... drop, do not run the risky code ... }
 *     else if (f != 0) { ... a fault happened: recover ... }
 *     else { ... risky work ... }
 *     if (f != GUARD_FULL) guard_leave(&g);
 * guard_enter is a macro around sigsetjmp: the recovery branch runs in the same frame;
 * guard_rearm(&g) sets the jump back to a later point of the same frame.
 * guard_read is one copy under such a guard of its own, for readers of memory that may be gone
 * (the code-cache reader): a fault answers -EFAULT.
 */
#ifndef SAMPLER_GUARD_H
#define SAMPLER_GUARD_H

#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct guard {
  sigjmp_buf env;
  uint64_t mask;         /* signals 1..64 blocked in the guarded code (guard_mask_of) */
  volatile int vm_first; /* 1: a fault is offered to the JVM's handler before it is contained */
  int slot;              /* index in the guard table */
};

/* guard_enter's answer when the guard table is full (no guard registered). */
#define GUARD_FULL (-1)

/* The JVM's own entry for a fault (HotSpot's JVM_handle_linux_signal): nonzero when it
 * handled the signal; with abort_if_unrecognized 0 it returns 0 for anything else. */
typedef int (*guard_vm_handler_fn)(int sig, siginfo_t *si, void *uc, int abort_if_unrecognized);

/* Installs the fault handler for SIGSEGV and SIGBUS in front of the current handlers (the JVM's),
 * which it calls for every fault that is not a guarded sample's. Returns 0 or -errno. Not
 * signal-safe; once. */
int guard_install(void);

/* Takes the fault handler back out (restores the previous handlers). Not signal-safe. */
void guard_uninstall(void);

/* The JVM's fault entry asked first about faults in vm_first sections (NULL: none). Call before
 * sampling; not signal-safe. */
void guard_set_vm_handler(guard_vm_handler_fn fn);

/* Registers g for the calling thread `tid`, whose guarded code runs with the signal mask
 * `mask` (guard_mask_of). Returns 0, or -ENOSPC when the table is full (counted: guard_full).
 * SIGNAL-SAFE (no lock: a compare-and-swap on the table). */
int guard_register(struct guard *g, pid_t tid, uint64_t mask);

/* 0 on entry; the signal number (SIGSEGV, SIGBUS) when a fault jumped back here; GUARD_FULL
 * when no guard could be registered. */
#define guard_enter(g, tid, mask) \
  (guard_register((g), (tid), (mask)) != 0 ? GUARD_FULL : sigsetjmp((g)->env, 0))

/* Moves the jump target of a registered guard to here: 0, or the signal of a fault. */
#define guard_rearm(g) sigsetjmp((g)->env, 0)

/* Unregisters g (registered: guard_enter did not answer GUARD_FULL). SIGNAL-SAFE. */
void guard_leave(struct guard *g);

/* Signals 1..64 of a signal set, bit n-1 for signal n: the kernel's mask on Linux, which a
 * ucontext's uc_sigmask holds. SIGNAL-SAFE. */
uint64_t guard_mask_of(const sigset_t *set);

/* The calling thread's signal mask now (a system call). SIGNAL-SAFE. */
uint64_t guard_mask_now(void);

/* Whether the fault handler is installed now (guard_install done, guard_uninstall not): only
 * then can guard_read contain a fault. SIGNAL-SAFE. */
int guard_installed(void);

/* len bytes at src into dst by plain loads, under a guard of its own for the calling thread
 * `tid` running with the signal mask `mask` (guard_mask_of; the caller finds both once for many
 * reads: each is a system call): a read that faults (unmapped, PROT_NONE, a truncated file's
 * page) returns instead of crashing. Returns 0; -EFAULT when a fault was contained (dst may hold
 * part of the bytes; counted in guard_faults); -ENOSPC when the guard table is full (nothing
 * read; not counted in guard_full: no sample was dropped); -ENOSYS when the fault handler is not
 * installed (nothing read). The faults it contains are never offered to the JVM's handler: the
 * caller is not inside the JVM's code. SIGNAL-SAFE (a handler may call it with its own mask),
 * any thread. */
int guard_read(void *dst, const void *src, size_t len, pid_t tid, uint64_t mask);

/* Faults contained so far. */
uint64_t guard_faults(void);

/* Faults in vm_first sections the JVM handled itself (not contained). */
uint64_t guard_vm_handled(void);

/* Risky sections not run because the guard table was full (samples dropped). */
uint64_t guard_full(void);

#endif
