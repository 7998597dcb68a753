/*
 * round.h — the sampler thread's own state, the round state `rounds` (defined in round.c; not
 * the user's `loop=`, which cuts a run into periodic profiles in agent/chunks.c), written by
 * this folder's files only: round.c (set-up, configuration: sthread.h), run.c (the rounds),
 * schedule.c (which threads to ask, from the ThreadHasRun evidence) and record.c (turning
 * answers into stacks). Everything here is touched by the sampler thread only, except the
 * statistics, which a dump reads under traces_lock() — through sthread.h (sthread_report,
 * sthread_not_kept): outside this folder only its unit tests include this header.
 */
#ifndef SAMPLER_ROUND_H
#define SAMPLER_ROUND_H

#include <stdatomic.h>
#include <stdint.h>

#include "codecache.h"
#include "hist.h"
#include "registry.h"
#include "sample.h"
#include "sthread.h"
#include "types.h"

struct hotspot_layout;

/* The sampler thread's bookkeeping of one slot, for the owner of generation `gen`. */
struct thread_book {
  uint32_t gen;          /* slot generation this state belongs to */
  int have_base;         /* cpu_base is valid */
  uint64_t cpu_base;     /* thread CPU clock at the last look (ns) */
  uint64_t first_base;   /* thread CPU clock at the first look (ns) */
  uint64_t cum;          /* CPU accrued since registration, our own cost excluded (ns) */
  uint64_t cum_captured; /* cum at the last capture request */
  uint64_t units_given;  /* cost units handed out so far: floor((cum + phase) / interval) */
  uint64_t phase;        /* random in [0, interval): where in an interval the thread starts */
  uint64_t ambiguous;    /* small CPU deltas right after we woke a blocked thread (ns) */
  int last_blocked;      /* the last capture found the thread blocked in a system call */
  int woken;             /* ... and the look after it has not come yet: our signal may have
                            woken it, and a tiny delta then is our doing */
  uint32_t root_id;      /* interned "[name tid=N]" frame, TRACES_NO_ID until needed */
  uint32_t root_seq;     /* the slot's name_seq root_id was made with */
  uint64_t defer_since;  /* tick + 1 since which a due sample waits for the thread to run */
  uint32_t idle_streak;  /* consecutive looks that found no CPU used */
  uint64_t read_round;   /* rounds.round of the last read of its CPU clock */
  uint64_t quiet_until;  /* before this round, at its last read's rate of CPU, no sample is due:
                            while the JVM says it waits, its clock need not be read */
  uint64_t credit;       /* its CPU from the last look to a capture's handler entry (ns), which
                            the next look counts */
  /* wall clock */
  uint64_t wall_slot; /* intervals (rounds.slots) before this one have their wall samples */
  uint32_t *last;     /* the last stack recorded (its state leaf included), to give again */
  int nlast, cap_last;
  int req_state;      /* enum sampler_thread_state when the request was sent */
  uint64_t next_look; /* tick number of the next look (idle back-off) */
  int stack_asked;    /* the thread's stack was looked up in /proc/self/maps (once) */
  /* the outstanding request */
  uint64_t req_units;
  uint64_t req_cpu;
  uint64_t req_ambiguous;
  uint64_t sent_ns;
  uint64_t req_tick;
  int busy;      /* the decision found it busy: its request may wait for its timer */
  int via_timer; /* the open request waits for its CPU-time timer, not a signal */
  int has_timer; /* it has a CPU-time timer (plat_cpu_timer_*): `timer` */
  int timer;
  int timer_failed; /* its timer could not be made: signals only */
  /* the sampling signal on this thread (run.c, from its /proc status) */
  int sig_known;           /* its status was read: a thread of no JNIEnv is read before its first
                              signal (libraries start workers with every signal blocked) */
  int sig_muted;           /* it blocks the signal or has one pending: not signalled */
  uint64_t sig_recheck_ns; /* while muted: CLOCK_MONOTONIC of the next read, when a sample is due */
  uint64_t sig_backoff_ns; /* ... and the time from the last read to it */
};

#define NAMEBUF_LEN 4096 /* a method name with its class, line and kind */

struct round_state {
  struct sampler_config cfg;
  sampler_method_name_fn name_fn;
  void *name_ctx;
  sampler_method_alive_fn alive_fn;
  sampler_thread_state_fn state_fn;
  void *state_ctx;
  sampler_code_events_fn code_fn; /* the code map's events (run.c follow_code) */
  void *code_ctx;
  int code_on; /* they are on for this run */
  /* the code cache's reader, when it reads the nmethods' records (sthread_set_codecache): a
   * run's start reads them with it, not by the events' replay; else NULL */
  const struct codecache_layout *_Atomic codecache;
  /* The code cache instead of CompiledMethodLoad for code compiled during a run
   * (sthread_set_code_source; run.c follow_code, record.c learn_frames): */
  int cache_only;          /* chosen at set-up: the events of the stubs only */
  uintptr_t debug_flag;    /* DebugNonSafepoints' value, set while such a run samples; 0: none */
  int from_cache;          /* this run's compiled methods come from the code cache */
  int flag_set;            /* this run set debug_flag (to be put back at its end) */
  uint64_t next_code_walk; /* CLOCK_MONOTONIC of the run's next walk of the code cache */
  uint64_t learned_since;  /* nmethods learned since the last walk */
  /* The stubs' replay again (record.c stub_unknown, run.c stub_replay): a failed walk's pc was
   * in generated code that the map lacks — a stub made after the run's replay */
  int stubs_wanted;
  uint64_t next_stub_replay;         /* CLOCK_MONOTONIC before which none is made */
  uint64_t stub_gap;                 /* the wait after the next one (0: the first's) */
  struct codecache_layout cache_own; /* codecache bound to the sampler thread for the run */
  struct sampler_counters st;
  struct hist cost;          /* handler entry -> exit */
  struct hist latency;       /* signal sent -> handler entry */
  struct hist tick_cost;     /* sampler thread CPU per round */
  struct hist native_cost;   /* the native walk of one capture, when it walked frames */
  uint32_t *fbuf;            /* frame ids of one capture: depth + root + stub/label frames */
  unsigned char *kinds;      /* with ann: the kind of each frame of one capture */
  struct thread_book *books; /* per slot index */
  uint64_t *look;            /* per slot: the tick before which an idle thread needs no look */
  int cap;                   /* entries of books and look */
  int seen_registered;       /* registry_registered() at the last round */
  char *namebuf;
  uint32_t id_lost, id_blocked, id_unknown_method, id_truncated, id_jvm, id_self, id_unsampled;
  uint32_t id_sig_blocked;
  struct { /* the CPU of threads that ended before any capture (record.c): one pool */
    uint64_t cpu, captured; /* all of it; stored in the profile so far */
    uint64_t unphased;      /* of it, threads never looked at: the pool's phase applies */
    uint64_t given, phase;  /* samples the pool's own crossings gave */
  } unsampled;
  uint32_t id_name_full, id_stack_full;         /* what stands in when a table is full */
  uint32_t id_state[SAMPLER_STATE_BLOCKED + 1]; /* wall clock: the state leaves */
  uint32_t id_syscall;                          /* ... and a runnable thread in a system call */
  struct {
    uint64_t samples, units, cpu_ns;
  } not_kept[SAMPLER_EVENTS]; /* captures whose stack the table could not store: one stack of
                                 their own per event kind */
  uint64_t self_cpu_recorded; /* of the sampler thread's own CPU, what the profile holds (ns) */
  uint64_t self_units_given;
  pid_t self;         /* the sampler thread's own tid: never sampled */
  uint64_t self_mask; /* its signal mask (guard_mask_of), for its fault guards */
  /* HotSpot's layout with the JNIEnv's place in a JavaThread, once known (else NULL): the
   * schedule reads Java threads' states from it */
  const struct hotspot_layout *_Atomic hotspot;
  int handler_replaced;    /* the sampling signal's handler is not ours any more: no signals */
  int flushing;            /* the last round: due samples are taken now, not deferred */
  uint64_t next_discovery; /* round of the next look at /proc/self/task and the loaded objects */
  int discovery_rounds;    /* rounds between two looks */
  uint64_t next_names;     /* round of the next names_refresh (at a look) */
  int fresh[32];       /* slots of the threads the last look found: their names read at the next */
  int nfresh;          /* how many were found (more than fit: every name is read again) */
  uint64_t next_trim;  /* round of the next plat_release_free_memory */
  size_t swept_keys;   /* cached frame keys after the last record_sweep_keys */
  int refresh_objects; /* a walk met a pc in no known object: look again at the next round */
  struct {
    int slot;
    uint32_t gen;
  } gone[64]; /* registrations whose thread has ended, dropped after the round */
  int ngone;
  uint64_t round_ns; /* plat_mono_ns() as this round began: the time the captures it records
                       are given on the time axis (timeline.h) */
  uint64_t round;    /* rounds since the agent loaded: the schedule's clock (st.ticks, the
                     report's, starts again with each profile) */
  uint64_t slots;    /* intervals since the agent loaded, the rounds skipped by overruns too: the
                      wall clock's (sampler thread only) */
  uint64_t base_wall, base_cpu, base_process; /* where the profile's wall time, the sampler
                                                 thread's CPU and the process's CPU start */
  _Atomic uint32_t stop;                      /* futex word */
  _Atomic int running;
  uint64_t max_backoff; /* rounds: the idle back-off's cap (schedule.c) */
  uint64_t max_quiet;   /* rounds: the quiet rule's cap (schedule.c) */
  /* CPU-time timers (cfg.cpu_timers): how long a request left to one waits before it is sent
   * as a signal (two scheduler ticks), 0 when this run sends signals only; timers made */
  uint64_t timer_wait_ns;
  uint64_t tick_ns; /* the kernel's scheduler tick, 0 unknown */
  int timers;
};

extern struct round_state rounds;

/* Deletes b's CPU-time timer, if it has one. */
void round_timer_drop(struct thread_book *b);

/* Sizes the per-slot arrays for `limit` slots. Returns 0 or -ENOMEM (then the old size stays). */
int round_reserve(int limit);

/* Starts the time axis again (timeline.h) at mono_ns: a new profile. traces_lock held. */
void round_time_begin(uint64_t mono_ns);

/* The bookkeeping of slot i, reset when the slot has a new owner. Slot lock held. */
struct thread_book *round_book(int i, const struct thread_slot *s);

/* Decides whether thread s (book b) should be asked for a sample this round; returns 1 and the
 * mode when it should (b then holds the request's units), 0 when not. Slot lock held. */
int schedule_decide(int i, const struct thread_slot *s, struct thread_book *b, int *mode);

/* Records the DONE answer (word w) of slot s and sets it IDLE. traces_lock and slot lock held. */
void record_answer(struct thread_slot *s, struct thread_book *b, uint32_t w);

/* Wall clock: gives the last stack of a thread that has not run since again, with `units`
 * samples. traces_lock and slot lock held. */
void record_again(const struct thread_slot *s, struct thread_book *b, uint64_t units);
/* A thread that ended (its slot's book b, or a book of an earlier owner when the sampler never
 * looked at it): the units it was due — waiting to catch it running, or, with end_cpu (its CPU
 * clock as it ended; 0: unknown), for the CPU it used since the last look, and when it was born
 * in this profile since its birth — go to the last stack it was caught in (where waiting
 * longer would have found it), else under [thread ended before it was sampled].
 * traces_lock and slot lock held. */
void record_ended(const struct thread_slot *s, struct thread_book *b, uint64_t end_cpu);

/* A random phase in [0, interval): where in an interval a thread's CPU starts counting. */
uint64_t round_phase(void);

/* A thread that ended with a request open for its CPU-time timer: the request's units go to the
 * last stack it was caught in, or, if none, under [thread ended before it was sampled].
 * traces_lock and slot lock held. */
void record_timer_ended(const struct thread_slot *s, struct thread_book *b);

/* Keeps the units owed for a request whose sample could not be taken under [sample lost].
 * traces_lock and slot lock held. */
void record_lost(const struct thread_slot *s, struct thread_book *b);

/* Keeps the units of a request not sent — the thread blocks the sampling signal, or one is
 * pending for it — under [not sampled: signal blocked]. traces_lock and slot lock held. */
void record_withheld(const struct thread_slot *s, struct thread_book *b);

/* Notes that the thread of slot i (generation gen) has ended: its registration is dropped
 * after the round. */
void round_note_gone(int i, uint32_t gen);

/* Puts the sampler thread's own CPU since the last call into the profile, as a stack of its
 * own ([sampler thread (this profiler)]). traces_lock held. */
void record_self(uint64_t sampler_cpu_ns);

/* Drops the frame key cache's keys of methods that are gone (their classes unloaded: their
 * jmethodIDs are never seen again), counted in keys_unloaded. traces_lock held. */
void record_sweep_keys(void);

/* For records that come from elsewhere than the signal handler (alloc.c): the frame of method
 * m at bytecode index bci (its kind unknown: plain); the root frame of thread s (with
 * `threads`) into rounds.fbuf, returning the frame count; and the store of rounds.fbuf[0..n) as a
 * stack of event kind `kind` (enum sampler_event) with its weights at time `when` (s NULL: the
 * sampler thread's), as every capture is stored — the
 * caller counts them (not as CPU samples). traces_lock held. */
uint32_t record_method_frame(jmethodID m, jint bci);
int record_begin_stack(const struct thread_slot *s);
void record_store(const struct thread_slot *s, int n, int kind, uint64_t units, uint64_t cpu_ns,
                  uint64_t when);

/* Interns the frames the recorder uses itself. Returns 0 or -ENOMEM. */
int record_init(void);

#endif
