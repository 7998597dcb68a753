/*
 * platform/linux.c — Linux primitives (see platform.h): thread ids, directed signals with a
 * value, per-thread CPU clocks, futexes. Functions marked signal-safe in platform.h use raw
 * system calls only and preserve errno.
 */
#include <errno.h>
#include <linux/futex.h>
#include <signal.h>
#include <string.h>
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

int plat_signal_thread(pid_t tid, int sig, int value) {
  int e = errno;
  siginfo_t si;
  memset(&si, 0, sizeof si);
  si.si_signo = sig;
  si.si_code = SI_QUEUE;
  si.si_pid = getpid();
  si.si_uid = getuid();
  si.si_value.sival_int = value;
  int rc = syscall(SYS_rt_tgsigqueueinfo, si.si_pid, tid, sig, &si) == 0 ? 0 : -errno;
  errno = e;
  return rc;
}

int plat_thread_cpu_ns(pid_t tid, uint64_t *ns) {
  /* the clock id glibc's pthread_getcpuclockid builds: CPUCLOCK_PERTHREAD | CPUCLOCK_SCHED */
  clockid_t id = (clockid_t)(((unsigned)~tid << 3) | 6);
  struct timespec ts;
  int e = errno;
  if (clock_gettime(id, &ts) != 0) {
    int rc = -errno;
    errno = e;
    return rc;
  }
  *ns = ts_ns(&ts);
  return 0;
}

uint64_t plat_self_cpu_ns(void) {
  struct timespec ts;
  int e = errno;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  errno = e;
  return ts_ns(&ts);
}

uint64_t plat_mono_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts_ns(&ts);
}

int plat_futex_wait(const uint32_t *addr, uint32_t expected, uint64_t timeout_ns) {
  struct timespec ts = {(time_t)(timeout_ns / 1000000000ull), (long)(timeout_ns % 1000000000ull)};
  int e = errno;
  long r = syscall(SYS_futex, addr, FUTEX_WAIT_PRIVATE, expected, timeout_ns ? &ts : NULL, NULL, 0);
  int rc = r == 0 ? 0 : -errno;
  errno = e;
  return rc == -EAGAIN ? 0 : rc;
}

void plat_futex_wake(const uint32_t *addr, int n) {
  int e = errno;
  syscall(SYS_futex, addr, FUTEX_WAKE_PRIVATE, n, NULL, NULL, 0);
  errno = e;
}
