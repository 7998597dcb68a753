/*
 * round_fixture.h — what the unit tests of the sampler thread's schedule and recorder
 * (test_schedule.c, test_record.c) build their cases from: the round state set up without a
 * run (the trace table, the recorder's own frames, a configuration), slots and books made by
 * hand, a thread whose CPU clock stands still, and the stacks the recorder stored, looked up by
 * their folded names. Criterion runs each test in a process of its own: the state starts
 * fresh in every test.
 */
#ifndef TESTS_ROUND_FIXTURE_H
#define TESTS_ROUND_FIXTURE_H

#include <stdint.h>
#include <sys/types.h>

#include "registry.h"
#include "round.h"

#define FIX_INTERVAL_NS 10000000ull /* 10 ms: the cases' interval */
#define FIX_MS 1000000ull

/* A configuration of interval FIX_INTERVAL_NS, depth 16, hasrun=auto, nothing else on. */
struct sampler_config fix_config(void);

/* Sets the round state up for cfg as sthread_init does for a run, without starting one: the
 * trace table, the recorder's frames, books for 4 slots, round 100, the time axis begun. The
 * JVM's callbacks: method m is named "m<m>" (":<bci>" with `lines`), every method is alive,
 * a thread's state is fix_thread_state. Asserts success. */
void fix_setup(const struct sampler_config *cfg);

/* What the JVM says of every thread's state (wall clock): SAMPLER_STATE_UNKNOWN at first. */
extern int fix_thread_state;

/* A live slot of generation 1 for thread tid named `name`, its record and walk buffers the
 * fixture's own (zeroed; frames for 16), env a non-NULL dummy unless no_env. */
void fix_slot(struct thread_slot *s, pid_t tid, const char *name, int no_env);

/* Slot i's book, reset for s (round_book) with phase 0. */
struct thread_book *fix_book(int i, const struct thread_slot *s);

/* A thread of this process blocked in read() for the whole test, after FIX_PARKED_CPU_NS of
 * CPU: its CPU clock stands still (fix_parked_cpu) and the kernel says it is blocked. Started
 * once; returns its tid. */
#define FIX_PARKED_CPU_NS (30 * FIX_MS)
pid_t fix_parked(void);
uint64_t fix_parked_cpu(void);

/* Sets b up as if its last look had read `ago_ns` less than the parked thread's clock says
 * now: the next look finds exactly that much CPU. */
void fix_cpu_since_look(struct thread_book *b, uint64_t ago_ns);

/* The stored stack whose frames, joined by ';' root first, are `folded`: fills *out and
 * returns 1, or returns 0 when there is none (of any kind). */
struct fix_stack {
  uint64_t samples, units, cpu_ns;
  int kind;
};
int fix_find(const char *folded, struct fix_stack *out);

/* Asserts that the stack `folded` is stored with these weights. */
void fix_expect_stack(const char *folded, uint64_t units, uint64_t cpu_ns);

/* Number of stored stacks. */
size_t fix_stacks(void);

#endif
