/* Unit tests of the JFR writer's encoding pieces: LEB128, strings, constant-pool ids, the
 * chunk header. test_jfr_read.py checks a whole recording with the JDK's own reader. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jfr.h"

/* JFR's reader (RecordingInput.readLong): 7 bits a byte, the ninth byte whole. */
static uint64_t decode(const uint8_t *p, size_t *n) {
  uint64_t v = 0;
  for (size_t i = 0; i < 8; i++) {
    v |= (uint64_t)(p[i] & 0x7f) << (7 * i);
    if (!(p[i] & 0x80)) return *n = i + 1, v;
  }
  return *n = 9, v | (uint64_t)p[8] << 56;
}

Test(jfr, varint) {
  static const struct {
    uint64_t v;
    size_t len;
    uint8_t bytes[9];
  } cases[] = {
      {0, 1, {0}},
      {1, 1, {1}},
      {127, 1, {0x7f}},
      {128, 2, {0x80, 0x01}},
      {300, 2, {0xac, 0x02}},
      {16383, 2, {0xff, 0x7f}},
      {16384, 3, {0x80, 0x80, 0x01}},
      {(1ull << 56) - 1, 8, {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f}},
      {1ull << 56, 9, {0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01}},
      {UINT64_MAX, 9, {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    uint8_t out[9];
    size_t n = jfr_varint(cases[i].v, out), m;
    cr_assert_eq(n, cases[i].len, "%llu: %zu bytes", (unsigned long long)cases[i].v, n);
    cr_expect_arr_eq(out, cases[i].bytes, n, "%llu", (unsigned long long)cases[i].v);
    cr_expect_eq(decode(out, &m), cases[i].v);
    cr_expect_eq(m, n);
  }
  /* -1 as a long: nine bytes, and back */
  uint8_t out[9];
  size_t m;
  cr_expect_eq(jfr_varint((uint64_t)-1, out), 9);
  cr_expect_eq((int64_t)decode(out, &m), -1);
}

Test(jfr, utf8) {
  static const struct {
    const char *in, *want;
    size_t want_len;
  } cases[] = {
      {"java/lang/String", "java/lang/String", 16},
      {"caf\xc3\xa9", "caf\xc3\xa9", 5},                       /* é stays */
      {"\xe2\x82\xac", "\xe2\x82\xac", 3},                     /* € stays */
      {"a\xf0\x9f\x98\x80z", "a\xf0\x9f\x98\x80z", 6},         /* UTF-8 U+1F600 stays */
      {"a\xed\xa0\xbd\xed\xb8\x80z", "a\xf0\x9f\x98\x80z", 6}, /* modified UTF-8 pair */
      {"a\xc0\x80z", "a\0z", 3},                               /* modified UTF-8 NUL */
      {"a\xed\xa0\xbdz", "a?z", 3},                            /* lone high surrogate */
      {"a\xed\xb8\x80z", "a?z", 3},                            /* lone low surrogate */
      {"a\xffz", "a?z", 3},                                    /* not UTF-8 */
      {"a\xc3z", "a?z", 3},                                    /* cut sequence */
      {"a\xe0\x80\xafz", "a???z", 5},                          /* overlong */
      {"\xf4\x90\x80\x80", "????", 4},                         /* beyond U+10FFFF */
      {"", "", 0},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    char out[64];
    size_t n = jfr_utf8(cases[i].in, out);
    cr_assert_eq(n, cases[i].want_len, "case %zu: %zu bytes", i, n);
    cr_expect_eq(memcmp(out, cases[i].want, n), 0, "case %zu", i);
    cr_expect_leq(n, strlen(cases[i].in), "case %zu: longer than its input", i);
  }
}

static const struct jfr_clock CLOCK = {1795780800000000000LL, 1000, 1000000000};

/* Ids are dense from 1, equal for equal items, different for different ones. */
Test(jfr, pool_ids) {
  char *mem = NULL;
  size_t size = 0;
  FILE *f = open_memstream(&mem, &size);
  cr_assert(f);
  struct jfr_writer *w;
  cr_assert_eq(jfr_open(&w, f, &CLOCK), 0);
  uint32_t a, b, c, d;
  cr_assert_eq(jfr_thread(w, 10, 1, "main", &a), 0);
  cr_assert_eq(jfr_thread(w, 11, 2, "main", &b), 0); /* same name, another thread */
  cr_assert_eq(jfr_thread(w, 10, 1, "main", &c), 0);
  cr_expect_eq(a, 1);
  cr_expect_eq(b, 2);
  cr_expect_eq(c, 1);

  struct jfr_frame f1[] = {{"p/A", "m", "()V", JFR_FRAME_JIT, 3, 1},
                           {"p/B", "n", "()V", JFR_FRAME_INTERPRETED, 5, 2}};
  struct jfr_frame f2[] = {{"p/A", "m", "()V", JFR_FRAME_INLINED, 3, 1}, /* another type */
                           {"p/B", "n", "()V", JFR_FRAME_INTERPRETED, 5, 2}};
  cr_assert_eq(jfr_stack(w, f1, 2, 0, &a), 0);
  cr_assert_eq(jfr_stack(w, f2, 2, 0, &b), 0);
  cr_assert_eq(jfr_stack(w, f1, 2, 1, &c), 0); /* truncated: another stack */
  cr_assert_eq(jfr_stack(w, f1, 2, 0, &d), 0);
  cr_expect_eq(a, 1);
  cr_expect_eq(b, 2);
  cr_expect_eq(c, 3);
  cr_expect_eq(d, 1);
  /* a modified-UTF-8 name and its UTF-8 spelling are one method */
  struct jfr_frame g1[] = {{"p/A", "x\xed\xa0\xbd\xed\xb8\x80", "", JFR_FRAME_JIT, 1, 0}};
  struct jfr_frame g2[] = {{"p/A", "x\xf0\x9f\x98\x80", "", JFR_FRAME_JIT, 1, 0}};
  cr_assert_eq(jfr_stack(w, g1, 1, 0, &a), 0);
  cr_assert_eq(jfr_stack(w, g2, 1, 0, &b), 0);
  cr_expect_eq(a, 4);
  cr_expect_eq(b, 4);

  /* bad arguments are refused, not written */
  struct jfr_frame bad[] = {{"p/A", "m", "()V", JFR_FRAME_TYPES, 0, 0}};
  cr_expect_eq(jfr_stack(w, bad, 1, 0, &a), -EINVAL);
  bad[0].type = JFR_FRAME_JIT;
  bad[0].method = NULL;
  cr_expect_eq(jfr_stack(w, bad, 1, 0, &a), -EINVAL);
  cr_expect_eq(jfr_sample(w, JFR_EXECUTION_SAMPLE, 1000, 3, 1, JFR_STATE_RUNNABLE, 0), -EINVAL);
  cr_expect_eq(jfr_sample(w, JFR_EXECUTION_SAMPLE, 1000, 1, 5, JFR_STATE_RUNNABLE, 0), -EINVAL);
  cr_expect_eq(jfr_sample(w, JFR_SAMPLE_KINDS, 1000, 1, 1, JFR_STATE_RUNNABLE, 0), -EINVAL);
  cr_expect_eq(jfr_sample(w, JFR_EXECUTION_SAMPLE, 1000, 1, 1, JFR_STATE_RUNNABLE, 0), 0);
  cr_expect_eq(jfr_close(w, 2000), 0);
  fclose(f);
  free(mem);
}

static uint64_t be64(const uint8_t *p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; i++) v = v << 8 | p[i];
  return v;
}

/* The header: in progress until jfr_close, then the chunk's size and the offsets of the last
 * checkpoint and of the metadata, each pointing at an event of the right type. */
Test(jfr, header) {
  char path[] = "/tmp/test_jfr_XXXXXX";
  int fd = mkstemp(path);
  cr_assert_geq(fd, 0);
  FILE *f = fdopen(fd, "w+b");
  cr_assert(f);
  struct jfr_writer *w;
  cr_assert_eq(jfr_open(&w, f, &CLOCK), 0);
  uint32_t t, s;
  struct jfr_frame fr[] = {{"A", "m", "()V", JFR_FRAME_JIT, 1, 0}};
  cr_assert_eq(jfr_thread(w, 1, 1, "t", &t), 0);
  cr_assert_eq(jfr_stack(w, fr, 1, 0, &s), 0);
  cr_assert_eq(jfr_sample(w, JFR_EXECUTION_SAMPLE, 1500, t, s, JFR_STATE_RUNNABLE, 0), 0);
  fflush(f);
  uint8_t h[68];
  cr_assert_eq(pread(fd, h, sizeof h, 0), (ssize_t)sizeof h);
  cr_expect_eq(h[64], 1, "in progress until closed");
  cr_assert_eq(jfr_close(w, 1000 + 2000000000LL), 0);
  fclose(f);

  f = fopen(path, "rb");
  cr_assert(f);
  static uint8_t all[1 << 16];
  size_t size = fread(all, 1, sizeof all, f);
  fclose(f);
  unlink(path);
  cr_assert_eq(memcmp(all, "FLR\0\0\2\0\0", 8), 0, "magic, version 2.0");
  cr_expect_eq(be64(all + 8), size, "chunk size");
  cr_expect_eq(be64(all + 32), (uint64_t)CLOCK.start_ns);
  cr_expect_eq(be64(all + 40), 2000000000u, "duration: 2 s");
  cr_expect_eq(be64(all + 48), 1000u);
  cr_expect_eq(be64(all + 56), 1000000000u);
  cr_expect_eq(all[64], 0, "finished");
  uint64_t cp = be64(all + 16), meta = be64(all + 24);
  cr_assert_lt(cp, size);
  cr_assert_lt(meta, size);
  size_t n;
  decode(all + cp, &n);
  cr_expect_eq(decode(all + cp + n, &n), 1, "a checkpoint event at the pool offset");
  decode(all + meta, &n);
  cr_expect_eq(decode(all + meta + n, &n), 0, "the metadata event at its offset");
  /* the first event after the header: its size, then its type and the time 1500 */
  size_t k, at = 68;
  uint64_t len = decode(all + at, &k);
  cr_expect_eq(k, 4, "sizes are written in 4 bytes");
  cr_expect_gt(len, 4);
  at += k;
  cr_expect_neq(decode(all + at, &k), 0);
  at += k;
  cr_expect_eq(decode(all + at, &k), 1500);
}

/* A write that fails is reported, by jfr_close at the latest; a FILE that cannot seek back to
 * its header is refused at once. */
Test(jfr, write_errors) {
  FILE *f = fopen("/dev/full", "wb");
  cr_assert(f, "/dev/full");
  struct jfr_writer *w;
  cr_assert_eq(jfr_open(&w, f, &CLOCK), 0, "buffered: nothing reached the device yet");
  uint32_t t, s;
  struct jfr_frame fr[] = {{"A", "m", "()V", JFR_FRAME_JIT, 1, 0}};
  cr_assert_eq(jfr_thread(w, 1, 1, "t", &t), 0);
  cr_assert_eq(jfr_stack(w, fr, 1, 0, &s), 0);
  for (int i = 0; i < 100000; i++) /* more than stdio buffers: a write fails on the way */
    if (jfr_sample(w, JFR_EXECUTION_SAMPLE, 1000 + i, t, s, JFR_STATE_RUNNABLE, 0) != 0) break;
  cr_expect_eq(jfr_close(w, 2000000), -EIO);
  fclose(f);

  int p[2];
  cr_assert_eq(pipe(p), 0);
  f = fdopen(p[1], "wb");
  cr_assert(f);
  cr_expect_eq(jfr_open(&w, f, &CLOCK), -ESPIPE);
  fclose(f);
  close(p[0]);
}
