/*
 * types.h — the vocabulary the front door (sampler.h) and the folders behind it share: the
 * configuration, what the sampler needs of the JVM, and a thread to be sampled. Below the API:
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
};

/* A thread to be sampled (the host's view of it; the registry keeps a slot per such thread).
 * Not the sampler's own thread: that is thread/. */
struct sampler_thread {
  pid_t tid; /* kernel thread id */
  /* its name as the host has it (JVMTI's modified UTF-8, the kernel's comm, any bytes): the
   * registry keeps at most 127 bytes of it as UTF-8, cut between characters (utf8.h), which
   * take at most 2 bytes of input each: a host that cuts a long name at 511 bytes cuts only
   * what is not kept */
  const char *name;
  JNIEnv *env; /* its own JNIEnv (AsyncGetCallTrace walks with it); NULL: not walked */
  uintptr_t stack_lo, stack_hi; /* its stack, [lo, hi); 0, 0 when unknown */
  void *handle;                 /* the host's handle of it (thread_state's argument), or NULL */
  int at_start;                 /* registered by the thread itself as it starts (its ThreadStart) */
  uint64_t start_cpu_ns; /* with at_start: its own CPU clock then (a thread attached again, like
                            DestroyJavaVM on the main thread, carries its earlier CPU) */
};

#endif
