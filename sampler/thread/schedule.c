/*
 * schedule.c — which threads the sampler asks for a sample each round (see types.h for the
 * ThreadHasRun evidence): CPU clocks, idle back-off, and the wait for a blocked thread to run.
 * Sampler thread only.
 */
#include <errno.h>

#include "guard.h"
#include "hotspot.h"
#include "platform.h"
#include "round.h"

/* CPU deltas at most this large, right after we signalled a thread that was blocked, may be
 * our own doing (sigreturn, re-entering the system call); the checksum decides (auto). */
#define AMBIGUOUS_NS 20000u
/* How long a due sample may wait for its thread to be caught running (see below). */
#define MAX_DEFER_NS 500000000u

/* 1 while a due sample that began waiting for its thread to run in round `since` (a
 * thread_book's defer_since: that round + 1) may still wait this round. */
static int defer_open(uint64_t since) {
  return (rounds.round + 1 - since) * rounds.cfg.interval_ns < MAX_DEFER_NS;
}

/* Idle back-off: the round of the next look at a thread found idle `streak` times in a row —
 * 0, 1, 3, 7 ... rounds later, up to MAX_BACKOFF_NS — or longer when there are so many threads
 * that their looks alone would cost more than ~8 clock reads a round: the cost of a round
 * stays with the threads that run, whatever the number that sleep. */
static uint64_t next_look(uint32_t streak) {
  uint64_t cap = rounds.max_backoff, fair = (uint64_t)registry_live() / 8;
  if (cap < fair) cap = fair;
  uint64_t back = streak >= 20 ? cap : streak ? (1ull << (streak - 1)) - 1 : 0;
  if (back > cap) back = cap;
  return rounds.round + 1 + back;
}

/* Wall clock: every round owes every thread a sample. A thread that has not run since its last
 * one (its CPU clock says so) is not signalled: its last stack is given again, for all the
 * rounds since (idle threads are looked at with the same back-off as in CPU mode). One that
 * ran is asked where it is now, with the JVM's word on its state. */
static int wall_decide(int i, const struct thread_slot *s, struct thread_book *b, int *mode) {
  struct sampler_counters *st = &rounds.st;
  if (rounds.round < b->next_look) {
    st->skipped_idle++;
    return 0;
  }
  uint64_t cpu;
  st->looks++;
  int rc = plat_thread_cpu_ns(s->tid, &cpu);
  if (rc == -EINVAL || rc == -ESRCH) {
    round_note_gone(i, s->gen);
    return 0;
  }
  uint64_t owed = rounds.slots + 1 - b->wall_slot; /* the rounds overruns skipped too */
  uint64_t d = rc == 0 && b->have_base && cpu > b->cpu_base ? cpu - b->cpu_base : 0;
  if (rc == 0 && (!b->have_base || cpu > b->cpu_base)) b->cpu_base = cpu;
  if (rc != 0) st->clock_errors++;
  /* after a capture that found it blocked, a tiny delta is our own signal's doing: it woke the
   * thread, which went back into its wait */
  int ran = rc != 0 || !b->have_base || d > (b->last_blocked ? AMBIGUOUS_NS : 0);
  b->have_base = rc == 0;
  if (!ran && b->nlast > 0) {
    record_again(s, b, owed);
    b->wall_slot = rounds.slots + 1;
    st->skipped_cpu++;
    b->idle_streak++;
    b->next_look = next_look(b->idle_streak);
    return 0;
  }
  b->idle_streak = 0;
  b->next_look = 0;
  b->wall_slot = rounds.slots + 1;
  b->req_units = owed;
  b->req_cpu = d;
  b->req_ambiguous = 0;
  b->req_state = s->handle && rounds.state_fn ? rounds.state_fn(rounds.state_ctx, s->handle)
                                              : SAMPLER_STATE_UNKNOWN;
  *mode = SAMPLE_CAPTURE;
  return 1;
}

/* What a Java thread's own state says: 1 it runs Java code (or waits for a CPU in it), 0 it is
 * in one of the VM's waits (park, Object.wait, sleep, a monitor), -1 nothing (native or VM
 * code, a transition, not a Java thread, no layout). A memory read: JavaThread::_thread_state.
 * The thread may be ending as its state is read, its JavaThread freed: the read is guarded,
 * and a stale value only holds back a look at a thread that has gone. */
static int jvm_runs(const struct thread_slot *s) {
  const struct hotspot_layout *l = atomic_load_explicit(&rounds.hotspot, memory_order_acquire);
  JNIEnv *env = s->env;
  if (!l || !env || l->env <= 0) return -1;
  const volatile int *state =
      (const volatile int *)((uintptr_t)env - (uintptr_t)l->env + (uintptr_t)l->state);
  struct guard g;
  volatile int runs = -1; /* kept across a fault's jump back */
  int faulted = guard_enter(&g, rounds.self, rounds.self_mask);
  if (faulted == GUARD_FULL) return -1;
  if (!faulted) runs = hotspot_state_runs(l, *state);
  guard_leave(&g);
  return runs;
}

/* Whether thread s runs now: 1 running or runnable, 0 blocked, -errno (gone). `jvm` is what
 * jvm_runs said in this decision already, or -2 (not asked yet). The thread's own state
 * answers when it says (94% of the waits the sampler met on the server workload
 * were the VM's futex waits) — against 1.6 us (a blocked thread's wchan) to 3.4 us (a running
 * one's wchan and stat) from /proc. The JVM says "blocked" a little longer than the kernel —
 * from the wake-up until the thread runs again —, when a signal would only have shown where
 * it waited. Native code, the VM's own code and transitions are asked of the kernel. */
static int thread_runs(const struct thread_slot *s, int jvm) {
  rounds.st.running_asked++;
  int runs = jvm == -2 ? jvm_runs(s) : jvm;
  if (runs >= 0) {
    rounds.st.running_jvm++;
    return runs;
  }
  return plat_thread_running(s->tid);
}

/* A Java thread in one of the VM's waits now that had not run at its last look — or whose CPU
 * at its last read's rate owes no sample before quiet_until, or whose due sample waits for it
 * to run (schedule_decide) — has not run since, or ran briefly and blocked again: its clock is
 * read again when it runs Java code (that look may catch it running: a due sample is taken
 * there), or at the latest max_backoff rounds after the last read (max_quiet while the rate
 * owes it nothing or a sample waits: up to 1 s; the wait itself ends after MAX_DEFER_NS). A
 * memory read instead of a clock read (~0.3 us): with 400 threads waking every 5 ms for a few
 * us, those reads were two thirds of the sampler's time (at 1 ms; at 10 ms such threads run in
 * every round, and the clock reads were three fifths of it until the rate counted too).
 * Threads that run most of the time are read every round: their CPU is counted (and their
 * samples taken) as it accrues. Returns 1 when thread s is spared this look (b's next look
 * set), else 0; *jvm: what jvm_runs said, left at -2 when it was not asked. */
static int spared_while_waiting(const struct thread_slot *s, struct thread_book *b, int *jvm) {
  int waits = b->defer_since && defer_open(b->defer_since);
  uint64_t cap = rounds.round < b->quiet_until || waits ? rounds.max_quiet : rounds.max_backoff;
  if (!(rounds.cfg.hasrun == SAMPLER_HASRUN_AUTO && b->have_base &&
        (b->idle_streak > 0 || rounds.round < b->quiet_until || waits) && !rounds.flushing &&
        rounds.round < b->read_round + cap && (*jvm = jvm_runs(s)) == 0))
    return 0;
  rounds.st.skipped_waiting++;
  if (waits) rounds.st.deferred++; /* still blocked: the sample waits on */
  /* the back-off stays where the last read left it; a thread that its rate spares is looked
   * at again when a sample falls due at that rate, or max_backoff rounds on if sooner (a
   * thread whose rate rose is found in Java code no later than an idle one would be) */
  uint64_t soon = rounds.round + 1 + rounds.max_backoff;
  b->next_look = b->defer_since          ? rounds.round + 1
                 : b->idle_streak        ? next_look(b->idle_streak)
                 : b->quiet_until < soon ? b->quiet_until
                                         : soon;
  return 1;
}

/* Longer than our ~80 lines on purpose: one decision read top to bottom in the order its
 * questions are asked (the mode; the idle back-off; a wait it is spared; the CPU clock read; the
 * credit and the units due; catching it running). Split, the values one question leaves for the
 * next (the CPU delta, the rounds since the last read, the JVM state read at most once) would
 * travel between the parts as arguments. */
int schedule_decide(int i, const struct thread_slot *s, struct thread_book *b, int *mode) {
  const struct sampler_config *cfg = &rounds.cfg;
  struct sampler_counters *st = &rounds.st;
  b->busy = 0;
  if (cfg->wall) return wall_decide(i, s, b, mode);
  if (cfg->hasrun == SAMPLER_HASRUN_REGS) {
    *mode = SAMPLE_IF_MOVED;
    return 1;
  }
  if (rounds.round < b->next_look) {
    st->skipped_idle++;
    return 0;
  }
  int jvm = -2; /* the thread's own state, read at most once a decision */
  if (spared_while_waiting(s, b, &jvm)) return 0;
  uint64_t cpu;
  st->looks++;
  uint64_t since = rounds.round > b->read_round ? rounds.round - b->read_round : 1; /* rounds */
  b->read_round = rounds.round;
  int rc = plat_thread_cpu_ns(s->tid, &cpu);
  if (rc == -EINVAL || rc == -ESRCH) { /* ended: a Java thread's ThreadEnd has run already */
    round_note_gone(i, s->gen);
    return 0;
  }
  if (rc != 0) {
    st->clock_errors++;
    if (cfg->hasrun != SAMPLER_HASRUN_AUTO) return 0;
    *mode = SAMPLE_IF_MOVED; /* no CPU evidence: the checksum decides */
    return 1;
  }
  uint64_t d = b->credit; /* up to its last capture, measured by its handler */
  b->credit = 0;
  if (b->have_base && cpu > b->cpu_base) d += cpu - b->cpu_base;
  if (!b->have_base) b->first_base = cpu;
  if (!b->have_base || cpu > b->cpu_base) b->cpu_base = cpu;
  b->have_base = 1;
  /* Only the first look after a capture that found the thread blocked can see CPU our signal
   * caused; a tiny delta in a later look is the thread's own — counting those as ambiguous
   * too kept a briefly waking thread's CPU out of its samples for good (about half of it,
   * with 400 threads waking every 50 ms for ~10 us). */
  int woken = b->woken;
  b->woken = 0;
  if (d == 0 && !rounds.flushing) {
    st->skipped_cpu++;
    b->idle_streak++;
    /* a due sample waits for it to run: look every round */
    b->next_look = b->defer_since ? rounds.round + 1 : next_look(b->idle_streak);
    return 0;
  }
  b->idle_streak = 0;
  b->next_look = 0;
  if (cfg->hasrun == SAMPLER_HASRUN_AUTO && woken && d <= AMBIGUOUS_NS)
    b->ambiguous += d;
  else
    b->cum += d;
  uint64_t due = (b->cum + b->phase) / cfg->interval_ns - b->units_given;
  b->quiet_until = 0;
  if (due == 0) {
    st->skipped_cpu++; /* ran, but less than an interval's worth so far */
    /* at the rate of CPU since the last read, the rounds before its next sample is due */
    uint64_t rate = d / since, left = (b->units_given + 1) * cfg->interval_ns - b->cum - b->phase;
    if (rate) b->quiet_until = rounds.round + left / rate;
    return 0;
  }
  /* Catch it running. A thread that used less than half the time since the last look, or
   * that its last sample found blocked, may be blocked again. Signalling it then would only
   * show where it waits — and worse, wake it: a thread parked in LockSupport.parkNanos or
   * Object.wait returns early when a signal interrupts its futex (spurious wake-ups are
   * allowed), which shifts the program's timing. So while it is blocked (thread_runs), the
   * due sample waits (its units keep accruing) for a round that finds it running — at most
   * MAX_DEFER_NS, after which it is taken where the thread is, with a [cpu before wait] leaf.
   * Busy threads skip the check — and their sample may come from their CPU-time timer, at
   * the next scheduler tick that finds them running (run.c). */
  int busy = d >= since * (cfg->interval_ns / 2) && !b->last_blocked;
  if (cfg->hasrun == SAMPLER_HASRUN_AUTO && !busy && thread_runs(s, jvm) == 0) {
    if (!b->defer_since) b->defer_since = rounds.round + 1;
    if (defer_open(b->defer_since) && !rounds.flushing) {
      st->deferred++;
      return 0;
    }
  }
  b->defer_since = 0;
  b->busy = busy && !rounds.flushing;
  b->req_units = due;
  b->units_given += due;
  b->req_cpu = b->cum - b->cum_captured;
  b->cum_captured = b->cum;
  b->req_ambiguous = b->ambiguous;
  b->ambiguous = 0;
  *mode = SAMPLE_CAPTURE;
  return 1;
}
