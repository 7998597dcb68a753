/*
 * Tests of the sampling protocol with real threads and real signals, but no JVM: the fake JVM
 * (tests/support/fake_jvm.h) reports one frame naming the interrupted thread's role. Checks which threads get signalled and sampled under each
 * ThreadHasRun mode, the weights, and the handling of late and lost requests.
 * Counts are judged against the CPU the workers got (read from their CPU clocks as the sampler
 * stops), never against the wall clock: on a busy machine the workers get a fraction of it.
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

/* The workers of a run and their roles (role_index), so that their CPU can be read as the
 * sampler stops (worker_cpu): what the machine gave them, the basis of every expected count. */
static pid_t worker_tid[64];
static int worker_role[64];
static atomic_int nworkers;
static uint64_t role_cpu_ns[4];

static void worker_started(int role) {
  int i = atomic_fetch_add(&nworkers, 1);
  if (i < 64) worker_tid[i] = plat_gettid(), worker_role[i] = role;
}

/* Reads every worker's CPU into role_cpu_ns (per role); called while the sampler still runs. */
static void worker_cpu(void) {
  memset(role_cpu_ns, 0, sizeof role_cpu_ns);
  int n = atomic_load(&nworkers);
  for (int i = 0; i < n && i < 64; i++) {
    uint64_t ns = 0;
    if (plat_thread_cpu_ns(worker_tid[i], &ns) == 0) role_cpu_ns[worker_role[i]] += ns;
  }
}

/* CPU of role r in intervals of interval_ns: the units the sampler owes it (weight=samples). */
static uint64_t cpu_units(int r, uint64_t interval_ns) { return role_cpu_ns[r] / interval_ns; }

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
  worker_started(0);
  spin_until_stopped();
  return NULL;
}

/* Blocked for the whole run: it uses no CPU until the end. */
static void *idle_main(void *arg) {
  (void)arg;
  fake_jvm_set_role(FAKE_ROLE_IDLE);
  fake_jvm_register_self("idle");
  worker_started(1);
  block_until_stopped();
  return NULL;
}

static void *burst_main(void *arg) {
  (void)arg;
  fake_jvm_set_role(FAKE_ROLE_BURST);
  fake_jvm_register_self("burst");
  worker_started(2);
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

/* Runs the sampler for `ms` over the n workers th (started), then stops and joins them all;
 * their CPU as the sampler stops is in role_cpu_ns. */
static void sample_for(int ms, pthread_t *th, int n) {
  pthread_t sam;
  usleep(20000);
  pthread_create(&sam, NULL, sampler_main, NULL);
  usleep((useconds_t)ms * 1000);
  worker_cpu();
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
  atomic_store(&nworkers, 0);
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
              (unsigned long)st.timer_requests, (unsigned long)st.timer_captures,
              (unsigned long)st.timer_fallbacks, (unsigned long)st.requests);
  /* the busy thread's CPU is in its samples, and no more than its CPU: one unit per interval
   * of the CPU it got up to the sampler's last round (which a starved sampler takes tens of ms
   * before the CPU is read) */
  uint64_t got = cpu_units(0, c.interval_ns);
  cr_log_info("the busy thread got %lu intervals of CPU in %d ms (%lu%%)", (unsigned long)got, ms,
              (unsigned long)(role_cpu_ns[0] / 10000u / (uint64_t)ms));
  cr_assert_geq(got, 10u, "the machine gave the busy thread some CPU");
  cr_expect_geq(t.units[0] + 2, got * 6 / 10, "the busy thread's CPU is in its samples");
  cr_expect_leq(t.units[0], got + 2, "and no more than its CPU");
  /* its timer answers when a tick finds it running within two ticks: on a quiet machine nearly
   * always; on one that gives it half a CPU the timer is seldom even asked (a thread that used
   * less than half the time since the last look is signalled) — judged when it got 90% */
  if (role_cpu_ns[0] >= (uint64_t)ms * 900000u)
    cr_expect_geq(st.timer_captures, t.samples[0] * 8 / 10,
                  "most of the busy thread's samples came from its timer (%lu of %lu)",
                  (unsigned long)st.timer_captures, (unsigned long)t.samples[0]);
  cr_expect_geq(
      st.timer_captures + st.timer_fallbacks + st.timer_ended, st.timer_requests,
      "every timer request was answered by its timer, signalled, or ended with its thread");
  cr_expect_gt(t.units[2], 0u, "the bursty threads are sampled too");
  cr_expect_gt(st.requests, 0u, "... by signals: a tick seldom finds them running");
  cr_expect_eq(t.units[1], 0u, "idle threads get no samples");
  /* none lost during the run; at its end the sampler waits ~20 ms for the answers still open
   * (drain), which a thread waiting for a CPU on a busy machine may not give: at most one per
   * thread, kept under [sample lost] — none when the machine gave the threads their CPU */
  cr_expect_eq(st.timed_out, 0u);
  cr_expect_leq(st.unanswered, 3u, "only requests still open at the end are withdrawn");
  if (role_cpu_ns[0] >= (uint64_t)ms * 900000u) {
    cr_expect_eq(st.lost_units, 0u);
    cr_expect_eq(st.unanswered, 0u);
  }
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
static atomic_ulong lumpy_asked_ns; /* the time the lumpy threads computed (CPU they asked for) */

static void *lumpy_main(void *arg) {
  uint64_t interval = *(const uint64_t *)arg;
  fake_jvm_set_role(FAKE_ROLE_BUSY);
  fake_jvm_register_self("lumpy");
  worker_started(0);
  while (!atomic_load(&stop_workers)) {
    uint64_t end = plat_mono_ns() + 5 * interval;
    while (plat_mono_ns() < end) {}
    atomic_fetch_add(&lumpy_asked_ns, 5 * interval);
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
  atomic_store(&nworkers, 0);
  pthread_create(&th[0], NULL, lumpy_main, &c.interval_ns);
  pthread_create(&th[1], NULL, lumpy_main, &c.interval_ns);
  sample_for(2500, th, 2);
  struct sampler_report r;
  sampler_report(&r);
  struct sampler_counters st = r.n;
  cr_log_info("timer requests %lu samples %lu fallbacks %lu; signals %lu; captures %lu late %lu",
              (unsigned long)st.timer_requests, (unsigned long)st.timer_captures,
              (unsigned long)st.timer_fallbacks, (unsigned long)st.requests,
              (unsigned long)st.samples, (unsigned long)st.late);
  /* the requests left to the timers are those of threads busy since the last look: on a machine
   * that gives the threads a fraction of the CPU they compute for, few or none are (they are
   * signalled) — the timers' part is judged when the threads got 90% of what they asked */
  uint64_t asked = atomic_load(&lumpy_asked_ns);
  cr_log_info("the lumpy threads got %lu of the %lu ms they computed for",
              (unsigned long)(role_cpu_ns[0] / 1000000u), (unsigned long)(asked / 1000000u));
  if (role_cpu_ns[0] >= asked / 10 * 9) {
    cr_expect_gt(st.timer_captures, 0u);
    cr_expect_geq(st.timer_fallbacks, 1u, "some requests outlived the thread's run");
  }
  cr_expect_leq(st.timer_fallbacks, st.timer_requests);
  cr_expect_geq(
      st.timer_captures + st.timer_fallbacks + st.timer_ended, st.timer_requests,
      "every timer request was answered by its timer, signalled, or ended with its thread");
  cr_expect_eq(st.timed_out, 0u, "no request lost during the run");
  cr_expect_leq(st.unanswered, 2u, "only requests still open at the end are withdrawn");
  if (role_cpu_ns[0] >= asked / 10 * 9) {
    cr_expect_eq(st.lost_units, 0u, "no sample lost");
    cr_expect_eq(st.unanswered, 0u);
  }
}

/* Every capture of every stack is on the time axis, at the time it was taken: the entries of
 * a stack add up to its weights, they run in time order over the run, and their threads are
 * the workers by name. */
Test(sampler, the_time_axis_holds_every_capture_of_every_stack) {
  struct sampler_counters st;
  run(SAMPLER_HASRUN_AUTO, 2, 0, 1, 400, &st);
  struct sampler_snapshot s;
  cr_assert_eq(sampler_snapshot(&s, 0), 0);
  const struct sampler_time *t = &s.time;
  cr_assert_gt(s.n, 0u);
  cr_assert_eq(t->cell_ns, 20000000u);
  uint64_t units[256] = {0}, samples[256] = {0}, cpu[256] = {0};
  cr_assert_lt(s.n, 256u);
  uint32_t last_cell = 0, cells = 0;
  int busy_thread = 0, burst_thread = 0;
  for (size_t i = 0; i < t->n; i++) {
    const struct sampler_time_entry *e = &t->entries[i];
    cr_assert_lt(e->stack, s.n);
    cr_assert_lt(e->thread, t->nthreads);
    cr_assert_geq(e->cell, last_cell, "time order at %zu", i);
    cells += i == 0 || e->cell != last_cell;
    last_cell = e->cell;
    units[e->stack] += e->units;
    samples[e->stack] += e->samples;
    cpu[e->stack] += e->cpu_ns;
    const char *name = t->threads[e->thread].name;
    busy_thread |= !strcmp(name, "busy");
    burst_thread |= !strcmp(name, "burst");
  }
  for (size_t k = 0; k < s.n; k++)
    cr_expect(units[k] == s.stacks[k].units && samples[k] == s.stacks[k].samples &&
                  cpu[k] == s.stacks[k].cpu_ns,
              "stack %zu: %lu units on the time axis, %lu in the table", k, (unsigned long)units[k],
              (unsigned long)s.stacks[k].units);
  cr_expect(busy_thread && burst_thread, "the workers' captures are theirs by name");
  cr_expect_leq((uint64_t)last_cell * t->cell_ns, t->duration_ns, "no cell after the snapshot");
  /* 400 ms of two busy threads sampled each ms: the captures are not summed into one moment;
   * when the host gave the workers and the sampler their time (most rounds on time, the busy
   * pair ~0.7 CPU-s), most of the 20 cells hold captures — a host at load 14 left 3 */
  cr_expect_geq(cells, 2u, "the captures are spread over the run: %u cells", cells);
  if (st.overruns < 40 && role_cpu_ns[0] /* busy */ >= 640000000u)
    cr_expect_geq(cells, 8u, "the captures are spread over the run: %u cells", cells);
  cr_expect_gt(t->start_wall_ns, 1600000000ll * 1000000000ll, "a wall-clock start");
  sampler_snapshot_free(&s);
}

Test(sampler, auto_samples_the_busy_thread_and_never_signals_idle_ones) {
  struct sampler_counters st;
  struct tally t = run(SAMPLER_HASRUN_AUTO, 1, 20, 0, 600, &st);
  cr_log_info("ticks %lu requests %lu busy units %lu idle %lu skipped_cpu %lu idle-backoff %lu",
              (unsigned long)st.ticks, (unsigned long)st.requests, (unsigned long)t.units[0],
              (unsigned long)t.units[1], (unsigned long)st.skipped_cpu,
              (unsigned long)st.skipped_idle);
  cr_assert_geq(st.ticks, 20u, "the machine gave the sampler some CPU");
  uint64_t got = cpu_units(0, 1000000);
  cr_assert_geq(got, 20u, "the machine gave the busy thread some CPU");
  /* its CPU up to the sampler's last round: a starved sampler's last round can come tens of ms
   * before the CPU is read (39 of 54 beside two CPU hogs) */
  cr_expect_geq(t.units[0] + 2, got * 6 / 10,
                "the busy thread earns a unit per interval of its CPU (%lu of %lu)",
                (unsigned long)t.units[0], (unsigned long)got);
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
  /* the busy thread is caught in each round after it ran: every round, or as many as it got
   * intervals of CPU on a machine that gives it less */
  uint64_t got = cpu_units(0, 1000000);
  cr_assert_geq(got, 20u, "the machine gave the busy thread some CPU");
  cr_expect_gt(t.samples[0], (st.ticks < got ? st.ticks : got) / 2);
  cr_expect_leq(t.samples[1], 10u * 3, "idle threads: about one first sample each");
}

Test(sampler, bursts_are_weighted_by_cpu_not_by_wakeups) {
  struct sampler_counters st;
  struct tally t = run(SAMPLER_HASRUN_AUTO, 1, 0, 4, 1000, &st);
  double share = (double)t.units[2] / (double)(t.units[0] + t.units[2]);
  /* 4 x (100us per ~5.1ms) ~= 0.08 of a core beside one busy core on a quiet machine: ~7% of
   * all units; beside CPU hogs the busy thread gets less and the bursts' share of the CPU
   * grows — the units follow the CPU the threads got, not their wake-ups */
  double cpu_share = (double)role_cpu_ns[2] / (double)(role_cpu_ns[0] + role_cpu_ns[2]);
  cr_log_info("burst units %lu busy units %lu share %.3f; CPU share %.3f",
              (unsigned long)t.units[2], (unsigned long)t.units[0], share, cpu_share);
  cr_assert_geq(cpu_units(0, 1000000) + cpu_units(2, 1000000), 100u,
                "the machine gave the threads some CPU");
  cr_expect(share > cpu_share * 0.6 && share < cpu_share * 1.5 + 0.01,
            "burst share %.3f for a CPU share of %.3f", share, cpu_share);
  cr_expect(cpu_share > 0.02, "the bursts used CPU (%.3f)", cpu_share);
}

static atomic_ulong blocked_ns = 150000000; /* how long blocked_signal_main blocks the signal */
static atomic_int blocked_tid;              /* its tid, and its CPU clock as it unblocked it */
static atomic_ulong blocked_cpu_unblocked;
static atomic_int unblocked; /* it has unblocked the signal */

static void *blocked_signal_main(void *arg) {
  (void)arg;
  fake_jvm_set_role(FAKE_ROLE_BUSY);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGRTMIN + 4);
  pthread_sigmask(SIG_BLOCK, &set, NULL); /* requests cannot be answered for a while */
  fake_jvm_register_self("blocked");
  atomic_store(&blocked_tid, plat_gettid());
  worker_started(0);
  uint64_t end = plat_mono_ns() + atomic_load(&blocked_ns);
  volatile uint64_t x = 0;
  while (plat_mono_ns() < end) x++;
  atomic_store(&blocked_cpu_unblocked, plat_self_cpu_ns());
  pthread_sigmask(SIG_UNBLOCK, &set, NULL);
  atomic_store(&unblocked, 1);
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
  atomic_store(&nworkers, 0);
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

/* What happened after blocked_signal_main unblocked the signal: the captures and rounds from
 * then on, and the CPU the machine gave the worker meanwhile. */
struct after_unblock {
  useconds_t run_us;
  struct sampler_report at;  /* the report as the worker unblocked */
  uint64_t cpu0_ns, cpu1_ns; /* its CPU then, and as the run ends */
};

/* The `during` of sample_one for blocked_signal_main: sleeps run_us in all — longer, up to 5 s
 * more, until the worker has got 100 ms of CPU after the unblock (a busy machine gives it a
 * fraction of the time) — and notes the report and the worker's CPU as it unblocks the signal
 * and as the run ends. */
static void watch_unblock(void *ctx) {
  struct after_unblock *a = ctx;
  uint64_t end = plat_mono_ns() + (uint64_t)a->run_us * 1000u;
  while (!atomic_load(&unblocked) && plat_mono_ns() < end) usleep(1000);
  sampler_report(&a->at);
  plat_thread_cpu_ns(worker_tid[0], &a->cpu0_ns);
  uint64_t now = plat_mono_ns();
  if (now < end) usleep((useconds_t)((end - now) / 1000u));
  for (uint64_t cap = plat_mono_ns() + 5000000000u;; usleep(10000)) {
    plat_thread_cpu_ns(worker_tid[0], &a->cpu1_ns);
    if (a->cpu1_ns >= a->cpu0_ns + 100000000u || plat_mono_ns() >= cap) break;
  }
}

/* After the unblock the worker is captured again: in about every round in which it ran an
 * interval — as many rounds as there were, or as it got intervals of CPU on a machine that gives
 * it less. Judged against those (at least 40% of them, as the 100 of ~250 it was on a quiet
 * machine), not against the wall clock. */
static void expect_sampling_resumes(const struct after_unblock *a, const struct sampler_report *r) {
  cr_assert(atomic_load(&unblocked), "the worker unblocked the signal within the run");
  uint64_t captures = r->n.samples - a->at.n.samples, rounds = r->n.ticks - a->at.n.ticks;
  uint64_t got = (a->cpu1_ns - a->cpu0_ns) / 1000000u, can = rounds < got ? rounds : got;
  cr_log_info("after the unblock: %lu captures in %lu rounds, %lu intervals of CPU",
              (unsigned long)captures, (unsigned long)rounds, (unsigned long)got);
  cr_assert_geq(can, 20u, "the machine gave the worker and the sampler some CPU after the unblock");
  cr_expect_geq(captures * 10, can * 4, "sampling resumes: %lu captures for %lu rounds that could",
                (unsigned long)captures, (unsigned long)can);
}

Test(sampler, an_unanswered_request_is_left_open_then_recorded_late) {
  struct after_unblock a = {.run_us = 400000};
  struct sampler_report r = sample_one(blocked_signal_main, watch_unblock, &a);
  struct sampler_counters st = r.n;
  cr_log_info("outstanding %lu late %lu samples %lu", (unsigned long)st.outstanding,
              (unsigned long)st.late, (unsigned long)st.samples);
  /* blocked, the worker answers nothing: the request stays open through the rounds until the
   * unblock (all of them, whatever their number), not re-sent */
  cr_expect_geq(st.outstanding * 2, a.at.n.ticks,
                "while blocked, the open request is not re-sent (%lu rounds, %lu open)",
                (unsigned long)a.at.n.ticks, (unsigned long)st.outstanding);
  cr_expect_geq(st.late, 1u, "the answer came after its round and was recorded");
  expect_sampling_resumes(&a, &r);
}

/* Found by its kernel name ("java", the creator's, before the JVM names the thread), then
 * announced by the JVM under its own (its ThreadStart): registered again, renamed. Each name
 * for 100 ms of the thread's own CPU (a busy machine gives it less than its wall time), then
 * renamed_done. */
static atomic_int renamed_done;

static void spin_cpu_ms(uint64_t ms) {
  struct timespec a, b;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
  do {
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
  } while ((uint64_t)(b.tv_sec - a.tv_sec) * 1000000000u + (uint64_t)(b.tv_nsec - a.tv_nsec) <
               ms * 1000000u &&
           !atomic_load(&stop_workers));
}

static void *renamed_main(void *arg) {
  (void)arg;
  fake_jvm_set_role(FAKE_ROLE_BUSY);
  fake_jvm_register_self("java");
  worker_started(0);
  spin_cpu_ms(100);
  fake_jvm_register_self("renamed");
  spin_cpu_ms(100);
  atomic_store(&renamed_done, 1);
  spin_until_stopped();
  return NULL;
}

struct roots {
  uint64_t first, later;
};

static void count_roots(void *ctx, const struct sampler_stack *t) {
  struct roots *r = ctx;
  const char *root = sampler_frame_name(t->frames[0]);
  if (strncmp(root, "[java tid=", 10) == 0) r->first += t->units;
  if (strncmp(root, "[renamed tid=", 13) == 0) r->later += t->units;
}

/* A thread renamed after its first samples is shown under its new name from then on: the
 * root frame follows the registry's name. (Kept its first root, a JVM thread found in
 * /proc before its ThreadStart gave all its samples to "[java tid=N]": jvm_busyidle beside
 * two CPU hogs, 0 samples for busy-beta's 2,895 ms of CPU.) */
Test(sampler, a_renamed_thread_is_shown_under_its_new_name) {
  struct sampler_config c = {
      .interval_ns = 1000000, .depth = 16, .thread_roots = 1, .sig = SIGRTMIN + 4};
  struct sampler_jvm jvm = fake_jvm();
  cr_assert_eq(sampler_init(&c, &jvm), 0);
  atomic_store(&stop_workers, 0);
  atomic_store(&renamed_done, 0);
  pthread_t th;
  pthread_create(&th, NULL, renamed_main, NULL);
  pthread_t sam;
  usleep(20000);
  pthread_create(&sam, NULL, sampler_main, NULL);
  for (int i = 0; i < 3000 && !atomic_load(&renamed_done); i++) usleep(10000); /* 30 s at most */
  sampler_stop();
  pthread_join(sam, NULL);
  atomic_store(&stop_workers, 1);
  pthread_join(th, NULL);
  struct roots r = {0};
  sampler_foreach_stack(count_roots, &r);
  cr_log_info("under [java]: %lu, under [renamed]: %lu", (unsigned long)r.first,
              (unsigned long)r.later);
  cr_assert_gt(r.first + r.later, 20u, "the machine gave the thread some CPU");
  cr_expect_gt(r.later, 0u, "samples after the rename are under the new name");
}

Test(sampler, a_thread_gone_without_leaving_is_not_signalled) {
  struct sampler_config c = {.interval_ns = 1000000,
                             .depth = 16,
                             .hasrun = SAMPLER_HASRUN_REGS,
                             .thread_roots = 0,
                             .sig = SIGRTMIN + 4};
  struct sampler_jvm jvm = fake_jvm();
  cr_assert_eq(sampler_init(&c, &jvm), 0);
  struct sampler_target ghost = {
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
  cr_assert_geq(st.ticks, 5u, "the machine gave the sampler some CPU");
  cr_expect_geq(st.lost_send, st.ticks / 2, "each failed signal is counted (%lu in %lu rounds)",
                (unsigned long)st.lost_send, (unsigned long)st.ticks);
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
  struct sampler_target t = {.tid = plat_gettid(), .name = "native blocker"};
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
  struct sampler_target t = {
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
  /* a sample every interval, asleep or not: at least one a round, and when the machine gave
   * the sampler its rounds (90% of the intervals), one for about every interval */
  struct sampler_report r;
  sampler_report(&r);
  cr_log_info("rounds %lu, overruns %lu; units: sleeper %lu, runner %lu", (unsigned long)r.n.ticks,
              (unsigned long)r.n.overruns, (unsigned long)k.idle_units,
              (unsigned long)k.busy_units);
  cr_assert_geq(r.n.ticks, 20u, "the machine gave the sampler some CPU");
  cr_expect_geq(k.idle_units, r.n.ticks, "a sample a round, asleep or not");
  cr_expect_geq(k.busy_units, r.n.ticks);
  if (r.n.ticks >= 270) {
    cr_expect_gt(k.idle_units, 200u, "a sample every interval, asleep or not");
    cr_expect_gt(k.busy_units, 200u);
  }
  cr_expect_eq(k.idle_sleeping, k.idle_units, "the sleeper: [sleeping] (its request said running)");
  cr_expect_eq(k.busy_running, k.busy_units, "the runner: [running] (its request said sleeping)");
}

/* The disk cache's words in the report are a line of the text report: a path's newline or other
 * control character comes out as '?', and a directory that cannot be used says why. */
Test(sampler, the_disk_caches_words_hold_no_control_character) {
  char why[512];
  cr_expect_lt(sampler_set_cache("/proc/version/a\nb\tc", why, sizeof why), 0);
  cr_expect(strstr(why, "cannot make it") != NULL, "%s", why);
  struct sampler_config c = {
      .interval_ns = 1000000, .depth = 16, .hasrun = SAMPLER_HASRUN_AUTO, .sig = SIGRTMIN + 4};
  struct sampler_jvm jvm = fake_jvm();
  cr_assert_eq(sampler_init(&c, &jvm), 0);
  struct sampler_report r;
  sampler_report(&r);
  cr_assert_not_null(r.disk_cache);
  cr_expect(strncmp(r.disk_cache, "off (/proc/version/a?b?c: cannot make it", 40) == 0, "%s",
            r.disk_cache);
  for (const char *p = r.disk_cache; *p; p++)
    cr_expect((unsigned char)*p >= 0x20, "a control character in: %s", r.disk_cache);
  sampler_set_cache(NULL, NULL, 0);
}
