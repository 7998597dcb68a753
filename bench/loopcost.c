/*
 * loopcost.c — the sampler thread's own cost per round, without a JVM: the real sampler loop
 * (sampler_core) at interval=1ms, hasrun=auto, over pthreads that spin (busy) or sleep (idle),
 * with the fake JVM of the tests (tests/support/fake_jvm.h) that reports one frame. Run for 3 s.
 *
 *   build/bench/loopcost BUSY IDLE      e.g. loopcost 0 0  (an empty round: the wake-up alone)
 *
 * Prints the rounds, the captures (stacks taken) and the sampler thread's CPU per round (µs).
 */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "fake_jvm.h"
#include "platform.h"
#include "sampler.h"

static atomic_int stop;
static void *busy(void *arg) {
  (void)arg;
  fake_jvm_set_role(FAKE_ROLE_BUSY);
  fake_jvm_register_self("busy");
  volatile unsigned long x = 0;
  while (!atomic_load(&stop)) x++;
  return NULL;
}
static void *idle(void *arg) {
  (void)arg;
  fake_jvm_set_role(FAKE_ROLE_IDLE);
  fake_jvm_register_self("idle");
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
  struct sampler_config c = {
      .interval_ns = 1000000, .depth = 64, .hasrun = SAMPLER_HASRUN_AUTO, .sig = SIGRTMIN + 4};
  struct sampler_jvm jvm = fake_jvm();
  if (sampler_init(&c, &jvm) != 0) return 1;
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
  struct sampler_report r;
  sampler_report(&r);
  printf("busy=%d idle=%d rounds=%llu captures=%llu sampler_cpu_per_round_us=%.1f\n", nbusy, nidle,
         (unsigned long long)r.n.ticks, (unsigned long long)r.n.samples,
         (double)r.n.sampler_cpu_ns / 1e3 / (double)(r.n.ticks ? r.n.ticks : 1));
  return 0;
}
