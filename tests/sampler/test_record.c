/*
 * Unit tests of thread/record.c: what the recorder stores for each outcome of a request —
 * the stack (which frames, read back by their names), its weights (units, CPU), its event
 * kind — and which counter moved. Answers, books and slots are built by hand
 * (round_fixture.h); no thread is signalled.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "alloc.h"
#include "platform.h"
#include "registry.h"
#include "round_fixture.h"
#include "sample.h"
#include "sample_walk.h"
#include "traces.h"

#define IV FIX_INTERVAL_NS
#define MS FIX_MS

static struct thread_slot slot;

/* The round state for cfg (thread roots on unless the case turns them off) and slot 0: thread
 * 4242 "worker". */
static struct thread_book *setup(struct sampler_config *cfg) {
  fix_setup(cfg);
  fix_slot(&slot, 4242, "worker", 0);
  return fix_book(0, &slot);
}

static struct thread_book *setup_roots(void) {
  struct sampler_config c = fix_config();
  c.thread_roots = 1;
  return setup(&c);
}

/* A request of `units` units and `cpu` ns, asked this round. */
static void requested(struct thread_book *b, uint64_t units, uint64_t cpu) {
  b->req_units = units;
  b->req_cpu = cpu;
  b->req_tick = rounds.round;
  b->sent_ns = rounds.round_ns;
}

/* The handler's answer: walked, with the Java frames m<ids[0]> (root) ... m<ids[n-1]> (leaf). */
static struct sample_record *answered(const int *ids, int n) {
  struct sample_record *r = slot.record;
  struct sample_walk *walk = r->walk;
  memset(r, 0, sizeof *r); /* nothing of the last answer */
  memset(&walk->hit, 0, sizeof walk->hit);
  r->walk = walk;
  r->native_stop = NATIVE_STOP_OFF;
  r->walked = 1;
  r->moved = 1;
  r->num_frames = n;
  for (int i = 0; i < n; i++) { /* leaf first */
    r->walk->frames[i].method_id = (jmethodID)(uintptr_t)ids[n - 1 - i];
    r->walk->frames[i].lineno = 5;
  }
  r->start_ns = rounds.round_ns + 1000;
  r->end_ns = rounds.round_ns + 3000;
  return r;
}

/* The handshake word of an answer (sequence 7, DONE); after record_answer, IDLE at 7. */
static uint32_t done(void) {
  uint32_t w = handshake_word(7, SAMPLE_DONE);
  atomic_store(&slot.handshake, w);
  return w;
}

static void expect_idle(void) {
  uint32_t w = atomic_load(&slot.handshake);
  cr_expect_eq(handshake_state(w), SAMPLE_IDLE);
  cr_expect_eq(handshake_seq(w), 7u);
}

/* ---- answers ---- */

/* A walked answer: the thread's root, the Java frames root first, with the request's units
 * and CPU, a CPU sample of the time axis; the stack is kept as the thread's last, the request
 * closed and the handshake given back. */
Test(record, an_answer_becomes_its_stack) {
  struct thread_book *b = setup_roots();
  requested(b, 3, 30 * MS);
  answered((const int[]){1, 2}, 2);
  record_answer(&slot, b, done());
  struct fix_stack st;
  cr_assert(fix_find("[worker tid=4242];m1;m2", &st), "%zu stacks", fix_stacks());
  cr_expect_eq(fix_stacks(), 1u);
  cr_expect_eq(st.samples, 1u);
  cr_expect_eq(st.units, 3u);
  cr_expect_eq(st.cpu_ns, 30 * MS);
  cr_expect_eq(st.kind, SAMPLER_EVENT_CPU);
  cr_expect_eq(rounds.st.samples, 1u);
  cr_expect_eq(rounds.st.units, 3u);
  cr_expect_eq(rounds.st.cpu_ns, 30 * MS);
  cr_expect_eq(rounds.st.asgct[0], 1u, "AsyncGetCallTrace walked it");
  cr_expect_eq(rounds.st.handler_ns, 2000u);
  cr_expect_eq(rounds.st.late, 0u);
  cr_expect_eq(rounds.st.time_lost, 0u);
  cr_expect_eq(b->nlast, 3);
  cr_expect_eq(b->req_units, 0u);
  cr_expect_eq(b->req_cpu, 0u);
  expect_idle();
}

/* With `lines`, a frame carries the line of its bytecode index (the fake JVM: ":bci"); without
 * thread roots the stack starts at the Java root. An answer two rounds late is counted so. */
Test(record, lines_and_no_root) {
  struct sampler_config c = fix_config();
  c.lines = 1;
  struct thread_book *b = setup(&c);
  requested(b, 1, 10 * MS);
  b->req_tick = rounds.round - 2;
  answered((const int[]){4}, 1);
  record_answer(&slot, b, done());
  cr_expect(fix_find("m4:5", NULL));
  cr_expect_eq(rounds.st.late, 1u);
}

/* Registers unchanged (hasrun=regs' "has not run"): nothing stored, counted. */
Test(record, unchanged_registers_store_nothing) {
  struct thread_book *b = setup_roots();
  requested(b, 1, 0);
  slot.record->walked = 0;
  record_answer(&slot, b, done());
  cr_expect_eq(fix_stacks(), 0u);
  cr_expect_eq(rounds.st.skipped_regs, 1u);
  cr_expect_eq(rounds.st.samples, 0u);
  expect_idle();
}

/* A sample the handler had to drop (every fault guard taken): its units and CPU are kept under
 * [sample lost], counted as lost. */
Test(record, a_dropped_sample_is_kept_as_lost) {
  struct thread_book *b = setup_roots();
  requested(b, 2, 20 * MS);
  answered((const int[]){1}, 1)->dropped = 1;
  record_answer(&slot, b, done());
  fix_expect_stack("[worker tid=4242];[sample lost]", 2u, 20 * MS);
  cr_expect_eq(rounds.st.lost_units, 2u);
  cr_expect_eq(rounds.st.lost_cpu_ns, 20 * MS);
  cr_expect_eq(rounds.st.samples, 0u);
  expect_idle();
}

/* A capture that found the thread in a system call: its CPU was used before it blocked —
 * [cpu before wait] as the leaf; the next look knows it was found blocked. */
Test(record, a_capture_in_a_system_call_ends_in_cpu_before_wait) {
  struct thread_book *b = setup_roots();
  requested(b, 1, 10 * MS);
  answered((const int[]){1}, 1)->in_syscall = 1;
  record_answer(&slot, b, done());
  cr_expect(fix_find("[worker tid=4242];m1;[cpu before wait]", NULL));
  cr_expect_eq(rounds.st.blocked, 1u);
  cr_expect_eq(b->last_blocked, 1);
  cr_expect_eq(b->woken, 1);
}

/* A walk AsyncGetCallTrace failed and nothing recovered: the units under the failure's frame,
 * its CPU counted as unwalked; in a stub, the stub's name below it. */
Test(record, a_failed_walk_is_kept_under_its_failure) {
  struct thread_book *b = setup_roots();
  requested(b, 1, 10 * MS);
  answered(NULL, 0)->num_frames = ASGCT_UNKNOWN_JAVA;
  record_answer(&slot, b, done());
  char want[128];
  snprintf(want, sizeof want, "[worker tid=4242];%s", asgct_code_frame(ASGCT_UNKNOWN_JAVA));
  cr_expect(fix_find(want, NULL), "%s", want);
  cr_expect_eq(rounds.st.asgct[-ASGCT_UNKNOWN_JAVA + 1], 1u);
  cr_expect_eq(rounds.st.unwalked_cpu_ns, 10 * MS);

  requested(b, 1, 10 * MS);
  struct sample_record *r = answered(NULL, 0);
  r->num_frames = ASGCT_UNKNOWN_JAVA;
  r->walk->hit.kind = CODEMAP_STUB;
  r->walk->hit.name_id = intern_string("StubRoutines::sin", 17);
  record_answer(&slot, b, done());
  strcat(want, ";StubRoutines::sin");
  cr_expect(fix_find(want, NULL), "%s", want);
  cr_expect_eq(rounds.st.named_stub, 1u);
}

/* In compiled code it could not walk: attributed to the compiled method and the inline chain
 * at the PC (outermost the _[j] owner, the inlined ones _[i]), below [callers not walked]. */
Test(record, compiled_code_not_walked_is_attributed_with_its_inline_chain) {
  struct sampler_config c = fix_config();
  c.ann = 1;
  struct thread_book *b = setup(&c);
  requested(b, 1, 10 * MS);
  struct sample_record *r = answered(NULL, 0);
  r->num_frames = ASGCT_NOT_WALKABLE_JAVA;
  r->walk->hit.kind = CODEMAP_NMETHOD;
  r->walk->hit.method = (jmethodID)(uintptr_t)7;
  r->walk->hit.ninline = 2; /* innermost first */
  r->walk->hit.inl_method[0] = (jmethodID)(uintptr_t)9;
  r->walk->hit.inl_method[1] = (jmethodID)(uintptr_t)7;
  r->walk->hit.inl_bci[0] = r->walk->hit.inl_bci[1] = 3;
  record_answer(&slot, b, done());
  cr_expect(fix_find("[callers not walked];m7_[j];m9_[i]", NULL));
  cr_expect_eq(rounds.st.attributed_code, 1u);
  cr_expect_eq(rounds.st.unwalked_cpu_ns, 0u, "its CPU is in a method");
}

/* The CPU held apart after we woke a thread (schedule.c) is counted when the capture shows
 * the thread moved, and dropped when it is still in its system call with registers unchanged. */
Test(record, held_apart_cpu_counts_only_if_the_thread_moved) {
  struct thread_book *b = setup_roots();
  requested(b, 1, 10 * MS);
  b->req_ambiguous = 15000;
  answered((const int[]){1}, 1);
  record_answer(&slot, b, done());
  cr_expect_eq(rounds.st.ambiguous_kept_ns, 15000u);
  cr_expect_eq(b->cum, 15000u);

  requested(b, 1, 10 * MS);
  b->req_ambiguous = 12000;
  struct sample_record *r = answered((const int[]){1}, 1);
  r->moved = 0;
  r->in_syscall = 1;
  record_answer(&slot, b, done());
  cr_expect_eq(rounds.st.ambiguous_dropped_ns, 12000u);
  cr_expect_eq(b->cum, 15000u);
  cr_expect_eq(b->req_ambiguous, 0u);
}

/* ---- wall clock ---- */

/* Wall clock: the leaf is the thread's state — the JVM's word when it agrees with where the
 * signal found it; read again when it does not (a sleeper between two sleeps); [in system
 * call] for a runnable thread in the kernel. The stacks are wall samples. */
Test(record, wall_clock_the_state_is_the_leaf) {
  struct sampler_config c = fix_config();
  c.wall = 1;
  struct thread_book *b = setup(&c);
  slot.handle = &slot;
  requested(b, 1, 0);
  b->req_state = SAMPLER_STATE_PARKED;
  answered((const int[]){1}, 1)->in_syscall = 1;
  record_answer(&slot, b, done());
  struct fix_stack st;
  cr_assert(fix_find("m1;[parked]", &st));
  cr_expect_eq(st.kind, SAMPLER_EVENT_WALL);

  /* asked as runnable, found in the kernel: the JVM is asked again */
  fix_thread_state = SAMPLER_STATE_SLEEPING;
  requested(b, 1, 0);
  b->req_state = SAMPLER_STATE_RUNNABLE;
  answered((const int[]){2}, 1)->in_syscall = 1;
  record_answer(&slot, b, done());
  cr_expect(fix_find("m2;[sleeping]", NULL));

  /* ... and it still says runnable: in a system call */
  fix_thread_state = SAMPLER_STATE_RUNNABLE;
  requested(b, 1, 0);
  b->req_state = SAMPLER_STATE_RUNNABLE;
  answered((const int[]){3}, 1)->in_syscall = 1;
  record_answer(&slot, b, done());
  cr_expect(fix_find("m3;[in system call]", NULL));

  requested(b, 1, 0);
  b->req_state = SAMPLER_STATE_RUNNABLE;
  answered((const int[]){4}, 1);
  record_answer(&slot, b, done());
  cr_expect(fix_find("m4;[running]", NULL));
  cr_expect_eq(rounds.st.blocked, 3u);
}

/* Wall clock: a thread that has not run since gets its last stack again, with the rounds it is
 * owed and no CPU. */
Test(record, again_gives_the_last_stack) {
  struct sampler_config c = fix_config();
  c.wall = 1;
  c.thread_roots = 1;
  struct thread_book *b = setup(&c);
  requested(b, 1, 2 * MS);
  answered((const int[]){1}, 1);
  record_answer(&slot, b, done());
  record_again(&slot, b, 4);
  struct fix_stack st;
  cr_assert(fix_find("[worker tid=4242];m1;[running]", &st));
  cr_expect_eq(st.samples, 2u);
  cr_expect_eq(st.units, 5u);
  cr_expect_eq(st.cpu_ns, 2 * MS);
  cr_expect_eq(rounds.st.wall_reused, 4u);
  cr_expect_eq(rounds.st.samples, 1u, "a capture is a sample; a stack given again is not");
}

/* ---- threads that end ---- */

/* A thread that ends with CPU not yet sampled: the units its CPU makes due go to the last stack
 * it was caught in, with that CPU. */
Test(record, an_ended_threads_due_units_go_to_its_last_stack) {
  struct thread_book *b = setup_roots();
  requested(b, 3, 30 * MS);
  answered((const int[]){1}, 1);
  record_answer(&slot, b, done());
  b->cum = b->cum_captured = 30 * MS; /* what the looks had counted */
  b->units_given = 3;
  b->credit = 15 * MS; /* measured by its last capture, counted by no look yet */
  record_ended(&slot, b, 0);
  fix_expect_stack("[worker tid=4242];m1", 4u, 45 * MS);
  cr_expect_eq(rounds.st.ended_units, 1u);
  cr_expect_eq(b->units_given, 4u);
  cr_expect_eq(fix_stacks(), 1u);
}

/* A thread that ends before any capture: its CPU under [thread ended before it was sampled],
 * with the units its own phase made due. */
Test(record, a_thread_never_caught_goes_under_ended_before_sampled) {
  struct thread_book *b = setup_roots();
  b->cum = 25 * MS;
  record_ended(&slot, b, 0);
  fix_expect_stack("[worker tid=4242];[thread ended before it was sampled]", 2u, 25 * MS);
  cr_expect_eq(rounds.st.unsampled_threads, 1u);
  cr_expect_eq(rounds.st.unsampled_units, 2u);
}

/* Threads that end before the sampler first looked at them (born in this profile) have no
 * phase: their CPU is pooled and the pool gets a unit each time it crosses an interval — three
 * threads of 4 ms: the third's end stores one unit with all 12 ms. */
Test(record, threads_ended_before_a_look_are_pooled) {
  struct sampler_config c = fix_config();
  struct thread_book *b = setup(&c);
  rounds.unsampled.phase = 0;
  rounds.base_wall = 1;
  for (int k = 0; k < 3; k++) {
    slot.gen = 10 + (uint32_t)k; /* a new owner each: the book is an earlier one's */
    slot.born_ns = 2;
    slot.born_cpu = 40000; /* a new thread's ~40 us: counted from 0 */
    record_ended(&slot, b, 4 * MS);
    cr_expect_eq(fix_stacks(), k == 2 ? 1u : 0u, "after thread %d", k);
  }
  fix_expect_stack("[thread ended before it was sampled]", 1u, 12 * MS);
  cr_expect_eq(rounds.st.unsampled_threads, 3u);
  cr_expect_eq(rounds.st.unsampled_units, 1u);
}

/* A request left to the thread's CPU-time timer whose thread ended first: its units go to the
 * last stack, or under [thread ended before it was sampled] when it has none. */
Test(record, a_timer_request_of_an_ended_thread) {
  struct thread_book *b = setup_roots();
  requested(b, 2, 20 * MS);
  b->via_timer = 1;
  record_timer_ended(&slot, b);
  struct fix_stack st;
  cr_assert(fix_find("[worker tid=4242];[thread ended before it was sampled]", &st));
  cr_expect_eq(st.units, 2u);
  cr_expect_eq(rounds.st.unsampled_units, 2u);
  cr_expect_eq(b->via_timer, 0);
  cr_expect_eq(b->req_units, 0u);
}

/* ---- requests not answered ---- */

/* A request whose sample could not be taken: its units under [sample lost]; one that carried
 * nothing stores nothing. */
Test(record, a_lost_request_is_kept_under_sample_lost) {
  struct thread_book *b = setup_roots();
  requested(b, 2, 20 * MS);
  record_lost(&slot, b);
  fix_expect_stack("[worker tid=4242];[sample lost]", 2u, 20 * MS);
  cr_expect_eq(rounds.st.lost_units, 2u);
  cr_expect_eq(b->req_units, 0u);
  record_lost(&slot, b); /* an empty request stores nothing */
  fix_expect_stack("[worker tid=4242];[sample lost]", 2u, 20 * MS);
  cr_expect_eq(rounds.st.lost_units, 2u);
}

/* A request not sent because the thread blocks the sampling signal: its units under [not
 * sampled: signal blocked]; the CPU held apart waits for a capture. */
Test(record, a_withheld_request_is_kept_under_signal_blocked) {
  struct thread_book *b = setup_roots();
  requested(b, 1, 10 * MS);
  b->req_ambiguous = 5000;
  record_withheld(&slot, b);
  fix_expect_stack("[worker tid=4242];[not sampled: signal blocked]", 1u, 10 * MS);
  cr_expect_eq(rounds.st.sig_withheld, 1u);
  cr_expect_eq(rounds.st.sig_blocked_units, 1u);
  cr_expect_eq(rounds.st.sig_blocked_cpu_ns, 10 * MS);
  cr_expect_eq(b->ambiguous, 5000u);
  cr_expect_eq(b->req_ambiguous, 0u);
}

/* ---- the sampler's own CPU ---- */

/* The sampler thread's CPU is in the profile under its own root, a unit per interval of it as
 * it crosses; less than an interval more waits. */
Test(record, the_sampler_threads_own_cpu) {
  setup_roots();
  rounds.self = 99;
  const char *root = "[sampler tid=99];[sampler thread (this profiler)]";
  record_self(25 * MS);
  fix_expect_stack(root, 2u, 25 * MS);
  record_self(29 * MS); /* no third unit yet */
  fix_expect_stack(root, 2u, 25 * MS);
  record_self(31 * MS);
  fix_expect_stack(root, 3u, 31 * MS);
  cr_expect_eq(rounds.st.units, 3u);
}

/* hasrun=regs weighs captures, not CPU: the sampler's CPU is not put in. */
Test(record, no_own_cpu_with_regs) {
  struct sampler_config c = fix_config();
  c.hasrun = SAMPLER_HASRUN_REGS;
  setup(&c);
  record_self(25 * MS);
  cr_expect_eq(fix_stacks(), 0u);
}

/* ---- a full table ---- */

/* A stack the table cannot take is kept, weights and all, apart (not_kept, its kind's), and
 * counted; a stored one is unaffected. */
Test(record, a_stack_the_table_refuses_is_kept_apart) {
  struct thread_book *b = setup_roots();
  traces_set_limits(1, 64, 64);
  requested(b, 1, 10 * MS);
  answered((const int[]){1}, 1);
  record_answer(&slot, b, done());
  requested(b, 2, 20 * MS);
  answered((const int[]){2}, 1);
  record_answer(&slot, b, done());
  cr_expect_eq(fix_stacks(), 1u);
  cr_expect_eq(rounds.st.store_failed, 1u);
  cr_expect_eq(rounds.not_kept[SAMPLER_EVENT_CPU].samples, 1u);
  cr_expect_eq(rounds.not_kept[SAMPLER_EVENT_CPU].units, 2u);
  cr_expect_eq(rounds.not_kept[SAMPLER_EVENT_CPU].cpu_ns, 20 * MS);
  cr_expect_eq(rounds.st.units, 3u, "both in the profile's totals");
}

/* Allocation and lock records become stacks with the class as a leaf of its own kind — also
 * when one class is both allocated and locked (the sampler thread remembers the leaves it made,
 * by kind and signature), and a class seen again is the same leaf, the same stack. */
Test(record, class_leaves_keep_their_kind) {
  struct sampler_config cfg = fix_config();
  fix_setup(&cfg);
  cr_assert_eq(registry_init(16), 0);
  struct sampler_target me = {.tid = plat_gettid(), .name = "worker"};
  cr_assert_geq(registry_add(&me), 0);
  cr_assert_eq(alloc_set_interval(1024), 0);
  cr_assert_eq(lock_set_threshold(1, 0), 0);
  struct alloc_frame f = {.method = (jmethodID)(uintptr_t)7, .bci = -1};
  const char *obj = "Ljava/lang/Object;", *arr = "[B";
  for (int k = 0; k < 3; k++) {
    cr_assert_eq(alloc_push(obj, strlen(obj), 64, &f, 1, 0), 0);
    cr_assert_eq(lock_push(obj, strlen(obj), 5000, &f, 1, 0), 0);
    cr_assert_eq(alloc_push(arr, strlen(arr), 64, &f, 1, 0), 0);
  }
  traces_lock();
  alloc_drain(); /* the queue's halves: the first drain takes the one written, the next reads it */
  alloc_drain();
  traces_unlock();
  struct fix_stack a, l, b;
  cr_assert(fix_find("m7;java.lang.Object_[a]", &a), "the allocated class's leaf");
  cr_assert(fix_find("m7;java.lang.Object_[l]", &l), "the lock's class's leaf");
  cr_assert(fix_find("m7;byte[]_[a]", &b), "another class's leaf");
  cr_expect_eq(a.samples, 3);
  cr_expect_eq(l.samples, 3);
  cr_expect_eq(b.samples, 3);
  cr_expect_eq(a.kind, SAMPLER_EVENT_ALLOC);
  cr_expect_eq(l.kind, SAMPLER_EVENT_LOCK);
  cr_expect_eq(fix_stacks(), 3u, "three stacks, each once");
}
