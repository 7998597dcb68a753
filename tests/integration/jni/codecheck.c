/*
 * codecheck.c — a test-only JVMTI agent (never shipped): proves the code-cache reader
 * (sampler/java/codecache.h) against the JVM's own events. For every nmethod CompiledMethodLoad
 * reports, pcs at its start, middle and last byte are looked up through the reader, which must
 * give an nmethod with the same code range and jmethodID; every DynamicCodeGenerated region's
 * first pc must be found as a blob that is not an nmethod; the agent's own code must not be
 * found. At VM death it prints one `codecheck:` line with the counts, the misses (up to 20),
 * the compile levels seen and the reader's time per lookup; jvm_codecache (run.py) checks them.
 */
#include <dlfcn.h>
#include <errno.h>
#include <jvmti.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "codecache.h"

static struct codecache_layout layout;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static long nmethods, agree, stubs, stubs_found, outside, outside_found, lookups, lookup_ns;
static long levels[6];
static int misses_shown;

static void *sym(const char *name, void *ctx) {
  (void)ctx;
  return dlsym(RTLD_DEFAULT, name);
}

static long now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1000000000L + t.tv_nsec;
}

/* One timed lookup; lock held. */
static int find(uintptr_t pc, struct codecache_blob *b) {
  long t = now_ns();
  int rc = codecache_find(&layout, pc, b);
  lookup_ns += now_ns() - t;
  lookups++;
  return rc;
}

static void miss(const char *what, uintptr_t pc, int rc, const struct codecache_blob *b,
                 uintptr_t begin, uintptr_t end, const void *id) {
  if (misses_shown++ >= 20) return;
  fprintf(
      stderr,
      "codecheck: miss %s pc=%#lx rc=%d nmethod=%d code=[%#lx,%#lx) id=%p; want [%#lx,%#lx) id=%p\n",
      what, (unsigned long)pc, rc, b->is_nmethod, (unsigned long)b->code_begin,
      (unsigned long)b->code_end, b->jmethod_id, (unsigned long)begin, (unsigned long)end, id);
}

static void JNICALL on_load(jvmtiEnv *jvmti, jmethodID method, jint size, const void *addr,
                            jint map_length, const jvmtiAddrLocationMap *map, const void *info) {
  (void)jvmti, (void)map_length, (void)map, (void)info;
  uintptr_t begin = (uintptr_t)addr, end = begin + (uintptr_t)size;
  const uintptr_t pcs[] = {begin, begin + (uintptr_t)size / 2, end - 1};
  pthread_mutex_lock(&lock);
  nmethods++;
  int ok = size > 0;
  struct codecache_blob b = {0};
  for (size_t i = 0; ok && i < sizeof pcs / sizeof pcs[0]; i++) {
    memset(&b, 0, sizeof b);
    int rc = find(pcs[i], &b);
    if (rc != 0 || !b.is_nmethod || b.code_begin != begin || b.code_end != end ||
        b.jmethod_id != (void *)method) {
      miss("nmethod", pcs[i], rc, &b, begin, end, method);
      ok = 0;
    }
  }
  if (ok) {
    agree++;
    levels[b.comp_level >= 0 && b.comp_level <= 4 ? b.comp_level : 5]++;
  }
  pthread_mutex_unlock(&lock);
}

static void JNICALL on_stub(jvmtiEnv *jvmti, const char *name, const void *addr, jint length) {
  (void)jvmti;
  struct codecache_blob b = {0};
  pthread_mutex_lock(&lock);
  stubs++;
  int rc = find((uintptr_t)addr, &b);
  if (rc == 0 && !b.is_nmethod && b.code_begin <= (uintptr_t)addr &&
      (uintptr_t)addr + (uintptr_t)length <= b.code_end)
    stubs_found++;
  else
    miss(name, (uintptr_t)addr, rc, &b, (uintptr_t)addr, (uintptr_t)addr + (uintptr_t)length, NULL);
  /* code that is not in the code cache: this agent's own, and a stack address */
  int here = 0;
  const uintptr_t away[] = {(uintptr_t)&on_stub, (uintptr_t)&here};
  for (size_t i = 0; i < 2; i++) {
    outside++;
    if (find(away[i], &b) != -ENOENT) outside_found++;
  }
  pthread_mutex_unlock(&lock);
}

static void JNICALL on_death(jvmtiEnv *jvmti, JNIEnv *jni) {
  (void)jvmti, (void)jni;
  pthread_mutex_lock(&lock);
  fprintf(stderr,
          "codecheck: nmethods=%ld agree=%ld stubs=%ld stubs_found=%ld outside=%ld "
          "outside_found=%ld levels=%ld,%ld,%ld,%ld,%ld,%ld lookups=%ld ns_per_lookup=%ld\n",
          nmethods, agree, stubs, stubs_found, outside, outside_found, levels[0], levels[1],
          levels[2], levels[3], levels[4], levels[5], lookups, lookups ? lookup_ns / lookups : 0);
  pthread_mutex_unlock(&lock);
}

JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *options, void *reserved) {
  (void)options, (void)reserved;
  const char *why = NULL;
  if (codecache_init(sym, NULL, &layout, &why) != 0) {
    fprintf(stderr, "codecheck: %s\n", why);
    return JNI_ERR;
  }
  jvmtiEnv *jvmti;
  if ((*vm)->GetEnv(vm, (void **)&jvmti, JVMTI_VERSION_1_2) != JNI_OK) return JNI_ERR;
  jvmtiCapabilities caps = {0};
  caps.can_generate_compiled_method_load_events = 1;
  jvmtiEventCallbacks cb = {0};
  cb.CompiledMethodLoad = on_load;
  cb.DynamicCodeGenerated = on_stub;
  cb.VMDeath = on_death;
  if ((*jvmti)->AddCapabilities(jvmti, &caps) != JVMTI_ERROR_NONE ||
      (*jvmti)->SetEventCallbacks(jvmti, &cb, sizeof cb) != JVMTI_ERROR_NONE)
    return JNI_ERR;
  const jvmtiEvent events[] = {JVMTI_EVENT_COMPILED_METHOD_LOAD, JVMTI_EVENT_DYNAMIC_CODE_GENERATED,
                               JVMTI_EVENT_VM_DEATH};
  for (size_t i = 0; i < sizeof events / sizeof events[0]; i++)
    if ((*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, events[i], NULL) !=
        JVMTI_ERROR_NONE)
      return JNI_ERR;
  return JNI_OK;
}
