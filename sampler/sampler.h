/*
 * sampler.h — the sampler thread: every interval it decides which threads have run, asks
 * those for a sample by signal, collects the answers with a bounded wait and records them.
 *
 * ThreadHasRun evidence (`hasrun`):
 *  - SAMPLER_HASRUN_REGS: the JVMPI paper's — signal every thread every tick; a thread has run
 *    when its register checksum changed; one cost unit per stack captured.
 *  - SAMPLER_HASRUN_CPU: the thread's own CPU clock, read without disturbing it; a thread is
 *    signalled only once it has accrued a full interval of CPU since its last sample, and that
 *    sample carries floor(accrued / interval) units. Our own signal's cost is excluded (the
 *    handler reports the thread's CPU clock at its exit).
 *  - SAMPLER_HASRUN_AUTO: CPU as above; the register checksum arbitrates the one ambiguous
 *    case — tiny CPU deltas of a thread we found blocked and woke ourselves — and stands in
 *    when a thread's CPU clock cannot be read.
 */
#ifndef SAMPLER_SAMPLER_H
#define SAMPLER_SAMPLER_H

#include <jni.h>
#include <stddef.h>
#include <stdint.h>

#include "asgct.h"
#include "stats.h"

enum sampler_hasrun { SAMPLER_HASRUN_AUTO = 0, SAMPLER_HASRUN_CPU = 1, SAMPLER_HASRUN_REGS = 2 };

struct sampler_config {
  uint64_t interval_ns;
  int depth;           /* frames per stack */
  int hasrun;          /* enum sampler_hasrun */
  int thread_roots;    /* a root frame per thread: "[name tid=N]" */
  int lines;           /* frames carry their source line: "Class.method:152" */
  int ann;             /* Java frames carry their kind: _[j] JIT, _[i] inlined, _[0] interpreted */
  uint64_t duration_ns;/* stop after this long; 0: until stopped */
  int sig;             /* the sampling signal */
};

/* Writes the name of method m ("java/lang/String.hashCode") into buf — with ":<line>" of
 * bytecode index bci when bci >= 0 — and returns 0, or a negative code when the method cannot
 * be resolved (then "[unknown method]" is used). Called on the sampler thread with
 * traces_lock() held; must not call traces_*. */
typedef int (*sampler_method_name_fn)(void *ctx, jmethodID m, jint bci, char *buf, size_t len);

/* Prepares the sampler (registry, traces, signal handler). Returns 0 or -errno (-EBUSY: the
 * signal is in use by somebody else). Call once, before sampler_run. */
int sampler_init(const struct sampler_config *c, asgct_fn asgct, JavaVM *vm,
                 sampler_method_name_fn name_fn, void *name_ctx);

/* The sampler thread's body: ticks until sampler_stop() or until the duration has elapsed.
 * Returns 1 when the duration ended it, 0 when stopped. */
int sampler_run(void);

/* Asks sampler_run to return and waits (at most ~1 s) until it has. Thread-safe; no-op when
 * not running. */
void sampler_stop(void);

/* The self-report so far. Call with traces_lock() held. */
const struct sampler_stats *sampler_stats(void);

#endif
