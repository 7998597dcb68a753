/*
 * Tests of the sampling protocol with real threads and real signals, but no JVM: the fake JVM
 * (tests/support/fake_jvm.h) reports one frame naming the interrupted thread's role. Checks which threads get signalled and sampled under each
 * ThreadHasRun mode, the weights, and the handling of late and lost requests.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fake_jvm.h"
#include "platform.h"
#include "sampler.h"
#include "traces.h"

static atomic_int stop_workers;

static pthread_mutex_t idle_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t idle_cv = PTHREAD_COND_INITIALIZER;

/* A registered worker's rest: computing, or blocked (no CPU), until the workers are stopped. */
static void spin_until_stopped(void) {
  volatile uint64_t x = 0;
  while (!atomic_load(&stop_workers)) x++;
  sampler_thread_ended(plat_gettid(), 0);
}

static void block_until_stopped(void) {
  pthread_mutex_lock(&idle_mu);
  while (!atomic_load(&stop_workers)) pthread_cond_wait(&idle_cv, &idle_mu);
  pthread_mutex_unlock(&idle_mu);
  sampler_thread_ended(plat_gettid(), 0);
}

static void *busy_main(void *arg) {
  (void)arg;
  fake_jvm_set_role(FAKE_ROLE_BUSY);
  fake_jvm_register_self("busy");
  spin_until_stopped();
  return NULL;
}

/* Blocked for the whole run: it uses no CPU until the end. */
static void *idle_main(void *arg) {
  (void)arg;
  fake_jvm_set_role(FAKE_ROLE_IDLE);
  fake_jvm_register_self("idle");
  block_until_stopped();
  return NULL;
}

static void *burst_main(void *arg) {
  (void)arg;
  fake_jvm_set_role(FAKE_ROLE_BURST);
  fake_jvm_register_self("burst");
  while (!atomic_load(&stop_workers)) {
    uint64_t end = plat_mono_ns() + 100000; /* ~100us of work, then 5ms asleep */
    while (plat_mono_ns() < end) {}
    struct timespec ts = {0, 5 * 1000 * 1000};
    nanosleep(&ts, NULL);
  }
  sampler_thread_ended(plat_gettid(), 0);
  return NULL;
}

static void *sampler_main(void *arg) {
  (void)arg;
  sampler_run();
  return NULL;
}

/* Runs the sampler for `ms` over the n workers th (started), then stops and joins them all. */
static void sample_for(int ms, pthread_t *th, int n) {
  pthread_t sam;
  usleep(20000);
  pthread_create(&sam, NULL, sampler_main, NULL);
  usleep((useconds_t)ms * 1000);
  sampler_stop();
  pthread_join(sam, NULL);
  pthread_mutex_lock(&idle_mu);
  atomic_store(&stop_workers, 1);
  pthread_cond_broadcast(&idle_cv);
  pthread_mutex_unlock(&idle_mu);
  for (int i = 0; i < n; i++) pthread_join(th[i], NULL);
}

struct tally {
  uint64_t units[4], samples[4];
};

static int role_index(const char *name) {
  if (strstr(name, "Busy")) return 0;
  if (strstr(name, "Idle")) return 1;
  if (strstr(name, "Burst")) return 2;
  return 3;
}

static void count(void *ctx, const struct sampler_stack *t) {
  struct tally *ta = ctx;
  int r = role_index(sampler_frame_name(t->frames[t->n > 1 ? 1 : 0])); /* after the thread root */
  ta->units[r] += t->units;
  ta->samples[r] += t->samples;
}

/* Runs nbusy/nidle/nburst threads for `ms` under configuration c; returns per-role totals. */
static struct tally run_config(struct sampler_config c, int nbusy, int nidle, int nburst, int ms,
                               struct sampler_counters *st) {
  struct sampler_jvm jvm = fake_jvm();
  cr_assert_eq(sampler_init(&c, &jvm), 0);
  pthread_t th[64];
  int n = 0;
  for (int i = 0; i < nbusy; i++) pthread_create(&th[n++], NULL, busy_main, NULL);
  for (int i = 0; i < nidle; i++) pthread_create(&th[n++], NULL, idle_main, NULL);
  for (int i = 0; i < nburst; i++) pthread_create(&th[n++], NULL, burst_main, NULL);
  sample_for(ms, th, n);
  struct tally t = {0};
  sampler_foreach_stack(count, &t);
  struct sampler_report r;
  sampler_report(&r);
  *st = r.n;
  return t;
}

/* Runs nbusy/nidle/nburst threads for `ms` under `hasrun` at 1 ms; returns per-role totals. */
static struct tally run(int hasrun, int nbusy, int nidle, int nburst, int ms,
                        struct sampler_counters *st) {
  struct sampler_config c = {.interval_ns = 1000000,
                             .depth = 16,
                             .hasrun = hasrun,
                             .thread_roots = 1,
                             .sig = SIGRTMIN + 4};
  return run_config(c, nbusy, nidle, nburst, ms, st);
}

/* CPU-time timers on, at an interval at which they are used: the kernel's tick, at least
 * 4 ms. */
static struct sampler_config timer_config(void) {
  uint64_t tick = plat_tick_ns();
  cr_assert_gt(tick, 0u, "the kernel's tick is known");
  return (struct sampler_config){.interval_ns = tick > 4000000 ? tick : 4000000,
                                 .depth = 16,
                                 .hasrun = SAMPLER_HASRUN_AUTO,
                                 .thread_roots = 1,
                                 .sig = SIGRTMIN + 4,
                                 .cpu_timers = 1};
}

Test(sampler, busy_threads_are_sampled_by_their_cpu_timers_bursty_ones_by_signals) {
  struct sampler_config c = timer_config();
  struct sampler_counters st;
  int ms = 1500;
  struct tally t = run_config(c, 1, 4, 2, ms, &st);
  cr_log_info("interval %lu us: busy units %lu samples %lu, burst units %lu; timer requests %lu "
              "samples %lu fallbacks %lu; signals %lu",
              (unsigned long)(c.interval_ns / 1000), (unsigned long)t.units[0],
              (unsigned long)t.samples[0], (unsigned long)t.units[2],
              (unsigned long)st.timer_requests, (unsigned long)st.timer_samples,
              (unsigned long)st.timer_fallbacks, (unsigned long)st.requests);
  uint64_t expected = (uint64_t)ms * 1000000u / c.interval_ns;
  cr_expect_gt(t.units[0], expected * 6 / 10, "the busy thread's CPU is in its samples");
  cr_expect_leq(t.units[0], expected + 2, "and no more than its CPU");
  cr_expect_geq(st.timer_samples, t.samples[0] * 8 / 10,
                "most of the busy thread's samples came from its timer (%lu of %lu)",
                (unsigned long)st.timer_samples, (unsigned long)t.samples[0]);
  cr_expect_gt(t.units[2], 0u, "the bursty threads are sampled too");
  cr_expect_gt(st.requests, 0u, "... by signals: a tick seldom finds them running");
  cr_expect_eq(t.units[1], 0u, "idle threads get no samples");
  cr_expect_eq(st.lost_units, 0u);
  cr_expect_eq(st.unanswered, 0u);
  cr_expect_eq(st.timers_refused, 0u);
  cr_expect_eq(st.units, t.units[0] + t.units[1] + t.units[2] + t.units[3], "totals add up");

  c.cpu_timers = 0; /* the counters go on from the run above */
  atomic_store(&stop_workers, 0);
  struct sampler_counters off;
  run_config(c, 1, 0, 0, 300, &off);
  cr_log_info("off: timer requests %lu signals %lu captures %lu", (unsigned long)off.timer_requests,
              (unsigned long)off.requests, (unsigned long)off.samples);
  cr_expect_eq(off.timer_requests, st.timer_requests, "cpu_timers off: signals only");
  cr_expect_gt(off.requests, st.requests);
}

/* Computes for 5 intervals, sleeps for 8, until stopped: busy at the looks during its work —
 * and at the first after it, which finds it blocked. */
static void *lumpy_main(void *arg) {
  uint64_t interval = *(const uint64_t *)arg;
  fake_jvm_set_role(FAKE_ROLE_BUSY);
  fake_jvm_register_self("lumpy");
  while (!atomic_load(&stop_workers)) {
    uint64_t end = plat_mono_ns() + 5 * interval;
    while (plat_mono_ns() < end) {}
    struct timespec ts = {0, (long)(8 * interval)};
    nanosleep(&ts, NULL);
  }
  sampler_thread_ended(plat_gettid(), 0);
  return NULL;
}

/* A request left to a thread's timer when the thread blocks before a tick catches it is not
 * left open: after two ticks it is signalled, and its sample is kept. */
Test(sampler, a_timer_request_whose_thread_blocks_is_signalled_after_two_ticks) {
  struct sampler_config c = timer_config();
  struct sampler_jvm jvm = fake_jvm();
  cr_assert_eq(sampler_init(&c, &jvm), 0);
  pthread_t th[2];
  pthread_create(&th[0], NULL, lumpy_main, &c.interval_ns);
  pthread_create(&th[1], NULL, lumpy_main, &c.interval_ns);
  sample_for(2500, th, 2);
  struct sampler_report r;
  sampler_report(&r);
  struct sampler_counters st = r.n;
  cr_log_info("timer requests %lu samples %lu fallbacks %lu; signals %lu; captures %lu late %lu",
              (unsigned long)st.timer_requests, (unsigned long)st.timer_samples,
              (unsigned long)st.timer_fallbacks, (unsigned long)st.requests,
              (unsigned long)st.samples, (unsigned long)st.late);
  cr_expect_gt(st.timer_samples, 0u);
  cr_expect_geq(st.timer_fallbacks, 1u, "some requests outlived the thread's run");
  cr_expect_leq(st.timer_fallbacks, st.timer_requests);
  cr_expect_geq(st.timer_samples + st.timer_fallbacks, st.timer_requests,
                "every timer request was answered by its timer or signalled");
  cr_expect_eq(st.lost_units, 0u, "no sample lost");
  cr_expect_eq(st.unanswered, 0u);
  cr_expect_eq(st.timed_out, 0u);
}

Test(sampler, auto_samples_the_busy_thread_and_never_signals_idle_ones) {
  struct sampler_counters st;
  struct tally t = run(SAMPLER_HASRUN_AUTO, 1, 20, 0, 600, &st);
  cr_log_info("ticks %lu requests %lu busy units %lu idle %lu skipped_cpu %lu idle-backoff %lu",
              (unsigned long)st.ticks, (unsigned long)st.requests, (unsigned long)t.units[0],
              (unsigned long)t.units[1], (unsigned long)st.skipped_cpu,
              (unsigned long)st.skipped_idle);
  cr_expect_gt(st.ticks, 300u);
  cr_expect_gt(t.units[0], st.ticks / 2, "the busy thread earns about one unit per tick");
  cr_expect_eq(t.units[1], 0u, "idle threads get no samples");
  cr_expect_lt(st.requests, t.samples[0] + 20,
               "signals go to the thread that ran, not to idle ones");
  cr_expect_gt(st.skipped_idle, 0u, "idle threads are looked at less often");
  cr_expect_eq(st.lost_send, 0u);
  cr_expect_eq(st.units, t.units[0] + t.units[1] + t.units[2] + t.units[3], "totals add up");
}

Test(sampler, regs_signals_everyone_and_the_checksum_finds_the_runner) {
  struct sampler_counters st;
  struct tally t = run(SAMPLER_HASRUN_REGS, 1, 10, 0, 400, &st);
  cr_expect_gt(st.requests, st.ticks * 8, "regs signals every thread every tick");
  cr_expect_gt(st.skipped_regs, st.ticks * 5, "sleeping threads' registers stay the same");
  cr_expect_gt(t.samples[0], st.ticks / 2);
  cr_expect_leq(t.samples[1], 10u * 3, "idle threads: about one first sample each");
}

Test(sampler, bursts_are_weighted_by_cpu_not_by_wakeups) {
  struct sampler_counters st;
  struct tally t = run(SAMPLER_HASRUN_AUTO, 1, 0, 4, 1000, &st);
  double share = (double)t.units[2] / (double)(t.units[0] + t.units[2]);
  cr_log_info("burst units %lu busy units %lu share %.3f", (unsigned long)t.units[2],
              (unsigned long)t.units[0], share);
  /* 4 x (100us per ~5.1ms) ~= 0.08 of a core beside one busy core: ~7% of all units */
  cr_expect(share > 0.02 && share < 0.15, "burst share %.3f", share);
}

static atomic_ulong blocked_ns = 150000000; /* how long blocked_signal_main blocks the signal */
static atomic_int blocked_tid;              /* its tid, and its CPU clock as it unblocked it */
static atomic_ulong blocked_cpu_unblocked;

static void *blocked_signal_main(void *arg) {
  (void)arg;
  fake_jvm_set_role(FAKE_ROLE_BUSY);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGRTMIN + 4);
  pthread_sigmask(SIG_BLOCK, &set, NULL); /* requests cannot be answered for a while */
  fake_jvm_register_self("blocked");
  atomic_store(&blocked_tid, plat_gettid());
  uint64_t end = plat_mono_ns() + atomic_load(&blocked_ns);
  volatile uint64_t x = 0;
  while (plat_mono_ns() < end) x++;
  atomic_store(&blocked_cpu_unblocked, plat_self_cpu_ns());
  pthread_sigmask(SIG_UNBLOCK, &set, NULL);
  while (!atomic_load(&stop_workers)) x++;
  sampler_thread_ended(plat_gettid(), 0);
  return NULL;
}

/* Runs one worker under the sampler (1 ms, hasrun=auto) while `during` runs on the test's thread
 * (it sleeps as long as the run should last); returns the report at the end. */
static struct sampler_report sample_one(void *(*worker)(void *), void (*during)(void *),
                                        void *ctx) {
  struct sampler_config c = {
      .interval_ns = 1000000, .depth = 16, .hasrun = SAMPLER_HASRUN_AUTO, .sig = SIGRTMIN + 4};
  struct sampler_jvm jvm = fake_jvm();
  cr_assert_eq(sampler_init(&c, &jvm), 0);
  pthread_t w, sam;
  pthread_create(&w, NULL, worker, NULL);
  usleep(10000);
  pthread_create(&sam, NULL, sampler_main, NULL);
  during(ctx);
  sampler_stop();
  pthread_join(sam, NULL);
  atomic_store(&stop_workers, 1);
  pthread_join(w, NULL);
  struct sampler_report r;
  sampler_report(&r);
  return r;
}

static void sleep_us(void *us) { usleep((useconds_t)(uintptr_t)us); }

Test(sampler, an_unanswered_request_is_left_open_then_recorded_late) {
  struct sampler_report r = sample_one(blocked_signal_main, sleep_us, (void *)400000);
  struct sampler_counters st = r.n;
  cr_log_info("outstanding %lu late %lu samples %lu", (unsigned long)st.outstanding,
              (unsigned long)st.late, (unsigned long)st.samples);
  cr_expect_gt(st.outstanding, 50u, "while blocked, the open request is not re-sent");
  cr_expect_geq(st.late, 1u, "the answer came after its round and was recorded");
  cr_expect_gt(st.samples, 100u, "sampling resumes");
}

Test(sampler, a_thread_gone_without_leaving_is_not_signalled) {
  struct sampler_config c = {.interval_ns = 1000000,
                             .depth = 16,
                             .hasrun = SAMPLER_HASRUN_REGS,
                             .thread_roots = 0,
                             .sig = SIGRTMIN + 4};
  struct sampler_jvm jvm = fake_jvm();
  cr_assert_eq(sampler_init(&c, &jvm), 0);
  struct sampler_thread ghost = {
      .tid = 999999, .name = "ghost", .env = fake_jvm_env()}; /* no such thread */
  sampler_thread_started(&ghost);
  pthread_t sam;
  pthread_create(&sam, NULL, sampler_main, NULL);
  usleep(100000);
  sampler_stop();
  pthread_join(sam, NULL);
  struct sampler_report r;
  sampler_report(&r);
  struct sampler_counters st = r.n;
  cr_expect_gt(st.lost_send, 10u, "each failed signal is counted");
  cr_expect_eq(st.samples, 0u);
}

static void someone_elses_handler(int sig) { (void)sig; }

Test(sampler, signal_in_use_is_refused) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = SIG_IGN;
  sigaction(SIGRTMIN + 6, &sa, NULL);
  struct sigaction mine;
  memset(&mine, 0, sizeof mine);
  mine.sa_handler = someone_elses_handler;
  sigaction(SIGRTMIN + 7, &mine, NULL);
  struct sampler_config c = {.interval_ns = 1000000,
                             .depth = 16,
                             .hasrun = SAMPLER_HASRUN_AUTO,
                             .thread_roots = 0,
                             .sig = SIGRTMIN + 7};
  struct sampler_jvm jvm = fake_jvm();
  cr_expect_eq(sampler_init(&c, &jvm), -EBUSY);
  c.sig = SIGRTMIN + 6; /* ignored: free to take */
  cr_expect_eq(sampler_init(&c, &jvm), 0);
  /* and given back: after sampler_fini the signal does what it did before (ignored) */
  sampler_fini();
  struct sigaction now;
  sigaction(SIGRTMIN + 6, NULL, &now);
  cr_expect_eq(now.sa_handler, SIG_IGN, "the previous disposition is restored");
}

/* A request nobody answers for a second — the signal lost, or blocked for good — is withdrawn
 * and counted; the thread, found blocking the signal (its /proc status), is sent no more while
 * it does — each would stay queued — and is asked again once it unblocks it: it is not silenced
 * for the rest of the run. */
/* Sleeps for `us` (the run), then reads blocked_signal_main's CPU clock into blocked_cpu_end. */
static uint64_t blocked_cpu_end;
static void sleep_then_read(void *us) {
  usleep((useconds_t)(uintptr_t)us);
  plat_thread_cpu_ns(atomic_load(&blocked_tid), &blocked_cpu_end);
}

Test(sampler, a_request_unanswered_for_a_second_is_withdrawn_and_asked_again) {
  atomic_store(&blocked_ns, 2500000000u);
  struct sampler_report r = sample_one(blocked_signal_main, sleep_then_read, (void *)4500000);
  struct tally t = {0};
  sampler_foreach_stack(count, &t);
  uint64_t after = (blocked_cpu_end - atomic_load(&blocked_cpu_unblocked)) / 1000000u; /* ms */
  cr_log_info("timed out %lu, not signalled %lu (found %lu times, %lu status reads); %lu samples "
              "captured for %lu ms of CPU after it unblocked the signal",
              (unsigned long)r.n.timed_out, (unsigned long)r.n.sig_withheld,
              (unsigned long)r.n.sig_blocked_threads, (unsigned long)r.n.sig_checks,
              (unsigned long)t.units[0], (unsigned long)after);
  cr_expect_eq(r.n.timed_out, 1u, "the blocked request was withdrawn after a second, once");
  cr_expect_eq(r.n.sig_blocked_threads, 1u, "and the thread found blocking the signal");
  cr_expect_gt(r.n.sig_withheld, 0u, "no more signals while it blocked it");
  cr_assert_geq(after, 100u, "precondition: it ran after it unblocked the signal");
  /* its status is read again at most 1 s after the last read: of the 2 s after it unblocked,
   * at least half are sampled */
  cr_expect_geq(t.units[0], after / 4, "the thread is sampled again once it unblocks it");
  cr_expect_eq(r.handler_replaced, 0);
}

static atomic_long native_blocker_queued = -1; /* signals queued to it while it blocked them */
static atomic_ulong native_blocker_cpu[2];     /* its CPU as it unblocked them, at the end */

/* A library's worker: not a Java thread (no JNIEnv), every signal blocked from its start; spins
 * for blocked_ns, takes the signals queued to it meanwhile (counted), unblocks them and spins
 * on until stopped. */
static void *native_blocker_main(void *arg) {
  (void)arg;
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  struct sampler_thread t = {.tid = plat_gettid(), .name = "native blocker"};
  sampler_thread_started(&t);
  uint64_t end = plat_mono_ns() + atomic_load(&blocked_ns);
  volatile uint64_t x = 0;
  while (plat_mono_ns() < end) x++;
  atomic_store(&native_blocker_cpu[0], plat_self_cpu_ns());
  sigset_t ours;
  sigemptyset(&ours);
  sigaddset(&ours, SIGRTMIN + 4);
  struct timespec zero = {0, 0};
  long queued = 0;
  while (sigtimedwait(&ours, NULL, &zero) > 0) queued++;
  atomic_store(&native_blocker_queued, queued);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  while (!atomic_load(&stop_workers)) x++;
  atomic_store(&native_blocker_cpu[1], plat_self_cpu_ns());
  sampler_thread_ended(plat_gettid(), 0);
  return NULL;
}

struct blocked_tally {
  uint64_t marker, other;
};

static void tally_blocked(void *ctx, const struct sampler_stack *t) {
  struct blocked_tally *k = ctx;
  if (!strcmp(sampler_frame_name(t->frames[t->n - 1]), "[not sampled: signal blocked]"))
    k->marker += t->units;
  else
    k->other += t->units;
}

/* A thread of no JNIEnv that blocks the sampling signal from its start is never sent one (its
 * /proc status is read before its first): nothing is queued to it — each signal sent would stay
 * queued, counted against the user's limit of queued signals. Its CPU meanwhile is kept under
 * [not sampled: signal blocked]; once it unblocks the signal it is sampled. */
Test(sampler, a_thread_blocking_the_signal_from_its_start_is_not_signalled_until_it_unblocks) {
  atomic_store(&blocked_ns, 1500000000u);
  struct sampler_report r = sample_one(native_blocker_main, sleep_us, (void *)3000000);
  struct blocked_tally k = {0, 0};
  sampler_foreach_stack(tally_blocked, &k);
  uint64_t blocked = atomic_load(&native_blocker_cpu[0]) / 1000000u;
  uint64_t after = (atomic_load(&native_blocker_cpu[1]) - atomic_load(&native_blocker_cpu[0])) /
                   1000000u; /* ms of CPU: samples due at 1 ms */
  cr_log_info("queued %ld; marker %lu samples for %lu ms blocked, others %lu for %lu ms after; "
              "not signalled %lu, found %lu, status reads %lu, requests %lu",
              atomic_load(&native_blocker_queued), (unsigned long)k.marker, (unsigned long)blocked,
              (unsigned long)k.other, (unsigned long)after, (unsigned long)r.n.sig_withheld,
              (unsigned long)r.n.sig_blocked_threads, (unsigned long)r.n.sig_checks,
              (unsigned long)r.n.requests);
  cr_assert_geq(blocked, 100u, "precondition: the thread ran while it blocked the signal");
  cr_expect_eq(atomic_load(&native_blocker_queued), 0, "no signal was queued to it");
  cr_expect_eq(r.n.sig_blocked_threads, 1u);
  cr_expect_eq(r.n.timed_out, 0u, "no request was left to time out");
  cr_expect_geq(k.marker, blocked * 8 / 10, "its CPU while blocked is under the marker");
  cr_expect_eq(r.n.sig_blocked_units, k.marker);
  cr_expect_geq(k.other, after / 2, "sampled again once it unblocked");
  cr_expect_eq(r.n.lost_units, 0u);
}

static void someone_elses_sigaction(int sig, siginfo_t *si, void *uc) {
  (void)sig, (void)si, (void)uc;
}

/* Replaces the sampling signal's handler 0.3 s into the run, and reports 1.5 s and 1.8 s in. */
static void replace_handler(void *reports) {
  struct sampler_report *r = reports;
  usleep(300000);
  struct sigaction other;
  memset(&other, 0, sizeof other);
  other.sa_sigaction = someone_elses_sigaction;
  other.sa_flags = SA_SIGINFO;
  sigaction(SIGRTMIN + 4, &other, NULL);
  usleep(1500000);
  sampler_report(&r[0]);
  usleep(300000);
  sampler_report(&r[1]);
}

/* Another library installs its handler for our signal: the requests it swallows time out, the
 * sampler finds its handler gone and sends no more signals (the report says so). */
Test(sampler, a_replaced_handler_stops_the_signals) {
  struct sampler_report r[2];
  sample_one(busy_main, replace_handler, r);
  cr_expect_eq(r[0].handler_replaced, 1, "the replaced handler was noticed");
  cr_expect_geq(r[0].n.timed_out, 1u);
  cr_expect_eq(r[1].n.requests, r[0].n.requests, "no signal sent after it was noticed");
}

struct not_kept_tally {
  uint64_t units, stacks, in_overflow;
};

static void tally_not_kept(void *ctx, const struct sampler_stack *t) {
  struct not_kept_tally *k = ctx;
  k->units += t->units;
  k->stacks++;
  if (t->n == 1 && !strcmp(sampler_frame_name(t->frames[0]), "[stack not kept: table full]"))
    k->in_overflow += t->units;
}

Test(sampler, a_full_stack_table_keeps_every_sample_under_one_stack) {
  traces_lock();
  traces_set_limits(1, 1u << 20, 1u << 20); /* one stack; the rest cannot be kept */
  traces_unlock();
  struct sampler_counters st;
  run(SAMPLER_HASRUN_AUTO, 2, 0, 1, 600, &st);
  struct not_kept_tally k = {0};
  sampler_foreach_stack(tally_not_kept, &k);
  cr_log_info("units %lu in %lu stacks, %lu of them not kept; store_failed %lu refused %lu",
              (unsigned long)k.units, (unsigned long)k.stacks, (unsigned long)k.in_overflow,
              (unsigned long)st.store_failed, (unsigned long)st.stacks_refused);
  cr_expect_eq(k.stacks, 2u, "the one stack kept and [stack not kept: table full]");
  cr_expect_gt(k.in_overflow, 0u);
  cr_expect_eq(k.units, st.units, "every sample is in the profile");
  cr_expect_gt(st.stacks_refused, 0u);
  cr_expect_eq(st.store_failed, st.stacks_refused, "refused by the limit, not for want of memory");
}

/* Wall clock: a thread's state is read when its request is sent; the thread can have gone into
 * a wait (or out of one) before the signal reaches it. The fake state below says one thing at
 * the request and the truth when asked again: the sample must carry the state that agrees with
 * where the signal found the thread, and the stack given again while it sleeps carries it too. */
struct two_faced {
  int at_request, then;
  atomic_int calls;
};

static int two_faced_state(void *ctx, void *handle) {
  (void)ctx;
  struct two_faced *f = handle;
  return atomic_fetch_add(&f->calls, 1) % 2 == 0 ? f->at_request : f->then;
}

static struct two_faced sleeper_face = {SAMPLER_STATE_RUNNABLE, SAMPLER_STATE_SLEEPING, 0};
static struct two_faced runner_face = {SAMPLER_STATE_SLEEPING, SAMPLER_STATE_RUNNABLE, 0};

static void register_with_handle(const char *name, jmethodID role, void *handle) {
  fake_jvm_set_role(role);
  struct sampler_thread t = {
      .tid = plat_gettid(), .name = name, .env = fake_jvm_env(), .handle = handle};
  plat_self_stack(&t.stack_lo, &t.stack_hi);
  cr_assert_eq(sampler_thread_started(&t), 0);
}

static void *two_faced_sleeper(void *arg) {
  (void)arg;
  register_with_handle("sleeper", FAKE_ROLE_IDLE, &sleeper_face);
  block_until_stopped();
  return NULL;
}

static void *two_faced_runner(void *arg) {
  (void)arg;
  register_with_handle("runner", FAKE_ROLE_BUSY, &runner_face);
  spin_until_stopped();
  return NULL;
}

struct leaf_tally {
  uint64_t idle_units, idle_sleeping, busy_units, busy_running;
};

static void tally_leaves(void *ctx, const struct sampler_stack *t) {
  struct leaf_tally *k = ctx;
  const char *role = sampler_frame_name(t->frames[t->n > 1 ? 1 : 0]);
  const char *leaf = sampler_frame_name(t->frames[t->n - 1]);
  cr_log_info("%s ... %s: %lu", role, leaf, (unsigned long)t->units);
  if (strstr(role, "Idle")) {
    k->idle_units += t->units;
    if (!strcmp(leaf, "[sleeping]")) k->idle_sleeping += t->units;
  } else if (strstr(role, "Busy")) {
    k->busy_units += t->units;
    if (!strcmp(leaf, "[running]")) k->busy_running += t->units;
  }
}

Test(sampler, wall_takes_the_state_that_agrees_with_where_the_signal_found_the_thread) {
  struct sampler_config c = {
      .interval_ns = 1000000, .depth = 16, .wall = 1, .thread_roots = 1, .sig = SIGRTMIN + 4};
  struct sampler_jvm jvm = fake_jvm();
  jvm.thread_state = two_faced_state;
  cr_assert_eq(sampler_init(&c, &jvm), 0);
  pthread_t th[2];
  pthread_create(&th[0], NULL, two_faced_sleeper, NULL);
  pthread_create(&th[1], NULL, two_faced_runner, NULL);
  sample_for(300, th, 2);
  struct leaf_tally k = {0};
  sampler_foreach_stack(tally_leaves, &k);
  cr_expect_gt(k.idle_units, 200u, "a sample every interval, asleep or not");
  cr_expect_eq(k.idle_sleeping, k.idle_units, "the sleeper: [sleeping] (its request said running)");
  cr_expect_gt(k.busy_units, 200u);
  cr_expect_eq(k.busy_running, k.busy_units, "the runner: [running] (its request said sleeping)");
}
