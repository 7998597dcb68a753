/* Unit tests of trace storage: the key cache, stack aggregation, their limits, clearing and
 * memory. The interner's are in test_intern.c, the histograms' in test_hist.c. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "traces.h"

static struct traces_key key(uint64_t what, uint64_t how) {
  struct traces_key k = {what, how};
  return k;
}

Test(traces, key_cache) {
  cr_assert_eq(traces_init(), 0);
  cr_expect_eq(traces_key_get(key(42, 0)), TRACES_NO_ID);
  for (uint64_t k = 1; k < 50000; k++)
    cr_assert_eq(traces_key_put(key(k * 4096, 0), (uint32_t)k), 0);
  for (uint64_t k = 1; k < 50000; k++) cr_assert_eq(traces_key_get(key(k * 4096, 0)), (uint32_t)k);
  traces_key_put(key(4096, 0), 7);
  cr_expect_eq(traces_key_get(key(4096, 0)), 7u);
}

/* jmethodIDs that are small counters (JDK 26) rather than aligned pointers: method 4 running
 * JIT-compiled and method 5 interpreted, at any bytecode index, are distinct keys (the kind and
 * line were packed into a pointer's low bits before, where 4|1 == 5|0). */
Test(traces, keys_assume_nothing_of_the_method_ids_bits) {
  cr_assert_eq(traces_init(), 0);
  for (uint64_t m = 1; m <= 64; m++)
    for (uint64_t kind = 0; kind < 4; kind++)
      for (uint64_t bci = 0; bci < 3; bci++)
        cr_assert_eq(
            traces_key_put(key(m, kind << 32 | bci), (uint32_t)(m * 100 + kind * 10 + bci)), 0);
  for (uint64_t m = 1; m <= 64; m++)
    for (uint64_t kind = 0; kind < 4; kind++)
      for (uint64_t bci = 0; bci < 3; bci++)
        cr_assert_eq(traces_key_get(key(m, kind << 32 | bci)),
                     (uint32_t)(m * 100 + kind * 10 + bci), "method %lu kind %lu bci %lu",
                     (unsigned long)m, (unsigned long)kind, (unsigned long)bci);
}

struct seen {
  int n;
  uint64_t samples[8], units[8], cpu[8];
  int len[8];
};

static void collect(void *ctx, const struct trace_view *t) {
  struct seen *s = ctx;
  s->samples[s->n] = t->samples;
  s->units[s->n] = t->units;
  s->cpu[s->n] = t->cpu_ns;
  s->len[s->n] = t->n;
  s->n++;
}

Test(traces, stacks_aggregate_by_exact_frames) {
  cr_assert_eq(traces_init(), 0);
  uint32_t s1[] = {1, 2, 3}, s2[] = {1, 2}, s3[] = {1, 2, 3};
  cr_assert_eq(traces_add(s1, 3, 2, 100, NULL), 0);
  cr_assert_eq(traces_add(s2, 2, 1, 10, NULL), 0);
  cr_assert_eq(traces_add(s3, 3, 5, 1000, NULL), 0);
  struct seen s = {0};
  traces_foreach(collect, &s);
  cr_assert_eq(s.n, 2);
  cr_expect_eq(s.len[0], 3);
  cr_expect_eq(s.samples[0], 2u);
  cr_expect_eq(s.units[0], 7u);
  cr_expect_eq(s.cpu[0], 1100u);
  cr_expect_eq(s.units[1], 1u);
  cr_expect_eq(traces_count(), 2u);
}

Test(traces, the_stack_table_stops_at_its_limits_and_the_key_cache_starts_again_counted) {
  cr_assert_eq(traces_init(), 0);
  traces_lock();
  traces_set_limits(2, 1000, 1);
  uint32_t a[] = {1, 2}, b[] = {1, 3}, c[] = {1, 4};
  cr_expect_eq(traces_add(a, 2, 1, 10, NULL), 0);
  cr_expect_eq(traces_add(b, 2, 1, 10, NULL), 0);
  cr_expect_eq(traces_add(c, 2, 1, 10, NULL), -ENOSPC, "a third distinct stack is refused");
  cr_expect_eq(traces_add(a, 2, 5, 50, NULL), 0, "a stack already kept still takes captures");
  cr_expect_eq(traces_count(), 2);
  cr_expect_eq(traces_key_put((struct traces_key){1, 1}, 7), 0);
  cr_expect_eq(traces_key_put((struct traces_key){2, 1}, 8), 0, "a full key cache starts again");
  cr_expect_eq(traces_key_get((struct traces_key){2, 1}), 8u, "with the new key");
  cr_expect_eq(traces_key_get((struct traces_key){1, 1}), TRACES_NO_ID, "and without the old ones");
  cr_expect_eq(traces_keys(), 1u, "its size stays at the limit");
  traces_set_limits(100, 5, 100); /* frames: 4 stored, one more stack of 2 would pass 5 */
  cr_expect_eq(traces_add(c, 2, 1, 10, NULL), -ENOSPC, "the frame pool is full");
  struct traces_refusals r;
  traces_refused(&r);
  cr_expect_eq(r.stacks, 2u);
  cr_expect_eq(r.keys, 1u);
  traces_unlock();
}

/* A profile cut (loop=, dump) empties the stack table in place: the same stacks come back as
 * new entries with fresh counts, and many cuts in a row lose nothing. */
Test(traces, clearing_empties_the_table_in_place_and_it_works_again) {
  cr_assert_eq(traces_init(), 0);
  traces_lock();
  for (int round = 0; round < 50; round++) {
    for (uint32_t i = 0; i < 3000; i++) {
      uint32_t st[] = {1, i + 2, (uint32_t)round + 7};
      cr_assert_eq(traces_add(st, 3, 1, 10, NULL), 0);
      cr_assert_eq(traces_add(st, 3, 2, 20, NULL), 0);
    }
    cr_assert_eq(traces_count(), 3000u, "round %d", round);
    traces_clear();
    cr_assert_eq(traces_count(), 0u);
  }
  uint32_t st[] = {1, 2, 3};
  cr_assert_eq(traces_add(st, 3, 4, 40, NULL), 0);
  struct seen s = {0};
  traces_foreach(collect, &s);
  cr_expect_eq(s.n, 1);
  cr_expect_eq(s.units[0], 4u, "counts start from zero after a clear");
  traces_unlock();
}

/* The report's tables_kb: what the tables hold grows with what they keep (at least the frames
 * and the names' text), and a clear gives back nothing the next profile would regrow. */
Test(traces, their_memory_is_counted) {
  cr_assert_eq(traces_init(), 0);
  traces_lock();
  size_t before = traces_bytes(), names_before = intern_bytes();
  uint32_t st[64];
  for (uint32_t i = 0; i < 20000; i++) {
    for (int k = 0; k < 64; k++) st[k] = i * 64 + (uint32_t)k;
    cr_assert_eq(traces_add(st, 64, 1, 1, NULL), 0);
  }
  size_t held = traces_bytes();
  cr_expect_geq(held - before, 20000u * 64u * sizeof(uint32_t), "the frames alone: %zu bytes",
                held - before);
  cr_expect_leq(held - before, 4u * 20000u * 64u * sizeof(uint32_t) + (4u << 20),
                "no more than the arrays' doubling and the indexes: %zu bytes", held - before);
  char name[64];
  for (int i = 0; i < 5000; i++) {
    int n = snprintf(name, sizeof name, "a/rather/long/package/Name%d.methodName", i);
    intern_string(name, (size_t)n);
  }
  cr_expect_geq(intern_bytes() - names_before, 5000u * 38u, "the names' text");
  traces_clear();
  cr_expect_leq(traces_bytes(), held, "a clear frees or keeps, never adds");
  traces_unlock();
}

/* The sweep keeps the keys it is told to (here every 10th method's, and every native pc's),
 * finds them all again, forgets the others, and gives their memory back. */
static int keep_tenth(void *ctx, struct traces_key k) {
  (*(int *)ctx)++;
  return (k.how >> 63) || k.what % 10 == 0;
}

Test(traces, the_key_sweep_keeps_what_it_is_told_and_frees_the_rest) {
  cr_assert_eq(traces_init(), 0);
  traces_lock();
  for (uint64_t k = 1; k <= 100000; k++)
    cr_assert_eq(traces_key_put(key(k, k % 7 == 0 ? 1ull << 63 : 3), (uint32_t)k), 0);
  size_t held = traces_bytes();
  int asked = 0;
  size_t dropped = traces_key_sweep(keep_tenth, &asked);
  cr_expect_eq(asked, 100000, "every key asked about once: %d", asked);
  size_t kept = 0;
  for (uint64_t k = 1; k <= 100000; k++) {
    int native = k % 7 == 0, stays = native || k % 10 == 0;
    uint32_t id = traces_key_get(key(k, native ? 1ull << 63 : 3));
    cr_assert_eq(id, stays ? (uint32_t)k : TRACES_NO_ID, "key %lu: id %u", (unsigned long)k, id);
    kept += stays;
  }
  cr_expect_eq(dropped, 100000 - kept, "dropped %zu of 100000, %zu kept", dropped, kept);
  cr_expect_eq(traces_keys(), kept);
  cr_expect_leq(traces_bytes(), held / 2, "memory given back: %zu -> %zu bytes", held,
                traces_bytes());
  for (uint64_t k = 200001; k <= 250000; k++) /* and it grows again */
    cr_assert_eq(traces_key_put(key(k, 3), (uint32_t)k), 0);
  for (uint64_t k = 200001; k <= 250000; k++) cr_assert_eq(traces_key_get(key(k, 3)), (uint32_t)k);
  cr_expect_eq(traces_key_get(key(30, 3)), 30u);
  traces_unlock();
}
