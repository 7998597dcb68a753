/*
 * loopcost.c — the sampler thread's own cost per round, without a JVM: the real sampler loop
 * (sampler_core) at interval=1ms, hasrun=auto, over pthreads that spin (busy) or sleep (idle),
 * with a stand-in for AsyncGetCallTrace that reports one frame. Run for 3 s.
 *
 *   build/bench/loopcost BUSY IDLE      e.g. loopcost 0 0  (an empty round: the wake-up alone)
 *
 * Prints the rounds, the stacks captured and the sampler thread's CPU per round (µs).
 */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "platform.h"
#include "registry.h"
#include "sampler.h"
#include "traces.h"

static void one_frame(asgct_trace *t, jint depth, void *uc) {
  (void)depth, (void)uc;
  t->frames[0].method_id = (jmethodID)0x10;
  t->frames[0].lineno = 0;
  t->num_frames = 1;
}
static jint JNICALL get_env(JavaVM *vm, void **env, jint version) {
  (void)vm, (void)version;
  static JNIEnv dummy;
  *env = &dummy;
  return JNI_OK;
}
static struct JNIInvokeInterface_ invoke = {.GetEnv = get_env};
static JavaVM vm = &invoke;
static int name(void *ctx, jmethodID m, jint bci, char *buf, size_t len) {
  (void)ctx, (void)m, (void)bci;
  snprintf(buf, len, "Busy.run");
  return 0;
}

static atomic_int stop;
static void *busy(void *arg) {
  (void)arg;
  registry_add(plat_gettid(), "busy");
  volatile unsigned long x = 0;
  while (!atomic_load(&stop)) x++;
  return NULL;
}
static void *idle(void *arg) {
  (void)arg;
  registry_add(plat_gettid(), "idle");
  while (!atomic_load(&stop)) sleep(1);
  return NULL;
}
static void *run(void *arg) {
  (void)arg;
  sampler_run();
  return NULL;
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: loopcost BUSY IDLE\n");
    return 2;
  }
  int nbusy = atoi(argv[1]), nidle = atoi(argv[2]);
  struct sampler_config c = {.interval_ns = 1000000, .depth = 64, .hasrun = SAMPLER_HASRUN_AUTO, .sig = SIGRTMIN + 4};
  if (sampler_init(&c, one_frame, &vm, name, NULL) != 0) return 1;
  pthread_t t;
  for (int i = 0; i < nbusy; i++) pthread_create(&t, NULL, busy, NULL);
  for (int i = 0; i < nidle; i++) pthread_create(&t, NULL, idle, NULL);
  usleep(50000);
  pthread_t s;
  pthread_create(&s, NULL, run, NULL);
  sleep(3);
  sampler_stop();
  pthread_join(s, NULL);
  atomic_store(&stop, 1);
  traces_lock();
  const struct sampler_stats *st = sampler_stats();
  printf("busy=%d idle=%d rounds=%llu stacks=%llu sampler_cpu_per_round_us=%.1f\n", nbusy, nidle,
         (unsigned long long)st->ticks, (unsigned long long)st->samples,
         (double)st->sampler_cpu_ns / 1e3 / (double)(st->ticks ? st->ticks : 1));
  traces_unlock();
  return 0;
}
