/*
 * codecache_find_sig.c — the lookup half of the code-cache reader (codecache.h): a PC to its
 * CodeBlob and, for an nmethod, its method, as HotSpot's CodeCache::find_blob and
 * CodeHeap::find_start do. Signal path: every read of the JVM's memory is a copy into a buffer
 * on the stack that cannot fault — a plain copy under the fault guard (the layout's read:
 * guard_read), or without it a process_vm_readv system call (an address that is not mapped
 * fails the call) —; no lock, no allocation, no libc beyond syscall().
 */
#include <errno.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "codecache_internal.h"
#include "platform.h"

/* See codecache_internal.h. */
const struct codecache_layout *codecache_reader(const struct codecache_layout *l,
                                                struct codecache_layout *own) {
  if (l->read_bound) return l; /* bound already: its thread and mask asked */
  *own = *l;
  own->read_guarded = l->read && l->mask;
  if (own->read_guarded) {
    own->read_tid = plat_gettid();
    own->read_mask = l->mask();
  }
  return own;
}

void codecache_bind(const struct codecache_layout *l, struct codecache_layout *own) {
  int guarded = l->read && l->mask; /* the guard's thread and mask, asked once here */
  codecache_bind_to(l, own, guarded ? plat_gettid() : 0, guarded ? l->mask() : 0);
}

void codecache_bind_to(const struct codecache_layout *l, struct codecache_layout *own, pid_t tid,
                       uint64_t mask) {
  *own = *l;
  own->read_guarded = l->read && l->mask;
  own->read_tid = tid;
  own->read_mask = mask;
  own->read_bound = 1;
}

/* See codecache_internal.h. The fallback is plat_read_memory's read, but by syscall(): libc's
 * process_vm_readv wrapper is not on the signal path's list
 * (tests/sampler/check_signal_symbols.py). */
int codecache_peek(const struct codecache_layout *l, uintptr_t addr, void *buf, size_t len) {
  if (!addr) return -EFAULT;
  if (l->read_guarded) {
    int rc = l->read(buf, (const void *)addr, len, l->read_tid, l->read_mask);
    if (rc == 0 || rc == -EFAULT) return rc;
  }
  struct iovec local = {buf, len}, remote = {(void *)addr, len};
  int e = errno;
  long n = syscall(SYS_process_vm_readv, (long)getpid(), &local, 1L, &remote, 1L, 0L);
  errno = e;
  return n == (long)len ? 0 : -EFAULT;
}

static long max_l(long a, long b) { return a > b ? a : b; }

long codecache_segmap_start(const unsigned char *map, long n, long base, long *idx) {
  long i = *idx;
  for (;;) {
    if (i < base || i >= base + n) {
      *idx = i;
      return -EAGAIN;
    }
    unsigned char b = map[i - base];
    if (b == 0xFF) return -ENOENT;
    if (b == 0) return i;
    if (i - b < 0) return -EFAULT;
    i -= b; /* strictly down: the walk ends */
  }
}

#define MAP_WINDOW 256 /* segment-map bytes read at once: one hop is at most 0xFE */
#define HEAP_READ 512  /* bytes of a CodeHeap read at once (its fields lie within) */
#define BLOB_READ 512  /* bytes of a CodeBlob header read at once */

/* See codecache_internal.h. */
int codecache_heap_at(const struct codecache_layout *l, uintptr_t heap, struct codecache_heap *hp) {
  unsigned char h[HEAP_READ];
  long need = max_l(l->heap_memory, l->heap_segmap) +
              max_l(l->vs_low_boundary, max_l(l->vs_low, l->vs_high)) + 8;
  need = max_l(need, l->heap_log2 + 4);
  if (need > HEAP_READ || codecache_peek(l, heap, h, (size_t)need) != 0) return -EFAULT;
  uintptr_t lowb = hotspot_word_at(h, l->heap_memory + l->vs_low_boundary);
  hp->low = hotspot_word_at(h, l->heap_memory + l->vs_low);
  hp->high = hotspot_word_at(h, l->heap_memory + l->vs_high);
  hp->log2 = hotspot_i32_at(h, l->heap_log2);
  hp->map = hotspot_word_at(h, l->heap_segmap + l->vs_low);
  if (hp->low < lowb || hp->high < hp->low || hp->log2 < 0 || hp->log2 > 20 || !hp->map)
    return -EFAULT;
  return 0;
}

/* The HeapBlock holding pc in the heap at `heap` ([low, high) of its memory): the address of
 * its blob (the block's allocated space), 0 when pc is not in this heap; or -errno. */
static long in_heap(const struct codecache_layout *l, uintptr_t heap, uintptr_t pc,
                    uintptr_t *blob) {
  struct codecache_heap hp;
  *blob = 0;
  if (codecache_heap_at(l, heap, &hp) != 0) return -EFAULT;
  if (pc < hp.low || pc >= hp.high) return 0;
  const uintptr_t low = hp.low, map = hp.map;
  const int log2 = hp.log2;
  long idx = (long)((pc - low) >> log2);
  unsigned char m[MAP_WINDOW];
  for (int reads = 0;; reads++) {
    long base = idx >= MAP_WINDOW - 1 ? idx - (MAP_WINDOW - 1) : 0, n = idx - base + 1;
    if (reads == 4096 || codecache_peek(l, map + (uintptr_t)base, m, (size_t)n) != 0)
      return -EFAULT;
    long start = codecache_segmap_start(m, n, base, &idx);
    if (start == -EAGAIN) continue;
    if (start < 0) return start;
    uintptr_t block = low + ((uintptr_t)start << log2);
    unsigned char used = 0;
    if (codecache_peek(l, block + (uintptr_t)l->block_used, &used, 1) != 0) return -EFAULT;
    if (!used) return -ENOENT; /* a free block */
    *blob = block + (uintptr_t)l->block_size;
    return 0;
  }
}

/* Whether the strings are equal (strcmp is not on the signal path's list). */
static int same(const char *a, const char *b) {
  for (; *a == *b; a++, b++)
    if (!*a) return 1;
  return 0;
}

/* Whether the blob is an nmethod: HotSpot names them so ("nmethod", "native nmethod"). */
static int named_nmethod(const struct codecache_layout *l, uintptr_t name) {
  char s[16] = {0};
  if (codecache_peek(l, name, s, 15) != 0 && codecache_peek(l, name, s, 8) != 0) return 0;
  return same(s, "nmethod") || same(s, "native nmethod");
}

/* See codecache_internal.h. Five reads: the ConstMethod's two fields and the cache's length and
 * slot are read together (for the slots of the first 30 idnums; two reads beyond). */
void *codecache_method_id(const struct codecache_layout *l, uintptr_t m) {
  uintptr_t cm = 0, cp = 0, holder = 0, ids = 0, slots[32];
  unsigned char c[64];
  const long lo = l->const_constants < l->const_idnum ? l->const_constants : l->const_idnum,
             hi = max_l(l->const_constants, l->const_idnum) + 8;
  if (hi - lo > (long)sizeof c ||
      codecache_peek(l, m + (uintptr_t)l->method_const, &cm, sizeof cm) != 0 ||
      codecache_peek(l, cm + (uintptr_t)lo, c, (size_t)(hi - lo)) != 0)
    return NULL;
  uint16_t idnum;
  memcpy(&idnum, c + (l->const_idnum - lo), sizeof idnum);
  cp = hotspot_word_at(c, l->const_constants - lo);
  if (codecache_peek(l, cp + (uintptr_t)l->pool_holder, &holder, sizeof holder) != 0 ||
      codecache_peek(l, holder + (uintptr_t)l->klass_jmethod_ids, &ids, sizeof ids) != 0 || !ids)
    return NULL;
  /* the cache: its length, then a jmethodID per idnum */
  size_t want = (size_t)idnum + 2, n = want <= 32 ? want : 1;
  if (codecache_peek(l, ids, slots, sizeof slots[0] * n) != 0 || idnum >= slots[0]) return NULL;
  if (n == want) return (void *)slots[idnum + 1];
  if (codecache_peek(l, ids + sizeof(uintptr_t) * (1 + (uintptr_t)idnum), slots, sizeof slots[0]) !=
      0)
    return NULL;
  return (void *)slots[0];
}

/* See codecache_internal.h. */
int codecache_heaps(const struct codecache_layout *l, uintptr_t heaps[CODECACHE_HEAPS]) {
  uintptr_t ga = 0;
  unsigned char g[64];
  long gneed = max_l(l->ga_len, l->ga_data) + 8;
  if (gneed > (long)sizeof g || codecache_peek(l, l->heaps, &ga, sizeof ga) != 0 ||
      codecache_peek(l, ga, g, (size_t)gneed) != 0)
    return -EFAULT;
  int32_t n = hotspot_i32_at(g, l->ga_len);
  if (n <= 0 || n > CODECACHE_HEAPS ||
      codecache_peek(l, hotspot_word_at(g, l->ga_data), heaps, sizeof heaps[0] * (size_t)n) != 0)
    return -EFAULT;
  return n;
}

/* See codecache_internal.h. */
int codecache_blob_at(const struct codecache_layout *l, uintptr_t blob, uintptr_t inside,
                      struct codecache_blob *b) {
  unsigned char h[BLOB_READ];
  long need = 8 + max_l(max_l(l->blob_name, l->blob_size),
                        max_l(max_l(l->blob_code_begin, l->blob_code_end),
                              max_l(l->blob_code_offset, l->blob_data_offset)));
  need = max_l(need, max_l(l->nm_method, l->nm_comp_level) + 8);
  if (need > BLOB_READ || codecache_peek(l, blob, h, (size_t)need) != 0) return -EFAULT;
  memset(b, 0, sizeof *b);
  b->blob = blob;
  b->comp_level = -1;
  int32_t size = hotspot_i32_at(h, l->blob_size);
  if (l->blob_code_begin >= 0) {
    b->code_begin = hotspot_word_at(h, l->blob_code_begin);
    b->code_end = hotspot_word_at(h, l->blob_code_end);
  } else {
    b->code_begin = blob + (uintptr_t)hotspot_i32_at(h, l->blob_code_offset);
    b->code_end = blob + (uintptr_t)hotspot_i32_at(h, l->blob_data_offset);
  }
  /* a blob's code lies inside it; anything else is not a blob (or one being rewritten) */
  if (size <= 0 || b->code_begin < blob || b->code_end < b->code_begin ||
      b->code_end > blob + (uintptr_t)size || inside < blob || inside >= blob + (uintptr_t)size)
    return -EFAULT;
  b->is_nmethod = named_nmethod(l, hotspot_word_at(h, l->blob_name));
  if (!b->is_nmethod) return 0;
  b->method = hotspot_word_at(h, l->nm_method);
  int32_t level = 0;
  memcpy(&level, h + l->nm_comp_level, (size_t)l->comp_level_bytes); /* little-endian */
  if (l->comp_level_bytes == 1) level = (int8_t)level;
  if (l->comp_level_bytes == 2) level = (int16_t)level;
  b->comp_level = level;
  b->jmethod_id = b->method ? codecache_method_id(l, b->method) : NULL;
  return 0;
}

int codecache_compile_id(const struct codecache_layout *layout, const struct codecache_blob *b) {
  struct codecache_layout own;
  const struct codecache_layout *l = codecache_reader(layout, &own);
  int32_t id = -1;
  if (!b->is_nmethod || l->nm_compile_id < 0 ||
      codecache_peek(l, b->blob + (uintptr_t)l->nm_compile_id, &id, sizeof id) != 0 || id <= 0)
    return -1;
  return id;
}

uintptr_t codecache_method_code(const struct codecache_layout *layout, void *id) {
  struct codecache_layout own;
  const struct codecache_layout *l = codecache_reader(layout, &own);
  uintptr_t m = 0, nm = 0;
  if (!id || l->method_code < 0 || codecache_peek(l, (uintptr_t)id, &m, sizeof m) != 0 || !m ||
      codecache_peek(l, m + (uintptr_t)l->method_code, &nm, sizeof nm) != 0)
    return 0;
  return nm;
}

int codecache_find(const struct codecache_layout *layout, uintptr_t pc, struct codecache_blob *b) {
  struct codecache_layout own;
  const struct codecache_layout *l = codecache_reader(layout, &own);
  uintptr_t heaps[CODECACHE_HEAPS];
  int n = codecache_heaps(l, heaps);
  if (n < 0) return n;
  uintptr_t blob = 0;
  for (int i = 0; i < n && !blob; i++) {
    long rc = in_heap(l, heaps[i], pc, &blob);
    if (rc < 0) return (int)rc;
  }
  if (!blob) return -ENOENT;
  return codecache_blob_at(l, blob, pc, b);
}
