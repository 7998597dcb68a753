/*
 * fg_test_util.h — helpers shared by the flamegraph unit tests: build a profile from folded
 * text, capture a writer's output in memory, encode an integer as the binary readers take it.
 */
#ifndef SAMPLER_FG_TEST_UTIL_H
#define SAMPLER_FG_TEST_UTIL_H

#include "fg_internal.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

static inline fg_profile *profile_of(const char *folded) {
  fg_profile *p = fg_profile_new();
  cr_assert(p);
  fg_read_error err = {0};
  cr_assert_eq(fg_read_buffer(p, folded, strlen(folded), FG_MAIN, &err), 0, "%s", err.msg);
  return p;
}

static inline fg_profile *diff_of(const char *base, const char *main_) {
  fg_profile *p = profile_of(main_);
  fg_read_error err = {0};
  cr_assert_eq(fg_read_buffer(p, base, strlen(base), FG_BASE, &err), 0, "%s", err.msg);
  return p;
}

/* v as LEB128 (7 bits a byte, low first, the high bit: more follow), as protobuf and JFR
 * (below 2^56) write integers, into c; returns the bytes. */
static inline size_t leb128(uint64_t v, unsigned char c[10]) {
  size_t k = 0;
  do {
    c[k] = (unsigned char)(v & 0x7f);
    v >>= 7;
    if (v) c[k] |= 0x80;
    k++;
  } while (v);
  return k;
}

enum { OUT_FOLDED, OUT_SVG, OUT_HTML };

/* The writer's whole output (NUL-terminated, caller frees); asserts it returned 0.
 * A memory stream stores its buffer and size through the two pointers it is given, at every
 * flush until it is closed. They point into a heap block, not into this frame, and the stream
 * is closed before anything is asserted: a failed assertion leaves this frame without
 * returning, and a stream left open would be flushed at the test process's exit. */
static inline char *render(int what, const fg_profile *p, const fg_options *o) {
  struct {
    char *buf;
    size_t len;
  } *out = calloc(1, sizeof *out);
  cr_assert(out);
  FILE *f = open_memstream(&out->buf, &out->len);
  cr_assert(f);
  int rc = what == OUT_FOLDED ? fg_write_folded(f, p)
           : what == OUT_SVG  ? fg_write_svg(f, p, o)
                              : fg_write_html(f, p, o);
  int closed = fclose(f);
  char *buf = out->buf;
  free(out);
  if (rc != 0 || closed != 0) free(buf);
  cr_assert_eq(rc, 0, "writer returned %d", rc);
  cr_assert_eq(closed, 0, "closing the memory stream failed");
  return buf;
}

/* Number of non-overlapping occurrences of `what` in `s`. */
static inline int count_of(const char *s, const char *what) {
  int n = 0;
  for (const char *at = s; (at = strstr(at, what)) != NULL; at += strlen(what)) n++;
  return n;
}

#endif
