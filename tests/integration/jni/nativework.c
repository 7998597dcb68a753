/*
 * nativework.c — the native side of the JNI scenarios (tests/integration/java/Scenarios.java):
 *  - Scenarios.nativeSpin: a C call chain nw_outer -> nw_middle -> nw_leaf doing the work, so a
 *    profile with native frames shows those three functions, in that order, above the Java
 *    method that called into C;
 *  - Scenarios.dlopenStorm: dlopen, call, dlclose of a library in a loop, so the sampler's
 *    native walk meets objects that come and go (and the loader's lock, held by this thread).
 * The functions are exported and kept out of line so that every one is a frame of its own.
 */
#include <dlfcn.h>
#include <jni.h>
#include <signal.h>
#include <stdint.h>
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
