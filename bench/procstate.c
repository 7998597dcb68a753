/* procstate: what it costs to ask the kernel whether another thread of this process is running,
 * and how far its wchan file can be believed.
 *
 * Three threads: one spinning, one blocked in pause(), and one waking every 5 ms for ~20 us
 * of work (a server's pool thread, a timer). For the first two it times N preads of the kept
 * /proc/self/task/<tid>/stat and .../wchan descriptors and N calls of plat_thread_running (what
 * the sampler calls while it waits to catch a thread running). For the waker it reads wchan
 * and then stat N times and counts how often wchan said "0" (running) while the stat that
 * followed said the thread was not: a thread that blocked and is still on its run queue
 * (Linux 6.12's delayed dequeue) gets "0" from wchan — beside the spinner (the CPUs contended,
 * as in a busy JVM), then alone.
 *
 * The blocked thread is timed first: plat_thread_running trusts wchan's "0" only after wchan
 * has named a wait.
 *
 * Usage: procstate [N] (default 200000). */
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "platform.h"

static atomic_int tids[3], stop_spinning;

static void *spinner(void *arg) {
  (void)arg;
  atomic_store(&tids[0], plat_gettid());
  for (volatile unsigned long x = 0; !atomic_load(&stop_spinning); x++) {}
  return NULL;
}

static void *sleeper(void *arg) {
  (void)arg;
  atomic_store(&tids[1], plat_gettid());
  for (;;) pause();
  return NULL;
}

static void *waker(void *arg) {
  (void)arg;
  atomic_store(&tids[2], plat_gettid());
  for (;;) {
    uint64_t end = plat_mono_ns() + 20000;
    while (plat_mono_ns() < end) {}
    struct timespec ts = {0, 5000000};
    nanosleep(&ts, NULL);
  }
  return NULL;
}

static int open_task(int tid, const char *file) {
  char path[64];
  snprintf(path, sizeof path, "/proc/self/task/%d/%s", tid, file);
  int fd = open(path, O_RDONLY);
  if (fd < 0) {
    perror(path);
    exit(1);
  }
  return fd;
}

static ssize_t read_at0(int fd, char *buf, size_t cap) {
  ssize_t n = pread(fd, buf, cap - 1, 0);
  buf[n > 0 ? n : 0] = '\0';
  return n;
}

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 200000;
  void *(*fns[3])(void *) = {spinner, sleeper, waker};
  for (int i = 0; i < 3; i++) {
    pthread_t t;
    pthread_create(&t, NULL, fns[i], NULL);
    while (!atomic_load(&tids[i])) usleep(1000);
  }
  usleep(100000);
  char buf[512];
  static const char *const who[] = {"blocked", "running"};
  int order[2] = {1, 0}; /* tids[1]: the blocked one */
  static const char *const files[] = {"stat", "wchan"};
  for (int t = 0; t < 2; t++) {
    int tid = atomic_load(&tids[order[t]]);
    for (int f = 0; f < 2; f++) {
      int fd = open_task(tid, files[f]);
      uint64_t t0 = plat_mono_ns();
      for (long i = 0; i < n; i++) read_at0(fd, buf, sizeof buf);
      printf("%s thread, pread of its %-5s %.2f us\n", who[t], files[f],
             (double)(plat_mono_ns() - t0) / (double)n / 1000);
      close(fd);
    }
    long said = 0;
    uint64_t t0 = plat_mono_ns();
    for (long i = 0; i < n; i++) said += plat_thread_running(tid) == 1;
    printf("%s thread, plat_thread_running %.2f us (said running %ld of %ld; reads %s)\n", who[t],
           (double)(plat_mono_ns() - t0) / (double)n / 1000, said, n, plat_thread_running_source());
  }
  int fw = open_task(atomic_load(&tids[2]), "wchan"), fs = open_task(atomic_load(&tids[2]), "stat");
  for (int alone = 0; alone < 2; alone++) {
    if (alone) { /* the CPUs to itself */
      atomic_store(&stop_spinning, 1);
      usleep(10000);
    }
    long zero = 0, zero_not_r = 0;
    for (long i = 0; i < n; i++) {
      ssize_t k = read_at0(fw, buf, sizeof buf);
      if (k != 1 || buf[0] != '0') continue;
      zero++;
      read_at0(fs, buf, sizeof buf);
      const char *paren = strrchr(buf, ')');
      zero_not_r += paren && paren[1] == ' ' && paren[2] != 'R';
    }
    printf("waker (5 ms asleep, ~20 us awake), %s: wchan said \"0\" %ld times in %ld reads; stat "
           "said not running after %ld of them\n",
           alone ? "the spinner stopped" : "beside the spinner", zero, n, zero_not_r);
  }
  return 0;
}
