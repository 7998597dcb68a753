/*
 * platform/linux_signal.c — SIGNAL PATH. The Linux primitives the sampling signal handler
 * calls (see platform.h): the caller's thread id, its CPU clock, the monotonic clock. Raw
 * system calls and vDSO clocks only; no allocation, no locks; errno is preserved.
 */
#include <errno.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "platform.h"

static uint64_t ts_ns(const struct timespec *ts) {
  return (uint64_t)ts->tv_sec * 1000000000ull + (uint64_t)ts->tv_nsec;
}

pid_t plat_gettid(void) {
  int e = errno;
  pid_t t = (pid_t)syscall(SYS_gettid);
  errno = e;
  return t;
}

/* A clock's time in ns, errno preserved. */
static uint64_t clock_ns(clockid_t id) {
  struct timespec ts;
  int e = errno;
  clock_gettime(id, &ts);
  errno = e;
  return ts_ns(&ts);
}

uint64_t plat_self_cpu_ns(void) { return clock_ns(CLOCK_THREAD_CPUTIME_ID); }

uint64_t plat_process_cpu_ns(void) { return clock_ns(CLOCK_PROCESS_CPUTIME_ID); }

uint64_t plat_mono_ns(void) { return clock_ns(CLOCK_MONOTONIC); }
