/*
 * lifecycle.c — the JVMTI entry points and event callbacks: loads the options, finds
 * AsyncGetCallTrace, keeps the thread registry current (ThreadStart/ThreadEnd), creates
 * jmethodIDs ahead of time (ClassPrepare, and a sweep at VMInit), runs the sampler thread, and
 * writes the profile at VM death, on kill -3 (DataDumpRequest) and when `duration` ends.
 *
 * Loaded at start (Agent_OnLoad: -agentlib/-agentpath) or into a running JVM (Agent_OnAttach:
 * jcmd JVMTI.agent_load). Hazards: callbacks can run concurrently on any thread and after VMDeath has begun; every one
 * checks `dead` first. The agent never calls exit(): on a bad option Agent_OnLoad returns an
 * error and the JVM stops itself; `help` prints the options and returns JNI_OK with nothing
 * installed, so the program runs unprofiled.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <jvmti.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "counters.h"
#include "names.h"
#include "options.h"
#include "output.h"
#include "platform.h"
#include "sampler.h"

#define EXPORT __attribute__((visibility("default")))

/* The agent's life: loaded (at start, or by the first attach), it samples (RUNNING) until
 * stopped — by `stop`, the end of `duration`, or the JVM's exit — and then waits (STOPPED) for
 * another `start`, which may change the options. Commands arrive on attaches (Agent_OnAttach:
 * start, stop, dump, status), one at a time under `ctl`. */
enum agent_state { NOT_STARTED = 0, RUNNING, STOPPED };

static struct {
  jvmtiEnv *jvmti;
  JavaVM *vm;
  struct agent_options opt; /* of the current or last run */
  jobject sampler_thread;   /* global ref */
  JNIEnv *sampler_jni;
  jfieldID eetop; /* java.lang.Thread.eetop: the JavaThread's address, or NULL */
  _Atomic int dead;
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
} agent = {.ctl = PTHREAD_MUTEX_INITIALIZER,
           .cut_lock = PTHREAD_MUTEX_INITIALIZER,
           .cut_cond = PTHREAD_COND_INITIALIZER};

/* Says something to the user: on the JVM's stderr, and in the reply file of the command being
 * answered. */
static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "sampler: ");
  vfprintf(stderr, fmt, ap);
  fprintf(stderr, "\n");
  fflush(stderr);
  va_end(ap);
  if (agent.reply) {
    va_start(ap, fmt);
    vfprintf(agent.reply, fmt, ap);
    fputc('\n', agent.reply);
    fflush(agent.reply);
    va_end(ap);
  }
}

/* The one boundary where JVMTI errors become ours: reports e with the call's name and
 * returns 0 when there was none, else -ENOMEM (out of memory) or -EINVAL (any other). */
static int check(jvmtiError e, const char *call) {
  if (e == JVMTI_ERROR_NONE) return 0;
  char *name = NULL;
  if (agent.jvmti) (*agent.jvmti)->GetErrorName(agent.jvmti, e, &name);
  say("%s failed: %s", call, name ? name : "unknown JVMTI error");
  if (name) (*agent.jvmti)->Deallocate(agent.jvmti, (unsigned char *)name);
  return e == JVMTI_ERROR_OUT_OF_MEMORY ? -ENOMEM : -EINVAL;
}

/* ---- jmethodIDs ahead of time: ASGCT cannot create them in a signal handler ---- */

static void create_method_ids(jvmtiEnv *jvmti, jclass cls) {
  jint n = 0;
  jmethodID *methods = NULL;
  if ((*jvmti)->GetClassMethods(jvmti, cls, &n, &methods) == JVMTI_ERROR_NONE)
    (*jvmti)->Deallocate(jvmti, (unsigned char *)methods);
}

static void JNICALL on_class_load(jvmtiEnv *jvmti, JNIEnv *jni, jthread t, jclass cls) {
  (void)jvmti, (void)jni, (void)t, (void)cls; /* enabled because ASGCT requires it */
}

static void JNICALL on_class_prepare(jvmtiEnv *jvmti, JNIEnv *jni, jthread t, jclass cls) {
  (void)jni, (void)t;
  if (!atomic_load(&agent.dead)) create_method_ids(jvmti, cls);
}

static void sweep_loaded_classes(jvmtiEnv *jvmti) {
  jint n = 0;
  jclass *classes = NULL;
  if ((*jvmti)->GetLoadedClasses(jvmti, &n, &classes) != JVMTI_ERROR_NONE) return;
  for (jint i = 0; i < n; i++) create_method_ids(jvmti, classes[i]);
  (*jvmti)->Deallocate(jvmti, (unsigned char *)classes);
}

/* ---- the compiled-code map: where a PC that AsyncGetCallTrace cannot walk belongs ---- */

static void JNICALL on_compiled_method_load(jvmtiEnv *jvmti, jmethodID m, jint size,
                                            const void *addr, jint map_length,
                                            const jvmtiAddrLocationMap *map, const void *info) {
  (void)jvmti, (void)map_length, (void)map;
  sampler_method_loaded(m, addr, size, info);
}

static void JNICALL on_compiled_method_unload(jvmtiEnv *jvmti, jmethodID m, const void *addr) {
  (void)jvmti;
  sampler_method_unloaded(m, addr);
}

static void JNICALL on_dynamic_code(jvmtiEnv *jvmti, const char *name, const void *addr,
                                    jint length) {
  (void)jvmti;
  sampler_code_generated(name, addr, length);
}

/* ---- threads ---- */

static int is_sampler_thread(JNIEnv *jni, jthread t) {
  return agent.sampler_thread && (*jni)->IsSameObject(jni, t, agent.sampler_thread);
}

/* The JavaThread address of t (java.lang.Thread.eetop), or 0. */
static uintptr_t java_thread_of(JNIEnv *jni, jthread t) {
  return agent.eetop ? (uintptr_t)(*jni)->GetLongField(jni, t, agent.eetop) : 0;
}

/* Bytes of a thread's name handed to the registry, which converts JVMTI's modified UTF-8 and
 * keeps 127 bytes of it (sampler_thread.name): enough that only what it drops is cut here. */
#define THREAD_NAME_IN 512

/* The name JVMTI gives thread t into buf ("?" when it gives none), as JVMTI gives it. */
static void thread_name(jvmtiEnv *jvmti, JNIEnv *jni, jthread t, char *buf, size_t len) {
  jvmtiThreadInfo info;
  memset(&info, 0, sizeof info);
  if ((*jvmti)->GetThreadInfo(jvmti, t, &info) != JVMTI_ERROR_NONE) info.name = NULL;
  snprintf(buf, len, "%s", info.name ? info.name : "?");
  if (info.name) (*jvmti)->Deallocate(jvmti, (unsigned char *)info.name);
  if (info.thread_group) (*jni)->DeleteLocalRef(jni, info.thread_group);
  if (info.context_class_loader) (*jni)->DeleteLocalRef(jni, info.context_class_loader);
}

static void register_thread(JNIEnv *jni, const struct sampler_thread *t) {
  int rc = sampler_thread_started(t);
  if (rc < 0) {
    say("thread %s not sampled: %s", t->name, strerror(-rc));
    if (t->handle && jni) (*jni)->DeleteGlobalRef(jni, (jobject)t->handle);
  }
}

/* A Java thread's handle in the registry: a global reference to it (for its state). */
static void *thread_handle(JNIEnv *jni, jthread t) {
  return jni ? (void *)(*jni)->NewGlobalRef(jni, t) : NULL;
}

/* The enum sampler_thread_state of the thread whose handle (a global reference) is h. */
static int thread_state(void *ctx, void *h) {
  (void)ctx;
  jint st = 0;
  if (!agent.jvmti ||
      (*agent.jvmti)->GetThreadState(agent.jvmti, (jthread)h, &st) != JVMTI_ERROR_NONE)
    return SAMPLER_STATE_UNKNOWN;
  if (st & JVMTI_THREAD_STATE_BLOCKED_ON_MONITOR_ENTER) return SAMPLER_STATE_BLOCKED;
  if (st & JVMTI_THREAD_STATE_SLEEPING) return SAMPLER_STATE_SLEEPING;
  if (st & JVMTI_THREAD_STATE_PARKED) return SAMPLER_STATE_PARKED;
  if (st & JVMTI_THREAD_STATE_IN_OBJECT_WAIT) return SAMPLER_STATE_WAITING;
  if (st & JVMTI_THREAD_STATE_RUNNABLE) return SAMPLER_STATE_RUNNABLE;
  return SAMPLER_STATE_UNKNOWN;
}

/* Registers the calling thread t: its JNIEnv is jni, its stack its own. */
static void register_current(jvmtiEnv *jvmti, JNIEnv *jni, jthread t, int at_start) {
  char name[THREAD_NAME_IN];
  thread_name(jvmti, jni, t, name, sizeof name);
  struct sampler_thread th = {.tid = plat_gettid(),
                              .name = name,
                              .env = jni,
                              .handle = thread_handle(jni, t),
                              .at_start = at_start,
                              .start_cpu_ns = at_start ? plat_self_cpu_ns() : 0};
  plat_self_stack(&th.stack_lo, &th.stack_hi); /* for walking from a stub's frame record */
  register_thread(jni, &th);
}

static void JNICALL on_thread_start(jvmtiEnv *jvmti, JNIEnv *jni, jthread t) {
  if (atomic_load(&agent.dead) || is_sampler_thread(jni, t)) return;
  register_current(jvmti, jni, t, 1);
}

static void JNICALL on_thread_end(jvmtiEnv *jvmti, JNIEnv *jni, jthread t) {
  (void)jvmti, (void)t;
  /* also after death: no stale tid behind */
  void *h = sampler_thread_ended(plat_gettid(), plat_self_cpu_ns());
  if (h) (*jni)->DeleteGlobalRef(jni, (jobject)h);
}

/* Without the JavaThread layout: Java threads are matched by the name the kernel keeps for
 * them (the first 15 bytes of the Java name); they get no JNIEnv, so their samples say
 * "[not a Java thread]". */
struct by_comm {
  char (*names)[THREAD_NAME_IN];
  jint n;
  pid_t self;
};

static int register_by_comm(void *vctx, pid_t tid) {
  const struct by_comm *c = vctx;
  char comm[32];
  if (tid == c->self || plat_thread_name(tid, comm, sizeof comm) != 0) return 0;
  for (jint i = 0; i < c->n; i++) {
    if (c->names[i][0] && strncmp(c->names[i], comm, 15) == 0 &&
        strlen(comm) == strnlen(c->names[i], 15)) {
      struct sampler_thread th = {.tid = tid, .name = c->names[i]};
      register_thread(NULL, &th);
      break;
    }
  }
  return 0;
}

/* Java threads that started before our ThreadStart events (at VMInit: Reference Handler,
 * Finalizer, Signal Dispatcher...; at attach: all of them). Each one's kernel tid and JNIEnv
 * come from its JavaThread (java.lang.Thread.eetop -> OSThread), so the main thread and
 * JNI-attached threads are found too. A thread that ended meanwhile is skipped, and one that
 * ends right after its registration is removed again (its ThreadEnd may have run before). */
static void register_existing(jvmtiEnv *jvmti, JNIEnv *jni, jthread current) {
  jint n = 0;
  jthread *threads = NULL;
  if (check((*jvmti)->GetAllThreads(jvmti, &n, &threads), "GetAllThreads")) return;
  char(*names)[THREAD_NAME_IN] = calloc((size_t)n + 1, sizeof *names);
  int by_eetop = 1;
  for (jint i = 0; i < n; i++) {
    jthread t = threads[i];
    if ((*jni)->IsSameObject(jni, t, current) || is_sampler_thread(jni, t)) {
      (*jni)->DeleteLocalRef(jni, t);
      continue;
    }
    char name[THREAD_NAME_IN];
    thread_name(jvmti, jni, t, name, sizeof name);
    struct sampler_thread th = {.name = name};
    int rc = sampler_java_thread_ids(java_thread_of(jni, t), &th.tid, &th.env);
    if (rc == -EINVAL) by_eetop = 0; /* no layout: fall back on names below */
    if (rc == -EINVAL && names) snprintf(names[i], sizeof names[i], "%s", name);
    if (rc == 0) {
      th.handle = thread_handle(jni, t);
      register_thread(jni, &th);
      jint state = 0;
      if ((*jvmti)->GetThreadState(jvmti, t, &state) != JVMTI_ERROR_NONE ||
          !(state & JVMTI_THREAD_STATE_ALIVE)) {
        void *h = sampler_thread_ended(th.tid, 0);
        if (h) (*jni)->DeleteGlobalRef(jni, (jobject)h);
      }
    }
    (*jni)->DeleteLocalRef(jni, t);
  }
  (*jvmti)->Deallocate(jvmti, (unsigned char *)threads);
  if (!by_eetop && names) {
    struct by_comm c = {names, n, plat_gettid()};
    plat_foreach_thread(register_by_comm, &c);
  }
  free(names);
}

/* ---- writing the profile ---- */

/* Writes what was recorded to path (a snapshot; with `cut`, the next chunk starts from zero at
 * the same moment), and its stats to stats= when set. On success the short line at exit is said
 * when `summary`. Says why not when it cannot. Returns 0 or a negative errno-style code. */
static int write_profile(const char *path, int cut, int summary, const char *why) {
  char err[OPT_FILE_MAX + 256];
  struct sampler_snapshot snap;
  int rc = sampler_snapshot(&snap, cut);
  if (rc == 0)
    rc = output_write(&agent.opt, path, &snap, err, sizeof err);
  else
    snprintf(err, sizeof err, "cannot write %s: %s", path, strerror(-rc));
  if (rc != 0) {
    say("%s (%s)", err, why);
  } else {
    snprintf(agent.last_file, sizeof agent.last_file, "%s", path);
    const char *stats = agent.opt.stats; /* named at exit only when written */
    if (*stats && output_write_stats(&agent.opt, path, &snap.report, err, sizeof err)) {
      say("%s (%s)", err, why);
      stats = NULL;
    }
    if (summary) {
      char line[2 * OPT_FILE_MAX + 512];
      counters_exit_line(line, sizeof line, &agent.opt, path, stats, &snap.report);
      say("%s", line);
    }
  }
  if (rc == 0 || snap.stacks) sampler_snapshot_free(&snap);
  return rc;
}

/* The file the chunk now being recorded goes to (the profile's own file without `loop`). */
static void current_file(char *out, size_t len) {
  if (!agent.opt.loop_ns ||
      opt_chunk_file(&agent.opt, agent.chunk_seq, agent.chunk_start, out, len))
    snprintf(out, len, "%s", agent.opt.file);
}

/* loop=: every period, the chunk so far is cut off and written, the next one named after it.
 * The cuts keep to one schedule from the start (monotonic clock): the time a chunk takes to be
 * written is not added to the next period (the chunks would drift by their writes); a write
 * that outlasts a period skips the cuts it missed. */
static void *cutter_main(void *arg) {
  (void)arg;
  uint64_t period = agent.opt.loop_ns, next = plat_mono_ns() + period;
  pthread_mutex_lock(&agent.cut_lock);
  while (!agent.cutter_stop) {
    struct timespec until = {(time_t)(next / 1000000000u), (long)(next % 1000000000u)};
    int rc = 0;
    while (!agent.cutter_stop && rc != ETIMEDOUT)
      rc = pthread_cond_clockwait(&agent.cut_cond, &agent.cut_lock, CLOCK_MONOTONIC, &until);
    if (agent.cutter_stop) break;
    char path[OPT_FILE_MAX];
    current_file(path, sizeof path);
    if (write_profile(path, 1, 0, "loop") == 0)
      say("chunk %" PRIu64 " written to %s", agent.chunk_seq, path);
    /* the chunk's names, tree and buffers were freed: without this, glibc keeps much of that
     * memory, and continuous profiling grew by ~20 MB an hour (bench/results/soak.md) */
    plat_release_free_memory(); /* ~0.5 ms */
    agent.chunk_seq++; /* a chunk that could not be written is not overwritten by the next */
    agent.chunk_start = time(NULL);
    uint64_t now = plat_mono_ns();
    next += period;
    if (next <= now) next += ((now - next) / period + 1) * period;
  }
  pthread_mutex_unlock(&agent.cut_lock);
  return NULL;
}

static void cutter_start(void) {
  agent.chunk_seq = 0;
  agent.chunk_start = agent.started;
  agent.cutter_stop = 0;
  if (!agent.opt.loop_ns) return;
  agent.cutter_on = pthread_create(&agent.cutter, NULL, cutter_main, NULL) == 0;
  if (agent.cutter_on) pthread_setname_np(agent.cutter, "sampler-loop");
  if (!agent.cutter_on)
    say("%s",
        "loop: cannot start the thread that writes the chunks: one profile at the end instead");
}

static void cutter_stop(void) {
  if (!agent.cutter_on) return;
  pthread_mutex_lock(&agent.cut_lock);
  agent.cutter_stop = 1;
  pthread_cond_signal(&agent.cut_cond);
  pthread_mutex_unlock(&agent.cut_lock);
  pthread_join(agent.cutter, NULL);
  agent.cutter_on = 0;
}

/* Ends the run: sampling stopped, the last chunk (or the whole profile) written, the summary
 * line printed. ctl held. */
static void finish_run(const char *why) {
  sampler_stop();
  cutter_stop();
  char path[OPT_FILE_MAX];
  current_file(path, sizeof path);
  pthread_mutex_lock(&agent.cut_lock);
  write_profile(path, 0, 1, why); /* says where it went */
  pthread_mutex_unlock(&agent.cut_lock);
  agent.state = STOPPED;
}

static void JNICALL on_data_dump(jvmtiEnv *jvmti) {
  (void)jvmti;
  if (atomic_load(&agent.dead)) return;
  pthread_mutex_lock(&agent.ctl);
  if (agent.state == RUNNING) {
    char path[OPT_FILE_MAX];
    pthread_mutex_lock(&agent.cut_lock);
    current_file(path, sizeof path);
    if (write_profile(path, 0, 0, "kill -3") == 0) say("profile so far written to %s", path);
    pthread_mutex_unlock(&agent.cut_lock);
  }
  pthread_mutex_unlock(&agent.ctl);
}

/* ---- the sampler thread ---- */

static int name_method(void *ctx, jmethodID m, jint bci, char *buf, size_t len) {
  (void)ctx;
  return names_method(agent.jvmti, agent.sampler_jni, m, bci, buf, len);
}

/* A jmethodID whose class was unloaded: JVMTI says INVALID_METHODID (HotSpot clears it). */
static int method_alive(void *ctx, jmethodID m) {
  (void)ctx;
  jint mods;
  return (*agent.jvmti)->GetMethodModifiers(agent.jvmti, m, &mods) != JVMTI_ERROR_INVALID_METHODID;
}

static void JNICALL sampler_main(jvmtiEnv *jvmti, JNIEnv *jni, void *arg) {
  (void)jvmti;
  unsigned run = (unsigned)(uintptr_t)arg;
  agent.sampler_jni = jni;
  if (!sampler_run()) return;     /* stopped: by whoever ended the run */
  pthread_mutex_lock(&agent.ctl); /* the duration ended: the final profile now */
  if (agent.state == RUNNING && agent.run == run && !atomic_load(&agent.dead))
    finish_run("duration");
  pthread_mutex_unlock(&agent.ctl);
}

static int start_sampler_thread(jvmtiEnv *jvmti, JNIEnv *jni, unsigned run) {
  jclass cls = (*jni)->FindClass(jni, "java/lang/Thread");
  jmethodID init = cls ? (*jni)->GetMethodID(jni, cls, "<init>", "(Ljava/lang/String;)V") : NULL;
  jstring name = (*jni)->NewStringUTF(jni, "sampler");
  jobject t = init && name ? (*jni)->NewObject(jni, cls, init, name) : NULL;
  if (!t) {
    (*jni)->ExceptionClear(jni);
    say("%s", "cannot create the sampler thread");
    return -ENOMEM;
  }
  if (agent.sampler_thread) (*jni)->DeleteGlobalRef(jni, agent.sampler_thread);
  agent.sampler_thread = (*jni)->NewGlobalRef(jni, t);
  return check((*jvmti)->RunAgentThread(jvmti, t, sampler_main, (void *)(uintptr_t)run,
                                        JVMTI_THREAD_MAX_PRIORITY),
               "RunAgentThread");
}

/* ---- VM lifecycle ---- */

static void *libjvm_sym(const char *name, void *ctx) {
  (void)ctx;
  return dlsym(RTLD_DEFAULT, name);
}

/* The anchor walk of samples in VM code called from Java (sampler.h) needs the JavaThread
 * layout, checked here on the current thread through java.lang.Thread.eetop; the same field
 * then gives the other threads' tids and JNIEnvs (register_existing). */
static void setup_anchor_walk(JNIEnv *jni, jthread t) {
  jclass tc = (*jni)->FindClass(jni, "java/lang/Thread");
  agent.eetop = tc ? (*jni)->GetFieldID(jni, tc, "eetop", "J") : NULL;
  if ((*jni)->ExceptionCheck(jni)) (*jni)->ExceptionClear(jni);
  if (tc) (*jni)->DeleteLocalRef(jni, tc);
  if (sampler_setup_anchor_walk(jni, java_thread_of(jni, t), plat_gettid()) != 0) {
    struct sampler_report r;
    sampler_report(&r);
    say("samples in VM code called from Java stay unwalked on this JVM: %s", r.anchor_walk_off);
  }
}

/* Starts sampling with agent.opt: the sampler thread, and with `loop` the chunks' writer. ctl
 * held. Returns 0 or a negative errno-style code (said why). */
static int begin_run(jvmtiEnv *jvmti, JNIEnv *jni) {
  agent.run++;
  agent.started = time(NULL);
  cutter_start();
  int rc = start_sampler_thread(jvmti, jni, agent.run);
  if (rc) {
    cutter_stop();
    return rc;
  }
  agent.state = RUNNING;
  return 0;
}

/* Everything that needs a live VM: names of the program, jmethodIDs of the classes loaded so
 * far, the threads running already, and the sampler thread. At VMInit, or at attach; ctl held.
 * Returns 0 or begin_run's negative errno-style code (said why): the run did not start. */
static int start_live(jvmtiEnv *jvmti, JNIEnv *jni, jthread t) {
  char *cmd = NULL;
  if ((*jvmti)->GetSystemProperty(jvmti, "sun.java.command", &cmd) == JVMTI_ERROR_NONE && cmd) {
    cmd[strcspn(cmd, " ")] = '\0';
    output_set_program(cmd);
    (*jvmti)->Deallocate(jvmti, (unsigned char *)cmd);
  }
  sweep_loaded_classes(jvmti);
  /* code that was generated before our events were on (the interpreter, early stubs, and at
   * attach every nmethod): replayed into the map */
  if (agent.opt.codemap) {
    check((*jvmti)->GenerateEvents(jvmti, JVMTI_EVENT_DYNAMIC_CODE_GENERATED), "GenerateEvents");
    check((*jvmti)->GenerateEvents(jvmti, JVMTI_EVENT_COMPILED_METHOD_LOAD), "GenerateEvents");
  }
  register_current(jvmti, jni, t, 0);
  setup_anchor_walk(jni, t);
  register_existing(jvmti, jni, t);
  return begin_run(jvmti, jni);
}

static void abandon(void);

/* A JVM started with the agent whose sampler thread cannot start (too many threads, a full
 * heap): the program runs unprofiled, with nothing of ours installed. */
static void JNICALL on_vm_init(jvmtiEnv *jvmti, JNIEnv *jni, jthread t) {
  pthread_mutex_lock(&agent.ctl);
  if (start_live(jvmti, jni, t) != 0) {
    say("%s", "not profiling: the program runs without the agent");
    abandon();
  }
  pthread_mutex_unlock(&agent.ctl);
}

static void JNICALL on_vm_death(jvmtiEnv *jvmti, JNIEnv *jni) {
  (void)jvmti, (void)jni;
  pthread_mutex_lock(&agent.ctl);
  atomic_store(&agent.dead, 1);
  if (agent.state == RUNNING) finish_run("exit");
  pthread_mutex_unlock(&agent.ctl);
}

/* ---- loading ---- */

static struct sampler_config sampler_config_of(const struct agent_options *o) {
  return (struct sampler_config){.interval_ns = o->interval_ns,
                                 .depth = o->depth,
                                 .hasrun = o->hasrun,
                                 .thread_roots = o->threads,
                                 .lines = o->lines,
                                 .ann = o->ann,
                                 .codemap = o->codemap,
                                 .native_frames = o->cstack,
                                 .jvm_threads = o->jvmthreads,
                                 .duration_ns = o->duration_ns,
                                 .wall = o->wall,
                                 .sig = o->sig,
                                 .cpu_timers = o->cputimers};
}

static const jvmtiEvent EVENTS[] = {
    JVMTI_EVENT_VM_INIT, JVMTI_EVENT_VM_DEATH, JVMTI_EVENT_THREAD_START, JVMTI_EVENT_THREAD_END,
    JVMTI_EVENT_CLASS_LOAD, JVMTI_EVENT_CLASS_PREPARE, JVMTI_EVENT_DATA_DUMP_REQUEST,
    /* the code map's, last */
    JVMTI_EVENT_COMPILED_METHOD_LOAD, JVMTI_EVENT_COMPILED_METHOD_UNLOAD,
    JVMTI_EVENT_DYNAMIC_CODE_GENERATED};

/* Keeps this library mapped for the life of the process, even when the JVM unloads it after
 * a failed Agent_OnAttach (JDK 16 and later do): a JVMTI callback that began before ours were
 * taken out may still be running in it, and nothing makes HotSpot wait for it. The agent stays
 * loaded and idle; a later attach finds it as it was left. */
static void pin_library(void) {
  Dl_info info;
  if (dladdr((void *)pin_library, &info) && info.dli_fname &&
      !dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD | RTLD_NODELETE))
    say("cannot keep the agent's library loaded: %s", dlerror());
}

/* Turns our events off and takes our callbacks and signal handlers back out (the signals'
 * previous dispositions restored): after a failed load or attach nothing in the JVM points
 * into this library any more, and the library is kept mapped (pin_library). */
static void undo_setup(jvmtiEnv *jvmti) {
  for (size_t i = 0; i < sizeof EVENTS / sizeof *EVENTS; i++)
    (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_DISABLE, EVENTS[i], NULL);
  (*jvmti)->SetEventCallbacks(jvmti, NULL, 0);
  sampler_fini();
  pin_library();
}

static void release_handle(void *ctx, void *h) {
  JNIEnv *jni = ctx;
  if (jni) (*jni)->DeleteGlobalRef(jni, (jobject)h);
}

/* A failure after setup (the sampler thread could not start): undoes the setup, lets go of the
 * threads registered and of the sampler thread's object, and gives the environment back, so
 * that the JVM is as it was before the agent and a later attach may set it up again. ctl
 * held; no run going on. */
static void abandon(void) {
  jvmtiEnv *jvmti = agent.jvmti;
  JNIEnv *jni = NULL;
  if ((*agent.vm)->GetEnv(agent.vm, (void **)&jni, JNI_VERSION_1_6) != JNI_OK) jni = NULL;
  undo_setup(jvmti);
  sampler_forget_threads(release_handle, jni);
  if (agent.sampler_thread && jni) (*jni)->DeleteGlobalRef(jni, agent.sampler_thread);
  agent.sampler_thread = NULL;
  agent.sampler_jni = NULL;
  (*jvmti)->DisposeEnvironment(jvmti);
  agent.jvmti = NULL;
  agent.state = NOT_STARTED;
}

/* Everything that can fail comes before the first callback or handler is installed; what is
 * installed is undone when a later step fails. Returns 0 (sampling set up, or `help` printed:
 * agent.opt.help says which) or a negative errno-style code (said why).
 *
 * `help` goes to stdout, the stream asked-for help normally goes to (`java --help` and
 * `--help-extra` use it too): nothing of the JVM's is written there before the agent loads
 * (-version and its warnings go to stderr), and it is flushed at once, so the program's own
 * output follows the help and never lands inside it. */
static int setup(JavaVM *vm, const char *options) {
  char err[1024];
  int rc = opt_parse(options, &agent.opt, err, sizeof err);
  if (rc) {
    say("%s", err);
    say("%s", "-agentlib:sampler=help lists the options");
    return rc;
  }
  if (agent.opt.help) { /* nothing installed: no callbacks, no signal handler, no sampling */
    fputs(opt_help(), stdout);
    fflush(stdout);
    return 0;
  }
  rc = output_check_writable(&agent.opt, err, sizeof err);
  if (rc) {
    say("%s", err);
    return rc;
  }
  agent.vm = vm;
  if ((*vm)->GetEnv(vm, (void **)&agent.jvmti, JVMTI_VERSION_1_2) != JNI_OK) {
    say("%s", "this JVM offers no JVMTI 1.2 environment");
    return -EINVAL;
  }
  asgct_fn asgct = (asgct_fn)dlsym(RTLD_DEFAULT, "AsyncGetCallTrace");
  if (!asgct) {
    say("%s", "AsyncGetCallTrace not found: sampler needs a HotSpot JVM");
    return -EINVAL;
  }
  jvmtiEnv *jvmti = agent.jvmti;
  jvmtiCapabilities caps;
  memset(&caps, 0, sizeof caps);
  caps.can_get_line_numbers = 1;
  caps.can_get_source_file_name = 1;
  caps.can_generate_compiled_method_load_events = (unsigned)agent.opt.codemap;
  rc = check((*jvmti)->AddCapabilities(jvmti, &caps), "AddCapabilities");
  if (rc) return rc;

  struct sampler_config sc = sampler_config_of(&agent.opt);
  struct sampler_jvm jvm = {.asgct = asgct,
                            .symbol = libjvm_sym,
                            .method_name = name_method,
                            .method_alive = method_alive,
                            .thread_state = thread_state};
  rc = sampler_init(&sc, &jvm);
  if (rc == -EBUSY) {
    say("signal=%s: the JVM or a library already handles this signal; choose another (e.g. signal=RTMIN+5)",
        agent.opt.sig_name);
    return rc;
  }
  if (rc) {
    say("cannot start: %s", strerror(-rc));
    return rc;
  }

  jvmtiEventCallbacks cb;
  memset(&cb, 0, sizeof cb);
  cb.VMInit = on_vm_init;
  cb.VMDeath = on_vm_death;
  cb.ThreadStart = on_thread_start;
  cb.ThreadEnd = on_thread_end;
  cb.ClassLoad = on_class_load;
  cb.ClassPrepare = on_class_prepare;
  cb.DataDumpRequest = on_data_dump;
  cb.CompiledMethodLoad = on_compiled_method_load;
  cb.CompiledMethodUnload = on_compiled_method_unload;
  cb.DynamicCodeGenerated = on_dynamic_code;
  size_t nevents = sizeof EVENTS / sizeof *EVENTS - (agent.opt.codemap ? 0 : 3);
  rc = check((*jvmti)->SetEventCallbacks(jvmti, &cb, sizeof cb), "SetEventCallbacks");
  for (size_t i = 0; i < nevents && !rc; i++)
    rc = check((*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, EVENTS[i], NULL),
               "SetEventNotificationMode");
  if (rc) {
    undo_setup(jvmti);
    return rc;
  }
  return 0;
}

EXPORT JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *options, void *reserved) {
  (void)reserved;
  return setup(vm, options) == 0 ? JNI_OK : JNI_ERR;
}

/* ---- commands on later attaches ---- */

/* The attach that loads the agent: set up as at start, then sampling begins at once. ctl held.
 * A failed one leaves nothing of ours behind — setup undoes what it installed, and a failure
 * after it (no sampler thread: a thread limit, a full heap) is abandon()ed; the environment
 * goes with its capabilities — and a corrected attach may come. */
static int first_attach(JavaVM *vm, const char *options) {
  int rc = setup(vm, options);
  if (rc != 0) {
    if (agent.jvmti) (*agent.jvmti)->DisposeEnvironment(agent.jvmti);
    agent.jvmti = NULL;
    return rc;
  }
  if (agent.opt.help) return 0; /* printed on the JVM's stdout; a later load may still sample */
  JNIEnv *jni = NULL;
  jthread self = NULL;
  if ((*vm)->GetEnv(vm, (void **)&jni, JNI_VERSION_1_6) != JNI_OK ||
      check((*agent.jvmti)->GetCurrentThread(agent.jvmti, &self), "GetCurrentThread")) {
    abandon();
    return -EINVAL;
  }
  rc = start_live(agent.jvmti, jni, self);
  (*jni)->DeleteLocalRef(jni, self);
  if (rc) {
    say("%s", "not started: the JVM is left as it was");
    abandon();
    return rc;
  }
  say("started; the profile goes to %s%s", agent.opt.file,
      agent.opt.loop_ns ? " (the first chunk)" : "");
  return 0;
}

/* Opens the reply file at path for appending, or returns NULL with errno set. Only a regular
 * file is written: a symbolic link is not followed (ELOOP), and a FIFO or a device is refused
 * (EINVAL) — opened without blocking (a FIFO without a reader would hold ctl, which the JVM's
 * exit waits for). A new file is the JVM user's alone (0600). */
static FILE *open_reply_file(const char *path) {
  int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600);
  if (fd < 0) return NULL;
  struct stat st;
  int e = fstat(fd, &st) != 0 ? errno : S_ISREG(st.st_mode) ? 0 : EINVAL;
  if (e) {
    close(fd);
    errno = e;
    return NULL;
  }
  FILE *f = fdopen(fd, "a");
  if (!f) {
    e = errno;
    close(fd);
    errno = e;
  }
  return f;
}

/* Opens the reply= file named in `rest` (options of a command), if any: what say() says goes
 * there too (appended). One that cannot be written is said on stderr. */
static void open_reply(const char *rest) {
  for (const char *p = rest; p && *p;) {
    const char *end = strchr(p, ',');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    if (len > 6 && !strncmp(p, "reply=", 6) && len - 6 < OPT_FILE_MAX) {
      char path[OPT_FILE_MAX];
      snprintf(path, sizeof path, "%.*s", (int)(len - 6), p + 6);
      agent.reply = open_reply_file(path);
      if (!agent.reply)
        say("reply=%s: not written (%s): the answer is on stderr only", path,
            errno == EINVAL ? "not a regular file" : strerror(errno));
      return;
    }
    p = end ? end + 1 : NULL;
  }
}

static void close_reply(void) {
  if (agent.reply) fclose(agent.reply);
  agent.reply = NULL;
}

/* The options of stop and dump: file= (the format from its extension) and reply=. */
static int parse_output_options(const char *rest, struct agent_options *o) {
  char copy[2 * OPT_FILE_MAX + 64], err[OPT_FILE_MAX + 128];
  if (strlen(rest) >= sizeof copy) {
    say("%s", "options too long");
    return -EINVAL;
  }
  strcpy(copy, rest);
  char *save = NULL;
  for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    if (!strncmp(tok, "reply=", 6)) continue;
    if (strncmp(tok, "file=", 5) != 0) {
      say("'%s': stop and dump take file=PATH (and reply=PATH) only", tok);
      return -EINVAL;
    }
    if (opt_set_file(o, tok + 5, err, sizeof err)) {
      say("%s", err);
      return -EINVAL;
    }
  }
  return 0;
}

/* What `status` answers. ctl held. */
static void status(void) {
  char ival[32], loop[32];
  opt_format_duration(agent.opt.interval_ns, ival, sizeof ival);
  if (agent.state != RUNNING) {
    if (agent.state == STOPPED && agent.last_file[0])
      say("stopped; the last profile was written to %s", agent.last_file);
    else
      say("%s", agent.state == STOPPED ? "stopped" : "not profiling");
    return;
  }
  struct sampler_report r;
  sampler_report(&r);
  char since[64];
  struct tm tm;
  strftime(since, sizeof since, "%Y-%m-%d %H:%M:%S", localtime_r(&agent.started, &tm));
  say("running since %s (%.0f s), interval %s, format %s", since,
      difftime(time(NULL), agent.started), ival, opt_format_name(agent.opt.format));
  char path[OPT_FILE_MAX];
  pthread_mutex_lock(&agent.cut_lock);
  current_file(path, sizeof path);
  uint64_t seq = agent.chunk_seq;
  pthread_mutex_unlock(&agent.cut_lock);
  if (agent.opt.loop_ns) {
    opt_format_duration(agent.opt.loop_ns, loop, sizeof loop);
    say("loop %s: chunk %" PRIu64 " going to %s", loop, seq, path);
  } else {
    say("output %s", path);
  }
  say("samples %" PRIu64 " (captures %" PRIu64 ") in %zu stacks; threads %d; coverage %.1f%% of "
      "the process's CPU",
      r.n.units, r.n.samples, r.stacks, r.threads_live, r.coverage_permille / 10.0);
  say("tables %.1f MB (%zu stacks, %zu names, %zu cached frame keys)",
      (double)r.table_bytes / 1048576.0, r.stacks, r.names, r.keys);
  char *all = NULL; /* every counter, as the text report and stats= have them */
  size_t all_len = 0;
  FILE *m = open_memstream(&all, &all_len);
  if (m) {
    int rc = counters_text(m, &r);
    if (fclose(m) == 0 && rc == 0) {
      while (all_len && all[all_len - 1] == '\n') all[--all_len] = '\0';
      say("%s", all);
    }
    free(all);
  }
  size_t used, kept;
  if (plat_malloc_stats(&used, &kept) == 0)
    say("malloc %.1f MB in use, %.1f MB kept free (the whole process: the JVM's and the agent's)",
        (double)used / 1048576.0, (double)kept / 1048576.0);
}

/* A start on a loaded agent: the options of the new run. What sampler_init fixed (the signal,
 * depth, codemap) cannot change. ctl held. */
static int restart(const char *rest) {
  struct agent_options o;
  char err[OPT_FILE_MAX + 256];
  int rc = opt_parse(rest, &o, err, sizeof err);
  if (!rc && o.help) {
    say("%s", "help: see -agentlib:sampler=help, or `sampler help`");
    return -EINVAL;
  }
  if (rc) {
    say("%s", err);
    return rc;
  }
  if (o.sig != agent.opt.sig || o.depth != agent.opt.depth || o.codemap != agent.opt.codemap) {
    say("%s=: fixed when the agent was loaded (%s); a new start cannot change it",
        o.sig != agent.opt.sig       ? "signal"
        : o.depth != agent.opt.depth ? "depth"
                                     : "codemap",
        o.sig != agent.opt.sig       ? agent.opt.sig_name
        : o.depth != agent.opt.depth ? "depth given then"
                                     : (agent.opt.codemap ? "codemap=on" : "codemap=off"));
    return -EINVAL;
  }
  rc = output_check_writable(&o, err, sizeof err);
  if (rc) {
    say("%s", err);
    return rc;
  }
  struct sampler_config sc = sampler_config_of(&o);
  rc = sampler_configure(&sc);
  if (rc) {
    say("cannot start: %s", rc == -EBUSY ? "the last run has not ended yet" : strerror(-rc));
    return rc;
  }
  JNIEnv *jni = NULL;
  if ((*agent.vm)->GetEnv(agent.vm, (void **)&jni, JNI_VERSION_1_6) != JNI_OK) return -EINVAL;
  struct agent_options old = agent.opt;
  agent.opt = o;
  sampler_clear();
  rc = begin_run(agent.jvmti, jni);
  if (rc) agent.opt = old;
  return rc;
}

/* One command on a loaded agent. ctl held. Returns 0 or a negative errno-style code. */
static int command(int cmd, const char *rest) {
  if (atomic_load(&agent.dead)) return -ESRCH;
  switch (cmd) {
  case OPT_CMD_START:
    if (agent.state == RUNNING) {
      say("already running (since %.0f s, output %s): stop it first",
          difftime(time(NULL), agent.started), agent.opt.file);
      return -EBUSY;
    }
    if (restart(rest)) return -EINVAL;
    say("started; the profile goes to %s%s", agent.opt.file,
        agent.opt.loop_ns ? " (the first chunk)" : "");
    return 0;
  case OPT_CMD_STOP: {
    if (agent.state != RUNNING) {
      say("%s", "not running: nothing to stop");
      return -ESRCH;
    }
    struct agent_options o = agent.opt;
    if (parse_output_options(rest, &o)) return -EINVAL;
    if (strcmp(o.file, agent.opt.file) != 0) { /* stop,file=: the last profile goes there */
      agent.opt.format = o.format;
      strcpy(agent.opt.file, o.file);
      strcpy(agent.opt.file_pattern, o.file_pattern);
      agent.opt.loop_ns = 0; /* then current_file() is the file given */
    }
    finish_run("stop");
    return 0;
  }
  case OPT_CMD_DUMP: {
    if (agent.state == NOT_STARTED) {
      say("%s", "not profiling: nothing to dump");
      return -ESRCH;
    }
    struct agent_options o = agent.opt, saved = agent.opt;
    if (parse_output_options(rest, &o)) return -EINVAL;
    char path[OPT_FILE_MAX];
    pthread_mutex_lock(&agent.cut_lock);
    if (strcmp(o.file, agent.opt.file) != 0)
      snprintf(path, sizeof path, "%s", o.file);
    else
      current_file(path, sizeof path);
    agent.opt.format = o.format;
    int rc = write_profile(path, 0, 0, "dump");
    agent.opt = saved;
    pthread_mutex_unlock(&agent.cut_lock);
    if (rc == 0)
      say("profile %s written to %s", agent.state == RUNNING ? "so far" : "of the last run", path);
    return rc;
  }
  case OPT_CMD_STATUS: status(); return 0;
  }
  return -EINVAL;
}

/* jcmd <pid> JVMTI.agent_load /path/to/libsampler.so "[command,]options" (or the `sampler`
 * launcher, through jattach): the first attach loads the agent and starts sampling with the
 * options; later ones give commands — start (with other options), stop, dump, status. */
EXPORT JNIEXPORT jint JNICALL Agent_OnAttach(JavaVM *vm, char *options, void *reserved) {
  (void)reserved;
  const char *rest = NULL;
  int cmd = opt_command(options, &rest);
  pthread_mutex_lock(&agent.ctl);
  open_reply(rest);
  int rc;
  if (agent.jvmti && agent.state != NOT_STARTED) {
    rc = command(cmd, rest);
  } else if (cmd != OPT_CMD_START) {
    say("%s", cmd == OPT_CMD_STATUS ? "not profiling" : "not profiling: nothing to stop or dump");
    rc = cmd == OPT_CMD_STATUS ? 0 : -ESRCH;
  } else {
    rc = first_attach(vm, rest);
  }
  close_reply();
  pthread_mutex_unlock(&agent.ctl);
  return rc == 0 ? JNI_OK : JNI_ERR;
}

EXPORT JNIEXPORT void JNICALL Agent_OnUnload(JavaVM *vm) { (void)vm; }
