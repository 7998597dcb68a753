/*
 * sthread.h — the sampler thread's API: what the front door (sampler.c) calls to set the
 * sampler thread up, configure it, run it, stop it and start its next profile. The round state
 * behind it (round.h) is written only by this folder's files (round.c, run.c, schedule.c,
 * record.c). Not signal-safe; each function says which thread may call it.
 */
#ifndef SAMPLER_STHREAD_H
#define SAMPLER_STHREAD_H

#include "timeline.h"
#include "types.h"

struct hotspot_layout;
struct codecache_layout;

/* Sets the sampler thread up for cfg (kept as the configuration) and the JVM's callbacks: its
 * buffers for stacks of cfg->depth frames and the frames it interns for itself (the trace table
 * must be initialized). A second call (tests) replaces the first's buffers. Returns 0 or
 * -ENOMEM. Not with sthread_run running. */
int sthread_init(const struct sampler_config *cfg, const struct sampler_jvm *jvm);

/* Frees what sthread_init allocated (its names stay interned: intern.h): for a set-up that
 * failed later (sampler_init), before any run. */
void sthread_fini(void);

/* Whether c may become the configuration of the next run: -EBUSY while a run is on, -EINVAL
 * when c has no interval or changes what sthread_init fixed (depth, signal, codemap); else 0. */
int sthread_check_config(const struct sampler_config *c);

/* Makes c (sthread_check_config said 0) the configuration of the next run. */
void sthread_set_config(const struct sampler_config *c);

/* The configuration of the current (or next) run. Read-only for the caller. */
const struct sampler_config *sthread_config(void);

/* What a run of configuration c records: events the JVM's callbacks queue (alloc, lock), and
 * samples the rounds take (cpu or wall: a run without queued events, or one asking for both).
 * Pure. */
static inline int sthread_queued(const struct sampler_config *c) {
  return c->alloc_interval != 0 || c->lock;
}
static inline int sthread_clock(const struct sampler_config *c) {
  return c->with_clock || !sthread_queued(c);
}

/* HotSpot's layout, once the JNIEnv's place in a JavaThread is known: the schedule reads Java
 * threads' states from it from the next round on. Thread-safe (published atomically). */
void sthread_set_hotspot(const struct hotspot_layout *h);

/* The code cache's reader (codecache.h), able to read the nmethods' inline records: a run's
 * start fills the code map with it (codemap_add_cache) instead of the events' replay of every
 * compiled method; NULL: the replay. Thread-safe (published atomically). */
void sthread_set_codecache(const struct codecache_layout *l);

/* Code compiled during a run is found in the code cache too (sthread_set_codecache's reader):
 * a run that signals threads turns on the events of the generated code (stubs) only, not
 * CompiledMethodLoad/Unload; the sampler thread adds the nmethods its samples meet (the leaf's pc,
 * the walked frames' methods' current code: Method::_code) and walks the code cache every few
 * seconds (new nmethods, and the map's compiled methods no longer there dropped). debug_flag:
 * the address of HotSpot's DebugNonSafepoints, set for each such run and put back after it (the
 * events made HotSpot record debug information between safepoints; without them the flag does);
 * 0 when it is on already. Call at set-up, before the first run. */
void sthread_set_code_source(uintptr_t debug_flag);

/* 1 while sthread_run runs. Thread-safe. */
int sthread_running(void);

/* The sampler thread's body (sampler_run): rounds until sthread_stop() or until the
 * configured duration has elapsed. Returns 1 when the duration ended it, 0 when stopped. */
int sthread_run(void);

/* Asks sthread_run to return and waits (at most ~1 s) until it has. Thread-safe; no-op when
 * not running. */
void sthread_stop(void);

/* Brings the report's wall and process CPU times up to now. traces_lock held. */
void sthread_measure_process(void);

/* Fills the sampler thread's part of report r — what it measured since its profile began: its
 * counters (r->n), the quantiles of its costs (handler, latency, round, native walk) and
 * handler_replaced — and leaves the rest as it is. traces_lock held. */
void sthread_report(struct sampler_report *r);

/* The captures of event kind `kind` (enum sampler_event) the stack table could not keep: their
 * count, units and CPU into *samples, *units, *cpu_ns; returns the one frame they stand under
 * ([stack not kept: table full]). traces_lock held. */
uint32_t sthread_not_kept(int kind, uint64_t *samples, uint64_t *units, uint64_t *cpu_ns);

/* The time axis's stack id of the captures of event kind `kind` the stack table could not
 * keep (past every id it gives; the snapshot maps it to that kind's not-kept stack). */
#define STHREAD_NOT_KEPT(kind) (TIMELINE_MAX_STACK - (uint32_t)(kind))

/* Starts the next profile's statistics from zero (counters, histograms, the stack the table
 * could not keep), the times measured from now on; the threads' bookkeeping goes on.
 * traces_lock held (the caller clears the trace table with it). */
void sthread_clear(void);

#endif
