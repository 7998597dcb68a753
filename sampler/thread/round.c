/*
 * round.c — the sampler thread's own state, the round state (round.h), and its small
 * operations: set-up and configuration (sthread.h, for the front door), the per-slot
 * bookkeeping arrays and the threads found to have ended. The rounds
 * are in loop.c, the decisions in schedule.c, the recording in record.c.
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

struct loop_state loop;

/* Longest idle back-off between two looks at a thread's CPU clock. */
#define MAX_BACKOFF_NS 50000000u
#define MAX_BACKOFF_TICKS 63u /* with few threads; see schedule.c */
/* The longest a Java thread in one of the VM's waits goes unread while the rate of CPU its last
 * read measured owes it no sample (schedule.c): the CPU it uses meanwhile is counted late, not
 * lost, and a thread whose rate rose is read at the first look that finds it in Java code. */
#define MAX_QUIET_NS 1000000000u

/* The rounds of the idle back-off's and the quiet rule's caps, for interval c->interval_ns. */
static void set_caps(const struct sampler_config *c) {
  loop.max_backoff = MAX_BACKOFF_NS / c->interval_ns;
  if (loop.max_backoff > MAX_BACKOFF_TICKS) loop.max_backoff = MAX_BACKOFF_TICKS;
  loop.max_quiet = MAX_QUIET_NS / c->interval_ns;
  if (loop.max_quiet < loop.max_backoff) loop.max_quiet = loop.max_backoff;
}

int sthread_init(const struct sampler_config *c, const struct sampler_jvm *jvm) {
  loop.cfg = *c;
  loop.name_fn = jvm->method_name;
  loop.name_ctx = jvm->method_name_ctx;
  loop.alive_fn = jvm->method_alive;
  loop.state_fn = jvm->thread_state;
  loop.state_ctx = jvm->thread_state_ctx;
  loop.code_fn = jvm->code_events;
  loop.code_ctx = jvm->code_events_ctx;
  free(loop.fbuf); /* a second init (tests) replaces the first */
  free(loop.namebuf);
  free(loop.kinds);
  /* a stack: root, Java frames (with the inline chain of a failed walk), stub and label
   * frames, native frames (at most depth of each) */
  loop.fbuf = malloc(((size_t)c->depth * 2 + CODEMAP_MAX_INLINE + 16) * sizeof *loop.fbuf);
  loop.namebuf = malloc(NAMEBUF_LEN);
  loop.kinds = malloc((size_t)c->depth);
  if (!loop.fbuf || !loop.namebuf || !loop.kinds) return -ENOMEM;
  int err = record_init();
  if (err) return err;
  set_caps(c);
  atomic_store(&loop.stop, 0);
  return 0;
}

int sthread_check_config(const struct sampler_config *c) {
  if (atomic_load(&loop.running)) return -EBUSY;
  if (!c->interval_ns || c->depth != loop.cfg.depth || c->sig != loop.cfg.sig ||
      c->codemap != loop.cfg.codemap)
    return -EINVAL;
  return 0;
}

void sthread_set_config(const struct sampler_config *c) {
  loop.cfg = *c;
  set_caps(c);
  atomic_store(&loop.stop, 0);
}

const struct sampler_config *sthread_config(void) { return &loop.cfg; }

void sthread_set_hotspot(const struct hotspot_layout *h) { atomic_store(&loop.hotspot, h); }

int sthread_running(void) { return atomic_load(&loop.running); }

void loop_time_begin(uint64_t mono_ns) {
  struct timespec wall;
  clock_gettime(CLOCK_REALTIME, &wall);
  timeline_clear(mono_ns, (int64_t)wall.tv_sec * 1000000000 + wall.tv_nsec);
  marks_forget_before(mono_ns);
}

void sthread_clear(void) {
  loop_time_begin(plat_mono_ns());
  loop.base_wall += loop.st.wall_ns;
  loop.base_cpu += loop.st.sampler_cpu_ns;
  loop.base_process += loop.st.process_cpu_ns;
  loop.self_cpu_recorded = loop.self_units_given = 0;
  memset(&loop.st, 0, sizeof loop.st);
  memset(loop.not_kept, 0, sizeof loop.not_kept);
  memset(&loop.cost, 0, sizeof loop.cost);
  memset(&loop.latency, 0, sizeof loop.latency);
  memset(&loop.tick_cost, 0, sizeof loop.tick_cost);
  memset(&loop.native_cost, 0, sizeof loop.native_cost);
}

int loop_reserve(int limit) {
  if (limit <= loop.cap) return 0;
  int cap = limit * 2;
  struct thread_book *books = realloc(loop.books, (size_t)cap * sizeof *books);
  if (!books) return -ENOMEM;
  loop.books = books;
  uint64_t *look = realloc(loop.look, (size_t)cap * sizeof *look);
  if (!look) return -ENOMEM; /* books grew; cap stays: both are only used below cap */
  loop.look = look;
  memset(loop.books + loop.cap, 0, (size_t)(cap - loop.cap) * sizeof *books);
  memset(loop.look + loop.cap, 0, (size_t)(cap - loop.cap) * sizeof *look);
  for (int i = loop.cap; i < cap; i++) loop.books[i].gen = UINT32_MAX; /* reset at first sight */
  loop.cap = cap;
  return 0;
}

/* A thread's phase: uniform in [0, interval) (splitmix64 of a counter). */
uint64_t loop_phase(void) {
  static uint64_t n;
  uint64_t z = (n += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  return loop.cfg.interval_ns ? z % loop.cfg.interval_ns : 0;
}

void loop_timer_drop(struct thread_book *b) {
  if (!b->has_timer) return;
  plat_cpu_timer_delete(b->timer);
  b->has_timer = 0;
  b->via_timer = 0;
  loop.timers--;
}

struct thread_book *loop_book(int i, const struct thread_slot *s) {
  struct thread_book *b = &loop.books[i];
  if (b->gen != s->gen) {
    loop_timer_drop(b);       /* an earlier owner's */
    uint32_t *last = b->last; /* the buffer stays for the next owner */
    int cap = b->cap_last;
    memset(b, 0, sizeof *b);
    b->gen = s->gen;
    b->root_id = TRACES_NO_ID;
    b->last = last;
    b->cap_last = cap;
    b->wall_slot = loop.slots;
    /* A thread's first sample comes when its CPU crosses the first interval boundary after
     * a random phase, not after a whole interval: otherwise every thread's last fraction of an
     * interval went unsampled — nothing for a short burst, and for hundreds of briefly waking
     * threads a large share of their CPU. With the phase, the samples a thread gets are its
     * CPU / interval in expectation. */
    b->phase = loop_phase();
  }
  return b;
}

void loop_note_gone(int i, uint32_t gen) {
  if (loop.ngone == (int)(sizeof loop.gone / sizeof *loop.gone)) return; /* the next round */
  loop.gone[loop.ngone].slot = i;
  loop.gone[loop.ngone].gen = gen;
  loop.ngone++;
}
