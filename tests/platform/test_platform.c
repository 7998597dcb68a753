/* The platform backend's tests on the host, with Criterion (cases: platform_cases.inc). */
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#if defined(__x86_64__)
#include "uc_x86_64.h"
#elif defined(__aarch64__)
#include "uc_aarch64.h"
#endif

#define CASE(name) Test(platform, name)
#define EXPECT(cond, ...) cr_expect(cond, __VA_ARGS__)
#include "platform_cases.inc"

/* plat_thread_running (host only): the state of a spinning and of a blocked thread, one
 * descriptor kept per thread for the next call, closed when its thread has ended or on
 * release. */
static _Atomic int block_release;
static void *blocker(void *arg) {
  (void)arg;
  atomic_store(&target_tid, plat_gettid());
  while (!atomic_load(&block_release)) usleep(1000);
  return NULL;
}

static pid_t start(pthread_t *t, void *(*fn)(void *)) {
  atomic_store(&target_tid, 0);
  pthread_create(t, NULL, fn, NULL);
  while (!atomic_load(&target_tid)) usleep(1000);
  return atomic_load(&target_tid);
}

Test(platform, thread_running_from_kept_descriptors) {
  plat_thread_running_release();
  atomic_store(&stop_target, 0);
  atomic_store(&block_release, 0);
  pthread_t ts, tb;
  pid_t spin = start(&ts, spinner), blocked = start(&tb, blocker);
  int state = -1;
  /* between its sleeps it runs, now and then; and wchan is believed once it named a wait —
   * which it may not do for a while: a thread that has just blocked and is still on its run
   * queue (delayed dequeue) reads "0" there, so the tries are spread over ~30 ms, not made in
   * one burst (a Release build's burst of 100 once met only "0"s) */
  for (int k = 0; k < 100 && (state != 0 || strcmp(plat_thread_running_source(), "wchan, stat"));
       k++) {
    state = plat_thread_running(blocked);
    usleep(300);
  }
  cr_expect(state == 0, "a thread sleeping in usleep is blocked: got %d", state);
  cr_expect(!strcmp(plat_thread_running_source(), "wchan, stat"),
            "this kernel names where a thread waits: its wchan file is read (%s)",
            plat_thread_running_source());
  errno = 4321;
  int ran = 0;
  for (int k = 0; k < 50; k++) ran += plat_thread_running(spin) == 1;
  cr_expect(errno == 4321, "errno preserved");
  cr_expect(ran >= 45, "a spinning thread is running or runnable in %d of 50 reads", ran);
  int kept = plat_thread_running_kept(); /* the blocked one's stat only if its wchan said "0" */
  cr_expect(kept == 3 || kept == 4,
            "the blocked one's wchan (and stat), the runner's wchan and stat: %d", kept);
  atomic_store(&stop_target, 1);
  pthread_join(ts, NULL);
  int rc = 0;
  for (int k = 0; k < 1000 && (rc = plat_thread_running(spin)) >= 0; k++) usleep(1000);
  cr_expect(rc == -ENOENT || rc == -ESRCH, "an ended thread: -ENOENT or -ESRCH, got %d", rc);
  cr_expect(plat_thread_running_kept() == kept - 2, "its descriptors closed: %d kept of %d",
            plat_thread_running_kept(), kept);
  plat_thread_running_release();
  cr_expect(plat_thread_running_kept() == 0, "all released");
  state = -1; /* between its sleeps it runs, now and then */
  for (int k = 0; k < 100 && state != 0; k++)
    if ((state = plat_thread_running(blocked)) != 0) usleep(300);
  cr_expect(state == 0, "opened again after a release: got %d", state);
  atomic_store(&block_release, 1);
  pthread_join(tb, NULL);
  plat_thread_running_release();
}

/* plat_thread_count: the process's threads as the kernel counts them, the same number the
 * task directory lists, following threads as they start and end. */
static int count_one(void *ctx, pid_t tid) {
  (void)tid;
  ++*(int *)ctx;
  return 0;
}

Test(platform, thread_count_follows_threads_as_they_come_and_go) {
  int listed = 0;
  plat_foreach_thread(count_one, &listed);
  int before = plat_thread_count();
  cr_expect(before == listed, "the count (%d) is what the task directory lists (%d)", before,
            listed);
  atomic_store(&block_release, 0);
  pthread_t t[3];
  for (int k = 0; k < 3; k++) start(&t[k], blocker);
  cr_expect(plat_thread_count() == before + 3, "three more: %d, was %d", plat_thread_count(),
            before);
  atomic_store(&block_release, 1);
  for (int k = 0; k < 3; k++) pthread_join(t[k], NULL);
  int after = -1;
  for (int k = 0; k < 1000 && (after = plat_thread_count()) != before; k++) usleep(1000);
  cr_expect(after == before, "and back when they have ended: %d, was %d", after, before);
}

/* plat_thread_signal_state (host only): a spinning thread that blocks a signal, with its
 * CPU-time timer for that signal: blocked, nothing pending; once the timer has fired (at a tick
 * that found the thread running) its signal is pending there. The caller blocks nothing; a
 * thread that ended says so. The sampler reads this before it signals a thread: each signal
 * sent to one that blocks it stays queued. */
static _Atomic int sig_release;
static void *sig_blocker(void *arg) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, *(int *)arg);
  pthread_sigmask(SIG_BLOCK, &set, NULL);
  atomic_store(&target_tid, plat_gettid());
  volatile uint64_t x = 0;
  while (!atomic_load(&sig_release)) x++;
  struct timespec zero = {0, 0};
  while (sigtimedwait(&set, NULL, &zero) > 0) {} /* taken here: nothing reaches the process */
  return NULL;
}

Test(platform, signal_state_blocked_and_pending) {
  int sig = SIGRTMIN + 5, timer;
  atomic_store(&sig_release, 0);
  atomic_store(&target_tid, 0);
  pthread_t t;
  pthread_create(&t, NULL, sig_blocker, &sig);
  while (!atomic_load(&target_tid)) usleep(1000);
  pid_t tid = atomic_load(&target_tid);
  cr_expect_eq(plat_thread_signal_state(tid, sig), PLAT_SIG_BLOCKED, "blocked, none pending");
  cr_expect_eq(plat_thread_signal_state(tid, sig + 1), 0, "another signal: neither");
  cr_expect_eq(plat_thread_signal_state(plat_gettid(), sig), 0, "the caller blocks none");
  cr_assert_eq(plat_cpu_timer_create(tid, sig, 0, &timer), 0);
  cr_expect_eq(plat_cpu_timer_arm(timer, 1), 0);
  int state = 0;
  for (int k = 0; k < 2000 && (state = plat_thread_signal_state(tid, sig)) == PLAT_SIG_BLOCKED; k++)
    usleep(1000);
  cr_expect_eq(state, PLAT_SIG_BLOCKED | PLAT_SIG_PENDING,
               "its timer's signal pending on the thread that blocks it");
  plat_cpu_timer_delete(timer);
  atomic_store(&sig_release, 1);
  pthread_join(t, NULL);
  /* the join returns when the kernel clears the thread's tid word, before it takes the thread
   * out of /proc/self/task: on a busy machine the entry was still there (the suite beside two
   * CPU hogs), as plat_thread_count's is above */
  int rc = 0;
  for (int k = 0; k < 1000 && (rc = plat_thread_signal_state(tid, sig)) >= 0; k++) usleep(1000);
  cr_expect(rc == -ENOENT || rc == -ESRCH, "an ended thread: -ENOENT or -ESRCH, got %d", rc);
  cr_expect_eq(plat_thread_signal_state(tid, 0), -EINVAL, "signal 0: not a signal");
}
