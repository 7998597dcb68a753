/*
 * handler.h — the sampling signal handler and its handshake with the sampler thread.
 *
 * The sampler asks a thread for a sample by setting its slot's request word to PENDING and
 * sending it the sampling signal with the slot index as the signal's value. The handler,
 * running on that thread with the interrupted registers in its ucontext, claims the request
 * (PENDING -> BUSY), takes the sample into the slot's preallocated buffers, publishes it
 * (BUSY -> DONE) and counts an acknowledgement. The sampler never waits for one thread
 * longer than its tick allows: a request that is still outstanding is simply left for the
 * handler to finish and collected at a later tick; it is never re-sent or overwritten.
 */
#ifndef SAMPLER_HANDLER_H
#define SAMPLER_HANDLER_H

#include <jni.h>
#include <stdatomic.h>
#include <stdint.h>

#include "asgct.h"

/* Counters written by the handler (atomically) and read by the sampler. */
struct handler_counters {
  _Atomic uint64_t acks;      /* requests served */
  _Atomic uint64_t stray;     /* our signals that found no pending request (late duplicates) */
  _Atomic uint64_t foreign;   /* the sampling signal, sent by someone else: ignored */
  _Atomic uint64_t wrong_tid; /* a request that reached another thread than its slot's */
};

/* Installs the handler for `sig` (SA_SIGINFO | SA_RESTART). `asgct` and `vm` are used by
 * the handler to walk the Java stack. Returns 0 or -errno; -EBUSY when `sig` already has a
 * handler that is not ours (somebody else uses it). Call once, before sampling. */
int handler_install(int sig, asgct_fn asgct, JavaVM *vm);

/* Turns sample-taking on or off; a signal arriving while off only counts as stray.
 * Signal-safe. */
void handler_set_active(int on);

/* Sets the acknowledgement count (it only grows, modulo 2^32) at which the handler wakes the
 * sampler, and returns the current count. Sampler thread only. */
uint32_t handler_expect(uint32_t target);

/* Waits until the acknowledgement count reaches the target given to handler_expect, or
 * until `deadline_ns` (CLOCK_MONOTONIC). Returns the count. Sampler thread only. */
uint32_t handler_wait_acks(uint64_t deadline_ns);

/* The handler's counters (live, read-only for callers). */
const struct handler_counters *handler_counters(void);

#endif
