/*
 * test_pprof.c — the pprof reader against hostile and degenerate profiles built here: a
 * profile with no functions and no locations (empty tables: UBSan in the sanitizer build
 * checks that no null array reaches qsort or bsearch), a sample naming a location that is not
 * there, and each limit of fg_pprof.h at the API with its exact message: FG_MAX_DEPTH (and
 * the stack at the limit read), the expansion budget, the inflated size of a gzip bomb.
 * The tool's time and memory on such inputs are tests/flamegraph/test_bombs.py's.
 */
#include "fg_internal.h"
#include "fg_pprof.h"
#include "fg_test_util.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/* ---- a protobuf writer (profile.proto field numbers) ---- */

typedef struct pb {
  unsigned char *b;
  size_t n, cap;
} pb;

static void put(pb *p, const void *s, size_t n) {
  if (p->n + n > p->cap) {
    p->cap = (p->n + n) * 2 + 64;
    p->b = realloc(p->b, p->cap);
    cr_assert(p->b);
  }
  memcpy(p->b + p->n, s, n);
  p->n += n;
}

static void varint(pb *p, uint64_t v) {
  unsigned char c[10];
  put(p, c, leb128(v, c));
}

static void num(pb *p, unsigned field, uint64_t v) {
  varint(p, (uint64_t)field << 3);
  varint(p, v);
}

/* A length-delimited field holding `m` (freed). */
static void msg(pb *p, unsigned field, pb *m) {
  varint(p, (uint64_t)field << 3 | 2);
  varint(p, m->n);
  put(p, m->b, m->n);
  free(m->b);
  memset(m, 0, sizeof *m);
}

static void str(pb *p, const char *s) {
  varint(p, 6 << 3 | 2);
  varint(p, strlen(s));
  put(p, s, strlen(s));
}

/* The frame of every profile here: sample type "samples"/"count", function 1 named `name`. */
static void header_named(pb *p, const char *name) {
  pb m = {0};
  num(&m, 1, 1);
  num(&m, 2, 2);
  msg(p, 1, &m);
  str(p, "");
  str(p, "samples");
  str(p, "count");
  str(p, name);
}

static void header(pb *p) { header_named(p, "f"); }

static void function_f(pb *p) {
  pb m = {0};
  num(&m, 1, 1);
  num(&m, 2, 3);
  msg(p, 5, &m);
}

/* Location `id` with `lines` lines of function 1 (line numbers 1..lines). */
static void location(pb *p, uint64_t id, int lines) {
  pb m = {0}, l = {0};
  num(&m, 1, id);
  for (int i = 1; i <= lines; i++) {
    num(&l, 1, 1);
    num(&l, 2, (uint64_t)i);
    msg(&m, 4, &l);
  }
  msg(p, 4, &m);
}

/* A sample of value 1 naming location `loc` `times` times. */
static void sample(pb *p, uint64_t loc, int times) {
  pb m = {0}, ids = {0}, v = {0};
  for (int i = 0; i < times; i++) varint(&ids, loc);
  msg(&m, 1, &ids);
  varint(&v, 1);
  msg(&m, 2, &v);
  msg(p, 2, &m);
}

static int read_pb(fg_profile *p, const pb *b, fg_read_error *e) {
  memset(e, 0, sizeof *e);
  return fg_read_pprof(p, b->b, b->n, FG_MAIN, NULL, e);
}

Test(pprof, a_profile_without_functions_or_locations_is_empty_not_undefined) {
  pb b = {0};
  header(&b);
  fg_profile *p = fg_profile_new();
  fg_read_error e;
  cr_assert_eq(read_pb(p, &b, &e), 0, "%s", e.msg);
  cr_expect_eq(fg_profile_total(p, FG_MAIN), 0);
  fg_profile_free(p);
  free(b.b);
}

Test(pprof, a_sample_naming_a_missing_location_is_an_error) {
  pb b = {0};
  header(&b);
  sample(&b, 5, 1);
  fg_profile *p = fg_profile_new();
  fg_read_error e;
  cr_assert_eq(read_pb(p, &b, &e), -EINVAL);
  cr_expect_str_eq(e.msg, "pprof: a sample names location 5, which is not there");
  fg_profile_free(p);
  free(b.b);
}

Test(pprof, a_stack_at_the_depth_limit_is_read_one_deeper_is_refused) {
  for (int depth = FG_MAX_DEPTH; depth <= FG_MAX_DEPTH + 1; depth++) {
    /* sample 1 is one frame; sample 2 names location 1 (one line) depth - 2 times and
     * location 2 (two lines) once: depth frames */
    pb b = {0}, s = {0}, ids = {0}, v = {0};
    header(&b);
    function_f(&b);
    location(&b, 1, 1);
    location(&b, 2, 2);
    sample(&b, 1, 1);
    for (int i = 0; i < depth - 2; i++) varint(&ids, 1);
    varint(&ids, 2);
    msg(&s, 1, &ids);
    varint(&v, 1);
    msg(&s, 2, &v);
    msg(&b, 2, &s);
    fg_profile *p = fg_profile_new();
    fg_read_error e;
    int rc = read_pb(p, &b, &e);
    if (depth == FG_MAX_DEPTH) {
      cr_expect_eq(rc, 0, "%s", e.msg);
      cr_expect_eq(fg_profile_total(p, FG_MAIN), 2);
    } else {
      cr_expect_eq(rc, -EINVAL);
      cr_expect_str_eq(
          e.msg, "pprof: sample 2: a stack deeper than 65536 frames (the limit, FG_MAX_DEPTH)");
    }
    fg_profile_free(p);
    free(b.b);
  }
}

Test(pprof, samples_expanding_past_the_budget_are_refused_with_the_limit) {
  /* 40 samples naming a 200-line location 300 times: 2.4M frames of ~37 bytes, from ~14 KB */
  pb b = {0};
  header(&b);
  function_f(&b);
  location(&b, 1, 200);
  for (int i = 0; i < 40; i++) sample(&b, 1, 300);
  fg_profile *p = fg_profile_new();
  fg_read_error e;
  cr_assert_eq(read_pb(p, &b, &e), -EINVAL);
  char want[200];
  snprintf(want, sizeof want,
           "pprof: the samples' stacks expand to more than %llu MiB (the limit for a %zu-byte "
           "file: 64 MiB + 256 bytes per byte, at most 4 GiB)",
           (unsigned long long)((FG_PPROF_EXPAND_BASE + FG_PPROF_EXPAND_PER_BYTE * b.n) >> 20),
           b.n);
  cr_expect_str_eq(e.msg, want);
  fg_profile_free(p);
  free(b.b);
}

Test(pprof, a_gzip_bomb_stops_at_the_inflated_limit) {
  /* 64 MiB of zeros gzipped: ~64 KB, so the limit is the 16 MiB floor */
  size_t raw = 64u << 20, cap = raw / 100;
  unsigned char *zeros = calloc(1, raw), *gz = malloc(cap);
  cr_assert(zeros && gz);
  z_stream z;
  memset(&z, 0, sizeof z);
  cr_assert_eq(deflateInit2(&z, 9, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
  z.next_in = zeros;
  z.avail_in = (uInt)raw;
  z.next_out = gz;
  z.avail_out = (uInt)cap;
  cr_assert_eq(deflate(&z, Z_FINISH), Z_STREAM_END);
  size_t n = cap - z.avail_out;
  deflateEnd(&z);
  cr_assert(n * FG_PPROF_INFLATE_RATIO < FG_PPROF_INFLATE_FLOOR, "precondition: %zu bytes", n);
  fg_profile *p = fg_profile_new();
  fg_read_error e;
  cr_assert_eq(fg_read_pprof(p, gz, n, FG_MAIN, NULL, &e), -EINVAL);
  char want[200];
  snprintf(want, sizeof want,
           "pprof: inflates to more than %zu bytes (the limit for a %zu-byte file: 100 times its "
           "size, at least 16 MiB, at most 1 GiB)",
           FG_PPROF_INFLATE_FLOOR, n);
  cr_expect_str_eq(e.msg, want);
  fg_profile_free(p);
  free(zeros);
  free(gz);
}

/* A name no folded line could carry (the separator, a newline, a C1 control, bytes that are no
 * UTF-8) is made one: read back by our own folded reader, the same single frame. */
Test(pprof, names_that_would_break_the_folded_format_are_made_names) {
  pb b = {0};
  header_named(&b, "a;b\n\xc2\x85\xff\xe2\x82z\xe2\x82\xac");
  function_f(&b);
  location(&b, 1, 1);
  sample(&b, 1, 1);
  fg_profile *p = fg_profile_new();
  fg_read_error e;
  cr_assert_eq(read_pb(p, &b, &e), 0, "%s", e.msg);
  char *text = render(OUT_FOLDED, p, NULL);
  cr_expect_str_eq(text, "a:b??\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbdz\xe2\x82\xac:1 1\n");
  fg_profile *back = fg_profile_new();
  cr_expect_eq(fg_read_buffer(back, text, strlen(text), FG_MAIN, &e), 0, "%s", e.msg);
  cr_expect_eq(fg_profile_total(back, FG_MAIN), 1);
  fg_profile_free(back);
  free(text);
  fg_profile_free(p);
  free(b.b);
}
