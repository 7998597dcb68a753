/*
 * sampler.h — the front door of sampler/: the one header agent/ (or any other host) uses.
 *
 * The sampler thread: every interval it decides which threads have run, asks those for a
 * sample by signal, collects the answers without waiting and records them as stacks. The host
 * tells it which threads exist, which code the JIT generated, and reads back the stacks and a
 * report of what the sampler did. Everything behind this header is internal.
 *
 * ThreadHasRun evidence (`hasrun`): see types.h.
 *
 * Errors: functions return 0 or a negative errno-style code. None of these is signal-safe.
 */
#ifndef SAMPLER_SAMPLER_H
#define SAMPLER_SAMPLER_H

#include <jni.h>
#include <jvmti.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "asgct.h"
#include "types.h"
#include "utf8.h"

/* ---- configuration and lifecycle (struct sampler_config, struct sampler_jvm: types.h) ---- */

/* Prepares the sampler: the registry, the trace table, the code map (cfg->codemap), HotSpot's
 * layout, and installs the signal handler. Returns 0, -EBUSY (the signal already has a
 * handler: somebody else uses it), -EINVAL, -ENOMEM. On failure nothing it did is left: its
 * memory is freed, its signal handlers taken out. Call once, before anything else here. */
int sampler_init(const struct sampler_config *cfg, const struct sampler_jvm *jvm);

/* Keeps the native walk's compiled unwind tables and the objects' symbols in dir between runs
 * of the JVM (a file per object's build-id and kind: native/diskcache.h), or not (dir NULL).
 * Returns 0, or a negative errno with why (the directory cannot be made or written, or others
 * can write it: the cache is then off). Call before sampler_init; once. */
int sampler_set_cache(const char *dir, char *why, size_t len);

/* Sets the configuration of the next sampler_run (between runs: -EBUSY while one runs). The
 * signal, the depth and codemap are fixed by sampler_init (-EINVAL if c changes them); native
 * frames can be turned on (their tables are made then). Returns 0, -EBUSY, -EINVAL, -ENOMEM. */
int sampler_configure(const struct sampler_config *c);
/* Takes the signal handler back out (the signal's previous disposition is restored) and stops
 * taking samples: after it, no code of the sampler runs on the JVM's threads. For a load or
 * attach that fails after sampler_init. Not with sampler_run running. */
void sampler_fini(void);

/* The sampler thread's body: ticks until sampler_stop() or until the duration has elapsed.
 * Returns 1 when the duration ended it, 0 when stopped. */
int sampler_run(void);

/* Asks sampler_run to return and waits (at most ~1 s) until it has. Thread-safe; no-op when
 * not running. */
void sampler_stop(void);

/* ---- threads (struct sampler_target: types.h) ---- */

/* Registers a thread to be sampled (again: updates a live registration with the same tid).
 * Returns 0, -ENOSPC (too many threads), -ENOMEM. Thread-safe. */
int sampler_thread_started(const struct sampler_target *t);

/* Unregisters the thread with this kernel tid; on return it will not be signalled again, nor
 * its handle used. Returns that handle (for the host to free), or NULL. Thread-safe; call on
 * the thread itself as it ends (its tid cannot be reused meanwhile), with end_cpu_ns its own
 * CPU clock then: the CPU it used since the sampler last looked is accounted (a thread that
 * lives less than a round is otherwise never seen); 0 when unknown (another thread's end). */
void *sampler_thread_ended(pid_t tid, uint64_t end_cpu_ns);

/* Unregisters every thread, for a load or attach that fails after threads were registered:
 * each registration's handle (when not NULL) goes to release(ctx, handle). Thread-safe; not
 * with sampler_run running. */
void sampler_forget_threads(void (*release)(void *ctx, void *handle), void *ctx);

/* Sets up the walk of samples in VM code called from Java (the frame anchor; hotspot.h) from
 * the calling thread: its JNIEnv, its JavaThread address (java.lang.Thread.eetop) and its tid.
 * Returns 0, or a negative code with the reason in the report (anchor_walk_off). Call once, on
 * a Java thread, before sampler_run. */
int sampler_setup_anchor_walk(JNIEnv *self_env, uintptr_t self_java_thread, pid_t self_tid);

/* The kernel tid and JNIEnv of another Java thread from its JavaThread address
 * (java.lang.Thread.eetop), for threads that started before the agent: every read checked.
 * Returns 0, -EINVAL (no anchor walk set up: the env offset is unknown), -ESRCH (not started
 * or ended), -EFAULT. */
int sampler_java_thread_ids(uintptr_t java_thread, pid_t *tid, JNIEnv **env);

/* ---- code the JIT and the VM generate (JVMTI events; no-ops with codemap off) ---- */

/* CompiledMethodLoad: the nmethod of m at [code, code + size) with its inline records. */
void sampler_method_loaded(jmethodID m, const void *code, jint size, const void *compile_info);

/* CompiledMethodUnload. */
void sampler_method_unloaded(jmethodID m, const void *code);

/* DynamicCodeGenerated: a stub, adapter or the interpreter. */
void sampler_code_generated(const char *name, const void *code, jint size);

/* ---- allocations (event=alloc: cfg.alloc_interval) ---- */

/* JVMTI's SampledObjectAlloc, on the allocating thread: an object of `size` bytes of the class
 * whose signature is sig[sig_len] ("[B"), allocated at frames[0..n) (GetStackTrace's, the top
 * first). Queued for the sampler thread, which records it at its next round under the thread's
 * root, the frames and the class as the leaf ("byte[]_[a]"), weighted as the bytes and
 * allocations it stands for. Returns 0, -EAGAIN (no allocation run going on), -ENOSPC (the
 * queue was full) or -ESRCH (the thread is not registered) — those two are counted as lost,
 * with their estimated bytes, and kept under [sample lost]. cost_began: sampler_cost_begin() as
 * the callback began (its CPU to here is the agent's cost: alloc_cost_ns). Any thread; never
 * waits for the sampler thread; not signal-safe. */
int sampler_alloc_sample(const char *sig, size_t sig_len, uint64_t size,
                         const jvmtiFrameInfo *frames, int n, uint64_t cost_began);

/* Where a JVMTI callback's cost begins (lock 0: an allocation's, for sampler_alloc_sample; 1: a
 * lock wait's, for sampler_lock_wait): its CPU is measured on one callback of the kind in 8 of
 * each thread and counted 8 times (the clock read
 * is a system call; wall time would count preemption and safepoint waits as the agent's). Any
 * thread. */
uint64_t sampler_cost_begin(int lock);

/* Counts a recorded wait whose stack AsyncGetCallTrace could not walk, taken by JVMTI's
 * GetStackTrace instead (lock_walks_jvmti). Any thread; lock-free. */
void sampler_lock_walk_fallback(void);

/* The same for an allocation sample (alloc_walks_jvmti). Any thread; lock-free. */
void sampler_alloc_walk_fallback(void);

/* On the calling Java thread, inside a JVMTI callback, after AsyncGetCallTrace (no ucontext)
 * could not walk from its last Java frame: when that frame is a C1/C2 runtime stub that HotSpot
 * marked never safe for profiling walks, marks it walkable from the return address of its call
 * into the VM on (stubwalk.h; counted: stubs_walkable). Returns 1 when a stub was changed (walk
 * again), 0 otherwise (also before sampler_setup_anchor_walk found the JNIEnv's offset, with
 * codemap=off, or on a JVM that does not describe the field). Not signal-safe. */
int sampler_stub_make_walkable(JNIEnv *self);

/* frames[0..n) (n > 0), the calling thread's stack as AsyncGetCallTrace walked it from its last
 * Java frame: where that walk went through a stub sampler_stub_make_walkable changed, the
 * compiled caller's frames made the call's own (AsyncGetCallTrace describes that caller by the
 * next debug information after its return address: stubwalk.h). Returns the frames now, or -1
 * when they cannot be made exact (take GetStackTrace's). Not signal-safe. */
int sampler_stub_exact(JNIEnv *self, jvmtiFrameInfo *frames, int n, int depth);

/* ---- lock waits (event=lock: cfg.lock, cfg.lock_threshold_ns) ---- */

/* A wait of wait_ns for a lock (a contended monitor entered, a park returned) just ended on
 * the calling thread: counts it and returns 1 when it is to be recorded (always at or past the
 * threshold, else with probability wait_ns / threshold), 0 otherwise or when no lock run is
 * going on. Call it before taking the stack: most short waits cost only this. Any thread;
 * lock-free. */
int sampler_lock_take(uint64_t wait_ns);

/* Records a wait sampler_lock_take chose: wait_ns blocked on a lock of the class whose
 * signature is sig[sig_len] (sig_len 0: a park without a blocker), at frames[0..n) (the top
 * first). Queued like an allocation sample; recorded under the thread's root, the frames and
 * the class as the leaf ("java.lang.Object_[l]"), weighed as the ns and waits it stands for.
 * Returns 0, -EAGAIN (no lock run), -ENOSPC or -ESRCH (counted lost, under [sample lost]).
 * cost_began: sampler_cost_begin() once the wait ended (the CPU from then is lock_cost_ns). Any thread; never waits
 * for the sampler thread; not signal-safe. */
int sampler_lock_wait(const char *sig, size_t sig_len, uint64_t wait_ns,
                      const jvmtiFrameInfo *frames, int n, uint64_t cost_began);

/* ---- what was recorded ---- */

/* struct sampler_counters, the sampler thread's counters: types.h */
/* struct sampler_report, one consistent snapshot of what the sampler did: types.h */

/* Fills *r. Thread-safe. */
void sampler_report(struct sampler_report *r);

/* One distinct stack: frame ids root first (names from sampler_frame_name) and its weights,
 * in its event's units. */
struct sampler_stack {
  const uint32_t *frames;
  int n;
  uint64_t samples; /* captures of this stack */
  uint64_t units;   /* cost units (alloc: estimated allocations; lock: estimated waits) */
  uint64_t cpu_ns;  /* CPU time (alloc: estimated bytes; lock: estimated ns blocked) */
  int kind;         /* enum sampler_event: what it is a stack of */
};

/* Calls fn for every distinct stack, in the order first seen (from a snapshot: sampling goes
 * on meanwhile). Thread-safe. */
void sampler_foreach_stack(void (*fn)(void *ctx, const struct sampler_stack *s), void *ctx);

/* Forgets what was recorded: the next profile starts from zero (stacks, counters, times).
 * Frame names stay. Thread-safe. */
void sampler_clear(void);
/* When the captures were taken: the weights of one stack of one thread in one cell of time (in
 * the units of that stack's kind). */
struct sampler_time_entry {
  uint32_t cell;    /* cells of cell_ns since the profile began */
  uint32_t stack;   /* index into the snapshot's stacks */
  uint32_t thread;  /* index into its time threads */
  uint32_t samples; /* captures */
  uint64_t units, cpu_ns;
};

/* A moment of the run on the time axis (sampler_mark). */
enum sampler_mark_kind {
  SAMPLER_MARK_GC = 1, /* a garbage collection pause (JVMTI GarbageCollectionStart to Finish) */
  SAMPLER_MARK_KILL3,  /* the profile so far written on kill -3 */
  SAMPLER_MARK_DUMP,   /* the profile so far written by the dump command */
};

struct sampler_time_mark {
  uint64_t at_ns, dur_ns; /* from the profile's start (clipped to it); how long */
  int kind;               /* enum sampler_mark_kind */
};

struct sampler_time_thread {
  int32_t tid;      /* the OS thread id */
  int64_t java_id;  /* java.lang.Thread's id, 0 when not a Java thread (or not known) */
  const char *name; /* UTF-8 */
};

/* The profile's time axis: its entries in time order (cell ascending). Every capture of the
 * profile is in it but those time_lost counts. */
struct sampler_time {
  int64_t start_wall_ns; /* when the profile began, ns since the epoch */
  uint64_t duration_ns;  /* from then to the snapshot */
  uint64_t cell_ns;      /* 20 ms, or coarser when the axis reached its memory limit */
  struct sampler_time_entry *entries;
  size_t n;
  struct sampler_time_thread *threads;
  size_t nthreads;
  char *names;                     /* the threads' names */
  struct sampler_time_mark *marks; /* in the order they were noted */
  size_t nmarks;
  uint64_t marks_lost; /* marks past the most a profile keeps (MARKS_MAX: 65,536), not kept */
};

/* Notes a moment of the run, [start_mono_ns, end_mono_ns] (plat_mono_ns's clock), for the
 * time axis of the profiles that span it (kind: enum sampler_mark_kind). Thread-safe; holds a
 * mutex for a few stores only, waits for nothing else: callable from a JVMTI GC callback. Not
 * from a signal handler. Returns 0 or -ENOSPC (the profile holds the most marks it keeps: this
 * one is counted in marks_lost). */
int sampler_mark(int kind, uint64_t start_mono_ns, uint64_t end_mono_ns);

/* What a mark of kind (enum sampler_mark_kind) is called on the time axis of every output ("GC
 * pause", "profile written: kill -3", ...); NULL for an unknown kind. */
const char *sampler_mark_name(int kind);

/* A copy of what was recorded (stacks, time and report) taken at one moment, for writing
 * without holding up the sampler. */
struct sampler_snapshot {
  struct sampler_report report;
  struct sampler_stack *stacks; /* in the order first seen */
  size_t n;
  uint32_t *frames;
  size_t cap_stacks, cap_frames;
  struct sampler_time time;
};
/* Takes a snapshot into *s; with `cut`, in the same moment starts the next profile from zero
 * (as sampler_clear), so that consecutive snapshots split the run without a gap or an overlap.
 * Returns 0 or -ENOMEM (then nothing was cut). Thread-safe; sampling goes on. */
int sampler_snapshot(struct sampler_snapshot *s, int cut);
/* Calls fn for every stack of s. */
void sampler_snapshot_foreach(const struct sampler_snapshot *s,
                              void (*fn)(void *ctx, const struct sampler_stack *st), void *ctx);
void sampler_snapshot_free(struct sampler_snapshot *s);
/* The name of frame id `id`, valid for the life of the process. Lock-free. */
const char *sampler_frame_name(uint32_t id);

/* Number of frame names so far: ids are 0 .. sampler_frame_count()-1. Lock-free. */
size_t sampler_frame_count(void);

#endif
