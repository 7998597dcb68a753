/*
 * Unit tests of thread/schedule.c: schedule_decide's answer — whether to ask a thread for a
 * sample this round, in which mode and for how many units — from the evidence it is given.
 * The cases are built by hand (round_fixture.h): a slot, its book, the round state; the
 * thread's CPU clock is a parked thread's, which stands still, so a book whose last look
 * read `d` less finds exactly `d`; the JVM's word on a thread's state is a JavaThread state
 * field in the test's own memory, described by a hand-made HotSpot layout.
 */
#include <criterion/criterion.h>
#include <stddef.h>
#include <string.h>

#include "hotspot.h"
#include "intern.h"
#include "round_fixture.h"
#include "sample.h"

#define IV FIX_INTERVAL_NS
#define MS FIX_MS

/* A slot of the parked thread and its book, the round state set up for cfg. */
static struct thread_slot slot;
static struct thread_book *setup(const struct sampler_config *cfg) {
  fix_setup(cfg);
  fix_slot(&slot, fix_parked(), "worker", 0);
  return fix_book(0, &slot);
}

static struct thread_book *setup_auto(void) {
  struct sampler_config c = fix_config();
  return setup(&c);
}

/* The JVM's word: the slot's JavaThread state, at a place a hand-made layout describes. */
enum { IN_JAVA = 8, BLOCKED = 10, IN_NATIVE = 4 };
struct fake_java_thread {
  int pad[2];
  int state; /* JavaThread::_thread_state */
  char env[16];
};
static struct fake_java_thread java_thread;
static struct hotspot_layout layout;

static void jvm_says(int state) {
  layout.env = offsetof(struct fake_java_thread, env);
  layout.state = offsetof(struct fake_java_thread, state);
  layout.in_java = IN_JAVA;
  layout.blocked = BLOCKED;
  layout.in_vm = 6;
  layout.in_vm_trans = -1;
  java_thread.state = state;
  slot.env = (JNIEnv *)java_thread.env;
  sthread_set_hotspot(&layout);
}

/* ---- the mode ---- */

/* hasrun=regs: every thread is asked every round, the handler's checksum decides; no clock is
 * read. */
Test(schedule, regs_asks_every_thread_and_reads_no_clock) {
  struct sampler_config c = fix_config();
  c.hasrun = SAMPLER_HASRUN_REGS;
  struct thread_book *b = setup(&c);
  int mode = -1;
  cr_expect_eq(schedule_decide(0, &slot, b, &mode), 1);
  cr_expect_eq(mode, SAMPLE_IF_MOVED);
  cr_expect_eq(rounds.st.looks, 0u);
}

/* ---- CPU clock: units ---- */

/* A thread whose clock did not move is not asked; each look that finds it so backs off
 * further: the next look 0, 1, 3, 7 rounds later, capped at max_backoff (50 ms: 5 rounds). */
Test(schedule, no_cpu_no_sample_and_the_idle_back_off_grows) {
  struct thread_book *b = setup_auto();
  cr_assert_eq(rounds.max_backoff, 5u);
  static const uint64_t after[] = {1, 2, 4, 6, 6}; /* next_look - round */
  for (int k = 0; k < 5; k++) {
    fix_cpu_since_look(b, 0);
    b->read_round = rounds.round - 1;
    int mode = -1;
    cr_expect_eq(schedule_decide(0, &slot, b, &mode), 0, "look %d", k);
    cr_expect_eq(b->idle_streak, (uint32_t)k + 1);
    cr_expect_eq(b->next_look - rounds.round, after[k], "look %d: next in %llu rounds", k,
                 (unsigned long long)(b->next_look - rounds.round));
    rounds.round = b->next_look;
  }
  cr_expect_eq(rounds.st.skipped_cpu, 5u);
  cr_expect_eq(rounds.st.looks, 5u);
  /* before its next look: not even its clock is read */
  rounds.round = b->next_look - 1;
  int mode = -1;
  cr_expect_eq(schedule_decide(0, &slot, b, &mode), 0);
  cr_expect_eq(rounds.st.skipped_idle, 1u);
  cr_expect_eq(rounds.st.looks, 5u);
}

/* A busy thread gets one unit per interval of CPU it used, the rest carried to the next look;
 * its CPU since the last capture goes with the request. */
Test(schedule, units_are_the_intervals_of_cpu_used) {
  static const struct {
    uint64_t cpu; /* found at this round's look */
    int asked;
    uint64_t units, req_cpu, given, cum;
  } looks[] = {
      {25 * MS, 1, 2, 25 * MS, 2, 25 * MS}, /* 2 units; the request carries the 25 ms */
      {6 * MS, 1, 1, 6 * MS, 3, 31 * MS},   /* 31 ms in all: a third unit, with the 6 ms */
      {3 * MS, 0, 0, 0, 3, 34 * MS},        /* 34 ms: no unit due yet */
  };
  struct thread_book *b = setup_auto();
  b->read_round = rounds.round - 1;
  for (int k = 0; k < 3; k++, rounds.round++) {
    fix_cpu_since_look(b, looks[k].cpu);
    int mode = -1;
    cr_expect_eq(schedule_decide(0, &slot, b, &mode), looks[k].asked, "look %d", k);
    cr_expect_eq(mode, looks[k].asked ? SAMPLE_CAPTURE : -1, "look %d", k);
    cr_expect_eq(b->req_units, looks[k].units, "look %d", k);
    cr_expect_eq(b->req_cpu, looks[k].req_cpu, "look %d", k);
    cr_expect_eq(b->units_given, looks[k].given, "look %d", k);
    cr_expect_eq(b->cum, looks[k].cum, "look %d", k);
    cr_expect_eq(b->busy, looks[k].asked, "look %d: over half the round's time is busy", k);
    b->req_units = b->req_cpu = 0; /* the request answered */
  }
  cr_expect_eq(rounds.st.looks, 3u);
}

/* The first unit comes when the thread's CPU crosses an interval boundary after its random
 * phase: with phase 9 ms, 2 ms of CPU are due a sample; with phase 0 they are not, and the
 * rounds until one is due at that rate (8 ms left at 2 ms a round: 4) need no clock read. */
Test(schedule, the_phase_decides_the_first_unit) {
  struct sampler_config c = fix_config();
  c.hasrun = SAMPLER_HASRUN_CPU; /* no wait for it to run: the units alone */
  struct thread_book *b = setup(&c);
  b->phase = 9 * MS;
  fix_cpu_since_look(b, 2 * MS);
  b->read_round = rounds.round - 1;
  int mode = -1;
  cr_expect_eq(schedule_decide(0, &slot, b, &mode), 1);
  cr_expect_eq(b->req_units, 1u);

  struct thread_slot other;
  fix_slot(&other, fix_parked(), "other", 0);
  other.gen = 2;
  struct thread_book *o = fix_book(1, &other);
  fix_cpu_since_look(o, 2 * MS);
  o->read_round = rounds.round - 1;
  cr_expect_eq(schedule_decide(1, &other, o, &mode), 0);
  cr_expect_eq(o->units_given, 0u);
  cr_expect_eq(o->quiet_until, rounds.round + 4);
}

/* ---- catching a thread running ---- */

/* A due sample of a thread that used less than half the time and is blocked now waits for a
 * round that finds it running (a signal would only show where it waits, and wake it): not
 * asked, counted as deferred, its units kept for later. hasrun=cpu does not wait. */
Test(schedule, a_due_sample_waits_while_the_thread_is_blocked) {
  struct thread_book *b = setup_auto();
  fix_cpu_since_look(b, 12 * MS);
  b->read_round = rounds.round - 3; /* 12 ms in 3 rounds: under half */
  int mode = -1;
  cr_expect_eq(schedule_decide(0, &slot, b, &mode), 0, "the kernel says it is blocked");
  cr_expect_eq(rounds.st.deferred, 1u);
  cr_expect_eq(b->defer_since, rounds.round + 1);
  cr_expect_eq(b->units_given, 0u, "the unit waits");
  cr_expect_eq(b->cum, 12 * MS);
  cr_expect_eq(b->next_look, 0u, "looked at again next round");

  /* the same evidence with hasrun=cpu: asked now */
  struct sampler_config c = fix_config();
  c.hasrun = SAMPLER_HASRUN_CPU;
  sthread_set_config(&c);
  b = fix_book(1, &slot);
  fix_cpu_since_look(b, 12 * MS);
  b->read_round = rounds.round - 3;
  cr_expect_eq(schedule_decide(1, &slot, b, &mode), 1);
  cr_expect_eq(b->req_units, 1u);
}

/* The waiting sample is taken at the first round that finds the thread running (the JVM says
 * it runs Java code), with all the CPU it stands for. */
Test(schedule, the_waiting_sample_is_taken_when_the_thread_runs) {
  struct thread_book *b = setup_auto();
  jvm_says(IN_NATIVE); /* the JVM cannot tell: the kernel is asked (blocked) */
  fix_cpu_since_look(b, 12 * MS);
  b->read_round = rounds.round - 3;
  int mode = -1;
  cr_assert_eq(schedule_decide(0, &slot, b, &mode), 0);
  cr_assert_eq(rounds.st.deferred, 1u);
  rounds.round++;
  jvm_says(IN_JAVA);
  fix_cpu_since_look(b, 1 * MS);
  cr_expect_eq(schedule_decide(0, &slot, b, &mode), 1);
  cr_expect_eq(mode, SAMPLE_CAPTURE);
  cr_expect_eq(b->req_units, 1u);
  cr_expect_eq(b->req_cpu, 13 * MS);
  cr_expect_eq(b->defer_since, 0u);
  cr_expect_eq(rounds.st.running_jvm, 1u, "the JVM's word answered, not the kernel");
}

/* The wait ends after 500 ms (the sample is then taken where the thread is), and at once as
 * sampling ends (flushing). */
Test(schedule, the_wait_is_bounded_and_ends_with_the_run) {
  struct thread_book *b = setup_auto();
  fix_cpu_since_look(b, 12 * MS);
  b->read_round = rounds.round - 3;
  int mode = -1;
  cr_assert_eq(schedule_decide(0, &slot, b, &mode), 0);
  uint64_t since = b->defer_since;
  rounds.round = since + 48; /* 490 ms of waiting: still waits */
  fix_cpu_since_look(b, 1 * MS);
  b->read_round = rounds.round - 1;
  b->next_look = 0;
  cr_expect_eq(schedule_decide(0, &slot, b, &mode), 0);
  cr_expect_eq(b->defer_since, since);
  rounds.round = since + 49; /* 500 ms */
  fix_cpu_since_look(b, 1 * MS);
  b->read_round = rounds.round - 1;
  b->next_look = 0;
  cr_expect_eq(schedule_decide(0, &slot, b, &mode), 1);
  cr_expect_eq(b->req_units, 1u);
  cr_expect_eq(b->defer_since, 0u);

  /* flushing: the next due sample does not wait at all */
  rounds.round++;
  rounds.flushing = 1;
  fix_cpu_since_look(b, 12 * MS);
  b->read_round = rounds.round - 3;
  cr_expect_eq(schedule_decide(0, &slot, b, &mode), 1);
  cr_expect_eq(b->defer_since, 0u);
  cr_expect_eq(b->busy, 0, "no CPU timer while flushing");
}

/* A Java thread the JVM says waits, idle at its last look, is not read at all (a memory read
 * instead of a clock read) until max_backoff rounds have passed since that read; one the JVM
 * says runs Java code is read. */
Test(schedule, a_java_thread_in_a_vm_wait_is_not_read) {
  struct thread_book *b = setup_auto();
  fix_cpu_since_look(b, 0);
  b->idle_streak = 2;
  b->read_round = rounds.round - 1;
  jvm_says(BLOCKED);
  int mode = -1;
  cr_expect_eq(schedule_decide(0, &slot, b, &mode), 0);
  cr_expect_eq(rounds.st.skipped_waiting, 1u);
  cr_expect_eq(rounds.st.looks, 0u);
  cr_expect_eq(b->next_look, rounds.round + 2, "the back-off of its streak (2: one round)");
  /* max_backoff rounds after the last read: read whatever the JVM says */
  b->next_look = 0;
  b->read_round = rounds.round - rounds.max_backoff;
  cr_expect_eq(schedule_decide(0, &slot, b, &mode), 0);
  cr_expect_eq(rounds.st.looks, 1u);
  cr_expect_eq(b->idle_streak, 3u);
  /* in Java code: read */
  jvm_says(IN_JAVA);
  b->next_look = 0;
  b->read_round = rounds.round - 1;
  cr_expect_eq(schedule_decide(0, &slot, b, &mode), 0);
  cr_expect_eq(rounds.st.looks, 2u);
  cr_expect_eq(rounds.st.skipped_waiting, 1u);
}

/* ---- CPU our own signal caused ---- */

/* Right after a capture that found the thread blocked (our signal woke it), a delta of at most
 * 20 us may be our own doing: it is held apart (the checksum of the next capture decides), not
 * counted; the same delta at any other look is the thread's. */
Test(schedule, a_tiny_delta_after_waking_a_thread_is_held_apart) {
  struct thread_book *b = setup_auto();
  b->woken = 1;
  fix_cpu_since_look(b, 15000);
  b->read_round = rounds.round - 1;
  int mode = -1;
  cr_expect_eq(schedule_decide(0, &slot, b, &mode), 0);
  cr_expect_eq(b->ambiguous, 15000u);
  cr_expect_eq(b->cum, 0u);
  cr_expect_eq(b->woken, 0, "only the first look after the capture");
  rounds.round++;
  fix_cpu_since_look(b, 15000);
  cr_expect_eq(schedule_decide(0, &slot, b, &mode), 0);
  cr_expect_eq(b->cum, 15000u);
  cr_expect_eq(b->ambiguous, 15000u);
}

/* ---- threads that end ---- */

/* A thread whose CPU clock cannot be read any more (not a thread of this process) has ended:
 * it is noted for removal after the round and not asked. */
Test(schedule, a_thread_whose_clock_is_gone_is_noted) {
  struct thread_book *b = setup_auto();
  slot.tid = 1; /* init: never a thread of this process */
  slot.gen = 7;
  b = fix_book(2, &slot);
  int mode = -1;
  cr_expect_eq(schedule_decide(2, &slot, b, &mode), 0);
  cr_expect_eq(rounds.ngone, 1);
  cr_expect_eq(rounds.gone[0].slot, 2);
  cr_expect_eq(rounds.gone[0].gen, 7u);
}

/* ---- wall clock ---- */

/* Wall clock: every round owes every thread a sample. One that ran is asked, for the rounds
 * since its last one (overruns' too), with the JVM's state of it; one that did not run is not
 * signalled: its last stack is given again for those rounds. */
Test(schedule, wall_clock_owes_every_round) {
  struct sampler_config c = fix_config();
  c.wall = 1;
  struct thread_book *b = setup(&c);
  slot.handle = &slot;
  fix_thread_state = SAMPLER_STATE_PARKED;
  b->wall_slot = rounds.slots - 3;
  fix_cpu_since_look(b, 1 * MS);
  int mode = -1;
  cr_assert_eq(schedule_decide(0, &slot, b, &mode), 1);
  cr_expect_eq(mode, SAMPLE_CAPTURE);
  cr_expect_eq(b->req_units, 4u, "this round and the 3 before");
  cr_expect_eq(b->req_state, SAMPLER_STATE_PARKED);
  cr_expect_eq(b->wall_slot, rounds.slots + 1);

  /* it did not run since: its last stack again, for the 2 rounds owed (one an overrun's) */
  uint32_t last[2] = {intern_string("[worker]", 8), intern_string("m1", 2)};
  b->last = last;
  b->nlast = b->cap_last = 2;
  rounds.slots += 2;
  rounds.round++;
  fix_cpu_since_look(b, 0);
  cr_expect_eq(schedule_decide(0, &slot, b, &mode), 0);
  struct fix_stack st;
  cr_assert(fix_find("[worker];m1", &st));
  cr_expect_eq(st.units, 2u);
  cr_expect_eq(st.kind, SAMPLER_EVENT_WALL);
  cr_expect_eq(rounds.st.wall_reused, 2u);
  cr_expect_eq(b->idle_streak, 1u);
  b->last = NULL; /* the test's own array */
  b->nlast = b->cap_last = 0;
}

/* Wall clock: after a capture that found the thread blocked, a delta of up to 20 us is our
 * signal's doing — it has not run; a larger one is a run. */
Test(schedule, wall_clock_a_tiny_delta_after_a_blocked_capture_is_no_run) {
  struct sampler_config c = fix_config();
  c.wall = 1;
  struct thread_book *b = setup(&c);
  static uint32_t last[1];
  last[0] = intern_string("m1", 2);
  b->last = last;
  b->nlast = b->cap_last = 1;
  b->last_blocked = 1;
  fix_cpu_since_look(b, 15000);
  int mode = -1;
  cr_expect_eq(schedule_decide(0, &slot, b, &mode), 0);
  rounds.round++;
  rounds.slots++;
  fix_cpu_since_look(b, 25000);
  b->next_look = 0;
  cr_expect_eq(schedule_decide(0, &slot, b, &mode), 1);
  b->last = NULL;
  b->nlast = b->cap_last = 0;
}
