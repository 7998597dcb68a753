/*
 * test_sampler_init.c — sampler_init (sampler/sampler.c) undoes what it did when a later step
 * fails: each set-up step is made to fail in turn (its injection point,
 * sampler_init_fail_step), and then the memory in use is what it was before the call (malloc's
 * own count; ASan's under the sanitizer build, whose leak check at exit looks too), the
 * sampling signal and the fault signals have the dispositions they had, and the process has
 * as many threads. Each case runs in a fresh process (Criterion), so the steps allocate for
 * the first time there: a step whose memory stayed would show. Outside ASan, glibc's per-thread
 * cache must be off (ctest sets GLIBC_TUNABLES=glibc.malloc.tcache_count=0): mallinfo2 counts
 * the small blocks it keeps after free as in use.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <dirent.h>
#include <errno.h>
#include <malloc.h>
#include <signal.h>
#include <string.h>

#include "fake_jvm.h"
#include "guard.h"
#include "sampler.h"

#if defined(__SANITIZE_ADDRESS__)
/* ASan's count of the bytes malloc'd and not freed (its interface; gcc installs no header) */
size_t __sanitizer_get_current_allocated_bytes(void);
#endif

#define SIG (SIGRTMIN + 6)
/* registry, traces, sampler thread, code map, objects, native, events, guard, handler: with
 * the configuration below, every step runs */
#define STEPS 9

extern int sampler_init_fail_step; /* sampler.c's injection point */

static size_t in_use(void) {
#if defined(__SANITIZE_ADDRESS__)
  return __sanitizer_get_current_allocated_bytes();
#else
  struct mallinfo2 mi = mallinfo2();
  return mi.uordblks + mi.hblkhd;
#endif
}

static int threads(void) {
  DIR *d = opendir("/proc/self/task");
  cr_assert_not_null(d);
  int n = 0;
  for (struct dirent *e; (e = readdir(d));) n += e->d_name[0] != '.';
  closedir(d);
  return n;
}

/* What sampler_init may change of the process besides memory. */
struct process {
  void *handler[3]; /* SIG, SIGSEGV, SIGBUS */
  int threads;
};

static struct process look(void) {
  struct process p = {.threads = threads()};
  const int sigs[3] = {SIG, SIGSEGV, SIGBUS};
  for (int i = 0; i < 3; i++) {
    struct sigaction sa;
    cr_assert_eq(sigaction(sigs[i], NULL, &sa), 0);
    p.handler[i] = sa.sa_flags & SA_SIGINFO ? (void *)(uintptr_t)sa.sa_sigaction
                                            : (void *)(uintptr_t)sa.sa_handler;
  }
  return p;
}

static struct sampler_config config(void) {
  return (struct sampler_config){
      .interval_ns = 1000000, .depth = 64, .sig = SIG, .codemap = 1, .native_frames = 1, .lock = 1};
}

/* The measure sees the steps' memory: a set-up that succeeds holds some (else a test below
 * would pass without proving anything). */
Test(sampler_init, a_set_up_holds_memory_the_measure_sees) {
  struct sampler_config c = config();
  struct sampler_jvm jvm = fake_jvm();
  size_t before = in_use();
  struct process p0 = look();
  cr_assert_eq(sampler_init(&c, &jvm), 0);
  size_t after = in_use();
  cr_expect_gt(after, before + 1000000, "set up: %zu bytes in use, %zu before", after, before);
  struct process p1 = look();
  cr_expect_neq(p1.handler[0], p0.handler[0], "the sampling signal's handler is installed");
  cr_expect_neq(p1.handler[1], p0.handler[1], "the fault guard is installed");
  sampler_fini();
}

Test(sampler_init, every_step_is_counted) {
  struct sampler_config c = config();
  struct sampler_jvm jvm = fake_jvm();
  sampler_init_fail_step = STEPS + 1;
  cr_expect_eq(sampler_init(&c, &jvm), 0, "a step after the last would not fail it");
  sampler_fini();
}

ParameterizedTestParameters(sampler_init, a_failed_step_leaves_nothing) {
  static int steps[STEPS];
  for (int i = 0; i < STEPS; i++) steps[i] = i + 1;
  return cr_make_param_array(int, steps, STEPS);
}

ParameterizedTest(int *step, sampler_init, a_failed_step_leaves_nothing) {
  struct sampler_config c = config();
  struct sampler_jvm jvm = fake_jvm();
  struct process p0 = look();
  size_t before = in_use();
  sampler_init_fail_step = *step;
  int rc = sampler_init(&c, &jvm);
  size_t after = in_use();
  struct process p1 = look();
  cr_assert_eq(rc, -ENOMEM, "step %d: the injected failure (rc %d)", *step, rc);
  cr_expect_eq(after, before, "step %d failed: %zu bytes in use, %zu before", *step, after, before);
  for (int i = 0; i < 3; i++)
    cr_expect_eq(p1.handler[i], p0.handler[i], "step %d failed: handler %d changed", *step, i);
  cr_expect_eq(p1.threads, p0.threads, "step %d failed: threads", *step);
  cr_expect_eq(guard_installed(), 0);
  /* and the sampler can be set up afterwards */
  sampler_init_fail_step = 0;
  cr_expect_eq(sampler_init(&c, &jvm), 0, "step %d: set up again after the failure", *step);
  sampler_fini();
}
