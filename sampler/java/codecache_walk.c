/*
 * codecache_walk.c — every live nmethod of the code cache (codecache.h: codecache_each_nmethod),
 * as HotSpot's CodeHeap::first_block/next_block step through a heap: from a block's first
 * segment to the next block's by the block's length in segments. The segment map says where a
 * block begins (0) and which segments are free (0xFF); the walk trusts a header only where the
 * map marks a block's start and its length stays inside the heap, so a heap the JIT changes
 * meanwhile costs at most a skipped block. Reads through codecache_peek, as the lookup does.
 */
#include <errno.h>
#include <string.h>

#include "codecache_internal.h"

#define WALK_WINDOW 4096 /* segment-map bytes read at once */

/* The block at segment i of heap hp: its length in segments and whether it is used. */
static int block_head(const struct codecache_layout *l, const struct codecache_heap *hp, long i,
                      uint64_t *length, int *used) {
  uintptr_t block = hp->low + ((uintptr_t)i << hp->log2);
  unsigned char u = 0;
  uint64_t len = 0; /* little-endian: the low bytes first, whichever the width */
  if (codecache_peek(l, block + (uintptr_t)l->block_length, &len, (size_t)l->block_length_bytes) !=
          0 ||
      codecache_peek(l, block + (uintptr_t)l->block_used, &u, 1) != 0)
    return -EFAULT;
  *length = len;
  *used = u != 0;
  return 0;
}

/* One heap's blocks; the nmethods' count, or fn's negative value, or -EFAULT. */
static long walk_heap(const struct codecache_layout *l, const struct codecache_heap *hp,
                      codecache_nmethod_fn fn, void *ctx, long *skipped) {
  const long segs = (long)((hp->high - hp->low) >> hp->log2);
  unsigned char m[WALK_WINDOW];
  long base = 0, have = 0, found = 0;
  for (long i = 0; i < segs;) {
    if (i >= base + have) {
      base = i;
      have = segs - i < WALK_WINDOW ? segs - i : WALK_WINDOW;
      if (codecache_peek(l, hp->map + (uintptr_t)base, m, (size_t)have) != 0) return -EFAULT;
    }
    unsigned char mark = m[i - base];
    uint64_t length = 0;
    int used = 0;
    if (mark == 0xFF) { /* a free segment */
      i++;
      continue;
    }
    if (mark != 0 || block_head(l, hp, i, &length, &used) != 0 || length == 0 ||
        length > (uint64_t)(segs - i)) { /* not a block's start: step to the next segment */
      if (skipped) (*skipped)++;
      i++;
      continue;
    }
    if (used) {
      uintptr_t blob = hp->low + ((uintptr_t)i << hp->log2) + (uintptr_t)l->block_size;
      struct codecache_blob b;
      if (codecache_blob_at(l, blob, blob, &b) != 0) {
        if (skipped) (*skipped)++;
      } else if (b.is_nmethod) {
        found++;
        int rc = fn(&b, ctx);
        if (rc < 0) return rc;
      }
    }
    i += (long)length;
  }
  return found;
}

int codecache_each_nmethod(const struct codecache_layout *layout, codecache_nmethod_fn fn,
                           void *ctx, long *skipped) {
  struct codecache_layout own;
  const struct codecache_layout *l = codecache_reader(layout, &own);
  if (l->block_length < 0) return -ENOTSUP;
  uintptr_t heaps[CODECACHE_HEAPS];
  int n = codecache_heaps(l, heaps);
  if (n < 0) return n;
  long found = 0;
  for (int h = 0; h < n; h++) {
    struct codecache_heap hp;
    if (codecache_heap_at(l, heaps[h], &hp) != 0) return -EFAULT;
    long rc = walk_heap(l, &hp, fn, ctx, skipped);
    if (rc < 0) return (int)rc;
    found += rc;
  }
  return (int)found;
}
