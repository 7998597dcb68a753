/*
 * round.c — the sampler thread's own state, the round state (round.h), and its small
 * operations: set-up and configuration (sthread.h, for the front door), the per-slot
 * bookkeeping arrays and the threads found to have ended. The rounds
 * are in run.c, the decisions in schedule.c, the recording in record.c.
 */
#include "round.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "codemap.h"
#include "marks.h"
#include "platform.h"
#include "timeline.h"
#include "traces.h"

struct round_state rounds;

/* Longest idle back-off between two looks at a thread's CPU clock. */
#define MAX_BACKOFF_NS 50000000u
#define MAX_BACKOFF_TICKS 63u /* with few threads; see schedule.c */
/* The longest a Java thread in one of the VM's waits goes unread while the rate of CPU its last
 * read measured owes it no sample (schedule.c): the CPU it uses meanwhile is counted late, not
 * lost, and a thread whose rate rose is read at the first look that finds it in Java code. */
#define MAX_QUIET_NS 1000000000u

/* The rounds of the idle back-off's and the quiet rule's caps, for interval c->interval_ns. */
static void set_caps(const struct sampler_config *c) {
  rounds.max_backoff = MAX_BACKOFF_NS / c->interval_ns;
  if (rounds.max_backoff > MAX_BACKOFF_TICKS) rounds.max_backoff = MAX_BACKOFF_TICKS;
  rounds.max_quiet = MAX_QUIET_NS / c->interval_ns;
  if (rounds.max_quiet < rounds.max_backoff) rounds.max_quiet = rounds.max_backoff;
}

int sthread_init(const struct sampler_config *c, const struct sampler_jvm *jvm) {
  rounds.cfg = *c;
  rounds.name_fn = jvm->method_name;
  rounds.name_ctx = jvm->method_name_ctx;
  rounds.alive_fn = jvm->method_alive;
  rounds.state_fn = jvm->thread_state;
  rounds.state_ctx = jvm->thread_state_ctx;
  rounds.code_fn = jvm->code_events;
  rounds.code_ctx = jvm->code_events_ctx;
  rounds.cache_only = 0; /* until sthread_set_code_source */
  rounds.debug_flag = 0;
  free(rounds.fbuf); /* a second init (tests) replaces the first */
  free(rounds.namebuf);
  free(rounds.kinds);
  /* a stack: root, Java frames (with the inline chain of a failed walk), stub and label
   * frames, native frames (at most depth of each) */
  rounds.fbuf = malloc(((size_t)c->depth * 2 + CODEMAP_MAX_INLINE + 16) * sizeof *rounds.fbuf);
  rounds.namebuf = malloc(NAMEBUF_LEN);
  rounds.kinds = malloc((size_t)c->depth);
  int err = !rounds.fbuf || !rounds.namebuf || !rounds.kinds ? -ENOMEM : record_init();
  if (err) {
    sthread_fini();
    return err;
  }
  set_caps(c);
  atomic_store(&rounds.stop, 0);
  return 0;
}

void sthread_fini(void) {
  free(rounds.fbuf);
  free(rounds.namebuf);
  free(rounds.kinds);
  rounds.fbuf = NULL;
  rounds.namebuf = NULL;
  rounds.kinds = NULL;
}

int sthread_check_config(const struct sampler_config *c) {
  if (atomic_load(&rounds.running)) return -EBUSY;
  if (!c->interval_ns || c->depth != rounds.cfg.depth || c->sig != rounds.cfg.sig ||
      c->codemap != rounds.cfg.codemap)
    return -EINVAL;
  return 0;
}

void sthread_set_config(const struct sampler_config *c) {
  rounds.cfg = *c;
  set_caps(c);
  atomic_store(&rounds.stop, 0);
}

const struct sampler_config *sthread_config(void) { return &rounds.cfg; }

void sthread_set_hotspot(const struct hotspot_layout *h) { atomic_store(&rounds.hotspot, h); }

void sthread_set_codecache(const struct codecache_layout *l) { atomic_store(&rounds.codecache, l); }

void sthread_set_code_source(uintptr_t debug_flag) {
  rounds.cache_only = 1;
  rounds.debug_flag = debug_flag;
}

int sthread_running(void) { return atomic_load(&rounds.running); }

void round_time_begin(uint64_t mono_ns) {
  struct timespec wall;
  clock_gettime(CLOCK_REALTIME, &wall);
  timeline_clear(mono_ns, (int64_t)wall.tv_sec * 1000000000 + wall.tv_nsec);
  marks_forget_before(mono_ns);
}

void sthread_report(struct sampler_report *r) {
  r->n = rounds.st;
  r->cost_median_ns = hist_quantile(&rounds.cost, 0.5);
  r->cost_p99_ns = hist_quantile(&rounds.cost, 0.99);
  r->cost_max_ns = rounds.cost.max;
  r->latency_median_ns = hist_quantile(&rounds.latency, 0.5);
  r->latency_p99_ns = hist_quantile(&rounds.latency, 0.99);
  r->round_median_ns = hist_quantile(&rounds.tick_cost, 0.5);
  r->round_p99_ns = hist_quantile(&rounds.tick_cost, 0.99);
  r->native_median_ns = hist_quantile(&rounds.native_cost, 0.5);
  r->native_p99_ns = hist_quantile(&rounds.native_cost, 0.99);
  r->handler_replaced = rounds.handler_replaced;
}

uint32_t sthread_not_kept(int kind, uint64_t *samples, uint64_t *units, uint64_t *cpu_ns) {
  *samples = rounds.not_kept[kind].samples;
  *units = rounds.not_kept[kind].units;
  *cpu_ns = rounds.not_kept[kind].cpu_ns;
  return rounds.id_stack_full;
}

void sthread_clear(void) {
  round_time_begin(plat_mono_ns());
  rounds.base_wall += rounds.st.wall_ns;
  rounds.base_cpu += rounds.st.sampler_cpu_ns;
  rounds.base_process += rounds.st.process_cpu_ns;
  rounds.self_cpu_recorded = rounds.self_units_given = 0;
  memset(&rounds.st, 0, sizeof rounds.st);
  memset(rounds.not_kept, 0, sizeof rounds.not_kept);
  memset(&rounds.cost, 0, sizeof rounds.cost);
  memset(&rounds.latency, 0, sizeof rounds.latency);
  memset(&rounds.tick_cost, 0, sizeof rounds.tick_cost);
  memset(&rounds.native_cost, 0, sizeof rounds.native_cost);
}

int round_reserve(int limit) {
  if (limit <= rounds.cap) return 0;
  int cap = limit * 2;
  struct thread_book *books = realloc(rounds.books, (size_t)cap * sizeof *books);
  if (!books) return -ENOMEM;
  rounds.books = books;
  uint64_t *look = realloc(rounds.look, (size_t)cap * sizeof *look);
  if (!look) return -ENOMEM; /* books grew; cap stays: both are only used below cap */
  rounds.look = look;
  memset(rounds.books + rounds.cap, 0, (size_t)(cap - rounds.cap) * sizeof *books);
  memset(rounds.look + rounds.cap, 0, (size_t)(cap - rounds.cap) * sizeof *look);
  for (int i = rounds.cap; i < cap; i++)
    rounds.books[i].gen = UINT32_MAX; /* reset at first sight */
  rounds.cap = cap;
  return 0;
}

/* A thread's phase: uniform in [0, interval) (splitmix64 of a counter). */
uint64_t round_phase(void) {
  static uint64_t n;
  uint64_t z = (n += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  return rounds.cfg.interval_ns ? z % rounds.cfg.interval_ns : 0;
}

void round_timer_drop(struct thread_book *b) {
  if (!b->has_timer) return;
  plat_cpu_timer_delete(b->timer);
  b->has_timer = 0;
  b->via_timer = 0;
  rounds.timers--;
}

struct thread_book *round_book(int i, const struct thread_slot *s) {
  struct thread_book *b = &rounds.books[i];
  if (b->gen != s->gen) {
    round_timer_drop(b);      /* an earlier owner's */
    uint32_t *last = b->last; /* the buffer stays for the next owner */
    int cap = b->cap_last;
    memset(b, 0, sizeof *b);
    b->gen = s->gen;
    b->root_id = TRACES_NO_ID;
    b->last = last;
    b->cap_last = cap;
    b->wall_slot = rounds.slots;
    /* A thread's first sample comes when its CPU crosses the first interval boundary after
     * a random phase, not after a whole interval: otherwise every thread's last fraction of an
     * interval went unsampled — nothing for a short burst, and for hundreds of briefly waking
     * threads a large share of their CPU. With the phase, the samples a thread gets are its
     * CPU / interval in expectation. */
    b->phase = round_phase();
  }
  return b;
}

void round_note_gone(int i, uint32_t gen) {
  if (rounds.ngone == (int)(sizeof rounds.gone / sizeof *rounds.gone)) return; /* the next round */
  rounds.gone[rounds.ngone].slot = i;
  rounds.gone[rounds.ngone].gen = gen;
  rounds.ngone++;
}
