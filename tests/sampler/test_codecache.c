/*
 * test_codecache.c — the code-cache reader's segment-map walk (codecache_segmap_start) on
 * synthetic maps laid out as HotSpot's CodeHeap marks them: a block's first segment 0, the
 * others counting up to 0xFE and over again from 1, a free segment 0xFF; read whole and in
 * windows (the lookup reads at most 256 bytes at a time), and maps that are not maps. And the
 * scopes' decoders (codecache_stream_uint, codecache_scope_head) on both encodings HotSpot has
 * used — vectors from the encoding's definition, a round trip through its writer, bytes that
 * are no value, and ScopeDesc heads read out of real JVMs. The reader itself is proven against
 * a JVM's events in jvm_codecache (tests/integration).
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "codecache.h"

#define SEGS 4000
static unsigned char map[SEGS];

/* Marks segments [beg, end) one block, as CodeHeap::mark_segmap_as_used does. */
static void block(long beg, long end) {
  map[beg] = 0;
  for (long i = beg + 1; i < end; i++) map[i] = map[i - 1] == 0xFE ? 1 : map[i - 1] + 1;
}

static void heap(void) {
  memset(map, 0xFF, sizeof map);
  block(0, 3);
  block(3, 1000); /* several 0xFE-long runs */
  block(1000, 1001);
  block(1200, SEGS); /* [1001, 1200) stays free */
}

Test(codecache, walks_back_to_the_block_start) {
  heap();
  const long want[][2] = {{0, 0},   {2, 0},   {3, 3},       {257, 3},
                          {258, 3}, {999, 3}, {1000, 1000}, {SEGS - 1, 1200}};
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
    long idx = want[i][0];
    cr_expect_eq(codecache_segmap_start(map, SEGS, 0, &idx), want[i][1], "segment %ld", want[i][0]);
  }
}

Test(codecache, free_segments_are_in_no_block) {
  heap();
  long idx = 1100;
  cr_expect_eq(codecache_segmap_start(map, SEGS, 0, &idx), -ENOENT);
}

Test(codecache, windows_of_256_bytes_reach_the_start) {
  heap();
  /* as codecache_find reads: the 256 bytes ending at the segment, again below where it stands */
  long idx = SEGS - 1, start, reads = 0;
  do {
    long base = idx >= 255 ? idx - 255 : 0;
    start = codecache_segmap_start(map + base, idx - base + 1, base, &idx);
    reads++;
  } while (start == -EAGAIN && reads < 100);
  cr_expect_eq(start, 1200);
  cr_expect_gt(reads, 1, "the walk should have needed more than one window");
  cr_expect_lt(reads, 100);
}

Test(codecache, a_hop_before_segment_zero_is_no_map) {
  memset(map, 0xFF, sizeof map);
  map[0] = 1;
  map[1] = 2;
  long idx = 1;
  cr_expect_eq(codecache_segmap_start(map, 2, 0, &idx), -EFAULT);
  map[1] = 1;
  idx = 1;
  cr_expect_eq(codecache_segmap_start(map, 2, 0, &idx), -EFAULT, "map[0] = 1 hops to -1");
}

Test(codecache, leaving_the_window_says_where_it_stands) {
  heap();
  long idx = 999;
  cr_expect_eq(codecache_segmap_start(map + 900, 100, 900, &idx), -EAGAIN);
  cr_expect_lt(idx, 900);
  cr_expect_geq(idx, 3);
}

/* The scopes stream's encoding as HotSpot writes it (UNSIGNED5::write_uint; the CompressedStream
 * of JDK 17 is the same with no excluded byte): a value below L in one byte, else a "high"
 * byte per 6 bits of payload and a low byte to end, the fifth byte taken whole. */
static long encode(uint32_t v, int excluded, unsigned char *out) {
  const uint32_t x = excluded ? 1 : 0, low = 256 - 64 - x;
  uint32_t sum = v;
  for (long i = 0;; i++) {
    if (sum < low || i == 4) {
      out[i] = (unsigned char)(x + sum);
      return i + 1;
    }
    sum -= low;
    out[i] = (unsigned char)(x + low + sum % 64);
    sum >>= 6;
  }
}

static int decode(const unsigned char *b, long n, int excluded, uint32_t *v, long *len) {
  long pos = 0;
  int rc = codecache_stream_uint(b, n, &pos, excluded, v);
  *len = pos;
  return rc;
}

Test(codecache, stream_vectors_of_both_encodings) {
  /* bytes, their count, the encoding (1: UNSIGNED5, JDK 21 and 25; 0: JDK 17's), the value */
  static const struct {
    unsigned char b[5];
    long n;
    int excluded;
    uint32_t v;
  } t[] = {
      {{0x00}, 1, 0, 0},
      {{0xBF}, 1, 0, 191},
      {{0xC0, 0x00}, 2, 0, 192},
      {{0xEC, 0x01}, 2, 0, 300},
      {{0xFF, 0xBF}, 2, 0, 12479},
      {{0x01}, 1, 1, 0},
      {{0xBF}, 1, 1, 190},
      {{0xC0, 0x01}, 2, 1, 191},
      {{0xED, 0x02}, 2, 1, 300},
      {{0xFF, 0xBF}, 2, 1, 12414},
      {{0xC0, 0xFE, 0xFD, 0xFD, 0xFD}, 5, 1, 0xFFFFFFFFu},
      {{0xFF, 0xFC, 0xFC, 0xFC, 0xFC}, 5, 0, 0xFFFFFFFFu},
  };
  for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
    uint32_t v = 0;
    long len = 0;
    cr_expect_eq(decode(t[i].b, t[i].n, t[i].excluded, &v, &len), 0, "vector %zu", i);
    cr_expect_eq(v, t[i].v, "vector %zu: %u, want %u", i, v, t[i].v);
    cr_expect_eq(len, t[i].n, "vector %zu: %ld bytes read", i, len);
  }
}

Test(codecache, stream_round_trips_every_length) {
  unsigned char b[5];
  for (int excluded = 0; excluded <= 1; excluded++) {
    long lengths[6] = {0};
    for (uint64_t v = 0; v <= 0xFFFFFFFFu; v = v < 70000 ? v + 1 : v * 3 + 7) {
      long n = encode((uint32_t)v, excluded, b), len = 0;
      uint32_t got = 0;
      cr_assert_eq(decode(b, n, excluded, &got, &len), 0);
      cr_assert_eq(got, (uint32_t)v, "excluded=%d: %u back as %u", excluded, (uint32_t)v, got);
      cr_assert_eq(len, n);
      if (excluded) cr_assert(memchr(b, 0, (size_t)n) == NULL, "UNSIGNED5 never writes a 0");
      lengths[n]++;
    }
    long n = encode(0xFFFFFFFFu, excluded, b), len = 0;
    uint32_t got = 0;
    cr_expect_eq(n, 5);
    cr_expect_eq(decode(b, n, excluded, &got, &len), 0);
    cr_expect_eq(got, 0xFFFFFFFFu);
    for (int k = 1; k <= 5; k++) cr_expect_gt(lengths[k], 0, "no value of %d bytes tried", k);
  }
}

Test(codecache, stream_refuses_what_is_not_a_value) {
  const unsigned char high[] = {0xC0, 0xC0, 0xC0}, zero[] = {0x00}, zero_after[] = {0xC0, 0x00};
  uint32_t v;
  long len;
  cr_expect_eq(decode(high, 3, 1, &v, &len), -EFAULT, "runs past its bytes");
  cr_expect_eq(decode(high, 0, 0, &v, &len), -EFAULT, "no bytes");
  cr_expect_eq(decode(zero, 1, 1, &v, &len), -EFAULT, "UNSIGNED5 excludes the byte 0");
  cr_expect_eq(decode(zero_after, 2, 1, &v, &len), -EFAULT, "... in any place");
  cr_expect_eq(decode(zero_after, 2, 0, &v, &len), 0, "JDK 17's encoding has no excluded byte");
  cr_expect_eq(v, 192);
}

Test(codecache, scope_head_of_both_encodings) {
  /* sender 0 (outermost), method index 3, bci 5 (stored 6); then sender 300, index 1, bci -1 */
  const unsigned char u5[] = {0x01, 0x04, 0x07}, old[] = {0x00, 0x03, 0x06},
                      u5_b[] = {0xED, 0x02, 0x02, 0x01}, old_b[] = {0xEC, 0x01, 0x01, 0x00};
  const struct {
    const unsigned char *b;
    long n;
    int excluded;
    uint32_t sender, index;
    int32_t bci;
  } t[] = {{u5, 3, 1, 0, 3, 5},
           {old, 3, 0, 0, 3, 5},
           {u5_b, 4, 1, 300, 1, -1},
           {old_b, 4, 0, 300, 1, -1}};
  for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
    uint32_t sender = 9, index = 9;
    int32_t bci = 9;
    cr_expect_eq(codecache_scope_head(t[i].b, t[i].n, t[i].excluded, &sender, &index, &bci), 0);
    cr_expect_eq(sender, t[i].sender, "case %zu", i);
    cr_expect_eq(index, t[i].index, "case %zu", i);
    cr_expect_eq(bci, t[i].bci, "case %zu", i);
  }
  uint32_t s, m;
  int32_t bci;
  cr_expect_eq(codecache_scope_head(u5, 2, 1, &s, &m, &bci), -EFAULT, "cut after two ints");
}

Test(codecache, scope_heads_read_out_of_real_jvms) {
  /* The first bytes at a ScopeDesc's decode offset in a JDK 17.0.15 and a JDK 21.0.13 JVM (the
   * agent tests/integration/jni/codecheck.c while jvm_codecache's program ran; in both runs every
   * inline chain read agreed with CompiledMethodLoad's records): the same outermost scope
   * (sender none, the first metadata entry, bci 17) in both encodings, and senders of two bytes. */
  const struct {
    unsigned char b[5];
    int excluded;
    uint32_t sender, index;
    int32_t bci;
  } t[] = {
      {{0x00, 0x01, 0x12}, 0, 0, 1, 17},         {{0x01, 0x02, 0x13}, 1, 0, 1, 17},
      {{0xC6, 0x00, 0x05, 0x09}, 0, 198, 5, 8},  {{0xE4, 0x01, 0x02, 0x00}, 0, 292, 2, -1},
      {{0xEB, 0x12, 0x04, 0x04}, 1, 1322, 3, 2}, {{0xE4, 0x12, 0x03, 0x05}, 1, 1315, 2, 3},
  };
  for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
    uint32_t sender = 9, index = 9;
    int32_t bci = 9;
    cr_expect_eq(codecache_scope_head(t[i].b, 5, t[i].excluded, &sender, &index, &bci), 0);
    cr_expect_eq(sender, t[i].sender, "head %zu: sender %u", i, sender);
    cr_expect_eq(index, t[i].index, "head %zu: index %u", i, index);
    cr_expect_eq(bci, t[i].bci, "head %zu: bci %d", i, bci);
    /* read in the other encoding, the same bytes say something else */
    if (codecache_scope_head(t[i].b, 5, !t[i].excluded, &sender, &index, &bci) == 0)
      cr_expect(sender != t[i].sender || index != t[i].index || bci != t[i].bci, "head %zu", i);
  }
}
