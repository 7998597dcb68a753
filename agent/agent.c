/*
 * agent.c — the JVMTI entry points and event callbacks: loads the options, finds
 * AsyncGetCallTrace, keeps the thread registry current (ThreadStart/ThreadEnd), creates
 * jmethodIDs ahead of time (ClassPrepare, and a sweep at VMInit), runs the sampler thread, and
 * writes the profile at VM death, on kill -3 (DataDumpRequest) and when `duration` ends.
 *
 * Loaded at start (Agent_OnLoad: -agentlib/-agentpath) or into a running JVM (Agent_OnAttach:
 * jcmd JVMTI.agent_load). Hazards: callbacks can run concurrently on any thread and after VMDeath has begun; every one
 * checks `dead` first. The agent never calls exit(): on a bad option Agent_OnLoad returns an
 * error and the JVM stops itself.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <jvmti.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "asgct.h"
#include "codemap.h"
#include "handler.h"
#include "hotspot.h"
#include "names.h"
#include "options.h"
#include "output.h"
#include "platform.h"
#include "registry.h"
#include "sampler.h"

#define EXPORT __attribute__((visibility("default")))

static struct {
  jvmtiEnv *jvmti;
  JavaVM *vm;
  struct agent_options opt;
  jobject sampler_thread; /* global ref */
  JNIEnv *sampler_jni;
  _Atomic int dead;
  _Atomic int final_written; /* the duration ended and the final profile is on disk */
  pthread_mutex_t dump_lock;
  struct hotspot_layout hotspot; /* read at setup */
  const char *hotspot_why;       /* why the layout could not be read, or NULL */
} A = {.dump_lock = PTHREAD_MUTEX_INITIALIZER};

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

/* Reports a JVMTI error with the call's name; returns 0 when there was none. */
static int check(jvmtiError e, const char *call) {
  if (e == JVMTI_ERROR_NONE) return 0;
  char *name = NULL;
  if (A.jvmti) (*A.jvmti)->GetErrorName(A.jvmti, e, &name);
  say("%s failed: %s", call, name ? name : "unknown JVMTI error");
  if (name) (*A.jvmti)->Deallocate(A.jvmti, (unsigned char *)name);
  return -1;
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
  if (!atomic_load(&A.dead)) create_method_ids(jvmti, cls);
}

static void sweep_loaded_classes(jvmtiEnv *jvmti) {
  jint n = 0;
  jclass *classes = NULL;
  if ((*jvmti)->GetLoadedClasses(jvmti, &n, &classes) != JVMTI_ERROR_NONE) return;
  for (jint i = 0; i < n; i++) create_method_ids(jvmti, classes[i]);
  (*jvmti)->Deallocate(jvmti, (unsigned char *)classes);
}

/* ---- the compiled-code map: where a PC that AsyncGetCallTrace cannot walk belongs ---- */

static void JNICALL on_compiled_method_load(jvmtiEnv *jvmti, jmethodID m, jint size, const void *addr,
                                            jint map_length, const jvmtiAddrLocationMap *map, const void *info) {
  (void)jvmti, (void)map_length, (void)map;
  codemap_add_method(m, addr, size, info);
}

static void JNICALL on_compiled_method_unload(jvmtiEnv *jvmti, jmethodID m, const void *addr) {
  (void)jvmti;
  codemap_remove_method(m, addr);
}

static void JNICALL on_dynamic_code(jvmtiEnv *jvmti, const char *name, const void *addr, jint length) {
  (void)jvmti;
  /* a runtime stub's frame size lets the handler walk past it (hotspot.h) */
  int frame_words = A.hotspot_why || length <= 0 ? 0 : hotspot_blob_frame_words(&A.hotspot, addr, (size_t)length);
  codemap_add_stub(name, addr, length, frame_words);
}

/* ---- threads ---- */

static int is_sampler_thread(JNIEnv *jni, jthread t) {
  return A.sampler_thread && (*jni)->IsSameObject(jni, t, A.sampler_thread);
}

static void register_current(jvmtiEnv *jvmti, JNIEnv *jni, jthread t) {
  jvmtiThreadInfo info;
  memset(&info, 0, sizeof info);
  if ((*jvmti)->GetThreadInfo(jvmti, t, &info) != JVMTI_ERROR_NONE) info.name = NULL;
  int rc = registry_add(plat_gettid(), info.name ? info.name : "?");
  if (rc < 0) say("thread %s not sampled: %s", info.name ? info.name : "?", strerror(-rc));
  pthread_attr_t attr; /* this thread's stack, for walking from a stub's frame record */
  void *lo = NULL;
  size_t size = 0;
  if (rc >= 0 && pthread_getattr_np(pthread_self(), &attr) == 0) {
    if (pthread_attr_getstack(&attr, &lo, &size) == 0 && lo)
      registry_set_stack(rc, (uintptr_t)lo, (uintptr_t)lo + size);
    pthread_attr_destroy(&attr);
  }
  if (info.name) (*jvmti)->Deallocate(jvmti, (unsigned char *)info.name);
  if (info.thread_group) (*jni)->DeleteLocalRef(jni, info.thread_group);
  if (info.context_class_loader) (*jni)->DeleteLocalRef(jni, info.context_class_loader);
}

static void JNICALL on_thread_start(jvmtiEnv *jvmti, JNIEnv *jni, jthread t) {
  if (atomic_load(&A.dead) || is_sampler_thread(jni, t)) return;
  register_current(jvmti, jni, t);
}

static void JNICALL on_thread_end(jvmtiEnv *jvmti, JNIEnv *jni, jthread t) {
  (void)jvmti, (void)jni, (void)t;
  registry_remove(plat_gettid()); /* also after death: never leave a stale tid behind */
}

/* Java threads that started before our ThreadStart events (Reference Handler, Finalizer,
 * Signal Dispatcher...): the kernel names a Java thread after its Java name (first 15 bytes),
 * so /proc/self/task/<tid>/comm is matched against the names GetAllThreads reports. */
static void register_existing(jvmtiEnv *jvmti, JNIEnv *jni) {
  jint n = 0;
  jthread *threads = NULL;
  if ((*jvmti)->GetAllThreads(jvmti, &n, &threads) != JVMTI_ERROR_NONE) return;
  char (*names)[16] = calloc((size_t)n + 1, sizeof *names);
  char (*full)[REG_NAME_MAX] = calloc((size_t)n + 1, sizeof *full);
  for (jint i = 0; names && full && i < n; i++) {
    jvmtiThreadInfo info;
    memset(&info, 0, sizeof info);
    if ((*jvmti)->GetThreadInfo(jvmti, threads[i], &info) == JVMTI_ERROR_NONE && info.name) {
      snprintf(names[i], sizeof names[i], "%s", info.name);
      snprintf(full[i], sizeof full[i], "%s", info.name);
      (*jvmti)->Deallocate(jvmti, (unsigned char *)info.name);
    }
    if (info.thread_group) (*jni)->DeleteLocalRef(jni, info.thread_group);
    if (info.context_class_loader) (*jni)->DeleteLocalRef(jni, info.context_class_loader);
    (*jni)->DeleteLocalRef(jni, threads[i]);
  }
  (*jvmti)->Deallocate(jvmti, (unsigned char *)threads);
  DIR *d = names && full ? opendir("/proc/self/task") : NULL;
  struct dirent *e;
  pid_t self = plat_gettid();
  while (d && (e = readdir(d))) {
    pid_t tid = (pid_t)atoi(e->d_name);
    if (tid <= 0 || tid == self) continue;
    char path[64], comm[32] = "";
    snprintf(path, sizeof path, "/proc/self/task/%d/comm", (int)tid);
    FILE *f = fopen(path, "r");
    if (!f) continue;
    if (fgets(comm, sizeof comm, f)) comm[strcspn(comm, "\n")] = '\0';
    fclose(f);
    for (jint i = 0; i < n; i++) {
      if (names[i][0] && strcmp(names[i], comm) == 0) {
        registry_add(tid, full[i]);
        break;
      }
    }
  }
  if (d) closedir(d);
  free(names);
  free(full);
}

/* ---- writing the profile ---- */

static void dump(const char *why) {
  char err[512];
  pthread_mutex_lock(&A.dump_lock);
  if (output_write(&A.opt, err, sizeof err) != 0) say("%s (%s)", err, why);
  pthread_mutex_unlock(&A.dump_lock);
}

static void JNICALL on_data_dump(jvmtiEnv *jvmti) {
  (void)jvmti;
  if (atomic_load(&A.dead)) return;
  dump("kill -3");
  fprintf(stderr, "sampler: profile so far written to %s\n", A.opt.file);
}

/* ---- the sampler thread ---- */

static int name_method(void *ctx, jmethodID m, jint bci, char *buf, size_t len) {
  (void)ctx;
  return names_method(A.jvmti, A.sampler_jni, m, bci, buf, len);
}

static void JNICALL sampler_main(jvmtiEnv *jvmti, JNIEnv *jni, void *arg) {
  (void)jvmti, (void)arg;
  A.sampler_jni = jni;
  if (sampler_run()) { /* the duration ended: final profile now */
    dump("duration");
    atomic_store(&A.final_written, 1);
    output_summary(stderr, &A.opt);
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
    return -1;
  }
  A.sampler_thread = (*jni)->NewGlobalRef(jni, t);
  return check((*jvmti)->RunAgentThread(jvmti, t, sampler_main, NULL, JVMTI_THREAD_MAX_PRIORITY),
               "RunAgentThread");
}

/* ---- VM lifecycle ---- */

static void *libjvm_sym(const char *name, void *ctx) {
  (void)ctx;
  return dlsym(RTLD_DEFAULT, name);
}

/* The anchor walk of samples in VM code called from Java (hotspot.h) needs the JavaThread of
 * a JNIEnv: found here from the current thread's java.lang.Thread.eetop. */
static void setup_anchor_walk(JNIEnv *jni, jthread t) {
  const char *why = A.hotspot_why;
  if (!why && !A.opt.codemap) why = "codemap=off: the return address is checked against the map";
  if (!why) {
    jclass tc = (*jni)->FindClass(jni, "java/lang/Thread");
    jfieldID f = tc ? (*jni)->GetFieldID(jni, tc, "eetop", "J") : NULL;
    if ((*jni)->ExceptionCheck(jni)) (*jni)->ExceptionClear(jni);
    if (!f) why = "java.lang.Thread has no field eetop";
    else hotspot_find_env(&A.hotspot, jni, (uintptr_t)(*jni)->GetLongField(jni, t, f), plat_gettid(), &why);
    if (tc) (*jni)->DeleteLocalRef(jni, tc);
  }
  if (!why) handler_set_hotspot(&A.hotspot);
  output_set_anchor_walk(why);
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
  if (A.opt.codemap) {
    check((*jvmti)->GenerateEvents(jvmti, JVMTI_EVENT_DYNAMIC_CODE_GENERATED), "GenerateEvents");
    check((*jvmti)->GenerateEvents(jvmti, JVMTI_EVENT_COMPILED_METHOD_LOAD), "GenerateEvents");
  }
  register_current(jvmti, jni, t);
  register_existing(jvmti, jni);
  setup_anchor_walk(jni, t);
  start_sampler_thread(jvmti, jni);
}

static void JNICALL on_vm_init(jvmtiEnv *jvmti, JNIEnv *jni, jthread t) { start_live(jvmti, jni, t); }

static void JNICALL on_vm_death(jvmtiEnv *jvmti, JNIEnv *jni) {
  (void)jvmti, (void)jni;
  sampler_stop();
  atomic_store(&A.dead, 1);
  if (!atomic_load(&A.final_written)) {
    dump("exit");
    output_summary(stderr, &A.opt);
  }
}

/* ---- loading ---- */

static int setup(JavaVM *vm, const char *options) {
  char err[1024];
  if (opt_parse(options, &A.opt, err, sizeof err) != 0) {
    say("%s", err);
    say("%s", "-agentlib:sampler=help lists the options");
    return -1;
  }
  if (A.opt.help) {
    fputs(opt_help(), stderr);
    return -1;
  }
  if (output_check_writable(&A.opt, err, sizeof err) != 0) {
    say("%s", err);
    return -1;
  }
  A.vm = vm;
  if (A.opt.codemap && codemap_init() != 0) {
    say("%s", "cannot start: out of memory");
    return -1;
  }
  if ((*vm)->GetEnv(vm, (void **)&A.jvmti, JVMTI_VERSION_1_2) != JNI_OK) {
    say("%s", "this JVM offers no JVMTI 1.2 environment");
    return -1;
  }
  asgct_fn asgct = (asgct_fn)dlsym(RTLD_DEFAULT, "AsyncGetCallTrace");
  if (!asgct) {
    say("%s", "AsyncGetCallTrace not found: sampler needs a HotSpot JVM");
    return -1;
  }
  /* without the layout, sampling goes on; the report says why VM code is not walked */
  (void)hotspot_read_layout(libjvm_sym, NULL, &A.hotspot, &A.hotspot_why);
  jvmtiEnv *jvmti = A.jvmti;
  jvmtiCapabilities caps;
  memset(&caps, 0, sizeof caps);
  caps.can_get_line_numbers = 1;
  caps.can_get_source_file_name = 1;
  caps.can_generate_compiled_method_load_events = (unsigned)A.opt.codemap;
  if (check((*jvmti)->AddCapabilities(jvmti, &caps), "AddCapabilities")) return -1;

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
  if (check((*jvmti)->SetEventCallbacks(jvmti, &cb, sizeof cb), "SetEventCallbacks")) return -1;
  static const jvmtiEvent events[] = {JVMTI_EVENT_VM_INIT,      JVMTI_EVENT_VM_DEATH,
                                      JVMTI_EVENT_THREAD_START, JVMTI_EVENT_THREAD_END,
                                      JVMTI_EVENT_CLASS_LOAD,   JVMTI_EVENT_CLASS_PREPARE,
                                      JVMTI_EVENT_DATA_DUMP_REQUEST, JVMTI_EVENT_COMPILED_METHOD_LOAD,
                                      JVMTI_EVENT_COMPILED_METHOD_UNLOAD, JVMTI_EVENT_DYNAMIC_CODE_GENERATED};
  size_t nevents = sizeof events / sizeof *events - (A.opt.codemap ? 0 : 3); /* the map's last */
  for (size_t i = 0; i < nevents; i++)
    if (check((*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, events[i], NULL),
              "SetEventNotificationMode"))
      return -1;

  struct sampler_config sc = {.interval_ns = A.opt.interval_ns, .depth = A.opt.depth, .hasrun = A.opt.hasrun,
                              .thread_roots = A.opt.threads, .lines = A.opt.lines, .ann = A.opt.ann,
                              .duration_ns = A.opt.duration_ns, .sig = A.opt.sig};
  int rc = sampler_init(&sc, asgct, vm, name_method, NULL);
  if (rc == -EBUSY) {
    say("signal=%s: the JVM or a library already handles this signal; choose another (e.g. signal=RTMIN+5)",
        A.opt.sig_name);
    return -1;
  }
  if (rc) {
    say("cannot start: %s", strerror(-rc));
    return -1;
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
  if (A.jvmti || atomic_exchange(&attached, 1)) {
    say("%s", "already loaded in this JVM: one sampler per JVM");
    return JNI_ERR;
  }
  if (setup(vm, options) != 0) return JNI_ERR;
  JNIEnv *jni = NULL;
  jthread self = NULL;
  if ((*vm)->GetEnv(vm, (void **)&jni, JNI_VERSION_1_6) != JNI_OK ||
      check((*A.jvmti)->GetCurrentThread(A.jvmti, &self), "GetCurrentThread"))
    return JNI_ERR;
  start_live(A.jvmti, jni, self);
  return JNI_OK;
}

EXPORT JNIEXPORT void JNICALL Agent_OnUnload(JavaVM *vm) { (void)vm; }
