/*
 * handler.h — the sampling signal handler (handler_sig.c) and what the sampler thread sets
 * up for it. The handshake it answers is described in sample.h.
 *
 * The sampler asks a thread for a sample by setting its slot's handshake word to PENDING and
 * sending it the sampling signal with the slot index as the signal's value. The handler,
 * running on that thread with the interrupted registers in its ucontext, claims the request
 * (PENDING -> BUSY), takes the sample into the slot's preallocated record, publishes it
 * (BUSY -> DONE). The sampler collects DONE answers at its next round and never blocks on a
 * thread: a request that is still outstanding is left for the handler to finish and collected
 * at a later round; it is never re-sent or overwritten.
 */
#ifndef SAMPLER_HANDLER_H
#define SAMPLER_HANDLER_H

#include <stdatomic.h>
#include <stdint.h>

#include "asgct.h"

/* Counters written by the handler (atomically) and read by the sampler. */
struct handler_counters {
  _Atomic uint64_t acks;           /* requests served */
  _Atomic uint64_t stray;          /* our signals that found no pending request (late duplicates) */
  _Atomic uint64_t foreign;        /* the sampling signal, sent by someone else: ignored */
  _Atomic uint64_t wrong_tid;      /* a request that reached another thread than its slot's */
  _Atomic uint64_t anchor_refused; /* anchor walks refused: the JNIEnv's JavaThread is not this
                                      thread's (its stack or its OSThread says otherwise) */
  _Atomic uint64_t code_stale;     /* map entries the code cache said were another's code now */
};

/* Installs the handler for `sig` (SA_SIGINFO | SA_RESTART); it walks stacks of up to `depth`
 * frames with `asgct` (each thread's JNIEnv comes from its registration). Returns 0 or
 * -errno; -EBUSY when `sig` already has a handler that is not ours (somebody else uses it).
 * Call before sampling; not signal-safe. */
int handler_install(int sig, asgct_fn asgct, int depth);

/* 1 while the sampling signal's handler is still ours (nobody replaced it). Not signal-safe. */
int handler_installed(void);

/* Restores the disposition the signal had before handler_install (no-op when not installed).
 * Not signal-safe. */
void handler_uninstall(void);

struct hotspot_layout;

/* Lets the handler walk a thread that runs VM code called from Java from its frame anchor
 * (see hotspot.h); l must be complete (hotspot_find_env done). Call before sampling starts;
 * without it such samples stay "[unknown not Java]". */
void handler_set_hotspot(const struct hotspot_layout *l);

struct codecache_layout;

/* Lets the handler find a failed walk's PC, or a recovery's caller, that the code map does not
 * have — code compiled since the map last heard of it: its CompiledMethodLoad not posted yet —
 * in HotSpot's code cache (codecache.h): the nmethod there with its inline chain, as the map
 * would have given it. l must read the scopes (codecache_init done, l->read and l->mask set,
 * l->scopes_why NULL); it is copied. NULL turns it off. Call before sampling; not signal-safe. */
void handler_set_codecache(const struct codecache_layout *l);

/* With on, the handler checks a compiled method the code map answers for a pc against the code
 * cache (handler_set_codecache's reader) before it uses it: while CompiledMethodUnload is off,
 * an entry may be code freed since and its range another compilation's (counted: code_stale;
 * the code cache's answer is taken instead). ~1 us, on failed walks and recoveries only. Any
 * time; not signal-safe. */
void handler_check_code(int on);

/* Turns the native stack walk on (native.h; native_init done) or off. Call before sampling. */
void handler_set_native(int on);

/* Turns sample-taking on or off; a signal arriving while off only counts as stray.
 * Signal-safe. */
void handler_set_active(int on);

/* The handler's counters (live, read-only for callers). */
const struct handler_counters *handler_counters(void);

#endif
