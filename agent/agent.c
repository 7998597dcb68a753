/*
 * agent.c — the JVMTI entry points and event callbacks: loads the options, finds
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
#include <jvmti.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "names.h"
#include "options.h"
#include "output.h"
#include "platform.h"
#include "sampler.h"

#define EXPORT __attribute__((visibility("default")))

static struct {
  jvmtiEnv *jvmti;
  JavaVM *vm;
  struct agent_options opt;
  jobject sampler_thread; /* global ref */
  JNIEnv *sampler_jni;
  jfieldID eetop; /* java.lang.Thread.eetop: the JavaThread's address, or NULL */
  _Atomic int dead;
  _Atomic int final_written; /* the duration ended and the final profile is on disk */
  pthread_mutex_t dump_lock;
} agent = {.dump_lock = PTHREAD_MUTEX_INITIALIZER};

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "sampler: ");
  vfprintf(stderr, fmt, ap);
  fprintf(stderr, "\n");
  fflush(stderr);
  va_end(ap);
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

/* The name JVMTI gives thread t into buf ("?" when it gives none). */
static void thread_name(jvmtiEnv *jvmti, JNIEnv *jni, jthread t, char *buf, size_t len) {
  jvmtiThreadInfo info;
  memset(&info, 0, sizeof info);
  if ((*jvmti)->GetThreadInfo(jvmti, t, &info) != JVMTI_ERROR_NONE) info.name = NULL;
  snprintf(buf, len, "%s", info.name ? info.name : "?");
  if (info.name) (*jvmti)->Deallocate(jvmti, (unsigned char *)info.name);
  if (info.thread_group) (*jni)->DeleteLocalRef(jni, info.thread_group);
  if (info.context_class_loader) (*jni)->DeleteLocalRef(jni, info.context_class_loader);
}

static void register_thread(const struct sampler_thread *t) {
  int rc = sampler_thread_started(t);
  if (rc < 0) say("thread %s not sampled: %s", t->name, strerror(-rc));
}

/* Registers the calling thread t: its JNIEnv is jni, its stack its own. */
static void register_current(jvmtiEnv *jvmti, JNIEnv *jni, jthread t) {
  char name[128];
  thread_name(jvmti, jni, t, name, sizeof name);
  struct sampler_thread th = {.tid = plat_gettid(), .name = name, .env = jni};
  plat_self_stack(&th.stack_lo, &th.stack_hi); /* for walking from a stub's frame record */
  register_thread(&th);
}

static void JNICALL on_thread_start(jvmtiEnv *jvmti, JNIEnv *jni, jthread t) {
  if (atomic_load(&agent.dead) || is_sampler_thread(jni, t)) return;
  register_current(jvmti, jni, t);
}

static void JNICALL on_thread_end(jvmtiEnv *jvmti, JNIEnv *jni, jthread t) {
  (void)jvmti, (void)jni, (void)t;
  sampler_thread_ended(plat_gettid()); /* also after death: never leave a stale tid behind */
}

/* Without the JavaThread layout: Java threads are matched by the name the kernel keeps for
 * them (the first 15 bytes of the Java name); they get no JNIEnv, so their samples say
 * "[not a Java thread]". */
struct by_comm {
  char (*names)[128];
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
      register_thread(&th);
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
  char(*names)[128] = calloc((size_t)n + 1, sizeof *names);
  int by_eetop = 1;
  for (jint i = 0; i < n; i++) {
    jthread t = threads[i];
    if ((*jni)->IsSameObject(jni, t, current) || is_sampler_thread(jni, t)) {
      (*jni)->DeleteLocalRef(jni, t);
      continue;
    }
    char name[128];
    thread_name(jvmti, jni, t, name, sizeof name);
    struct sampler_thread th = {.name = name};
    int rc = sampler_java_thread_ids(java_thread_of(jni, t), &th.tid, &th.env);
    if (rc == -EINVAL) by_eetop = 0; /* no layout: fall back on names below */
    if (rc == -EINVAL && names) snprintf(names[i], sizeof names[i], "%s", name);
    if (rc == 0) {
      register_thread(&th);
      jint state = 0;
      if ((*jvmti)->GetThreadState(jvmti, t, &state) != JVMTI_ERROR_NONE ||
          !(state & JVMTI_THREAD_STATE_ALIVE))
        sampler_thread_ended(th.tid);
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

/* Writes the profile; says why not when it cannot. Returns 0 or a negative errno-style code. */
static int dump(const char *why) {
  char err[512];
  pthread_mutex_lock(&agent.dump_lock);
  int rc = output_write(&agent.opt, err, sizeof err);
  if (rc != 0) say("%s (%s)", err, why);
  pthread_mutex_unlock(&agent.dump_lock);
  return rc;
}

static void JNICALL on_data_dump(jvmtiEnv *jvmti) {
  (void)jvmti;
  if (atomic_load(&agent.dead)) return;
  if (dump("kill -3") == 0) say("profile so far written to %s", agent.opt.file);
}

/* ---- the sampler thread ---- */

static int name_method(void *ctx, jmethodID m, jint bci, char *buf, size_t len) {
  (void)ctx;
  return names_method(agent.jvmti, agent.sampler_jni, m, bci, buf, len);
}

static void JNICALL sampler_main(jvmtiEnv *jvmti, JNIEnv *jni, void *arg) {
  (void)jvmti, (void)arg;
  agent.sampler_jni = jni;
  if (sampler_run()) { /* the duration ended: final profile now */
    dump("duration");
    atomic_store(&agent.final_written, 1);
    output_summary(stderr, &agent.opt);
  }
}

static int start_sampler_thread(jvmtiEnv *jvmti, JNIEnv *jni) {
  jclass cls = (*jni)->FindClass(jni, "java/lang/Thread");
  jmethodID init = cls ? (*jni)->GetMethodID(jni, cls, "<init>", "(Ljava/lang/String;)V") : NULL;
  jstring name = (*jni)->NewStringUTF(jni, "sampler");
  jobject t = init && name ? (*jni)->NewObject(jni, cls, init, name) : NULL;
  if (!t) {
    (*jni)->ExceptionClear(jni);
    say("%s", "cannot create the sampler thread");
    return -ENOMEM;
  }
  agent.sampler_thread = (*jni)->NewGlobalRef(jni, t);
  return check((*jvmti)->RunAgentThread(jvmti, t, sampler_main, NULL, JVMTI_THREAD_MAX_PRIORITY),
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

/* Everything that needs a live VM: names of the program, jmethodIDs of the classes loaded so
 * far, the threads running already, and the sampler thread. At VMInit, or at attach. */
static void start_live(jvmtiEnv *jvmti, JNIEnv *jni, jthread t) {
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
  register_current(jvmti, jni, t);
  setup_anchor_walk(jni, t);
  register_existing(jvmti, jni, t);
  start_sampler_thread(jvmti, jni);
}

static void JNICALL on_vm_init(jvmtiEnv *jvmti, JNIEnv *jni, jthread t) {
  start_live(jvmti, jni, t);
}

static void JNICALL on_vm_death(jvmtiEnv *jvmti, JNIEnv *jni) {
  (void)jvmti, (void)jni;
  sampler_stop();
  atomic_store(&agent.dead, 1);
  if (!atomic_load(&agent.final_written)) {
    dump("exit");
    output_summary(stderr, &agent.opt);
  }
}

/* ---- loading ---- */

static const jvmtiEvent EVENTS[] = {
    JVMTI_EVENT_VM_INIT, JVMTI_EVENT_VM_DEATH, JVMTI_EVENT_THREAD_START, JVMTI_EVENT_THREAD_END,
    JVMTI_EVENT_CLASS_LOAD, JVMTI_EVENT_CLASS_PREPARE, JVMTI_EVENT_DATA_DUMP_REQUEST,
    /* the code map's, last */
    JVMTI_EVENT_COMPILED_METHOD_LOAD, JVMTI_EVENT_COMPILED_METHOD_UNLOAD,
    JVMTI_EVENT_DYNAMIC_CODE_GENERATED};

/* Turns our events off and takes our callbacks and signal handler back out: after a failed
 * load or attach nothing in the JVM points into this library any more. */
static void undo_setup(jvmtiEnv *jvmti) {
  for (size_t i = 0; i < sizeof EVENTS / sizeof *EVENTS; i++)
    (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_DISABLE, EVENTS[i], NULL);
  (*jvmti)->SetEventCallbacks(jvmti, NULL, 0);
  sampler_fini();
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

  struct sampler_config sc = {.interval_ns = agent.opt.interval_ns,
                              .depth = agent.opt.depth,
                              .hasrun = agent.opt.hasrun,
                              .thread_roots = agent.opt.threads,
                              .lines = agent.opt.lines,
                              .ann = agent.opt.ann,
                              .codemap = agent.opt.codemap,
                              .native_frames = agent.opt.cstack,
                              .jvm_threads = agent.opt.jvmthreads,
                              .duration_ns = agent.opt.duration_ns,
                              .sig = agent.opt.sig};
  struct sampler_jvm jvm = {.asgct = asgct, .symbol = libjvm_sym, .method_name = name_method};
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

/* jcmd <pid> JVMTI.agent_load /path/to/libsampler.so "interval=1ms,file=..." : the same
 * options; sampling starts at once and the profile is written when the JVM exits (or on
 * kill -3, or after `duration`). One agent per JVM: a second attach is refused. */
EXPORT JNIEXPORT jint JNICALL Agent_OnAttach(JavaVM *vm, char *options, void *reserved) {
  (void)reserved;
  static atomic_int attached;
  if (agent.jvmti || atomic_exchange(&attached, 1)) {
    say("%s", "already loaded in this JVM: one sampler per JVM");
    return JNI_ERR;
  }
  if (setup(vm, options) != 0) {
    /* nothing of ours stays behind (setup installs nothing before its last failure point, and
     * the environment goes with its capabilities), and a corrected attach may come */
    if (agent.jvmti) (*agent.jvmti)->DisposeEnvironment(agent.jvmti);
    agent.jvmti = NULL;
    atomic_store(&attached, 0);
    return JNI_ERR;
  }
  if (agent.opt.help) { /* printed on the JVM's stdout; a later load may still sample */
    atomic_store(&attached, 0);
    return JNI_OK;
  }
  JNIEnv *jni = NULL;
  jthread self = NULL;
  if ((*vm)->GetEnv(vm, (void **)&jni, JNI_VERSION_1_6) != JNI_OK ||
      check((*agent.jvmti)->GetCurrentThread(agent.jvmti, &self), "GetCurrentThread")) {
    undo_setup(agent.jvmti);
    return JNI_ERR;
  }
  start_live(agent.jvmti, jni, self);
  return JNI_OK;
}

EXPORT JNIEXPORT void JNICALL Agent_OnUnload(JavaVM *vm) { (void)vm; }
