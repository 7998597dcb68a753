/*
 * utf8.c — names as the profile writes them (see utf8.h). JVMTI hands out modified UTF-8
 * (JVMS 4.4.7): the characters outside the BMP as two 3-byte surrogate sequences, U+0000 as
 * C0 80; strict readers (the flamegraph tool, pprof's protobuf strings, XML) reject both.
 */
#include "utf8.h"

#include <errno.h>
#include <stdint.h>

#define BAD UINT32_MAX /* decode(): no character */

/* The character at s[0..n) (n >= 1) in its *adv bytes; BAD when s starts an ill-formed part of
 * *adv bytes (the lead and the continuation bytes that were right so far). Surrogates decode
 * as themselves (ED A0..BF xx): the caller pairs them. */
static uint32_t decode(const unsigned char *s, size_t n, size_t *adv) {
  unsigned c = s[0];
  *adv = 1;
  if (c < 0x80) return c;
  if (c == 0xC0 && n >= 2 && s[1] == 0x80) { /* modified UTF-8's U+0000 */
    *adv = 2;
    return 0;
  }
  size_t len;
  unsigned lo = 0x80, hi = 0xBF; /* the second byte's range (RFC 3629, surrogates allowed) */
  uint32_t cp;
  if (c >= 0xC2 && c <= 0xDF) {
    len = 2, cp = c & 0x1F;
  } else if (c >= 0xE0 && c <= 0xEF) {
    len = 3, cp = c & 0x0F;
    if (c == 0xE0) lo = 0xA0; /* no overlong form */
  } else if (c >= 0xF0 && c <= 0xF4) {
    len = 4, cp = c & 0x07;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F; /* nothing past U+10FFFF */
  } else {
    return BAD; /* a continuation byte, C0/C1 (overlong), F5..FF */
  }
  for (size_t i = 1; i < len; i++) {
    unsigned b = i < n ? s[i] : 0;
    if (i == 1 ? b < lo || b > hi : (b & 0xC0) != 0x80) {
      *adv = i;
      return BAD;
    }
    cp = cp << 6 | (b & 0x3F);
  }
  *adv = len;
  return cp;
}

/* The character at s[0..n) with a surrogate pair joined: BAD for a lone surrogate. */
static uint32_t next_char(const unsigned char *s, size_t n, size_t *adv) {
  uint32_t cp = decode(s, n, adv);
  if (cp == BAD || cp < 0xD800 || cp > 0xDFFF) return cp;
  if (cp <= 0xDBFF && *adv < n) {
    size_t adv2;
    uint32_t low = decode(s + *adv, n - *adv, &adv2);
    if (low != BAD && low >= 0xDC00 && low <= 0xDFFF) {
      *adv += adv2;
      return 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
    }
  }
  return BAD;
}

/* Writes cp as UTF-8 into u; returns its length. */
static size_t encode(uint32_t cp, unsigned char *u) {
  if (cp < 0x80) {
    u[0] = (unsigned char)cp;
    return 1;
  }
  if (cp < 0x800) {
    u[0] = (unsigned char)(0xC0 | cp >> 6);
    u[1] = (unsigned char)(0x80 | (cp & 0x3F));
    return 2;
  }
  if (cp < 0x10000) {
    u[0] = (unsigned char)(0xE0 | cp >> 12);
    u[1] = (unsigned char)(0x80 | (cp >> 6 & 0x3F));
    u[2] = (unsigned char)(0x80 | (cp & 0x3F));
    return 3;
  }
  u[0] = (unsigned char)(0xF0 | cp >> 18);
  u[1] = (unsigned char)(0x80 | (cp >> 12 & 0x3F));
  u[2] = (unsigned char)(0x80 | (cp >> 6 & 0x3F));
  u[3] = (unsigned char)(0x80 | (cp & 0x3F));
  return 4;
}

int utf8_name(const char *in, size_t n, char *out, size_t len) {
  if (!out || !len) return -EINVAL;
  const unsigned char *s = (const unsigned char *)in;
  size_t o = 0;
  int rc = 0;
  for (size_t i = 0; i < n;) {
    size_t adv;
    uint32_t cp = next_char(s + i, n - i, &adv);
    if (cp == BAD)
      cp = 0xFFFD;
    else if (cp == ';')
      cp = ':';
    else if (cp < 0x20 || (cp >= 0x7F && cp < 0xA0))
      cp = '?';
    unsigned char u[4];
    size_t k = encode(cp, u);
    if (o + k >= len) {
      rc = -ENOSPC;
      break;
    }
    for (size_t j = 0; j < k; j++) out[o++] = (char)u[j];
    i += adv;
  }
  out[o] = '\0';
  return rc ? rc : (int)o;
}
