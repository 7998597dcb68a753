/*
 * types.h — the vocabulary the front door (sampler.h) and the folders behind it share: the
 * configuration, what the sampler needs of the JVM, a thread to be sampled, the sampler
 * thread's counters and the report (the sampler thread fills its part: sthread_report). Below
 * the API:
 * registry/ and thread/ include this, never sampler.h, for these types. Declarations only.
 */
#ifndef SAMPLER_TYPES_H
#define SAMPLER_TYPES_H

#include <jni.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "asgct.h"

/*
 * ThreadHasRun evidence (`hasrun`):
 *  - SAMPLER_HASRUN_REGS: the JVMPI paper's — signal every thread every tick; a thread has run
 *    when its register checksum changed; one cost unit per stack captured.
 *  - SAMPLER_HASRUN_CPU: the thread's own CPU clock, read without disturbing it; a thread is
 *    signalled when its CPU crosses an interval boundary (the first one after a random phase,
 *    so that a thread's samples are its CPU / interval in expectation, short-lived and briefly
 *    waking threads too), and the sample carries the boundaries crossed as units. Our own signal's cost is excluded (the
 *    handler reports the thread's CPU clock at its exit).
 *  - SAMPLER_HASRUN_AUTO: CPU as above; the register checksum arbitrates the one ambiguous
 *    case — tiny CPU deltas of a thread we found blocked and woke ourselves — and stands in
 *    when a thread's CPU clock cannot be read.
 */
enum sampler_hasrun { SAMPLER_HASRUN_AUTO = 0, SAMPLER_HASRUN_CPU = 1, SAMPLER_HASRUN_REGS = 2 };

/* What a recorded stack is a stack of: each kind has its own unit (struct sampler_stack), and
 * the same frames under two kinds are two stacks. cpu and wall never share a run. */
enum sampler_event {
  SAMPLER_EVENT_CPU = 0, /* units: samples, cpu_ns: CPU ns */
  SAMPLER_EVENT_WALL,    /* units: samples (an interval of wall time each), cpu_ns: CPU ns */
  SAMPLER_EVENT_ALLOC,   /* units: allocations, cpu_ns: bytes (both estimated) */
  SAMPLER_EVENT_LOCK,    /* units: waits, cpu_ns: ns blocked (both estimated) */
  SAMPLER_EVENTS
};

struct sampler_config {
  uint64_t interval_ns;
  int depth;            /* frames per stack */
  int hasrun;           /* enum sampler_hasrun */
  int thread_roots;     /* a root frame per thread: "[name tid=N]" */
  int lines;            /* frames carry their source line: "Class.method:152" */
  int ann;              /* Java frames carry their kind: _[j] JIT, _[i] inlined, _[0] interpreted */
  int codemap;          /* keep the compiled-code map (recovery of failed walks, frame kinds) */
  int native_frames;    /* walk native frames too (native.h) */
  int jvm_threads;      /* sample every thread of the process, not only the registered ones */
  uint64_t duration_ns; /* stop after this long; 0: until stopped */
  int wall;             /* wall clock: every thread every interval, running or not (a thread
                           that has not run since its last sample gives it again, without a
                           signal); its state as the leaf frame */
  int sig;              /* the sampling signal */
  int cpu_timers;       /* busy threads' samples by CPU-time timers at the scheduler tick, when
                           the interval is at least a tick (cpu event only) */
  size_t time_bytes;    /* the time axis's memory for its entries (timeline.h); 0: its default */
  uint64_t alloc_interval;    /* an allocation profile (event=alloc): the mean bytes between
                              samples; the host feeds sampler_alloc_sample, no signal is sent,
                              and the weights are estimated allocations (units) and bytes
                              (cpu_ns). 0: a CPU or wall-clock profile */
  int lock;                   /* a lock profile (event=lock): the host feeds sampler_lock_wait
                                 with the waits it sees; the weights are estimated waits
                                 (units) and ns blocked (cpu_ns); no signal is sent */
  uint64_t lock_threshold_ns; /* event=lock: waits this long or longer are all recorded, a
                                 shorter one of d ns with probability d / threshold (0: all) */
  int with_clock;             /* with alloc_interval or lock: cpu (or, with wall, wall-clock)
                                 samples too, side by side (several events in one run); a run
                                 with neither alloc nor lock takes them anyway */
};

/* Writes the name of method m ("java/lang/String.hashCode") into buf — with ":<line>" of
 * bytecode index bci when bci >= 0 — and returns 0, or a negative code when the method cannot
 * be resolved (then "[unknown method]" is used). Called on the sampler thread. */
typedef int (*sampler_method_name_fn)(void *ctx, jmethodID m, jint bci, char *buf, size_t len);

/* Whether method m is still loaded (its class was not unloaded): non-zero yes. Lets the frame
 * key cache drop the keys of methods that are gone. Called on the sampler thread. */
typedef int (*sampler_method_alive_fn)(void *ctx, jmethodID m);

/* A thread's state, for wall-clock samples. */
enum sampler_thread_state {
  SAMPLER_STATE_UNKNOWN = 0, /* not a Java thread, or not known */
  SAMPLER_STATE_RUNNABLE,
  SAMPLER_STATE_SLEEPING, /* Thread.sleep */
  SAMPLER_STATE_PARKED,   /* LockSupport.park */
  SAMPLER_STATE_WAITING,  /* Object.wait */
  SAMPLER_STATE_BLOCKED   /* waiting to enter a monitor */
};
/* The state (enum sampler_thread_state) of the thread with host handle `handle`. Called on
 * the sampler thread. */
typedef int (*sampler_thread_state_fn)(void *ctx, void *handle);
/* Looks up a symbol of libjvm (as dlsym would), or returns NULL. */
typedef void *(*sampler_symbol_fn)(const char *name, void *ctx);
/* How sampler_code_events_fn turns the code map's events. */
enum sampler_code_events {
  SAMPLER_CODE_OFF = 0,
  SAMPLER_CODE_REPLAY = 1,   /* on, and the host replays all the code that exists already
                              (sampler_method_loaded, sampler_code_generated) before it returns */
  SAMPLER_CODE_STUBS = 2,    /* on, and the host replays the generated code only (stubs: the
                              sampler reads the compiled methods from the code cache itself) */
  SAMPLER_CODE_GENERATED = 3 /* the generated code (stubs) replayed, its event on only for
                                that: no event at all during the run — the sampler reads the
                                compiled methods from the code cache, at the start and during
                                the run, and asks again for the stubs when a sample meets one
                                the map lacks */
};
/* Turns the events that feed the code map on or off (enum sampler_code_events). Called on the
 * sampler thread: on before the first round of a run that signals threads, off after it.
 * Returns 0 or a negative errno-style code (on failed: the run samples without a code map's
 * news, as with codemap off). */
typedef int (*sampler_code_events_fn)(void *ctx, int how);

/* What the sampler needs of the JVM. */
struct sampler_jvm {
  asgct_fn asgct;           /* HotSpot's AsyncGetCallTrace */
  sampler_symbol_fn symbol; /* finds the gHotSpotVM* tables; NULL: no anchor walk */
  void *symbol_ctx;
  sampler_method_name_fn method_name; /* names frames */
  void *method_name_ctx;
  sampler_method_alive_fn method_alive; /* with method_name_ctx; NULL: the key cache keeps the
                                           keys of unloaded methods until it is full */
  sampler_thread_state_fn thread_state; /* for wall-clock samples; NULL: states unknown */
  void *thread_state_ctx;
  /* with codemap: the code map's events follow the runs that need them (JIT-compiled code is
   * then not posted, each compilation at a cost, while nothing samples); NULL: the host keeps
   * them on all the time */
  sampler_code_events_fn code_events;
  void *code_events_ctx;
};

/* A target: a thread to be sampled (the host's view of it; the registry keeps a slot per such
 * thread). Not the sampler's own thread: that is thread/ (sthread.h). */
struct sampler_target {
  pid_t tid;       /* kernel thread id */
  int64_t java_id; /* java.lang.Thread's id (getId()), 0: not a Java thread, or not known */
  /* its name as the host has it (JVMTI's modified UTF-8, the kernel's comm, any bytes): the
   * registry keeps at most 127 bytes of it as UTF-8, cut between characters (utf8.h), which
   * take at most 2 bytes of input each: a host that cuts a long name at 511 bytes cuts only
   * what is not kept */
  const char *name;
  JNIEnv *env; /* its own JNIEnv (AsyncGetCallTrace walks with it); NULL: not walked */
  uintptr_t stack_lo, stack_hi; /* its stack, [lo, hi); 0, 0 when unknown */
  void *handle;                 /* the host's handle of it (thread_state's argument), or NULL */
  int at_start;                 /* registered by the thread itself as it starts (its ThreadStart) */
  int kernel_name;              /* name is the kernel's comm (a thread found in /proc): read again
                                   later (registry_rename_kernel), a thread names itself as it
                                   starts and may be found before */
  uint64_t start_cpu_ns; /* with at_start: its own CPU clock then (a thread attached again, like
                            DestroyJavaVM on the main thread, carries its earlier CPU) */
};

/* The sampler thread's counters. */
struct sampler_counters {
  uint64_t ticks;           /* sampling rounds */
  uint64_t overruns;        /* rounds skipped because the previous one ran past their deadline */
  uint64_t looks;           /* per-thread CPU clock reads */
  uint64_t skipped_idle;    /* thread-rounds not looked at: idle back-off */
  uint64_t skipped_cpu;     /* thread-rounds judged not run by the CPU clock */
  uint64_t skipped_waiting; /* thread-rounds a Java thread in a VM wait was not looked at */
  uint64_t skipped_regs;    /* requests whose register checksum said not run */
  uint64_t deferred;        /* thread-rounds a due sample waited for its blocked thread to run */
  uint64_t running_asked;   /* times the schedule asked whether a thread with a due sample runs */
  uint64_t running_jvm;     /* of those, answered by its JavaThread's state (no /proc read) */
  uint64_t requests;        /* signals sent */
  uint64_t timer_requests;  /* requests left to the thread's CPU-time timer instead */
  uint64_t timer_captures;  /* answers the timer delivered */
  uint64_t timer_fallbacks; /* timer requests signalled after two ticks without an answer */
  uint64_t timer_ended;     /* timer requests whose thread ended first (units to its last stack) */
  uint64_t timers_refused;  /* threads whose timer could not be made (signals for them) */
  uint64_t lost_send;       /* signals that could not be sent (thread gone, queue full) */
  uint64_t outstanding;     /* thread-rounds skipped because an earlier request was still open */
  uint64_t late;            /* requests not answered by the round after them */
  uint64_t unanswered;      /* requests withdrawn unanswered (units kept as lost) */
  uint64_t timed_out;    /* of those, withdrawn after 1 s while sampling (signal lost, blocked) */
  uint64_t sig_withheld; /* requests not sent: the thread blocks the sampling signal, or
                                   one is pending for it (each sent would stay queued) */
  uint64_t sig_blocked_units;   /* their units: kept under [not sampled: signal blocked] */
  uint64_t sig_blocked_cpu_ns;  /* their CPU time */
  uint64_t sig_blocked_threads; /* times a thread was found blocking it or with one pending */
  uint64_t sig_checks;          /* reads of a thread's /proc status to know that */
  uint64_t sig_check_ns;        /* their time */
  uint64_t samples;             /* stacks captured and stored */
  uint64_t units;               /* cost units written */
  uint64_t cpu_ns;              /* CPU time attributed (ns) */
  uint64_t lost_units;          /* units kept under [sample lost] */
  uint64_t lost_cpu_ns;         /* their CPU time */
  uint64_t unwalked_cpu_ns;   /* CPU of stacks left under a failure frame: no frame walked at all */
  uint64_t store_failed;      /* captures whose stack could not be stored (no memory, or the
                               stack table full): kept under [stack not kept: table full] */
  uint64_t stacks_refused;    /* of those, refused by the stack table's limits (traces.h) */
  uint64_t time_lost;         /* captures whose time could not be kept (no memory): in the
                                 profile's weights, not on its time axis (timeline.h) */
  uint64_t keys_refused;      /* times the frame key cache was full and emptied (names are then
                               looked up again) */
  uint64_t keys_unloaded;     /* cached frame keys dropped as their methods' classes were
                               unloaded (checked once a minute) */
  uint64_t names_refused;     /* names not kept: the name table was full ([name not kept: ...]) */
  uint64_t blocked;           /* captures that found the thread blocked in a system call */
  uint64_t wall_reused;       /* wall clock: samples of a thread that had not run, given again
                               without a signal */
  uint64_t ended_units;       /* units due to a thread that ended before it was caught running:
                               given to the last stack it was caught in */
  uint64_t unsampled_units;   /* units of threads that ended before any capture: kept under
                                 [thread ended before it was sampled] */
  uint64_t unsampled_threads; /* those threads */
  uint64_t asgct[ASGCT_NCODES + 1]; /* [0]: ok (num_frames > 0); [1 + -code]: failures */
  uint64_t recovered_stub; /* failures walked from the Java caller of the stub the PC was in */
  uint64_t
      recovered_anchor;     /* failures in VM code called from Java, walked from its frame anchor */
  uint64_t attributed_code; /* failures attributed through the map to a compiled method */
  uint64_t recovered_same_call; /* GC active / not walkable, in the call out of Java of the
                                   last walk: its frames */
  uint64_t named_stub;       /* failures in a stub whose caller could not be walked: stub named */
  uint64_t recovered_native; /* failures in native code Java called without leaving Java (a
                                leaf call), walked from the Java caller the native walk found */
  uint64_t rewalked_native;  /* the same, where AsyncGetCallTrace had walked but skipped that
                                caller (a stale frame pointer): walked again from it */
  uint64_t ambiguous_kept_ns, ambiguous_dropped_ns;
  uint64_t clock_errors;       /* CPU clock reads that failed for a live thread */
  uint64_t native_frames;      /* native frames recorded */
  uint64_t native_stops[9];    /* native walks by how they ended (enum native_stop in native.h) */
  uint64_t native_general;     /* native walks libunwind did (a frame the compiled tables could
                                  not follow: cfi.h) */
  uint64_t jvm_thread_samples; /* stacks of threads with no Java frames to walk (JVM threads) */
  uint64_t threads_found;      /* threads found in /proc/self/task that nobody had registered */
  uint64_t code_replays;       /* times the code map's events were turned on and the JVM's code
                              replayed into it (a run's first round) */
  uint64_t code_replay_ns;     /* the sampler thread's CPU filling the map at those starts */
  uint64_t code_from_cache;    /* nmethods those starts read from the code cache (no replay) */
  uint64_t code_left_out;      /* nmethods the reads left out: no jmethodID yet, or freed */
  uint64_t code_kept;  /* nmethods those starts found in the map already: the same compilation */
  uint64_t code_swept; /* map entries dropped after a replay: code unloaded while the
                              map's events were off */
  uint64_t code_found_late;   /* samples whose pc, or a recovery's caller, was in code the map did
                               not have yet, found by the handler in the code cache */
  uint64_t code_learned;      /* nmethods the sampler added to the map from those finds, and
                               (code cache as the source) from the walked frames' methods */
  uint64_t code_walks;        /* walks of the code cache during runs (code cache as the source) */
  uint64_t code_walk_ns;      /* the sampler thread's CPU in them */
  uint64_t stub_replays;      /* the stubs replayed again during runs (code cache as the source):
                               a failed walk met generated code the map lacked */
  uint64_t debug_flag_failed; /* DebugNonSafepoints could not be set or put back */
  uint64_t thread_listings;   /* reads of /proc/self/task (when the process has more threads
                                  than the registry: ~1 us a thread) */
  uint64_t threads_refused;   /* of those, not registered: the registry was full */
  uint64_t threads_renamed; /* of those, renamed: their kernel name changed after they were found */
  uint64_t threads_gone;    /* registrations dropped because their thread had ended */
  uint64_t sampler_cpu_ns;  /* the sampler thread's own CPU time */
  uint64_t handler_ns;      /* the signal handler's time in the captures answered, entry to
                                  exit (its wall time: the thread's CPU unless preempted in it) */
  uint64_t process_cpu_ns;  /* the whole process's CPU time while sampling (all threads) */
  uint64_t wall_ns;         /* sampling time */
  /* event=alloc (alloc.h) */
  uint64_t alloc_samples;    /* allocation samples recorded */
  uint64_t alloc_bytes;      /* the bytes they stand for (estimated) */
  uint64_t alloc_objects;    /* the allocations they stand for (estimated) */
  uint64_t alloc_lost;       /* samples the queue could not take: under [sample lost] */
  uint64_t alloc_lost_bytes; /* the bytes they stood for (estimated) */
  uint64_t alloc_cost_ns;    /* the allocating threads' time in our callbacks (its stack walk,
                                the class's name, the queue) */
  /* event=lock (alloc.h: lock_*) */
  uint64_t lock_waits;        /* waits seen (contended monitor entries and parks), any length */
  uint64_t lock_samples;      /* of those, recorded (all >= the threshold, shorter ones sampled) */
  uint64_t lock_ns;           /* the ns blocked they stand for (estimated) */
  uint64_t lock_lost;         /* recorded waits the queue could not take: under [sample lost] */
  uint64_t lock_lost_ns;      /* the ns they stood for (estimated) */
  uint64_t lock_cost_ns;      /* the waiting threads' time in our callbacks after their waits */
  uint64_t lock_walks_jvmti;  /* recorded waits whose stack AsyncGetCallTrace could not walk
                                from the thread's last Java frame: GetStackTrace's instead */
  uint64_t alloc_walks_jvmti; /* allocation samples the same (event=alloc) */
  uint64_t stubs_walkable;    /* runtime stubs made walkable from their VM call (stubwalk.h) */
};

/* One consistent snapshot of what the sampler did, for reports. */
struct sampler_report {
  struct sampler_counters n;
  uint64_t asgct_failed;   /* n.asgct[1..]: walks AsyncGetCallTrace failed */
  uint64_t failed_kept;    /* of those, kept under their failure frame (not recovered) */
  uint64_t recovered;      /* of those, recovered or attributed through the code map */
  int threads_registered;  /* threads seen */
  int threads_live;        /* threads registered now */
  size_t stacks;           /* distinct stacks */
  size_t names, keys;      /* frame names kept; cached frame keys (method or pc -> name) */
  size_t code_entries;     /* the code map's live entries (nmethods and stubs) */
  size_t table_bytes;      /* what the stack table, the key cache and the names take */
  uint64_t time_cell_ns;   /* the time axis's cells now (20 ms, coarser past its limit) */
  uint64_t time_coarsened; /* times its cells were made coarser */
  size_t time_entries;     /* its entries (one per stack, thread and cell) */
  size_t time_bytes;       /* what it holds allocated */
  uint64_t handler_acks, handler_stray, handler_foreign, handler_wrong_tid;
  uint64_t anchor_refused; /* anchor walks refused: the JNIEnv named another thread's JavaThread */
  uint64_t code_stale;     /* code map entries the handler found replaced in the code cache */
  uint64_t code_posted;    /* CompiledMethodLoad events taken (replays included) */
  uint64_t cost_median_ns, cost_p99_ns, cost_max_ns; /* one sample, in the handler */
  uint64_t latency_median_ns, latency_p99_ns;        /* signal sent -> handler running */
  uint64_t native_median_ns, native_p99_ns; /* the native walk of a capture with native frames */
  uint64_t round_median_ns, round_p99_ns;   /* the sampler thread's CPU per round */
  uint64_t own_cpu_ns; /* the agent's own CPU: the sampler thread's and the handler's time */
  unsigned events;     /* the kinds recorded: bit 1 << enum sampler_event */
  const char *anchor_walk_off; /* NULL when the anchor walk is on, else why not */
  /* where the code map gets code compiled during a run: "the code cache (...)", or
   * "CompiledMethodLoad: why"; NULL with codemap off */
  const char *code_source;
  uint64_t faults;      /* samples a fault interrupted (contained: the JVM went on) */
  int handler_replaced; /* the sampling signal's handler was replaced by another: no more signals */
  uint64_t guard_full;  /* walks not taken: every guard slot was taken (kept as lost) */
  uint64_t vm_handled;  /* faults in AsyncGetCallTrace the JVM handled itself (SafeFetch) */
  uint64_t native_cut;  /* native walks a fault cut (each may leave one libunwind pool object) */
  /* The disk cache of unwind tables and symbols (sampler_set_cache), since the process started */
  const char *disk_cache;   /* its directory, or "off" and why */
  uint64_t tables_read;     /* unwind tables read from it */
  uint64_t tables_written;  /* unwind tables compiled and written to it */
  uint64_t symbols_read;    /* objects' symbols read from it */
  uint64_t symbols_written; /* objects' symbols read from their files and written to it */
  uint64_t cache_refused;   /* files there not used (another agent build, damaged, foreign) */
  uint64_t cache_failed;    /* writes that failed */
  /* Coverage, in per mille of n.process_cpu_ns (hasrun=regs measures no CPU: all 0) */
  int coverage_permille; /* CPU in the profile (n.cpu_ns) */
  int lost_permille;     /* of which under [sample lost], [not sampled: signal blocked] or a
                            failure frame (not walked) */
  int sampler_permille;  /* of which the sampler thread's own ([sampler thread ...]) */
  int unseen_permille;   /* the rest: threads not sampled, CPU not yet due a sample */
};

#endif
