/*
 * round_fixture.c — see round_fixture.h: the round state, slots, books and a parked thread for
 * the unit tests of thread/schedule.c and thread/record.c.
 */
#include "round_fixture.h"

#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "platform.h"
#include "sample.h"
#include "sample_walk.h"
#include "sthread.h"
#include "traces.h"

int fix_thread_state = SAMPLER_STATE_UNKNOWN;

static int name_method(void *ctx, jmethodID m, jint bci, char *buf, size_t len) {
  (void)ctx;
  if (bci >= 0)
    snprintf(buf, len, "m%lu:%d", (unsigned long)(uintptr_t)m, (int)bci);
  else
    snprintf(buf, len, "m%lu", (unsigned long)(uintptr_t)m);
  return 0;
}

static int alive(void *ctx, jmethodID m) {
  (void)ctx, (void)m;
  return 1;
}

static int thread_state(void *ctx, void *handle) {
  (void)ctx, (void)handle;
  return fix_thread_state;
}

struct sampler_config fix_config(void) {
  struct sampler_config c = {0};
  c.interval_ns = FIX_INTERVAL_NS;
  c.depth = 16;
  c.hasrun = SAMPLER_HASRUN_AUTO;
  return c;
}

void fix_setup(const struct sampler_config *cfg) {
  struct sampler_jvm jvm = {0};
  jvm.method_name = name_method;
  jvm.method_alive = alive;
  jvm.thread_state = thread_state;
  cr_assert_eq(traces_init(), 0);
  cr_assert_eq(sthread_init(cfg, &jvm), 0);
  cr_assert_eq(round_reserve(4), 0);
  rounds.round = 100;
  rounds.slots = 100;
  rounds.self = plat_gettid();
  rounds.round_ns = plat_mono_ns();
  round_time_begin(rounds.round_ns);
}

/* The slots' records: up to 4 slots a test. */
static struct sample_record records[4];
static struct sample_walk walks[4];
static asgct_frame frames[4][16];
static int nslots;

void fix_slot(struct thread_slot *s, pid_t tid, const char *name, int no_env) {
  cr_assert_lt(nslots, 4);
  memset(s, 0, sizeof *s);
  pthread_mutex_init(&s->lock, NULL);
  atomic_store(&s->state, SLOT_LIVE);
  s->tid = tid;
  s->gen = 1;
  snprintf(s->name, sizeof s->name, "%s", name);
  static char dummy_env[64];
  s->env = no_env ? NULL : (JNIEnv *)dummy_env;
  s->record = &records[nslots];
  s->record->walk = &walks[nslots];
  s->record->walk->frames = frames[nslots];
  s->record->native_stop = NATIVE_STOP_OFF;
  nslots++;
}

struct thread_book *fix_book(int i, const struct thread_slot *s) {
  struct thread_book *b = round_book(i, s);
  cr_assert_eq(b->gen, s->gen);
  b->phase = 0;
  return b;
}

static int park_pipe[2];
static pid_t parked_tid;
static uint64_t parked_cpu;

static void *parked_main(void *arg) {
  (void)arg;
  /* CPU enough to take the cases' deltas from (fix_cpu_since_look), then blocked */
  pid_t self = plat_gettid();
  uint64_t used = 0;
  while (plat_thread_cpu_ns(self, &used) == 0 && used < FIX_PARKED_CPU_NS) {}
  __atomic_store_n(&parked_tid, self, __ATOMIC_RELEASE);
  char c;
  while (read(park_pipe[0], &c, 1) < 0) {}
  return NULL;
}

pid_t fix_parked(void) {
  if (parked_tid) return parked_tid;
  cr_assert_eq(pipe(park_pipe), 0);
  pthread_t t;
  cr_assert_eq(pthread_create(&t, NULL, parked_main, NULL), 0);
  pthread_detach(t);
  while (!__atomic_load_n(&parked_tid, __ATOMIC_ACQUIRE)) sched_yield();
  /* blocked in its read: the kernel says so and two readings 20 ms apart agree */
  for (int k = 0; k < 500; k++) {
    uint64_t a = 0, b = 0;
    cr_assert_eq(plat_thread_cpu_ns(parked_tid, &a), 0);
    struct timespec ts = {0, 20000000};
    nanosleep(&ts, NULL);
    cr_assert_eq(plat_thread_cpu_ns(parked_tid, &b), 0);
    if (a == b && plat_thread_running(parked_tid) == 0) {
      parked_cpu = b;
      return parked_tid;
    }
  }
  cr_assert_fail("the parked thread never settled in its read");
  return 0;
}

uint64_t fix_parked_cpu(void) {
  fix_parked();
  uint64_t now = 0;
  cr_assert_eq(plat_thread_cpu_ns(parked_tid, &now), 0);
  cr_assert_eq(now, parked_cpu, "the parked thread's clock moved: the cases' deltas are off");
  return now;
}

void fix_cpu_since_look(struct thread_book *b, uint64_t ago_ns) {
  uint64_t now = fix_parked_cpu();
  cr_assert_geq(now, ago_ns, "the parked thread has %llu ns of CPU", (unsigned long long)now);
  b->have_base = 1;
  b->cpu_base = now - ago_ns;
}

struct find_ctx {
  const char *folded;
  struct fix_stack *out;
  int found;
};

static void match(void *ctx, const struct trace_view *t) {
  struct find_ctx *f = ctx;
  char buf[1024];
  size_t len = 0;
  buf[0] = '\0';
  for (int i = 0; i < t->n; i++) {
    const char *name = intern_name(t->frames[i]);
    len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%s", i ? ";" : "", name ? name : "?");
    if (len >= sizeof buf) return;
  }
  if (strcmp(buf, f->folded) != 0) return;
  f->found = 1;
  f->out->samples = t->samples;
  f->out->units = t->units;
  f->out->cpu_ns = t->cpu_ns;
  f->out->kind = t->kind;
}

int fix_find(const char *folded, struct fix_stack *out) {
  struct fix_stack none;
  struct find_ctx f = {folded, out ? out : &none, 0};
  memset(f.out, 0, sizeof *f.out);
  traces_foreach(match, &f);
  return f.found;
}

void fix_expect_stack(const char *folded, uint64_t units, uint64_t cpu_ns) {
  struct fix_stack st;
  cr_assert(fix_find(folded, &st), "no stack %s (of %zu)", folded, fix_stacks());
  cr_expect_eq(st.units, units, "%s: units", folded);
  cr_expect_eq(st.cpu_ns, cpu_ns, "%s: cpu_ns", folded);
}

size_t fix_stacks(void) { return traces_count(); }
