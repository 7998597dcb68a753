/*
 * agent_internal.h — what the agent's four files share, private to libsampler.so (only the
 * Agent_* entry points are exported): the state `agent` and the calls the files make of each
 * other. lifecycle.c loads the agent, sets it up (and undoes that), starts and ends runs and
 * the sampler thread; events.c holds the JVMTI event callbacks and finds the threads;
 * chunks.c writes the profile and cuts loop= chunks; commands.c answers the attaches' commands.
 *
 * Who writes what in `agent` (every write but `dead`'s, the sampler thread's sampler_jni and
 * the chunk fields is made with ctl held):
 *   jvmti, vm, sampler_thread, run, started, state — lifecycle.c (state also when a run
 *     ends: agent_finish_run); opt — lifecycle.c at load, commands.c for a new start, and
 *     for a stop's or a dump's file=; sampler_jni — the sampler thread (lifecycle.c);
 *   eetop, tid, dead — events.c (dead once, at VMDeath; read without ctl by every callback);
 *   last_file, chunk_seq, chunk_start, cutter, cutter_on, cutter_stop — chunks.c
 *     (chunk_seq/chunk_start and cutter_stop under cut_lock);
 *   reply — commands.c, for the length of one command.
 */
#ifndef SAMPLER_AGENT_INTERNAL_H
#define SAMPLER_AGENT_INTERNAL_H

#include <jvmti.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "asgct.h"
#include "options.h"
#include "sampler.h"

#define EXPORT __attribute__((visibility("default")))

/* The agent's life: loaded (at start, or by the first attach), it samples (RUNNING) until
 * stopped — by `stop`, the end of `duration`, or the JVM's exit — and then waits (STOPPED) for
 * another `start`, which may change the options. Commands arrive on attaches (Agent_OnAttach:
 * start, stop, dump, status), one at a time under `ctl`. */
enum agent_state { NOT_STARTED = 0, RUNNING, STOPPED };

struct agent {
  jvmtiEnv *jvmti;
  JavaVM *vm;
  asgct_fn asgct;           /* HotSpot's AsyncGetCallTrace (set at load, before any event) */
  struct agent_options opt; /* of the current or last run */
  jobject sampler_thread;   /* global ref */
  JNIEnv *sampler_jni;
  jfieldID eetop; /* java.lang.Thread.eetop: the JavaThread's address, or NULL */
  jfieldID tid;   /* java.lang.Thread.tid: what Thread.getId() returns, or NULL */
  _Atomic int dead;
  int gc_marks;        /* the JVM posts GC pauses to us (can_generate_garbage_collection_events) */
  int monitor_events;  /* it can post contended monitor entries (can_generate_monitor_events) */
  int bind_events;     /* it posts native methods' binds (can_generate_native_method_bind_events) */
  pthread_mutex_t ctl; /* commands, the end of a run, the JVM's death */
  enum agent_state state;
  unsigned run;                 /* runs started: a sampler thread ends its own run only */
  time_t started;               /* the run's start (wall clock) */
  char last_file[OPT_FILE_MAX]; /* the last profile written */
  /* loop=: the chunk being recorded, and the thread that cuts them */
  uint64_t chunk_seq;
  time_t chunk_start;
  pthread_t cutter;
  int cutter_on;
  pthread_mutex_t cut_lock; /* chunk_seq/chunk_start, cutter_stop; and one writer at a time */
  pthread_cond_t cut_cond;
  int cutter_stop;
  FILE *reply; /* the current command's reply= file, or NULL */
};

/* The agent's one state (lifecycle.c); the table above says who writes which part. */
extern struct agent agent;

/* ---- lifecycle.c ---- */

/* The one boundary where JVMTI errors become ours: reports e with the call's name and
 * returns 0 when there was none, else -ENOMEM (out of memory) or -EINVAL (any other).
 * Any thread; not signal-safe. */
int check(jvmtiError e, const char *call);

/* The sampler's configuration from the options o. Pure. */
struct sampler_config agent_config_of(const struct agent_options *o);

/* Starts sampling with agent.opt: the sampler thread, and with `loop` the chunks' writer. ctl
 * held. Returns 0 or a negative errno-style code (said why). */
int agent_begin_run(jvmtiEnv *jvmti, JNIEnv *jni);

/* Ends the run: sampling stopped, the last chunk (or the whole profile) written, the summary
 * line printed. ctl held. */
void agent_finish_run(const char *why);

/* A failure after setup (the sampler thread could not start): undoes the setup, lets go of the
 * threads registered and of the sampler thread's object, and gives the environment back. ctl
 * held; no run going on. */
void agent_abandon(void);

/* The attach that loads the agent: set up as at start, then sampling begins at once; a failed
 * one leaves nothing of ours behind. ctl held. Returns 0 or a negative errno-style code (said
 * why). */
int agent_first_attach(JavaVM *vm, const char *options);

/* ---- events.c ---- */

/* Sets our event callbacks and enables their events — not the code map's three: they follow
 * the runs that signal threads (events_code). Returns 0 or check()'s code: the caller undoes
 * with events_remove. At load or the first attach, ctl held or before any other thread of ours. */
int events_install(jvmtiEnv *jvmti);

/* Enables ClassLoad, which AsyncGetCallTrace requires, for thread t alone (the sampler thread,
 * while it lives: a run), or — a JVM that refuses the filter — for every thread. Returns 0 or
 * check()'s code. */
int events_class_load(jvmtiEnv *jvmti, jthread t);

/* sampler_jvm.code_events: turns CompiledMethodLoad/Unload and DynamicCodeGenerated on and
 * replays the code that exists (GenerateEvents: all of it, or the stubs only), or turns them
 * off (how: enum sampler_code_events). Returns 0 or check()'s code. On the sampler thread (an
 * agent thread: JVMTI may be called), never with ctl held. */
int events_code(void *ctx, int how);

/* Disables every event of ours and takes our callbacks out. Errors are ignored (some events
 * may never have been enabled). */
void events_remove(jvmtiEnv *jvmti);

/* Everything that needs a live VM: names of the program, jmethodIDs of the classes loaded so
 * far, the threads running already (t is the calling thread), and the run begun. At VMInit, or
 * at attach; ctl held. Returns 0 or agent_begin_run's negative errno-style code (said why). */
int events_start_live(jvmtiEnv *jvmti, JNIEnv *jni, jthread t);

/* event=alloc: turns JVMTI's sampled allocation events on — the capability, the mean interval
 * `bytes`, stacks of up to depth frames — or off (bytes 0). Returns 0 or check()'s code. ctl
 * held. */
int events_alloc(jvmtiEnv *jvmti, uint64_t bytes, int depth);

/* event=lock: turns the recording of lock waits on (stacks of up to depth frames; the park's
 * wrapper registered the first time, with jni) or off (on 0). Says what cannot be seen (no
 * monitor events; the park's binding missed at an attach). Returns 0, or -EINVAL when neither
 * monitors nor parks can be seen. ctl held. */
int events_lock(jvmtiEnv *jvmti, JNIEnv *jni, int on, int depth);

/* The enum sampler_thread_state of the thread whose handle (a global reference) is h: the
 * sampler's thread_state callback. Called on the sampler thread; not signal-safe. */
int events_thread_state(void *ctx, void *h);

/* ---- chunks.c ---- */

/* Writes what was recorded to path (a snapshot; with `cut`, the next chunk starts from zero at
 * the same moment), and its stats to stats= when set; with `summary` the short line at exit is
 * said. Says why not when it cannot (why: what asked for the write). cut_lock held. Returns 0
 * or a negative errno-style code. */
int chunks_write(const char *path, int cut, int summary, const char *why);

/* The file the chunk now being recorded goes to (the profile's own file without `loop`), into
 * out. cut_lock held, or no chunks' thread running. */
void chunks_current_file(char *out, size_t len);

/* With loop=, starts the thread that cuts the chunks (said when it cannot: one profile at the
 * end instead); the chunk count restarts at 0 either way. ctl held. */
void chunks_cutter_start(void);

/* Stops and joins the chunks' thread, if running. ctl held, cut_lock not. */
void chunks_cutter_stop(void);

/* ---- commands.c ---- */

/* Says something to the user: on the JVM's stderr — or, from the thread answering a command that
 * named a reply= file, in that file alone. Any thread; not signal-safe. */
void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
