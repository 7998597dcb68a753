/* sigcost: what delivering a signal to a running thread costs that thread, without a JVM.
 *
 * Two worker threads run a fixed floating-point stencil and count their passes. A third thread
 * plays the sampler: it wakes on 1 ms absolute deadlines (clock_nanosleep, as the agent's
 * sampler thread does) and sends each worker a queued signal (rt_tgsigqueueinfo, as the agent
 * does) whose handler only counts. Modes take the round apart:
 *
 *   none      no third thread
 *   wake      the third thread wakes every 1 ms and sends nothing
 *   signal    ... and signals both workers (the agent's pattern)
 *   pin-wake  workers pinned to CPUs 0 and 1, the third thread to CPU 0; sends nothing
 *   pin-same  as pin-wake, and signals only the worker on its own CPU
 *   pin-cross as pin-wake, and signals only the worker on the other CPU
 *   timers    no third thread: each worker arms a 1 ms CLOCK_MONOTONIC timer that signals itself
 *   cputimers as timers, on the worker's own CPU-time clock (CLOCK_THREAD_CPUTIME_ID, what JFR's
 *             jdk.CPUTimeSample uses): the kernel checks those at its scheduler tick, so a
 *             1 ms timer fires at the tick's rate (250 Hz here) with overruns counting the rest
 *
 * Usage: sigcost MODE SECONDS. Prints: mode, worker passes (both summed), signals handled.
 * bench/sigcost.py runs the modes interleaved and reports the losses. */
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

enum mode { NONE, WAKE, SIGNAL, PIN_WAKE, PIN_SAME, PIN_CROSS, TIMERS, CPUTIMERS };
static const char *const mode_names[] = {"none",     "wake",      "signal", "pin-wake",
                                         "pin-same", "pin-cross", "timers", "cputimers"};
#define NMODES (sizeof mode_names / sizeof *mode_names)

static enum mode mode;
static atomic_int stop;
static atomic_int ready;
static pid_t tids[2];
static long passes[2];
static atomic_long handled;
static double grid[2][4096];

static void on_signal(int sig, siginfo_t *si, void *uc) {
  (void)sig, (void)si, (void)uc;
  atomic_fetch_add_explicit(&handled, 1, memory_order_relaxed);
}

static int pinned(void) { return mode == PIN_WAKE || mode == PIN_SAME || mode == PIN_CROSS; }

static void pin(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (pthread_setaffinity_np(pthread_self(), sizeof set, &set) != 0) {
    fprintf(stderr, "sigcost: cannot pin to CPU %d (needs 2 CPUs)\n", cpu);
    exit(2);
  }
}

static void *worker(void *arg) {
  int w = (int)(long)arg;
  tids[w] = (pid_t)syscall(SYS_gettid);
  if (pinned()) pin(w);
  if (mode == TIMERS || mode == CPUTIMERS) {
    struct sigevent ev;
    memset(&ev, 0, sizeof ev);
    ev.sigev_notify = SIGEV_THREAD_ID;
    ev.sigev_signo = SIGPROF;
    ev._sigev_un._tid = tids[w];
    timer_t timer;
    struct itimerspec every_ms = {{0, 1000000}, {0, 1000000}};
    clockid_t clock = mode == TIMERS ? CLOCK_MONOTONIC : CLOCK_THREAD_CPUTIME_ID;
    if (timer_create(clock, &ev, &timer) != 0 || timer_settime(timer, 0, &every_ms, NULL) != 0) {
      perror("sigcost: timer");
      exit(2);
    }
  }
  atomic_fetch_add(&ready, 1);
  double *x = grid[w];
  for (int k = 0; k < 4096; k++) x[k] = k * 0.001;
  long n = 0;
  while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
    for (int k = 1; k < 4095; k++) x[k] = 0.25 * (x[k - 1] + x[k + 1]) + 0.5 * x[k];
    n++;
  }
  passes[w] = n;
  return NULL;
}

static void *ticker(void *arg) {
  (void)arg;
  if (pinned()) pin(0);
  int first = mode == PIN_CROSS ? 1 : 0, last = mode == PIN_SAME ? 0 : 1;
  int sends = mode == SIGNAL || mode == PIN_SAME || mode == PIN_CROSS;
  pid_t pid = getpid();
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
    t.tv_nsec += 1000000;
    if (t.tv_nsec >= 1000000000) t.tv_nsec -= 1000000000, t.tv_sec++;
    clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL);
    for (int w = first; sends && w <= last; w++) {
      siginfo_t si;
      memset(&si, 0, sizeof si);
      si.si_signo = SIGPROF;
      si.si_code = SI_QUEUE;
      si.si_pid = pid;
      si.si_uid = getuid();
      syscall(SYS_rt_tgsigqueueinfo, pid, tids[w], SIGPROF, &si);
    }
  }
  return NULL;
}

int main(int argc, char **argv) {
  double seconds = argc == 3 ? atof(argv[2]) : 0;
  size_t m = 0;
  while (argc == 3 && m < NMODES && strcmp(argv[1], mode_names[m]) != 0) m++;
  if (argc != 3 || m == NMODES || seconds <= 0) {
    fprintf(stderr, "usage: sigcost MODE SECONDS; MODE is one of");
    for (size_t i = 0; i < NMODES; i++) fprintf(stderr, " %s", mode_names[i]);
    fprintf(stderr, "\n");
    return 2;
  }
  mode = (enum mode)m;
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_signal;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  sigaction(SIGPROF, &sa, NULL);

  pthread_t workers[2], tick;
  for (long w = 0; w < 2; w++) pthread_create(&workers[w], NULL, worker, (void *)w);
  while (atomic_load(&ready) < 2) usleep(1000);
  int ticks = mode != NONE && mode != TIMERS && mode != CPUTIMERS;
  if (ticks) pthread_create(&tick, NULL, ticker, NULL);
  usleep((useconds_t)(seconds * 1e6));
  atomic_store(&stop, 1);
  for (int w = 0; w < 2; w++) pthread_join(workers[w], NULL);
  if (ticks) pthread_join(tick, NULL);
  printf("%s %ld %ld\n", mode_names[mode], passes[0] + passes[1], atomic_load(&handled));
  return 0;
}
