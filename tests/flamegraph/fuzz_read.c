/*
 * fuzz_read.c — libFuzzer target for the folded reader (clang -fsanitize=fuzzer,address).
 * The input is read as one profile (or, when it holds a 0x01 byte, as two: base and main);
 * what reads successfully is written as folded, SVG and HTML, and the folded output (two
 * counts per line for a diff) must read back to itself (abort otherwise). Errors must come with a line and a message.
 */
#include "fg_internal.h"
#include "fuzz_util.h"

#include <stdlib.h>
#include <string.h>

static FILE *g_null;

static char *folded(const fg_profile *p, size_t *len) {
  char *buf = NULL;
  FILE *f = open_memstream(&buf, len);
  if (!f || fg_write_folded(f, p) != 0) abort();
  fclose(f);
  return buf;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!g_null) g_null = fopen("/dev/null", "w");
  const char *s = (const char *)data;
  const char *split = memchr(s, 1, size);
  fg_profile *p = fg_profile_new();
  if (!p) return 0;
  fg_read_error err;
  int rc;
  if (split) {
    rc = fg_read_buffer(p, s, (size_t)(split - s), FG_BASE, &err);
    if (rc == 0) rc = fg_read_buffer(p, split + 1, size - (size_t)(split - s) - 1, FG_MAIN, &err);
  } else {
    rc = fg_read_buffer(p, s, size, FG_MAIN, &err);
  }
  if (rc != 0) {
    if (err.line == 0 || err.msg[0] == '\0') abort();
    fg_profile_free(p);
    return 0;
  }
  fuzz_render(g_null, p, size);
  {
    /* the folded output (two counts for a diff) reads back to itself */
    size_t l1, l2;
    char *a = folded(p, &l1);
    fg_profile *q = fg_profile_new();
    if (!q || fg_read_buffer(q, a, l1, FG_MAIN, &err) != 0) abort();
    char *b = folded(q, &l2);
    if (l1 != l2 || memcmp(a, b, l1) != 0) abort();
    if (fg_profile_total(p, FG_MAIN) != fg_profile_total(q, FG_MAIN) ||
        fg_profile_total(p, FG_BASE) != fg_profile_total(q, FG_BASE))
      abort();
    free(a);
    free(b);
    fg_profile_free(q);
  }
  fg_profile_free(p);
  return 0;
}
