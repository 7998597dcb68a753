/*
 * test_codecache.c — the code-cache reader's segment-map walk (codecache_segmap_start) on
 * synthetic maps laid out as HotSpot's CodeHeap marks them: a block's first segment 0, the
 * others counting up to 0xFE and over again from 1, a free segment 0xFF; read whole and in
 * windows (the lookup reads at most 256 bytes at a time), and maps that are not maps. The
 * reader itself is proven against a JVM's events in jvm_codecache (tests/integration).
 */
#include <criterion/criterion.h>
#include <errno.h>
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
