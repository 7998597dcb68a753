/*
 * lifecycle.c — loading the agent and its runs: Agent_OnLoad (-agentlib/-agentpath) and the
 * first attach set it up — options, AsyncGetCallTrace, capabilities, the sampler, the events
 * (events.c) — and undo what they installed when a later step fails; a run begins with the
 * sampler thread (RunAgentThread) and ends with the last profile written (chunks.c). Owns the
 * state `agent` (agent_internal.h says who writes which part).
 *
 * Hazards: the event callbacks (events.c) run on any thread, also while this file's set-up is
 * undone after a failed attach: the library stays mapped (pin_library). The agent never calls
 * exit(): on a bad option Agent_OnLoad returns an error and the JVM stops itself; `help`
 * prints the options and returns JNI_OK with nothing installed, so the program runs
 * unprofiled. Later attaches are commands.c's.
 */
#include <dlfcn.h>
#include <errno.h>
#include <jvmti.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agent_internal.h"
#include "names.h"
#include "options.h"
#include "output.h"
#include "sampler.h"

struct agent agent = {.ctl = PTHREAD_MUTEX_INITIALIZER,
                      .cut_lock = PTHREAD_MUTEX_INITIALIZER,
                      .cut_cond = PTHREAD_COND_INITIALIZER};

/* The one boundary where JVMTI errors become ours: reports e with the call's name and
 * returns 0 when there was none, else -ENOMEM (out of memory) or -EINVAL (any other). Any
 * thread; not signal-safe. */
int check(jvmtiError e, const char *call) {
  if (e == JVMTI_ERROR_NONE) return 0;
  char *name = NULL;
  if (agent.jvmti) (*agent.jvmti)->GetErrorName(agent.jvmti, e, &name);
  say("%s failed: %s", call, name ? name : "unknown JVMTI error");
  if (name) (*agent.jvmti)->Deallocate(agent.jvmti, (unsigned char *)name);
  return e == JVMTI_ERROR_OUT_OF_MEMORY ? -ENOMEM : -EINVAL;
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
  unsigned run = (unsigned)(uintptr_t)arg;
  agent.sampler_jni = jni;
  jthread self = NULL;
  /* before the first signal (start_sampler_thread may not have got there yet); should both
   * fail, every walk answers -1, counted as failed */
  if ((*jvmti)->GetCurrentThread(jvmti, &self) == JVMTI_ERROR_NONE) events_class_load(jvmti, self);
  if (!sampler_run()) return;     /* stopped: by whoever ended the run */
  pthread_mutex_lock(&agent.ctl); /* the duration ended: the final profile now */
  if (agent.state == RUNNING && agent.run == run && !atomic_load(&agent.dead))
    agent_finish_run("duration");
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
  int rc = check((*jvmti)->RunAgentThread(jvmti, t, sampler_main, (void *)(uintptr_t)run,
                                          JVMTI_THREAD_MAX_PRIORITY),
                 "RunAgentThread");
  /* before the run's allocation and lock events (agent_begin_run), whose stacks
   * AsyncGetCallTrace walks; the thread does it too, before its first signal. A failure is
   * not the run's: its walks answer -1, counted as failed. */
  if (!rc) events_class_load(jvmti, t);
  return rc;
}

/* ---- runs ---- */

static void *libjvm_sym(const char *name, void *ctx) {
  (void)ctx;
  return dlsym(RTLD_DEFAULT, name);
}

/* Starts sampling with agent.opt: the sampler thread, and with `loop` the chunks' writer. ctl
 * held. Returns 0 or a negative errno-style code (said why). */
int agent_begin_run(jvmtiEnv *jvmti, JNIEnv *jni) {
  agent.run++;
  agent.started = time(NULL);
  chunks_cutter_start();
  int rc = start_sampler_thread(jvmti, jni, agent.run);
  if (rc) {
    chunks_cutter_stop();
    return rc;
  }
  if ((agent.opt.alloc && events_alloc(jvmti, agent.opt.alloc_bytes, agent.opt.depth) != 0 &&
       (say("%s", "event=alloc: this JVM does not give sampled allocation events"), 1)) ||
      (agent.opt.lock && events_lock(jvmti, jni, 1, agent.opt.depth) != 0)) {
    sampler_stop();
    chunks_cutter_stop();
    return -EINVAL;
  }
  agent.state = RUNNING;
  return 0;
}

/* Ends the run: sampling stopped, the last chunk (or the whole profile) written, the summary
 * line printed. ctl held. */
void agent_finish_run(const char *why) {
  if (agent.opt.alloc) events_alloc(agent.jvmti, 0, 0); /* before the queue's last drain */
  if (agent.opt.lock) events_lock(agent.jvmti, NULL, 0, 0);
  sampler_stop();
  chunks_cutter_stop();
  char path[OPT_FILE_MAX];
  chunks_current_file(path, sizeof path);
  pthread_mutex_lock(&agent.cut_lock);
  chunks_write(path, 0, 1, why); /* says where it went */
  pthread_mutex_unlock(&agent.cut_lock);
  agent.state = STOPPED;
}

/* ---- loading ---- */

/* The sampler's configuration from the options o. Pure. */
struct sampler_config agent_config_of(const struct agent_options *o) {
  return (struct sampler_config){.interval_ns = o->interval_ns,
                                 .depth = o->depth,
                                 .hasrun = o->hasrun,
                                 .thread_roots = o->threads,
                                 .lines = o->lines,
                                 .ann = o->ann,
                                 .codemap = o->codemap,
                                 /* an allocation's stack is its Java frames (JVMTI's):
                                  * native frames are the signalled samples' */
                                 .native_frames = o->cstack && o->clock,
                                 .jvm_threads = o->jvmthreads && o->clock,
                                 .duration_ns = o->duration_ns,
                                 .wall = o->wall,
                                 .sig = o->sig,
                                 .cpu_timers = o->cputimers,
                                 .time_bytes = o->timeline_bytes,
                                 .alloc_interval = o->alloc ? o->alloc_bytes : 0,
                                 .lock = o->lock,
                                 .lock_threshold_ns = o->lock_ns,
                                 .with_clock = o->clock};
}

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
  events_remove(jvmti);
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
void agent_abandon(void) {
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
  /* the unwind tables' cache: a directory asked for must work; the default may be off */
  rc = sampler_set_cache(agent.opt.cache[0] ? agent.opt.cache : NULL, err, sizeof err);
  if (rc && agent.opt.cache_given) {
    say("cache=%s; accepted: a directory of this user's that only this user can write (made "
        "when missing), or off",
        err);
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
  agent.asgct = asgct;
  jvmtiEnv *jvmti = agent.jvmti;
  jvmtiCapabilities caps;
  memset(&caps, 0, sizeof caps);
  caps.can_get_line_numbers = 1;
  caps.can_get_source_file_name = 1;
  caps.can_generate_compiled_method_load_events = (unsigned)agent.opt.codemap;
  rc = check((*jvmti)->AddCapabilities(jvmti, &caps), "AddCapabilities");
  if (rc) return rc;
  /* GC pauses on the time axis, where the JVM offers them (a JVM that does not: no marks) */
  memset(&caps, 0, sizeof caps);
  caps.can_generate_garbage_collection_events = 1;
  agent.gc_marks = (*jvmti)->AddCapabilities(jvmti, &caps) == JVMTI_ERROR_NONE;
  /* event=lock: contended monitors, and the park's binding (a JVM without them: said then) */
  memset(&caps, 0, sizeof caps);
  caps.can_generate_monitor_events = 1;
  agent.monitor_events = (*jvmti)->AddCapabilities(jvmti, &caps) == JVMTI_ERROR_NONE;
  memset(&caps, 0, sizeof caps);
  caps.can_generate_native_method_bind_events = 1;
  agent.bind_events = (*jvmti)->AddCapabilities(jvmti, &caps) == JVMTI_ERROR_NONE;
  /* at load: the start phase begins before java.base's natives are bound, so the park's bind
   * can be named and bound to our wrapper as it happens (at an attach: refused, no matter) */
  memset(&caps, 0, sizeof caps);
  caps.can_generate_early_vmstart = 1;
  (*jvmti)->AddCapabilities(jvmti, &caps);

  struct sampler_config sc = agent_config_of(&agent.opt);
  struct sampler_jvm jvm = {.asgct = asgct,
                            .symbol = libjvm_sym,
                            .method_name = name_method,
                            .method_alive = method_alive,
                            .thread_state = events_thread_state,
                            .code_events = events_code};
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

  rc = events_install(jvmti);
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
 * after it (no sampler thread: a thread limit, a full heap) is agent_abandon()ed; the environment
 * goes with its capabilities — and a corrected attach may come. */
int agent_first_attach(JavaVM *vm, const char *options) {
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
    agent_abandon();
    return -EINVAL;
  }
  rc = events_start_live(agent.jvmti, jni, self);
  (*jni)->DeleteLocalRef(jni, self);
  if (rc) {
    say("%s", "not started: the JVM is left as it was");
    agent_abandon();
    return rc;
  }
  say("started; the profile goes to %s%s", agent.opt.file,
      agent.opt.loop_ns ? " (the first chunk)" : "");
  return 0;
}

EXPORT JNIEXPORT void JNICALL Agent_OnUnload(JavaVM *vm) { (void)vm; }
