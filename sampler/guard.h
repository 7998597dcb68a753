/*
 * guard.h — faults contained: a SIGSEGV or SIGBUS raised while a sample is being taken (inside
 * AsyncGetCallTrace, a stack read, the native walk) returns to the sampling handler instead
 * of crashing the JVM. The sampling handler registers a guard (its thread id and a jump
 * buffer) for the risky part of a sample; the fault handler, installed in front of the JVM's
 * own and chained to it, jumps back into the guard of the faulting thread, or passes every
 * other fault on to the JVM untouched. No thread-local storage: guards are found by thread id
 * in a fixed table.
 *
 * Use (signal path):
 *     struct guard g;
 *     if (guard_enter(&g, tid) != 0) { ... a fault happened: recover ... }
 *     ... risky work ...
 *     guard_leave(&g);
 * guard_enter is a macro around sigsetjmp: the recovery branch runs in the same frame.
 */
#ifndef SAMPLER_GUARD_H
#define SAMPLER_GUARD_H

#include <setjmp.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>

struct guard {
  sigjmp_buf env;
  pid_t tid;
  int slot; /* index in the guard table, -1 when the table was full (then unguarded) */
};

/* Installs the fault handler for SIGSEGV and SIGBUS in front of the current handlers (the JVM's),
 * which it calls for every fault that is not a guarded sample's. Returns 0 or -errno. Not
 * signal-safe; once. */
int guard_install(void);

/* Takes the fault handler back out (restores the previous handlers). Not signal-safe. */
void guard_uninstall(void);

/* Registers g for the calling thread `tid`. SIGNAL-SAFE. */
void guard_register(struct guard *g, pid_t tid);

/* 0 on entry; the signal number (SIGSEGV, SIGBUS) when a fault jumped back here. */
#define guard_enter(g, tid) (guard_register((g), (tid)), sigsetjmp((g)->env, 0))

/* Unregisters g; after a fault, also unblocks the fault signals the jump left blocked.
 * SIGNAL-SAFE. */
void guard_leave(struct guard *g, int faulted);

/* Faults contained so far. */
uint64_t guard_faults(void);

/* Samples taken unguarded because the guard table was full. */
uint64_t guard_unguarded(void);

#endif
