/*
 * events.c — the JVMTI event callbacks and thread discovery: keeps the thread registry current
 * (ThreadStart/ThreadEnd, and the threads that ran before: register_existing), creates
 * jmethodIDs ahead of time (ClassPrepare, and a sweep when the VM is live), feeds the code map
 * (CompiledMethodLoad/Unload, DynamicCodeGenerated), starts the run at VMInit, ends it at
 * VMDeath and writes the profile so far on kill -3 (DataDumpRequest); feeds event=alloc
 * (SampledObjectAlloc) and event=lock (MonitorContendedEnter/Entered, and Unsafe.park bound
 * through NativeMethodBind to park_wrapper, which times the JVM's park).
 *
 * Hazards: callbacks run concurrently on any thread, also after VMDeath has begun:
 * ClassPrepare, ThreadStart and DataDumpRequest check `dead` first, ThreadEnd unregisters even
 * then (no stale tid behind). Those that start, end or write a run take ctl, then cut_lock, as
 * commands do.
 */
#include <errno.h>
#include <jvmti.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent_internal.h"
#include "options.h"
#include "output.h"
#include "platform.h"
#include "sampler.h"

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

/* See agent_internal.h. AsyncGetCallTrace answers -1 unless some thread has ClassLoad enabled
 * (JvmtiExport::should_post_class_load, which counts thread-filtered events too): enabled for
 * the sampler thread alone, the JVM posts no ClassLoad for the classes the program loads — a
 * state transition and two local references each, on the loading thread (~1 us, 1,500 times at
 * javac's start). A JVM that refuses the filter gets the event for every thread, as before. */
int events_class_load(jvmtiEnv *jvmti, jthread t) {
  if ((*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_CLASS_LOAD, t) ==
      JVMTI_ERROR_NONE)
    return 0;
  return check(
      (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_CLASS_LOAD, NULL),
      "SetEventNotificationMode");
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

/* The Java id of t (Thread.getId(), read from its field), or 0. */
static int64_t java_id_of(JNIEnv *jni, jthread t) {
  return agent.tid ? (int64_t)(*jni)->GetLongField(jni, t, agent.tid) : 0;
}

/* Bytes of a thread's name handed to the registry, which converts JVMTI's modified UTF-8 and
 * keeps 127 bytes of it (sampler_target.name): enough that only what it drops is cut here. */
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

static void register_thread(JNIEnv *jni, const struct sampler_target *t) {
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
int events_thread_state(void *ctx, void *h) {
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
  struct sampler_target th = {.tid = plat_gettid(),
                              .java_id = java_id_of(jni, t),
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

static void forget_classes(JNIEnv *jni);

static void JNICALL on_thread_end(jvmtiEnv *jvmti, JNIEnv *jni, jthread t) {
  (void)jvmti, (void)t;
  /* also after death: no stale tid behind */
  void *h = sampler_thread_ended(plat_gettid(), plat_self_cpu_ns());
  if (h) (*jni)->DeleteGlobalRef(jni, (jobject)h);
  forget_classes(jni);
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
      struct sampler_target th = {.tid = tid, .name = c->names[i]};
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
    struct sampler_target th = {.name = name, .java_id = java_id_of(jni, t)};
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

/* The anchor walk of samples in VM code called from Java (sampler.h) needs the JavaThread
 * layout, checked here on the current thread through java.lang.Thread.eetop; the same field
 * then gives the other threads' tids and JNIEnvs (register_existing). */
static void setup_anchor_walk(JNIEnv *jni, jthread t) {
  jclass tc = (*jni)->FindClass(jni, "java/lang/Thread");
  agent.eetop = tc ? (*jni)->GetFieldID(jni, tc, "eetop", "J") : NULL;
  if ((*jni)->ExceptionCheck(jni)) (*jni)->ExceptionClear(jni);
  agent.tid = tc ? (*jni)->GetFieldID(jni, tc, "tid", "J") : NULL; /* JDK 17-25; else ids 0 */
  if ((*jni)->ExceptionCheck(jni)) (*jni)->ExceptionClear(jni);
  if (tc) (*jni)->DeleteLocalRef(jni, tc);
  if (sampler_setup_anchor_walk(jni, java_thread_of(jni, t), plat_gettid()) != 0) {
    struct sampler_report r;
    sampler_report(&r);
    say("samples in VM code called from Java stay unwalked on this JVM: %s", r.anchor_walk_off);
  }
}

/* Everything that needs a live VM: names of the program, jmethodIDs of the classes loaded so
 * far, the threads running already, and the sampler thread. At VMInit, or at attach; ctl held.
 * Returns 0 or agent_begin_run's negative errno-style code (said why): the run did not start. */
int events_start_live(jvmtiEnv *jvmti, JNIEnv *jni, jthread t) {
  char *cmd = NULL;
  if ((*jvmti)->GetSystemProperty(jvmti, "sun.java.command", &cmd) == JVMTI_ERROR_NONE && cmd) {
    cmd[strcspn(cmd, " ")] = '\0';
    output_set_program(cmd);
    (*jvmti)->Deallocate(jvmti, (unsigned char *)cmd);
  }
  sweep_loaded_classes(jvmti);
  register_current(jvmti, jni, t, 0);
  setup_anchor_walk(jni, t);
  register_existing(jvmti, jni, t);
  return agent_begin_run(jvmti, jni);
}

/* A JVM started with the agent whose sampler thread cannot start (too many threads, a full
 * heap): the program runs unprofiled, with nothing of ours installed. */
static void JNICALL on_vm_init(jvmtiEnv *jvmti, JNIEnv *jni, jthread t) {
  pthread_mutex_lock(&agent.ctl);
  if (events_start_live(jvmti, jni, t) != 0) {
    say("%s", "not profiling: the program runs without the agent");
    agent_abandon();
  }
  pthread_mutex_unlock(&agent.ctl);
}

static void JNICALL on_vm_death(jvmtiEnv *jvmti, JNIEnv *jni) {
  (void)jvmti, (void)jni;
  pthread_mutex_lock(&agent.ctl);
  atomic_store(&agent.dead, 1);
  if (agent.state == RUNNING) agent_finish_run("exit");
  pthread_mutex_unlock(&agent.ctl);
}

/* GC pauses, marked on the time axis. The callbacks run in the VM's GC pause, where JNI and
 * most of JVMTI are not allowed: a clock read and sampler_mark only (a mutex held for a few
 * stores). One pause at a time: HotSpot posts Start and Finish around each. */
static _Atomic uint64_t gc_start_ns;

static void JNICALL on_gc_start(jvmtiEnv *jvmti) {
  (void)jvmti;
  atomic_store(&gc_start_ns, plat_mono_ns());
}

static void JNICALL on_gc_finish(jvmtiEnv *jvmti) {
  (void)jvmti;
  uint64_t start = atomic_exchange(&gc_start_ns, 0);
  if (start)
    sampler_mark(SAMPLER_MARK_GC, start,
                 plat_mono_ns()); /* (outside a profile: dropped as one starts) */
}

static void JNICALL on_data_dump(jvmtiEnv *jvmti) {
  (void)jvmti;
  if (atomic_load(&agent.dead)) return;
  pthread_mutex_lock(&agent.ctl);
  if (agent.state == RUNNING) {
    char path[OPT_FILE_MAX];
    uint64_t now = plat_mono_ns();
    sampler_mark(SAMPLER_MARK_KILL3, now, now);
    pthread_mutex_lock(&agent.cut_lock);
    chunks_current_file(path, sizeof path);
    if (chunks_write(path, 0, 0, "kill -3") == 0) say("profile so far written to %s", path);
    pthread_mutex_unlock(&agent.cut_lock);
  }
  pthread_mutex_unlock(&agent.ctl);
}

/* ---- the stacks of the events that JVMTI calls back for ---- */

/* The calling thread's Java stack into frames[0..depth), leaf first; returns how many (0: none).
 * Not signal-safe; any Java thread, in a JVMTI callback or a native method of its own. */
static int jvmti_stack(jvmtiEnv *jvmti, jvmtiFrameInfo *frames, int depth) {
  jint got = 0;
  if ((*jvmti)->GetStackTrace(jvmti, NULL, 0, depth, frames, &got) != JVMTI_ERROR_NONE) got = 0;
  return got;
}

/* The calling thread's Java stack from AsyncGetCallTrace, walked from its last Java frame
 * (no ucontext: forte.cpp reads the frame anchor of a thread outside Java code), converted in
 * place to JVMTI's frames; returns the frames, or AsyncGetCallTrace's failure code (<= 0). */
static int asgct_stack(JNIEnv *jni, jvmtiFrameInfo *frames, int depth) {
  _Static_assert(sizeof(asgct_frame) == sizeof(jvmtiFrameInfo), "converted in place");
  asgct_frame *raw = (asgct_frame *)(void *)frames;
  asgct_trace trace = {.env_id = jni, .num_frames = 0, .frames = raw};
  agent.asgct(&trace, depth, NULL);
  int n = trace.num_frames;
  for (int i = 0; i < n; i++) { /* the same bytes: each frame read whole, then written */
    asgct_frame f = raw[i];
    frames[i] = (jvmtiFrameInfo){.method = f.method_id, .location = f.lineno < 0 ? -1 : f.lineno};
  }
  return n;
}

/* The same, for a thread whose last Java frame is walkable from its frame anchor, as in a
 * native method (our park wrapper) or a JVMTI callback posted from the interpreter: there
 * AsyncGetCallTrace walks from that frame without entering the VM; GetStackTrace enters the VM
 * (a state transition, handles, a vframe object per frame). Where the last frame is a C1/C2
 * runtime stub (a contended monitor entered from compiled code; an allocation's slow path from
 * compiled code) it cannot walk (-4): for an allocation (alloc 1) the stub is made walkable
 * from its call into the VM on, once per stub (sampler_stub_make_walkable, stubwalk.c says why
 * that is true and safe), and walked again; where it still cannot, GetStackTrace answers,
 * counted (lock_walks_jvmti, alloc_walks_jvmti). Not signal-safe (the fallback). */
static int java_stack(jvmtiEnv *jvmti, JNIEnv *jni, jvmtiFrameInfo *frames, int depth, int alloc) {
  int n = asgct_stack(jni, frames, depth);
  if (n == ASGCT_NOT_WALKABLE_NOT_JAVA && alloc && sampler_stub_make_walkable(jni))
    n = asgct_stack(jni, frames, depth);
  if (n > 0 && alloc) n = sampler_stub_exact(jni, frames, n, depth);
  if (n > 0) return n;
  if (alloc)
    sampler_alloc_walk_fallback();
  else
    sampler_lock_walk_fallback();
  return jvmti_stack(jvmti, frames, depth);
}

/* What the event callbacks keep on their thread between its events: the frames' buffer (a
 * callback that took 16 KB from malloc and gave it back at every sample spent ~7% of its time
 * there: perf, crypto at alloc=2m) and the signatures of the classes it allocated or waited for
 * last (JVMTI's GetClassSignature with its Deallocate was ~13% of it; a class is recognised by JNI's
 * IsSameObject against a weak reference, which a class unloaded clears). Made at the thread's
 * first event; the weak references are deleted at its ThreadEnd (forget_classes), the memory
 * by a key's destructor as the thread exits. */
#define SIG_SEEN 4      /* classes remembered per thread */
#define SIG_SEEN_MAX 96 /* the longest signature remembered, with its NUL */

struct sig_seen {
  jweak cls;
  size_t len;
  char sig[SIG_SEEN_MAX];
};

struct thread_events {
  jvmtiFrameInfo *frames;
  int cap, busy;
  int ended; /* past its ThreadEnd: no class is remembered any more (nothing would delete it) */
  struct sig_seen seen[SIG_SEEN]; /* most recently used first; the used ones before the empty */
};

static pthread_key_t events_key;
static pthread_once_t events_once = PTHREAD_ONCE_INIT;
static int events_key_made;
static __thread struct thread_events *thread_events;

static void thread_events_free(void *p) {
  struct thread_events *te = p;
  if (te) free(te->frames);
  free(te);
}

static void events_key_make(void) {
  events_key_made = pthread_key_create(&events_key, thread_events_free) == 0;
}

/* The calling thread's, made at its first call; NULL when out of memory. */
static struct thread_events *thread_events_get(void) {
  if (thread_events) return thread_events;
  pthread_once(&events_once, events_key_make);
  struct thread_events *te = events_key_made ? calloc(1, sizeof *te) : NULL;
  if (te && pthread_setspecific(events_key, te) != 0) {
    free(te);
    te = NULL;
  }
  return thread_events = te;
}

/* A buffer for depth frames: the thread's, or — when that is in use (a callback inside another:
 * not seen, as JVMTI posts no allocation sample inside another and our callbacks wait for no
 * lock) or cannot be had — one of its own. Give it back with event_frames_done. NULL when out
 * of memory. */
static jvmtiFrameInfo *event_frames(int depth) {
  struct thread_events *te = thread_events_get();
  if (!te || te->busy) return malloc((size_t)depth * sizeof(jvmtiFrameInfo));
  if (te->cap < depth) {
    jvmtiFrameInfo *f = malloc((size_t)depth * sizeof *f);
    if (!f) return NULL;
    free(te->frames);
    te->frames = f;
    te->cap = depth;
  }
  te->busy = 1;
  return te->frames;
}

static void event_frames_done(jvmtiFrameInfo *frames) {
  struct thread_events *te = thread_events;
  if (te && frames && frames == te->frames)
    te->busy = 0;
  else
    free(frames);
}

/* The signature of cls, the class of an allocation or a lock on the calling thread: one the
 * thread saw lately, or JVMTI's (then *owned is it, to Deallocate after use; NULL when it
 * failed). Sets *len. The thread's classes are looked at only when `remembered` says no exception
 * can be pending (IsSameObject is not among the JNI functions allowed then): an allocation's
 * callback, or a lock wait's after ExceptionCheck. */
static const char *event_class(jvmtiEnv *jvmti, JNIEnv *jni, jclass cls, int remembered,
                               char **owned, size_t *len) {
  *owned = NULL;
  struct thread_events *te = remembered ? thread_events_get() : NULL;
  /* most recent first (each look is a JNI call): a hit moves to the front */
  for (int i = 0; te && i < SIG_SEEN && te->seen[i].cls; i++)
    if ((*jni)->IsSameObject(jni, cls, te->seen[i].cls)) {
      if (i) {
        struct sig_seen hit = te->seen[i];
        memmove(&te->seen[1], &te->seen[0], (size_t)i * sizeof hit);
        te->seen[0] = hit;
      }
      *len = te->seen[0].len;
      return te->seen[0].sig;
    }
  if ((*jvmti)->GetClassSignature(jvmti, cls, owned, NULL) != JVMTI_ERROR_NONE || !*owned) {
    *owned = NULL;
    return NULL;
  }
  *len = strlen(*owned);
  if (te && !te->ended && *len < SIG_SEEN_MAX) {
    jweak w = (*jni)->NewWeakGlobalRef(jni, cls);
    if (w) { /* in front; the least recent goes */
      jweak last = te->seen[SIG_SEEN - 1].cls;
      if (last) (*jni)->DeleteWeakGlobalRef(jni, last);
      memmove(&te->seen[1], &te->seen[0], (SIG_SEEN - 1) * sizeof te->seen[0]);
      te->seen[0].cls = w;
      te->seen[0].len = *len;
      memcpy(te->seen[0].sig, *owned, *len + 1);
    }
  }
  return *owned;
}

/* At the calling thread's ThreadEnd: the classes it remembered are let go. */
static void forget_classes(JNIEnv *jni) {
  struct thread_events *te = thread_events;
  if (te) te->ended = 1; /* an allocation the JVM posts after it leaks no weak reference */
  for (int i = 0; te && i < SIG_SEEN; i++)
    if (te->seen[i].cls) {
      (*jni)->DeleteWeakGlobalRef(jni, te->seen[i].cls);
      te->seen[i].cls = NULL;
    }
}

/* ---- allocations (event=alloc) ---- */

static _Atomic int alloc_depth; /* frames taken per sample while an allocation run is on */

/* A sampled allocation (SampledObjectAlloc), on the allocating thread, in Java context: its
 * stack (java_stack: AsyncGetCallTrace, JVMTI's where it cannot), queued for the sampler thread with the class's signature
 * and the object's size. Never waits for the sampler thread. */
static void JNICALL on_sampled_alloc(jvmtiEnv *jvmti, JNIEnv *jni, jthread t, jobject obj,
                                     jclass cls, jlong size) {
  (void)t, (void)obj;
  int depth = atomic_load(&alloc_depth);
  if (!depth || atomic_load(&agent.dead)) return;
  uint64_t cost = sampler_cost_begin(0);
  char *owned;
  size_t len = 1;
  const char *c = event_class(jvmti, jni, cls, 1, &owned, &len);
  if (!c) c = "?", len = 1;
  jvmtiFrameInfo *frames = event_frames(depth);
  int n = frames ? java_stack(jvmti, jni, frames, depth, 1) : 0; /* 0: under its class alone */
  sampler_alloc_sample(c, len, size > 0 ? (uint64_t)size : 0, frames, n, cost);
  event_frames_done(frames);
  if (owned) (*jvmti)->Deallocate(jvmti, (unsigned char *)owned);
}

/* Turns allocation sampling on (mean interval `bytes`, frames up to depth) or off (bytes 0).
 * Returns 0 or check()'s code. ctl held. */
int events_alloc(jvmtiEnv *jvmti, uint64_t bytes, int depth) {
  if (!bytes) {
    atomic_store(&alloc_depth, 0);
    return check((*jvmti)->SetEventNotificationMode(jvmti, JVMTI_DISABLE,
                                                    JVMTI_EVENT_SAMPLED_OBJECT_ALLOC, NULL),
                 "SetEventNotificationMode");
  }
  jvmtiCapabilities caps;
  memset(&caps, 0, sizeof caps);
  caps.can_generate_sampled_object_alloc_events = 1;
  int rc = check((*jvmti)->AddCapabilities(jvmti, &caps), "AddCapabilities");
  if (!rc)
    rc = check((*jvmti)->SetHeapSamplingInterval(jvmti, (jint)bytes), "SetHeapSamplingInterval");
  atomic_store(&alloc_depth, depth);
  if (!rc)
    rc = check((*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE,
                                                  JVMTI_EVENT_SAMPLED_OBJECT_ALLOC, NULL),
               "SetEventNotificationMode");
  if (rc) atomic_store(&alloc_depth, 0);
  return rc;
}

/* ---- lock waits (event=lock) ---- */

static _Atomic int lock_depth;          /* frames taken per wait while a lock run is on */
static _Atomic unsigned lock_run;       /* lock runs begun: an Enter of an earlier one is stale */
static __thread uint64_t monitor_began; /* this thread's contended entry, from its Enter, */
static __thread unsigned monitor_run;   /* in this lock run */

/* The park native as the JVM bound it (Unsafe.park(ZJ)V), found by NativeMethodBind: our
 * wrapper calls it. NULL when its binding was not seen (an attach after the JVM's start). */
typedef void(JNICALL *park_fn)(JNIEnv *, jobject, jboolean, jlong);
static _Atomic(park_fn) park_native;
static _Atomic int park_wrapped; /* our wrapper is registered in its place */
static jfieldID park_blocker;    /* java.lang.Thread.parkBlocker (set before a lock run) */

/* Binds seen before JVMTI could name their methods (the primordial phase): resolved at the
 * first lock run. Bounded; those past the end are not kept (the park among them: not seen). */
#define EARLY_BINDS 4096
static struct {
  jmethodID m;
  void *address;
} early[EARLY_BINDS];
static _Atomic int early_n;

/* Records a wait of wait_ns that just ended on the calling thread, for a lock of class cls
 * (NULL: a park without a blocker): the stack from JVMTI, queued; cost: sampler_cost_begin(1)
 * once the wait ended. */
static void record_wait(jvmtiEnv *jvmti, JNIEnv *jni, jclass cls, uint64_t wait_ns, uint64_t cost) {
  int depth = atomic_load(&lock_depth);
  if (!depth) return;
  char *owned = NULL;
  size_t len = 0;
  const char *c = "";
  if (cls) { /* (GetClassSignature and its Deallocate for every wait: the thread's classes) */
    c = event_class(jvmti, jni, cls, !(*jni)->ExceptionCheck(jni), &owned, &len);
    if (!c) c = "?", len = 1;
  }
  jvmtiFrameInfo *frames = event_frames(depth);
  int n = frames ? java_stack(jvmti, jni, frames, depth, 0) : 0; /* 0: under its class alone */
  sampler_lock_wait(c, len, wait_ns, frames, n, cost);
  event_frames_done(frames);
  if (owned) (*jvmti)->Deallocate(jvmti, (unsigned char *)owned);
}

/* A thread found a monitor held (MonitorContendedEnter): its wait begins now. */
static void JNICALL on_monitor_wait_begins(jvmtiEnv *jvmti, JNIEnv *jni, jthread t, jobject obj) {
  (void)jvmti, (void)jni, (void)t, (void)obj;
  monitor_began = atomic_load(&lock_depth) ? plat_mono_ns() : 0;
  monitor_run = atomic_load(&lock_run);
}

/* The thread entered the monitor it waited for (MonitorContendedEntered): the wait, when
 * chosen (sampler_lock_take), with the stack and the monitor's class. */
static void JNICALL on_monitor_entered(jvmtiEnv *jvmti, JNIEnv *jni, jthread t, jobject obj) {
  (void)t;
  uint64_t began = monitor_began;
  monitor_began = 0;
  if (!began || monitor_run != atomic_load(&lock_run) || atomic_load(&agent.dead)) return;
  uint64_t now = plat_mono_ns();
  if (!sampler_lock_take(now - began)) return;
  uint64_t cost = sampler_cost_begin(1);
  jclass cls = (*jni)->GetObjectClass(jni, obj);
  record_wait(jvmti, jni, cls, now - began, cost);
  if (cls) (*jni)->DeleteLocalRef(jni, cls);
}

/* Unsafe.park in our place: the JVM's own park, timed; a chosen wait is recorded with the
 * thread's park blocker's class (read after the park returns: LockSupport clears it only
 * after). What the park computes is the JVM's: same arguments, nothing changed. */
static void JNICALL park_wrapper(JNIEnv *jni, jobject unsafe, jboolean absolute, jlong time) {
  park_fn park = atomic_load(&park_native);
  if (!atomic_load(&lock_depth)) {
    park(jni, unsafe, absolute, time);
    return;
  }
  uint64_t began = plat_mono_ns();
  park(jni, unsafe, absolute, time);
  uint64_t now = plat_mono_ns();
  if (!sampler_lock_take(now - began) || atomic_load(&agent.dead) || (*jni)->ExceptionCheck(jni))
    return;
  uint64_t cost = sampler_cost_begin(1);
  jvmtiEnv *jvmti = agent.jvmti;
  jthread self = NULL;
  jobject blocker = NULL;
  jclass cls = NULL;
  if (park_blocker && (*jvmti)->GetCurrentThread(jvmti, &self) == JVMTI_ERROR_NONE && self)
    blocker = (*jni)->GetObjectField(jni, self, park_blocker);
  if (blocker) cls = (*jni)->GetObjectClass(jni, blocker);
  record_wait(jvmti, jni, cls, now - began, cost);
  if (cls) (*jni)->DeleteLocalRef(jni, cls);
  if (blocker) (*jni)->DeleteLocalRef(jni, blocker);
  if (self) (*jni)->DeleteLocalRef(jni, self);
}

/* 1 when method m is jdk.internal.misc.Unsafe.park(ZJ)V. */
static int is_park(jvmtiEnv *jvmti, jmethodID m) {
  char *name = NULL, *sig = NULL, *csig = NULL;
  jclass cls = NULL;
  int yes = 0;
  if ((*jvmti)->GetMethodName(jvmti, m, &name, &sig, NULL) == JVMTI_ERROR_NONE &&
      !strcmp(name, "park") && !strcmp(sig, "(ZJ)V") &&
      (*jvmti)->GetMethodDeclaringClass(jvmti, m, &cls) == JVMTI_ERROR_NONE &&
      (*jvmti)->GetClassSignature(jvmti, cls, &csig, NULL) == JVMTI_ERROR_NONE)
    yes = !strcmp(csig, "Ljdk/internal/misc/Unsafe;");
  if (name) (*jvmti)->Deallocate(jvmti, (unsigned char *)name);
  if (sig) (*jvmti)->Deallocate(jvmti, (unsigned char *)sig);
  if (csig) (*jvmti)->Deallocate(jvmti, (unsigned char *)csig);
  return yes;
}

/* A native method bound (NativeMethodBind): the park's address kept. Early in the JVM's start
 * methods cannot be named yet: kept with their address, to be named at the first lock run. */
static void JNICALL on_native_bind(jvmtiEnv *jvmti, JNIEnv *jni, jthread t, jmethodID m,
                                   void *address, void **new_address) {
  (void)jni, (void)t;
  if (address == (void *)park_wrapper || atomic_load(&park_native)) return;
  jvmtiPhase phase = JVMTI_PHASE_DEAD;
  (*jvmti)->GetPhase(jvmti, &phase);
  if (phase == JVMTI_PHASE_PRIMORDIAL) {
    int i = atomic_fetch_add(&early_n, 1);
    if (i < EARLY_BINDS) early[i].m = m, early[i].address = address;
    return;
  }
  if (!is_park(jvmti, m)) return;
  atomic_store(&park_native, (park_fn)(uintptr_t)address);
  *new_address = (void *)park_wrapper; /* bound to it from the start: nothing re-registered */
  atomic_store(&park_wrapped, 1);
}

/* Puts park_wrapper in the park's place, once (it stays: with no lock run it only calls the
 * park). Returns 0, or -ENOENT when the park's binding was not seen (said by the caller). */
static int wrap_park(jvmtiEnv *jvmti, JNIEnv *jni) {
  if (!park_blocker) {
    jclass thread = (*jni)->FindClass(jni, "java/lang/Thread");
    park_blocker =
        thread ? (*jni)->GetFieldID(jni, thread, "parkBlocker", "Ljava/lang/Object;") : 0;
    if ((*jni)->ExceptionCheck(jni)) (*jni)->ExceptionClear(jni);
    if (thread) (*jni)->DeleteLocalRef(jni, thread);
    if (!park_blocker) return -ENOENT;
  }
  if (atomic_load(&park_wrapped)) return 0;
  int n = atomic_load(&early_n);
  for (int i = 0; i < n && i < EARLY_BINDS && !atomic_load(&park_native); i++)
    if (is_park(jvmti, early[i].m))
      atomic_store(&park_native, (park_fn)(uintptr_t)early[i].address);
  if (!atomic_load(&park_native)) return -ENOENT;
  /* bound before we could name it: registered again (HotSpot logs a warning for it) */
  jclass unsafe = (*jni)->FindClass(jni, "jdk/internal/misc/Unsafe");
  JNINativeMethod wrap = {"park", "(ZJ)V", (void *)park_wrapper};
  int rc = unsafe && (*jni)->RegisterNatives(jni, unsafe, &wrap, 1) == 0 ? 0 : -ENOENT;
  if ((*jni)->ExceptionCheck(jni)) (*jni)->ExceptionClear(jni);
  if (unsafe) (*jni)->DeleteLocalRef(jni, unsafe);
  if (!rc) atomic_store(&park_wrapped, 1);
  return rc;
}

/* Turns the contended-monitor events on or off (mode). Returns 0 or check()'s code. */
static int monitor_events(jvmtiEnv *jvmti, jvmtiEventMode mode) {
  int rc = check(
      (*jvmti)->SetEventNotificationMode(jvmti, mode, JVMTI_EVENT_MONITOR_CONTENDED_ENTER, NULL),
      "SetEventNotificationMode");
  int rc2 = check(
      (*jvmti)->SetEventNotificationMode(jvmti, mode, JVMTI_EVENT_MONITOR_CONTENDED_ENTERED, NULL),
      "SetEventNotificationMode");
  return rc ? rc : rc2;
}

/* See agent_internal.h. */
int events_lock(jvmtiEnv *jvmti, JNIEnv *jni, int on, int depth) {
  if (!on) {
    atomic_store(&lock_depth, 0);
    if (agent.monitor_events) monitor_events(jvmti, JVMTI_DISABLE);
    return 0;
  }
  int rc = 0;
  atomic_fetch_add(&lock_run, 1); /* an Enter the last run saw, its Entered not: not ours */
  if (agent.monitor_events && monitor_events(jvmti, JVMTI_ENABLE)) {
    monitor_events(jvmti, JVMTI_DISABLE);
    agent.monitor_events = 0;
  }
  if (!agent.monitor_events)
    say("%s", "event=lock: this JVM gives no monitor events: contended synchronized not seen");
  if (jni && wrap_park(jvmti, jni))
    say("%s", "event=lock: Unsafe.park's binding was not seen (the agent was attached after the "
              "JVM's start): parks (java.util.concurrent locks) not seen");
  if (!agent.monitor_events && !atomic_load(&park_wrapped)) rc = -EINVAL;
  if (!rc) atomic_store(&lock_depth, depth);
  return rc;
}

static const jvmtiEvent EVENTS[] = {
    JVMTI_EVENT_VM_INIT, JVMTI_EVENT_VM_DEATH, JVMTI_EVENT_THREAD_START, JVMTI_EVENT_THREAD_END,
    /* ClassLoad: for the sampler thread only (events_class_load) */
    JVMTI_EVENT_CLASS_PREPARE, JVMTI_EVENT_DATA_DUMP_REQUEST,
    /* GC pauses (when the capability was had: events_gc) */
    JVMTI_EVENT_GARBAGE_COLLECTION_START, JVMTI_EVENT_GARBAGE_COLLECTION_FINISH,
    /* the park's binding, for event=lock (when the capability was had) */
    JVMTI_EVENT_NATIVE_METHOD_BIND};

/* The code map's: on only while a run signals threads (events_code) */
static const jvmtiEvent CODE_EVENTS[] = {JVMTI_EVENT_COMPILED_METHOD_LOAD,
                                         JVMTI_EVENT_COMPILED_METHOD_UNLOAD,
                                         JVMTI_EVENT_DYNAMIC_CODE_GENERATED};

/* Turns the code map's events on and replays the code that exists, or off (agent_internal.h).
 * The replay: HotSpot posts every live stub and (SAMPLER_CODE_REPLAY) nmethod to this thread
 * (SAMPLER_CODE_STUBS: the sampler reads the nmethods from the code cache itself;
 * SAMPLER_CODE_GENERATED: and no event per compilation is on at all); what HotSpot
 * posted meanwhile on its own thread may come twice — the map keeps the newer of two entries for
 * one range. */
int events_code(void *ctx, int how) {
  (void)ctx;
  jvmtiEnv *jvmti = agent.jvmti;
  int rc = 0, on = how != SAMPLER_CODE_OFF;
  for (size_t i = 0; i < sizeof CODE_EVENTS / sizeof *CODE_EVENTS && !rc; i++) {
    int each = on && (how != SAMPLER_CODE_GENERATED ||
                      CODE_EVENTS[i] == JVMTI_EVENT_DYNAMIC_CODE_GENERATED);
    rc = check((*jvmti)->SetEventNotificationMode(jvmti, each ? JVMTI_ENABLE : JVMTI_DISABLE,
                                                  CODE_EVENTS[i], NULL),
               "SetEventNotificationMode");
  }
  if (!rc && on)
    rc = check((*jvmti)->GenerateEvents(jvmti, JVMTI_EVENT_DYNAMIC_CODE_GENERATED),
               "GenerateEvents");
  /* no event during the run: a stub HotSpot makes later (an adapter as a method is linked, a
   * vtable stub) would be posted through its service thread — a wake-up on the thread that made
   * it, at javac's start ~150 of them on the main thread (~3 ms). The sampler asks again when
   * a sample meets one (run.c stub_replay). */
  if (!rc && how == SAMPLER_CODE_GENERATED)
    rc = check((*jvmti)->SetEventNotificationMode(jvmti, JVMTI_DISABLE,
                                                  JVMTI_EVENT_DYNAMIC_CODE_GENERATED, NULL),
               "SetEventNotificationMode");
  if (!rc && how == SAMPLER_CODE_REPLAY)
    rc = check((*jvmti)->GenerateEvents(jvmti, JVMTI_EVENT_COMPILED_METHOD_LOAD), "GenerateEvents");
  if (rc && on) events_code(ctx, SAMPLER_CODE_OFF);
  return rc;
}

/* Sets our callbacks and enables their events (agent_internal.h). */
int events_install(jvmtiEnv *jvmti) {
  jvmtiEventCallbacks cb;
  memset(&cb, 0, sizeof cb);
  cb.VMInit = on_vm_init;
  cb.VMDeath = on_vm_death;
  cb.ThreadStart = on_thread_start;
  cb.ThreadEnd = on_thread_end;
  cb.ClassLoad = on_class_load;
  cb.ClassPrepare = on_class_prepare;
  cb.DataDumpRequest = on_data_dump;
  cb.GarbageCollectionStart = on_gc_start;
  cb.GarbageCollectionFinish = on_gc_finish;
  cb.CompiledMethodLoad = on_compiled_method_load;
  cb.CompiledMethodUnload = on_compiled_method_unload;
  cb.DynamicCodeGenerated = on_dynamic_code;
  cb.SampledObjectAlloc = on_sampled_alloc;          /* enabled by events_alloc */
  cb.MonitorContendedEnter = on_monitor_wait_begins; /* enabled by events_lock */
  cb.MonitorContendedEntered = on_monitor_entered;
  cb.NativeMethodBind = on_native_bind; /* always (binds are few): the park's, for event=lock */
  size_t nevents = sizeof EVENTS / sizeof *EVENTS;
  int rc = check((*jvmti)->SetEventCallbacks(jvmti, &cb, sizeof cb), "SetEventCallbacks");
  for (size_t i = 0; i < nevents && !rc; i++) {
    int gc = EVENTS[i] == JVMTI_EVENT_GARBAGE_COLLECTION_START ||
             EVENTS[i] == JVMTI_EVENT_GARBAGE_COLLECTION_FINISH;
    if (gc && !agent.gc_marks) continue;
    if (EVENTS[i] == JVMTI_EVENT_NATIVE_METHOD_BIND && !agent.bind_events) continue;
    rc = check((*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, EVENTS[i], NULL),
               "SetEventNotificationMode");
  }
  return rc;
}

/* Takes our events and callbacks out (agent_internal.h). */
void events_remove(jvmtiEnv *jvmti) {
  for (size_t i = 0; i < sizeof EVENTS / sizeof *EVENTS; i++)
    (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_DISABLE, EVENTS[i], NULL);
  (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_DISABLE, JVMTI_EVENT_CLASS_LOAD, NULL);
  for (size_t i = 0; i < sizeof CODE_EVENTS / sizeof *CODE_EVENTS; i++)
    (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_DISABLE, CODE_EVENTS[i], NULL);
  (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_DISABLE, JVMTI_EVENT_SAMPLED_OBJECT_ALLOC, NULL);
  monitor_events(jvmti, JVMTI_DISABLE);
  (*jvmti)->SetEventCallbacks(jvmti, NULL, 0);
}
