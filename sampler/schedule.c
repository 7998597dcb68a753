/*
 * schedule.c — which threads the sampler asks for a sample each round (see sampler.h for the
 * ThreadHasRun evidence): CPU clocks, idle back-off, and the wait for a blocked thread to run.
 * Sampler thread only.
 */
#include <errno.h>

#include "platform.h"
#include "sampler_thread.h"

/* CPU deltas at most this large, right after we signalled a thread that was blocked, may be
 * our own doing (sigreturn, re-entering the system call); the checksum decides (auto). */
#define AMBIGUOUS_NS 20000u
/* How long a due sample may wait for its thread to be caught running (see below). */
#define MAX_DEFER_NS 500000000u

int schedule_decide(int i, const struct thread_slot *s, struct thread_book *b, int *mode) {
  const struct sampler_config *cfg = &loop.cfg;
  struct sampler_counters *st = &loop.st;
  if (cfg->hasrun == SAMPLER_HASRUN_REGS) {
    *mode = SAMPLE_IF_MOVED;
    return 1;
  }
  if (loop.round < b->next_look) {
    st->skipped_idle++;
    return 0;
  }
  uint64_t cpu;
  st->looks++;
  int rc = plat_thread_cpu_ns(s->tid, &cpu);
  if (rc == -EINVAL || rc == -ESRCH) { /* ended: a Java thread's ThreadEnd has run already */
    loop_note_gone(i, s->gen);
    return 0;
  }
  if (rc != 0) {
    st->clock_errors++;
    if (cfg->hasrun != SAMPLER_HASRUN_AUTO) return 0;
    *mode = SAMPLE_IF_MOVED; /* no CPU evidence: the checksum decides */
    return 1;
  }
  uint64_t d = 0;
  if (b->have_base && cpu > b->cpu_base) d = cpu - b->cpu_base;
  if (!b->have_base || cpu > b->cpu_base) b->cpu_base = cpu;
  b->have_base = 1;
  if (d == 0) {
    st->skipped_cpu++;
    b->idle_streak++;
    /* Idle back-off: 0, 1, 3, 7 ... rounds, up to MAX_BACKOFF_NS — or longer when there are
     * so many threads that their looks alone would cost more than ~8 clock reads a round:
     * the cost of a round stays with the threads that run, whatever the number that sleep. */
    uint64_t cap = loop.max_backoff, fair = (uint64_t)registry_live() / 8;
    if (cap < fair) cap = fair;
    uint64_t back = b->idle_streak >= 20 ? cap : (1ull << (b->idle_streak - 1)) - 1;
    if (back > cap) back = cap;
    if (b->defer_since) back = 0; /* a due sample waits for it to run: look every round */
    b->next_look = loop.round + 1 + back;
    return 0;
  }
  b->idle_streak = 0;
  b->next_look = 0;
  if (cfg->hasrun == SAMPLER_HASRUN_AUTO && b->last_blocked && d <= AMBIGUOUS_NS)
    b->ambiguous += d;
  else
    b->cum += d;
  uint64_t due = b->cum / cfg->interval_ns - b->units_given;
  if (due == 0) {
    st->skipped_cpu++; /* ran, but less than an interval's worth so far */
    return 0;
  }
  /* Catch it running. A thread that used less than half the interval since the last look, or
   * that its last sample found blocked, may be blocked again. Signalling it then would only
   * show where it waits — and worse, wake it: a thread parked in LockSupport.parkNanos or
   * Object.wait returns early when a signal interrupts its futex (spurious wake-ups are
   * allowed), which shifts the program's timing. So while the kernel says it is blocked, the
   * due sample waits (its units keep accruing) for a round that finds it running — at most
   * MAX_DEFER_NS, after which it is taken where the thread is, with a [cpu before wait] leaf.
   * Busy threads skip the check. */
  if (cfg->hasrun == SAMPLER_HASRUN_AUTO && (d < cfg->interval_ns / 2 || b->last_blocked) &&
      plat_thread_running(s->tid) == 0) {
    if (!b->defer_since) b->defer_since = loop.round + 1;
    if ((loop.round + 1 - b->defer_since) * cfg->interval_ns < MAX_DEFER_NS) {
      st->deferred++;
      return 0;
    }
  }
  b->defer_since = 0;
  b->req_units = due;
  b->units_given += due;
  b->req_cpu = b->cum - b->cum_captured;
  b->cum_captured = b->cum;
  b->req_ambiguous = b->ambiguous;
  b->ambiguous = 0;
  *mode = SAMPLE_CAPTURE;
  return 1;
}
