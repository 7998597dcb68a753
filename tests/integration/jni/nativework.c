/*
 * nativework.c — the native side of the JNI scenarios (tests/integration/java/Scenarios.java):
 *  - Scenarios.nativeSpin: a C call chain nw_outer -> nw_middle -> nw_leaf doing the work, so a
 *    profile with native frames shows those three functions, in that order, above the Java
 *    method that called into C;
 *  - Scenarios.dlopenStorm: dlopen, call, dlclose of a library in a loop, so the sampler's
 *    native walk meets objects that come and go (and the loader's lock, held by this thread);
 *  - Scenarios.sigBlockSpin: a thread of the library's own (not attached to the JVM) started
 *    with every signal blocked, as many libraries start their workers — or the calling Java
 *    thread, blocking them in the native method —, spinning; it counts the real-time signals
 *    that were queued to it meanwhile, and may unblock them and spin on;
 *  - Scenarios.renameSpin: a thread of the library's own that spins under the name it inherited
 *    from the Java thread that made it, then names itself (pthread_setname_np) and spins on.
 * The functions are exported and kept out of line so that every one is a frame of its own.
 */
#include <dlfcn.h>
#include <errno.h>
#include <jni.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define EXPORT __attribute__((visibility("default"), noinline))

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

EXPORT uint64_t nw_leaf(uint64_t x) {
  for (int i = 0; i < 20000; i++)
    x = (x * 6364136223846793005ull + 1442695040888963407ull) ^ (x >> 29);
  return x;
}

EXPORT uint64_t nw_middle(uint64_t x) {
  for (int i = 0; i < 8; i++) x = nw_leaf(x) + 1; /* + 1: no tail call, the frame stays */
  return x;
}

EXPORT uint64_t nw_outer(uint64_t x) {
  for (int i = 0; i < 4; i++) x = nw_middle(x) + 1;
  return x;
}

JNIEXPORT jlong JNICALL Java_Scenarios_nativeSpin(JNIEnv *env, jclass cls, jlong millis) {
  (void)env, (void)cls;
  uint64_t end = now_ns() + (uint64_t)millis * 1000000u, x = 1;
  while (now_ns() < end) x = nw_outer(x) + 1;
  return (jlong)x;
}

static void someone_elses_handler(int sig) { (void)sig; }

/* Another library's SIGPROF handler, as a library that profiles with setitimer would install. */
JNIEXPORT void JNICALL Java_Scenarios_holdSigprof(JNIEnv *env, jclass cls) {
  (void)env, (void)cls;
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = someone_elses_handler;
  sigaction(SIGPROF, &sa, NULL);
}

JNIEXPORT jlong JNICALL Java_Scenarios_dlopenStorm(JNIEnv *env, jclass cls, jstring path,
                                                   jlong millis) {
  (void)cls;
  const char *lib = (*env)->GetStringUTFChars(env, path, NULL);
  if (!lib) return -1;
  uint64_t end = now_ns() + (uint64_t)millis * 1000000u, x = 1;
  jlong rounds = 0;
  while (now_ns() < end) {
    void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    if (!h) break;
    uint64_t (*work)(uint64_t) = (uint64_t(*)(uint64_t))dlsym(h, "dltarget_work");
    if (work) x = work(x);
    dlclose(h);
    rounds++;
  }
  (*env)->ReleaseStringUTFChars(env, path, lib);
  return x ? rounds : rounds + 1;
}

/* Runs fn(arg) on a new thread and waits for it; mask: the caller's signal mask once the thread
 * is made (it inherits the caller's at that moment), or NULL. Returns 0, or an errno. */
static int run_and_join(void *(*fn)(void *), void *arg, const sigset_t *mask) {
  pthread_t t;
  int rc = pthread_create(&t, NULL, fn, arg);
  if (mask) pthread_sigmask(SIG_SETMASK, mask, NULL);
  return rc ? rc : pthread_join(t, NULL);
}

/* v[0..n) into the Java array out. */
static void copy_out(JNIEnv *env, jlongArray out, const int64_t *v, int n) {
  for (int i = 0; i < n; i++) {
    jlong x = (jlong)v[i];
    (*env)->SetLongArrayRegion(env, out, i, 1, &x);
  }
}

/* ---- a worker that blocks every signal (Scenarios.sigBlockSpin) ---- */

enum {
  SIGBLOCK_CPU_START,
  SIGBLOCK_CPU_BLOCKED,
  SIGBLOCK_CPU_TOTAL,
  SIGBLOCK_QUEUED,
  SIGBLOCK_TIMER,
  SIGBLOCK_SIGQ_START,
  SIGBLOCK_SIGQ,
  SIGBLOCK_OUT
};

struct sigblock_run {
  const char *name;            /* the new thread's; NULL: the caller's own thread */
  sigset_t unblocked;          /* its mask after block_ns */
  uint64_t block_ns, total_ns; /* spin this long with every signal blocked, then in all */
  int64_t out[SIGBLOCK_OUT];   /* SIGBLOCK_* */
};

static uint64_t thread_cpu_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

EXPORT uint64_t nw_blocked_spin(uint64_t end, uint64_t x) {
  while (now_ns() < end) x = nw_leaf(x) + 1;
  return x;
}

EXPORT uint64_t nw_unblocked_spin(uint64_t end, uint64_t x) {
  while (now_ns() < end) x = nw_leaf(x) + 1;
  return x;
}

/* The user's queued signals (SigQ in /proc/self/status: "queued/limit"), -1 unknown. */
static int64_t user_sigq(void) {
  FILE *f = fopen("/proc/self/status", "re");
  char line[128];
  long long q = -1;
  while (f && fgets(line, sizeof line, f))
    if (sscanf(line, "SigQ: %lld", &q) == 1) break;
  if (f) fclose(f);
  return q;
}

static void *sigblock_main(void *arg) {
  struct sigblock_run *r = arg;
  if (r->name) pthread_setname_np(pthread_self(), r->name);
  r->out[SIGBLOCK_CPU_START] = (int64_t)thread_cpu_ns();
  r->out[SIGBLOCK_SIGQ_START] = user_sigq();
  uint64_t start = now_ns(), x = 1;
  x = nw_blocked_spin(start + r->block_ns, x);
  r->out[SIGBLOCK_CPU_BLOCKED] = (int64_t)thread_cpu_ns();
  /* what was queued to this thread meanwhile: each real-time signal queues one entry (a
   * timer's one at most), and sigtimedwait takes them one by one */
  sigset_t rt;
  sigemptyset(&rt);
  for (int sig = SIGRTMIN; sig <= SIGRTMAX; sig++) sigaddset(&rt, sig);
  struct timespec zero = {0, 0};
  siginfo_t si;
  while (sigtimedwait(&rt, &si, &zero) > 0)
    r->out[si.si_code == SI_TIMER ? SIGBLOCK_TIMER : SIGBLOCK_QUEUED]++;
  r->out[SIGBLOCK_SIGQ] = user_sigq();
  if (r->total_ns > r->block_ns) {
    pthread_sigmask(SIG_SETMASK, &r->unblocked, NULL);
    x = nw_unblocked_spin(start + r->total_ns, x);
  }
  r->out[SIGBLOCK_CPU_TOTAL] = (int64_t)thread_cpu_ns();
  return (void *)(uintptr_t)(x & 1);
}

/* Runs main on a thread named `name` (sigblock_run: name, the two times, out), with every
 * signal blocked when `block` (then name null: the calling Java thread runs it itself, in this
 * native method, and gets its signal mask back at the end); waits for it; n of out into out.
 * Returns 0, or an errno. */
static jint spin_thread(JNIEnv *env, jstring name, jlong firstMillis, jlong totalMillis,
                        jlongArray out, int n, void *(*main)(void *), int block) {
  struct sigblock_run r;
  memset(&r, 0, sizeof r);
  r.block_ns = (uint64_t)firstMillis * 1000000u;
  r.total_ns = (uint64_t)totalMillis * 1000000u;
  if (name && !(r.name = (*env)->GetStringUTFChars(env, name, NULL))) return ENOMEM;
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(block ? SIG_SETMASK : SIG_BLOCK, block ? &all : NULL, &r.unblocked);
  int rc = 0;
  if (r.name) {
    rc = run_and_join(main, &r, &r.unblocked);
    (*env)->ReleaseStringUTFChars(env, name, r.name);
  } else {
    main(&r);
    pthread_sigmask(SIG_SETMASK, &r.unblocked, NULL);
  }
  copy_out(env, out, r.out, n);
  return rc;
}

/* A thread named `name` that spins blockMillis with every signal blocked, then (up to
 * totalMillis) with none; name null: the calling (Java) thread does it itself. out[0..6]: its
 * CPU (ns) as it blocked them, as it unblocked them and at the end; the real-time signals queued
 * to it while it blocked them (other than timers'), those of timers; the user's queued signals
 * (SigQ) as it blocked them and as it unblocked them. Returns 0, or an errno. */
JNIEXPORT jint JNICALL Java_Scenarios_sigBlockSpin(JNIEnv *env, jclass cls, jstring name,
                                                   jlong blockMillis, jlong totalMillis,
                                                   jlongArray out) {
  (void)cls;
  return spin_thread(env, name, blockMillis, totalMillis, out, SIGBLOCK_OUT, sigblock_main, 1);
}

/* ---- a worker that names itself late (Scenarios.renameSpin) ---- */

EXPORT uint64_t nw_spin_inherited(uint64_t end, uint64_t x) {
  while (now_ns() < end) x = nw_leaf(x) + 1;
  return x;
}

EXPORT uint64_t nw_spin_renamed(uint64_t end, uint64_t x) {
  while (now_ns() < end) x = nw_leaf(x) + 1;
  return x;
}

/* On a sigblock_run: spins block_ns under the name it inherited, then names itself. out[0..2]:
 * its CPU (ns) as it started, as it named itself, at the end. */
static void *rename_main(void *arg) {
  struct sigblock_run *r = arg;
  uint64_t start = now_ns(), x = 1;
  r->out[0] = (int64_t)thread_cpu_ns();
  x = nw_spin_inherited(start + r->block_ns, x);
  r->out[1] = (int64_t)thread_cpu_ns();
  pthread_setname_np(pthread_self(), r->name);
  x = nw_spin_renamed(start + r->total_ns, x);
  r->out[2] = (int64_t)thread_cpu_ns();
  return (void *)(uintptr_t)(x & 1);
}

/* Runs a thread that spins beforeMillis under its inherited name, then names itself `name` and
 * spins on (up to totalMillis); waits for it. out[0..2]: its CPU (ns) as it started, as it
 * named itself and at the end. Returns 0, or an errno. */
JNIEXPORT jint JNICALL Java_Scenarios_renameSpin(JNIEnv *env, jclass cls, jstring name,
                                                 jlong beforeMillis, jlong totalMillis,
                                                 jlongArray out) {
  (void)cls;
  if (!name) return EINVAL;
  return spin_thread(env, name, beforeMillis, totalMillis, out, 3, rename_main, 0);
}
