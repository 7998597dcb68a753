/*
 * fg_out.c — buffered output for the writers (numbers without printf, XML and JSON escaping,
 * UTF-8 validation).
 *
 * Writers produce megabytes; printf per number would dominate the run time, so numbers are
 * formatted by hand. Hazard: every escaper must turn any byte string into valid output
 * (names from the agent's API are not validated like the reader's input).
 */
#include "fg_internal.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define FG_BUF_CAP (64u * 1024u)

/* See fg_internal.h. */
int fg_buf_init(fg_buf *b, FILE *out) {
  b->out = out;
  b->len = 0;
  b->cap = FG_BUF_CAP;
  b->err = 0;
  b->data = malloc(b->cap);
  return b->data ? 0 : -ENOMEM;
}

static void flush(fg_buf *b) {
  if (b->len && !b->err && fwrite(b->data, 1, b->len, b->out) != b->len) b->err = -EIO;
  b->len = 0;
}

/* See fg_internal.h. */
int fg_buf_finish(fg_buf *b) {
  flush(b);
  if (!b->err && fflush(b->out) != 0) b->err = -EIO;
  free(b->data);
  b->data = NULL;
  return b->err;
}

/* See fg_internal.h. */
void fg_buf_put(fg_buf *b, const char *s, size_t n) {
  if (b->cap - b->len < n) {
    flush(b);
    if (n >= b->cap) {
      if (!b->err && fwrite(s, 1, n, b->out) != n) b->err = -EIO;
      return;
    }
  }
  memcpy(b->data + b->len, s, n);
  b->len += n;
}

/* See fg_internal.h. */
void fg_buf_puts(fg_buf *b, const char *s) { fg_buf_put(b, s, strlen(s)); }

/* See fg_internal.h. */
void fg_buf_putc(fg_buf *b, char c) {
  if (b->len == b->cap) flush(b);
  b->data[b->len++] = c;
}

/* See fg_internal.h. */
void fg_buf_u64(fg_buf *b, uint64_t v) {
  char tmp[24];
  int i = sizeof tmp;
  do {
    tmp[--i] = (char)('0' + v % 10);
    v /= 10;
  } while (v);
  fg_buf_put(b, tmp + i, sizeof tmp - (size_t)i);
}

/* See fg_internal.h. */
void fg_buf_i64(fg_buf *b, int64_t v) {
  if (v < 0) {
    fg_buf_putc(b, '-');
    fg_buf_u64(b, (uint64_t)0 - (uint64_t)v);
  } else {
    fg_buf_u64(b, (uint64_t)v);
  }
}

/* See fg_internal.h. */
void fg_buf_u64_grouped(fg_buf *b, uint64_t v) {
  char tmp[32];
  int i = sizeof tmp, digits = 0;
  do {
    if (digits && digits % 3 == 0) tmp[--i] = ',';
    tmp[--i] = (char)('0' + v % 10);
    v /= 10;
    digits++;
  } while (v);
  fg_buf_put(b, tmp + i, sizeof tmp - (size_t)i);
}

/* See fg_internal.h. */
void fg_buf_fixed(fg_buf *b, double v, int decimals) {
  static const double pow10[] = {1, 10, 100, 1000, 10000, 100000, 1000000};
  if (decimals < 0) decimals = 0;
  if (decimals > 6) decimals = 6;
  if (!isfinite(v)) v = 0;
  double scaled = round(fabs(v) * pow10[decimals]);
  if (scaled > 9e18) scaled = 9e18;
  uint64_t u = (uint64_t)scaled;
  if (v < 0 && u) fg_buf_putc(b, '-');
  uint64_t div = (uint64_t)pow10[decimals];
  fg_buf_u64(b, u / div);
  uint64_t frac = u % div;
  if (!frac) return;
  char tmp[8];
  int n = decimals;
  for (int i = decimals - 1; i >= 0; i--) {
    tmp[i] = (char)('0' + frac % 10);
    frac /= 10;
  }
  while (n > 0 && tmp[n - 1] == '0') n--;
  fg_buf_putc(b, '.');
  fg_buf_put(b, tmp, (size_t)n);
}

/* See fg_internal.h. Rejects overlong forms, surrogates and code points past U+10FFFF. */
size_t fg_utf8_len(const unsigned char *s, size_t n) {
  unsigned c = s[0];
  if (c < 0x80) return 1;
  size_t len;
  unsigned cp;
  if (c >= 0xC2 && c <= 0xDF) {
    len = 2;
    cp = c & 0x1F;
  } else if (c >= 0xE0 && c <= 0xEF) {
    len = 3;
    cp = c & 0x0F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    len = 4;
    cp = c & 0x07;
  } else {
    return 0;
  }
  if (n < len) return 0;
  for (size_t i = 1; i < len; i++) {
    if ((s[i] & 0xC0) != 0x80) return 0;
    cp = cp << 6 | (s[i] & 0x3F);
  }
  if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)) ||
      (cp >= 0xD800 && cp <= 0xDFFF))
    return 0;
  return len;
}

static const char k_replacement[] = "\xEF\xBF\xBD"; /* U+FFFD */

/* See fg_internal.h. */
void fg_buf_xml(fg_buf *b, const char *s, size_t n) {
  const unsigned char *u = (const unsigned char *)s;
  size_t i = 0, run = 0; /* run: start of bytes copied verbatim */
  while (i < n) {
    unsigned c = u[i];
    const char *rep = NULL;
    size_t adv = 1;
    if (c >= 0x80) {
      adv = fg_utf8_len(u + i, n - i);
      if (!adv) {
        rep = k_replacement;
        adv = 1;
      }
    } else if (c == '&') {
      rep = "&amp;";
    } else if (c == '<') {
      rep = "&lt;";
    } else if (c == '>') {
      rep = "&gt;";
    } else if (c == '"') {
      rep = "&quot;";
    } else if (c == '\'') {
      rep = "&#39;";
    } else if (c < 0x20 && c != '\t') {
      rep = k_replacement; /* XML 1.0 forbids most controls; LF would break titles */
    }
    if (rep) {
      fg_buf_put(b, s + run, i - run);
      fg_buf_puts(b, rep);
      run = i + adv;
    }
    i += adv;
  }
  fg_buf_put(b, s + run, n - run);
}

/* See flamegraph.h. */
int fg_write_json_string(FILE *out, const char *s, size_t n) {
  fg_buf b;
  int rc = fg_buf_init(&b, out);
  if (rc) return rc;
  fg_buf_json(&b, s, n);
  return fg_buf_finish(&b);
}

/* See fg_internal.h. */
void fg_buf_json(fg_buf *b, const char *s, size_t n) {
  static const char hex[] = "0123456789abcdef";
  const unsigned char *u = (const unsigned char *)s;
  size_t i = 0, run = 0;
  fg_buf_putc(b, '"');
  while (i < n) {
    unsigned c = u[i];
    size_t adv = 1;
    char esc[8];
    const char *rep = NULL;
    size_t replen = 0;
    if (c >= 0x80) {
      adv = fg_utf8_len(u + i, n - i);
      if (!adv) {
        rep = k_replacement;
        replen = 3;
        adv = 1;
      }
    } else if (c == '"' || c == '\\') {
      esc[0] = '\\';
      esc[1] = (char)c;
      rep = esc;
      replen = 2;
    } else if (c < 0x20 || c == '<' || c == '>' || c == '&' || c == 0x7f) {
      memcpy(esc, "\\u00", 4);
      esc[4] = hex[c >> 4];
      esc[5] = hex[c & 15];
      rep = esc;
      replen = 6;
    }
    if (rep) {
      fg_buf_put(b, s + run, i - run);
      fg_buf_put(b, rep, replen);
      run = i + adv;
    }
    i += adv;
  }
  fg_buf_put(b, s + run, n - run);
  fg_buf_putc(b, '"');
}
