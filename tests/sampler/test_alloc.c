/* Unit tests of event=alloc's and event=lock's pieces behind the front door: the two-half queue
 * (tables/evq.c) and the weights and class names of thread/alloc.c. */
#include <criterion/criterion.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "alloc.h"
#include "evq.h"
#include "platform.h"

/* ---- the queue ---- */

struct seen {
  uint32_t v[100000];
  size_t n;
};

static void collect(void *ctx, const void *rec, size_t len) {
  struct seen *s = ctx;
  cr_assert_eq(len, sizeof(uint32_t) * 3);
  uint32_t r[3];
  memcpy(r, rec, sizeof r);
  cr_assert(r[1] == ~r[0] && r[2] == r[0] * 7, "record %u torn", r[0]);
  s->v[s->n++] = r[0];
}

static int push(uint32_t i) {
  struct evq_ticket t;
  uint32_t *p = evq_reserve(sizeof(uint32_t) * 3, &t);
  if (!p) return -1;
  p[0] = i, p[1] = ~i, p[2] = i * 7;
  evq_commit(&t);
  return 0;
}

static void drain_all(struct seen *s) {
  for (int k = 0; k < 4 && evq_pending(); k++) evq_drain(collect, s);
}

/* The queue made and emptied, s with nothing seen. */
static void fresh_queue(struct seen *s) {
  cr_assert_eq(evq_init(), 0);
  drain_all(s);
  s->n = 0;
}

/* Records come out whole and in the order reserved; a full half refuses (the caller counts)
 * and the records before the refusal are all read; after a drain there is room again. */
Test(evq, order_full_and_room_again) {
  static struct seen s;
  fresh_queue(&s);
  uint32_t pushed = 0, refused = 0;
  for (uint32_t i = 0; i < 200000; i++) (push(i) == 0 ? pushed++ : refused++);
  cr_expect_gt(refused, 0u, "a half of %zu bytes took %u records of 20 bytes", EVQ_HALF_BYTES,
               pushed);
  cr_expect_eq(pushed, EVQ_HALF_BYTES / 24, "each record: 8 bytes of length + 16 of data");
  drain_all(&s);
  cr_assert_eq(s.n, pushed);
  for (size_t k = 0; k < s.n; k++) cr_assert_eq(s.v[k], k);
  cr_expect_eq(push(7), 0, "room again");
  s.n = 0;
  drain_all(&s);
  cr_expect_eq(s.n, 1u);
}

/* A writer still inside the half the consumer takes: that half is left for the next drain
 * (no wait, nothing read half-written), and read then. */
Test(evq, a_writer_inside_defers_the_half) {
  static struct seen s;
  fresh_queue(&s);
  cr_assert_eq(push(1), 0);
  struct evq_ticket t;
  uint32_t *p = evq_reserve(sizeof(uint32_t) * 3, &t); /* open */
  cr_assert(p);
  cr_expect_eq(evq_drain(collect, &s), 0u, "the half with a writer inside is not read");
  cr_expect(evq_pending());
  p[0] = 2, p[1] = ~2u, p[2] = 14;
  evq_commit(&t);
  cr_assert_eq(push(3), 0); /* into the other half */
  drain_all(&s);
  cr_assert_eq(s.n, 3u);
  cr_expect(s.v[0] == 1 && s.v[1] == 2 && s.v[2] == 3);
}

static _Atomic int stop_producers;
static void *producer(void *arg) {
  uintptr_t base = (uintptr_t)arg;
  for (uint32_t i = 0; !atomic_load(&stop_producers) && i < 20000; i++) {
    while (push((uint32_t)(base + i)) != 0 && !atomic_load(&stop_producers)) {}
  }
  return NULL;
}

/* Four producers against one consumer: every record arrives once, whole (collect checks), in
 * each producer's order. */
Test(evq, four_producers_one_consumer) {
  static struct seen s;
  fresh_queue(&s);
  pthread_t th[4];
  for (uintptr_t k = 0; k < 4; k++) pthread_create(&th[k], NULL, producer, (void *)(k << 24));
  time_t until = time(NULL) + 20; /* producers spin on a full half until the consumer reads it */
  while (s.n < 80000 && time(NULL) < until) evq_drain(collect, &s);
  atomic_store(&stop_producers, 1);
  for (int k = 0; k < 4; k++) pthread_join(th[k], NULL);
  drain_all(&s);
  cr_assert_eq(s.n, 80000u);
  uint32_t next[4] = {0};
  for (size_t k = 0; k < s.n; k++) {
    uint32_t who = s.v[k] >> 24, i = s.v[k] & 0xffffff;
    cr_assert_eq(i, next[who], "producer %u: %u after %u", who, i, next[who]);
    next[who]++;
  }
}

/* ---- the weights ---- */

/* HotSpot's sampler, simulated: the distance to the next sample exponential of mean I, each
 * allocation reducing it, the one that reaches it sampled and a fresh distance drawn. The
 * weights of the samples must add up to the bytes and allocations of each size — for sizes
 * far below the interval, near it and far above. */
Test(alloc, weights_are_unbiased_for_every_size) {
  const uint64_t I = 4096;
  const uint64_t sizes[] = {16, 1000, 4096, 40000};
  double est_bytes[4] = {0}, est_objects[4] = {0}, bytes[4] = {0}, objects[4] = {0};
  uint64_t x = 88172645463325252ull;
  double until = 0;
  for (int i = 0; i < 16000000; i++) {
    int k = i % 7 == 0 ? 3 : i % 5 == 0 ? 2 : i % 3 == 0 ? 1 : 0; /* a mix of the sizes */
    if (until <= 0) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      until = -log(((double)(x >> 11) + 0.5) * 0x1p-53) * (double)I;
    }
    bytes[k] += (double)sizes[k];
    objects[k] += 1;
    until -= (double)sizes[k];
    if (until <= 0) { /* this allocation reached the sampling point */
      double o, b = alloc_weight(sizes[k], I, &o);
      est_bytes[k] += b;
      est_objects[k] += o;
      until = 0; /* the overflow is dropped: a fresh distance next time */
    }
  }
  for (int k = 0; k < 4; k++) {
    cr_log_info("size %lu: bytes %+.2f%%, objects %+.2f%%", (unsigned long)sizes[k],
                100 * (est_bytes[k] - bytes[k]) / bytes[k],
                100 * (est_objects[k] - objects[k]) / objects[k]);
    cr_expect(fabs(est_bytes[k] - bytes[k]) < 0.02 * bytes[k], "size %lu: %.0f bytes for %.0f",
              (unsigned long)sizes[k], est_bytes[k], bytes[k]);
    cr_expect(fabs(est_objects[k] - objects[k]) < 0.02 * objects[k],
              "size %lu: %.0f allocations for %.0f", (unsigned long)sizes[k], est_objects[k],
              objects[k]);
  }
  double o;
  cr_expect_eq(alloc_weight(100, 0, &o), 100.0, "interval 0: every allocation, as it is");
  cr_expect_eq(o, 1.0);
}

/* event=lock: waits under the threshold T are taken with probability d/T (lock_take) and
 * weighed T (lock_weight); at or past T all, at their length. For waits from 1/20 of T to 3 T
 * the estimated ns and waits add up to the truth of each length. */
Test(lock, threshold_sampling_is_unbiased_for_every_length) {
  const uint64_t T = 10000;
  const uint64_t d[] = {500, 3000, 9000, 10000, 30000};
  double est_ns[5] = {0}, est_waits[5] = {0}, taken[5] = {0};
  const int n = 2000000;
  cr_assert_eq(lock_set_threshold(1, T), 0);
  for (int i = 0; i < n; i++) {
    int k = i % 5;
    if (!lock_take(d[k])) continue;
    double w, ns = lock_weight(d[k], T, &w);
    est_ns[k] += ns, est_waits[k] += w, taken[k]++;
  }
  for (int k = 0; k < 5; k++) {
    double truth = (double)d[k] * (n / 5), p = d[k] >= T ? 1 : (double)d[k] / (double)T;
    cr_log_info("wait %lu ns: %.0f of %d taken, ns %+.2f%%, waits %+.2f%%", (unsigned long)d[k],
                taken[k], n / 5, 100 * (est_ns[k] - truth) / truth,
                100 * (est_waits[k] - n / 5) / (n / 5));
    cr_expect(fabs(taken[k] - p * (n / 5)) < 0.02 * p * (n / 5) + 5, "wait %lu: taken %.0f",
              (unsigned long)d[k], taken[k]);
    cr_expect(fabs(est_ns[k] - truth) < 0.02 * truth, "wait %lu: %.0f ns for %.0f",
              (unsigned long)d[k], est_ns[k], truth);
    cr_expect(fabs(est_waits[k] - n / 5) < 0.02 * (n / 5), "wait %lu: %.0f waits for %d",
              (unsigned long)d[k], est_waits[k], n / 5);
  }
  cr_assert_eq(lock_set_threshold(0, 0), 0);
  cr_expect_eq(lock_take(1000000), 0, "no lock run: nothing taken");
  cr_assert_eq(lock_set_threshold(1, 0), 0);
  cr_expect_eq(lock_take(1), 1, "threshold 0: every wait");
  lock_set_threshold(0, 0);
}

/* ---- class names ---- */

Test(alloc, class_names_in_java_form) {
  static const struct {
    const char *sig, *name;
  } cases[] = {
      {"[B", "byte[]"},
      {"[[I", "int[][]"},
      {"[Z", "boolean[]"},
      {"Ljava/lang/String;", "java.lang.String"},
      {"[Ljava/lang/Object;", "java.lang.Object[]"},
      {"[[Ljava/util/Map$Entry;", "java.util.Map$Entry[][]"},
      {"LScenarios$AllocTruthItem;", "Scenarios$AllocTruthItem"},
      {"?", "?"},
      {"Lweird;name;", "weird:name"}, /* ';' would split a folded frame */
  };
  char out[64];
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    size_t l = alloc_class_name(cases[i].sig, strlen(cases[i].sig), out, sizeof out);
    cr_expect_str_eq(out, cases[i].name, "%s", cases[i].sig);
    cr_expect_eq(l, strlen(cases[i].name), "%s: length", cases[i].sig);
  }
  char small[8];
  alloc_class_name("Ljava/lang/String;", 18, small, sizeof small);
  cr_expect_str_eq(small, "java.la", "cut to fit");
}

/* Burns about ms of this thread's CPU. */
static void burn_cpu_ms(uint64_t ms) {
  uint64_t end = plat_self_cpu_ns() + ms * 1000000u;
  volatile uint64_t x = 0;
  while (plat_self_cpu_ns() < end) x++;
}

/* The callbacks' cost is their CPU, not their wall time: a callback that waits (preempted, or
 * held at a safepoint inside JVMTI) counts nothing for the wait; one that computes counts what
 * it computed, estimated from one callback in ALLOC_COST_EVERY. */
Test(alloc, the_cost_is_the_callbacks_cpu_not_their_wall_time) {
  cr_assert_eq(alloc_set_interval(512 * 1024), 0);
  cr_assert_eq(lock_set_threshold(1, 1000000), 0);
  uint64_t a, l;
  alloc_take_costs(&a, &l);
  const struct timespec wait = {0, 20 * 1000000}; /* 20 ms asleep in every callback */
  for (int i = 0; i < ALLOC_COST_EVERY; i++) {
    uint64_t cost = alloc_cost_begin(0);
    nanosleep(&wait, NULL);
    alloc_push("[B", 2, 100, NULL, 0, cost); /* an unregistered thread: lost, still costed */
    cost = alloc_cost_begin(1);
    nanosleep(&wait, NULL);
    lock_push("", 0, 2000000, NULL, 0, cost);
  }
  alloc_take_costs(&a, &l);
  cr_log_info("asleep: alloc %lu ns, lock %lu ns", (unsigned long)a, (unsigned long)l);
  /* their wall time would be 32 x 20 = 640 ms; their CPU is microseconds, but it is estimated
   * from 1 of the 32 scaled by ALLOC_COST_EVERY (32), and on a busy VM one callback's clock once
   * read 1.35 ms (43 ms, scaled): a quarter of the wall time (160 ms) tells the two apart with
   * room for a read of 5 ms */
  cr_expect_lt(a, 160000000u, "32 callbacks asleep 20 ms each counted %lu ns", (unsigned long)a);
  cr_expect_lt(l, 160000000u, "32 waits' callbacks asleep 20 ms each counted %lu ns",
               (unsigned long)l);
  for (int i = 0; i < ALLOC_COST_EVERY; i++) {
    uint64_t cost = alloc_cost_begin(0);
    burn_cpu_ms(4);
    alloc_push("[B", 2, 100, NULL, 0, cost);
  }
  alloc_take_costs(&a, &l);
  cr_log_info("computing: alloc %lu ns", (unsigned long)a);
  /* 32 callbacks of 4 ms of CPU: one of them read, counted 32 times (128 ms). With 1 ms a
   * callback the read one once counted 1.98 ms here (63.2 ms in all, on a VM busy with other
   * tests): 4 ms a callback leaves room for that, and a count scaled twice (256 ms) still
   * fails */
  cr_expect_geq(a, 112000000u, "32 callbacks of 4 ms CPU counted %lu ns", (unsigned long)a);
  cr_expect_leq(a, 192000000u, "32 callbacks of 4 ms CPU counted %lu ns", (unsigned long)a);
  alloc_set_interval(0);
  lock_set_threshold(0, 0);
}
