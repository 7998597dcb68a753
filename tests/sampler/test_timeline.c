/* Unit tests of the time axis: cells, merging within a cell, coarsening at the memory limit
 * without losing a capture, the threads. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "timeline.h"

#define MS 1000000ull

/* The entries unpacked (timeline_read), in a buffer that lives until the next call. */
static const struct timeline_entry *timeline_entries(size_t *n) {
  static struct timeline_entry *buf;
  struct timeline_info info;
  timeline_get_info(&info);
  free(buf);
  buf = malloc((info.entries + 1) * sizeof *buf);
  cr_assert_not_null(buf);
  timeline_read(buf);
  *n = info.entries;
  return buf;
}

static uint64_t sum_units(void) {
  size_t n;
  const struct timeline_entry *e = timeline_entries(&n);
  uint64_t u = 0;
  for (size_t i = 0; i < n; i++) u += e[i].units;
  return u;
}

Test(timeline, one_entry_per_stack_and_thread_a_cell) {
  timeline_set_limit(TIMELINE_MAX_BYTES);
  cr_assert_eq(timeline_clear(1000 * MS, 5), 0);
  /* cell 0: stack 1 thrice, stack 2 once; cell 1: stack 1; cell 3: stack 1 of another thread */
  cr_assert_eq(timeline_add(1000 * MS, 1, 0, 1, 10), 0);
  cr_assert_eq(timeline_add(1005 * MS, 2, 0, 2, 20), 0);
  cr_assert_eq(timeline_add(1010 * MS, 1, 0, 1, 10), 0);
  cr_assert_eq(timeline_add(1019 * MS, 1, 0, 3, 30), 0);
  cr_assert_eq(timeline_add(1020 * MS, 1, 0, 1, 10), 0);
  cr_assert_eq(timeline_add(1060 * MS, 1, 1, 1, 10), 0);
  size_t n;
  const struct timeline_entry *e = timeline_entries(&n);
  cr_assert_eq(n, 4);
  cr_expect(e[0].cell == 0 && e[0].stack == 1 && e[0].samples == 3 && e[0].units == 5 &&
            e[0].cpu_ns == 50);
  cr_expect(e[1].cell == 0 && e[1].stack == 2 && e[1].units == 2);
  cr_expect(e[2].cell == 1 && e[2].stack == 1 && e[2].units == 1);
  cr_expect(e[3].cell == 3 && e[3].thread == 1);
  struct timeline_info info;
  timeline_get_info(&info);
  cr_expect_eq(info.cell_ns, 20 * MS);
  cr_expect_eq(info.start_wall_ns, 5);
  cr_expect_eq(info.coarsenings, 0);
}

/* A capture timed before the last one (or before the start) counts in the latest cell: the
 * entries stay in time order. */
Test(timeline, time_order_is_kept) {
  timeline_set_limit(TIMELINE_MAX_BYTES);
  timeline_clear(1000 * MS, 0);
  timeline_add(500 * MS, 7, 0, 1, 0);
  timeline_add(1100 * MS, 7, 0, 1, 0);
  timeline_add(1050 * MS, 8, 0, 1, 0);
  size_t n;
  const struct timeline_entry *e = timeline_entries(&n);
  cr_assert_eq(n, 3);
  cr_expect(e[0].cell == 0 && e[1].cell == 5 && e[2].cell == 5);
}

/* At the limit the cells coarsen and merge; every capture's weight is still there, and the
 * entries stay within the limit while there is a coarser step. */
Test(timeline, coarsens_at_the_limit_and_drops_nothing) {
  size_t limit = 2048 * TIMELINE_SLOT_BYTES;
  timeline_set_limit(limit);
  timeline_clear(0, 0);
  uint64_t units = 0;
  /* 4 threads x 3 stacks each 5 ms for 100 s: 240,000 captures, ~60,000 entries at 20 ms */
  for (uint64_t t = 0; t < 100000 * MS; t += 5 * MS)
    for (uint32_t th = 0; th < 4; th++) {
      cr_assert_eq(timeline_add(t, (uint32_t)(t / (5 * MS)) % 3, th, 2, 7), 0);
      units += 2;
    }
  struct timeline_info info;
  timeline_get_info(&info);
  cr_expect_gt(info.coarsenings, 0);
  cr_expect_gt(info.cell_ns, 20 * MS);
  cr_expect_leq(info.slot_bytes, limit);
  cr_expect_eq(sum_units(), units, "no weight lost: %llu of %llu", (unsigned long long)sum_units(),
               (unsigned long long)units);
  size_t n;
  const struct timeline_entry *e = timeline_entries(&n);
  for (size_t i = 1; i < n; i++) {
    cr_assert_leq(e[i - 1].cell, e[i].cell, "time order at %zu", i);
    if (e[i - 1].cell == e[i].cell)
      cr_assert(e[i - 1].stack != e[i].stack || e[i - 1].thread != e[i].thread,
                "a stack and thread twice in cell %u", e[i].cell);
  }
  /* the last cell reaches the end of the run at the resolution reached */
  cr_expect_eq(e[n - 1].cell, (uint32_t)((100000 * MS - 5 * MS) / info.cell_ns));
}

/* Past the coarsest step nothing is dropped either: the entries grow past the limit. */
Test(timeline, past_the_coarsest_step_it_grows) {
  timeline_set_limit(64 * TIMELINE_SLOT_BYTES);
  timeline_clear(0, 0);
  for (uint32_t s = 0; s < 1000; s++) cr_assert_eq(timeline_add(0, s, 0, 1, 1), 0);
  struct timeline_info info;
  timeline_get_info(&info);
  cr_expect_eq(info.entries, 1000);
  cr_expect_eq(info.cell_ns, 3600000 * MS);
  cr_expect_eq(sum_units(), 1000);
}

/* 16 bytes an entry and one slot a cell: two threads of one stack each, a capture each 1 ms for
 * 10 s, take 500 cells x (1 start + 2 entries) x 16 bytes — 1.2 bytes a capture. */
Test(timeline, packed) {
  timeline_set_limit(TIMELINE_MAX_BYTES);
  timeline_clear(0, 0);
  for (uint64_t t = 0; t < 10000 * MS; t += MS)
    for (uint32_t th = 0; th < 2; th++) cr_assert_eq(timeline_add(t, 5 + th, th, 1, MS), 0);
  struct timeline_info info;
  timeline_get_info(&info);
  cr_expect_eq(info.entries, 1000);
  cr_expect_eq(info.slot_bytes, 500 * 3 * 16);
  size_t n;
  const struct timeline_entry *e = timeline_entries(&n);
  cr_expect(e[999].cell == 499 && e[999].stack == 6 && e[999].thread == 1 && e[999].samples == 20 &&
            e[999].units == 20 && e[999].cpu_ns == 20 * MS);
}

/* Weights past what a packed entry holds go on in another entry of the same stack and thread:
 * nothing wraps. */
Test(timeline, weights_past_an_entry) {
  timeline_set_limit(TIMELINE_MAX_BYTES);
  timeline_clear(0, 0);
  for (int i = 0; i < 70000; i++) cr_assert_eq(timeline_add(0, 1, 0, 1, 1), 0);
  cr_assert_eq(timeline_add(MS, 2, 0, 10000000000ull, 5000000000ull), 0);
  cr_assert_eq(timeline_add(MS, TIMELINE_NO_STACK, 3, 1, 1), 0);
  size_t n;
  const struct timeline_entry *e = timeline_entries(&n);
  uint64_t samples[3] = {0}, units[3] = {0}, cpu[3] = {0};
  for (size_t i = 0; i < n; i++) {
    cr_assert_eq(e[i].cell, 0);
    int k = e[i].stack == TIMELINE_NO_STACK ? 0 : (int)e[i].stack;
    samples[k] += e[i].samples;
    units[k] += e[i].units;
    cpu[k] += e[i].cpu_ns;
  }
  cr_expect(samples[1] == 70000 && units[1] == 70000 && cpu[1] == 70000);
  cr_expect(samples[2] == 1 && units[2] == 10000000000ull && cpu[2] == 5000000000ull);
  cr_expect(samples[0] == 1 && units[0] == 1, "the stack the table did not keep");
  cr_expect_eq(n, 2 + 3 + 1, "70,000 captures in 2 entries, 10^10 units in 3");
  cr_expect_eq(timeline_add(0, TIMELINE_MAX_STACK + 1, 0, 1, 1), -EINVAL);
  cr_expect_eq(timeline_add(0, 1, TIMELINE_MAX_THREADS, 1, 1), -EINVAL);
}

Test(timeline, threads_by_tid_and_name) {
  timeline_clear(0, 0);
  int64_t a = timeline_thread(10, 0, "main", 64);
  int64_t b = timeline_thread(11, 0, "worker-1", 64);
  cr_assert(a >= 0 && b >= 0 && a != b);
  cr_expect_eq(timeline_thread(10, 0, "main", 64), a);
  cr_expect_eq(timeline_thread(10, 0, "mainX", 4), a, "the name is taken to len bytes");
  int64_t c = timeline_thread(10, 0, "renamed", 64);
  cr_expect_neq(c, a, "a renamed thread, or a reused tid, is another thread");
  int64_t j = timeline_thread(12, 0, "late", 64);
  cr_expect_eq(timeline_thread(12, 77, "late", 64), j);
  cr_expect_eq(timeline_threads(&(size_t){0})[j].java_id, 77, "a Java id learnt later is kept");
  cr_expect_eq(timeline_thread(12, 0, "late", 64), j);
  cr_expect_eq(timeline_threads(&(size_t){0})[j].java_id, 77, "and not forgotten");
  for (int i = 0; i < 500; i++) cr_assert_geq(timeline_thread(1000 + i, 0, "pool", 64), 0);
  cr_expect_eq(timeline_thread(11, 0, "worker-1", 64), b, "found again after the index grew");
  size_t n;
  const struct timeline_thread *t = timeline_threads(&n);
  cr_expect_eq(n, 504);
  cr_expect(t[b].tid == 11 && !strcmp(t[b].name, "worker-1"));
  timeline_clear(0, 0);
  timeline_threads(&n);
  cr_expect_eq(n, 0, "clear forgets the threads");
}
