/*
 * test_codecache.c — the code-cache reader's segment-map walk (codecache_segmap_start) on
 * synthetic maps laid out as HotSpot's CodeHeap marks them: a block's first segment 0, the
 * others counting up to 0xFE and over again from 1, a free segment 0xFF; read whole and in
 * windows (the lookup reads at most 256 bytes at a time), and maps that are not maps. And the
 * scopes' decoders (codecache_stream_uint, codecache_scope_head) on both encodings HotSpot has
 * used — vectors from the encoding's definition, a round trip through its writer, bytes that
 * are no value, and ScopeDesc heads read out of real JVMs. Its reads: the fault guard's
 * guard_read of readable, PROT_NONE and unmapped memory from a thread and a signal handler, and
 * codecache_find reading through it or through the kernel, bound to its thread or not; a
 * guard_read inside another guard of the same thread and mask (the handler's sample). The whole
 * reader on a code cache of one nmethod laid out as HotSpot's (tests/support/fake_codecache.h),
 * and that nmethod put into the code map from a pc (codemap_add_cache_at). The reader itself is
 * proven against a JVM's events in jvm_codecache (tests/integration).
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "codecache.h"
#include "codemap.h"
#include "fake_codecache.h"
#include "guard.h"
#include "platform.h"

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

/* The reader's reads (codecache_peek through the layout's read): with the fault guard's
 * guard_read, a plain copy whose faults return -EFAULT — from a thread, from a signal handler —
 * instead of crashing the process; without it, process_vm_readv. */

static long page;
static unsigned char *readable, *none, *unmapped; /* a page each: read, PROT_NONE, gone */

static void pages(void) {
  page = sysconf(_SC_PAGESIZE);
  unsigned char *p =
      mmap(NULL, (size_t)page * 3, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  cr_assert_neq(p, MAP_FAILED);
  readable = p, none = p + page, unmapped = p + 2 * page;
  memset(readable, 0x5A, (size_t)page);
  cr_assert_eq(mprotect(none, (size_t)page, PROT_NONE), 0);
  cr_assert_eq(munmap(unmapped, (size_t)page), 0);
}

/* guard_read at each of the pages from the calling thread, answers into rc[0..3]: the readable
 * page, PROT_NONE, unmapped, a read running from the readable page into PROT_NONE. */
static void read_all(int rc[4], unsigned char *got) {
  pid_t tid = plat_gettid();
  uint64_t mask = guard_mask_now();
  rc[0] = guard_read(got, readable, 64, tid, mask);
  rc[1] = guard_read(got, none, 8, tid, mask);
  rc[2] = guard_read(got, unmapped + 16, 8, tid, mask);
  rc[3] = guard_read(got, readable + page - 4, 8, tid, mask);
}

Test(guard_read, without_the_guard_installed_nothing_is_read) {
  pages();
  unsigned char got[8] = {0};
  cr_expect_eq(guard_read(got, readable, 8, plat_gettid(), guard_mask_now()), -ENOSYS);
  cr_expect_eq(got[0], 0);
}

Test(guard_read, faults_come_back_as_efault) {
  pages();
  cr_assert_eq(guard_install(), 0);
  uint64_t faults = guard_faults();
  unsigned char got[64] = {0};
  int rc[4];
  read_all(rc, got);
  cr_expect_eq(rc[0], 0);
  cr_expect_eq(got[0], 0x5A);
  cr_expect_eq(got[63], 0x5A);
  cr_expect_eq(rc[1], -EFAULT, "PROT_NONE: %d", rc[1]);
  cr_expect_eq(rc[2], -EFAULT, "unmapped: %d", rc[2]);
  cr_expect_eq(rc[3], -EFAULT, "into PROT_NONE: %d", rc[3]);
  cr_expect_eq(guard_faults(), faults + 3, "each fault contained and counted");
  /* more faults than the table has slots: each guard leaves its slot */
  for (int i = 0; i < 1000; i++) cr_assert_eq(guard_read(got, none, 8, plat_gettid(), 0), -EFAULT);
  guard_uninstall();
}

/* How many guards the table takes now (each taken, then left). */
static int free_slots(pid_t tid, uint64_t mask) {
  static struct guard all[1024];
  volatile int n = 0; /* inlined beside a sigsetjmp */
  while (n < 1024 && guard_register(&all[n], tid, mask) == 0) n++;
  for (int k = 0; k < n; k++) guard_leave(&all[k]);
  return n;
}

/* The reader called from code that holds a guard already — the signal handler's sample, same
 * thread and mask: the fault is the inner guard's (the newest, lowest on the stack), an
 * -EFAULT for the read, not a jump back into the outer guard's code with the inner guard's
 * slot left taken. */
Test(guard_read, inside_another_guard_of_the_same_thread_and_mask) {
  pages();
  cr_assert_eq(guard_install(), 0);
  pid_t tid = plat_gettid();
  uint64_t mask = guard_mask_now(), faults = guard_faults();
  unsigned char got[8];
  volatile int reads = 0, rc = 1;
  int before = free_slots(tid, mask);
  struct guard g;
  int f = guard_enter(&g, tid, mask);
  cr_assert_neq(f, GUARD_FULL);
  if (f == 0) {
    for (; reads < 8; reads++) { /* from several places in the table */
      rc = guard_read(got, none, 8, tid, mask);
      if (rc != -EFAULT) break;
    }
  }
  guard_leave(&g);
  cr_expect_eq(f, 0, "the outer guard took the inner read's fault (after %d reads)", reads);
  cr_expect_eq(rc, -EFAULT);
  cr_expect_eq(guard_faults(), faults + 8);
  int after = free_slots(tid, mask);
  cr_expect(before > 1 && after == before, "slots free: %d before, %d after", before, after);
  guard_uninstall();
}

static void *on_thread(void *arg) {
  read_all(arg, (unsigned char[64]){0});
  return NULL;
}

Test(guard_read, from_another_thread) {
  pages();
  cr_assert_eq(guard_install(), 0);
  int rc[4] = {1, 1, 1, 1};
  pthread_t t;
  cr_assert_eq(pthread_create(&t, NULL, on_thread, rc), 0);
  pthread_join(t, NULL);
  cr_expect(rc[0] == 0 && rc[1] == -EFAULT && rc[2] == -EFAULT && rc[3] == -EFAULT, "%d %d %d %d",
            rc[0], rc[1], rc[2], rc[3]);
  guard_uninstall();
}

static int in_handler[4];
static void on_usr1(int sig) {
  (void)sig;
  unsigned char got[64];
  read_all(in_handler, got); /* with the handler's own mask (SIGUSR1 blocked) */
}

Test(guard_read, from_a_signal_handler) {
  pages();
  cr_assert_eq(guard_install(), 0);
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_usr1;
  cr_assert_eq(sigaction(SIGUSR1, &sa, NULL), 0);
  for (int i = 0; i < 4; i++) in_handler[i] = 1;
  cr_assert_eq(raise(SIGUSR1), 0);
  cr_expect(in_handler[0] == 0 && in_handler[1] == -EFAULT && in_handler[2] == -EFAULT &&
                in_handler[3] == -EFAULT,
            "%d %d %d %d", in_handler[0], in_handler[1], in_handler[2], in_handler[3]);
  guard_uninstall();
}

Test(guard_read, a_full_table_reads_nothing_and_drops_no_sample) {
  pages();
  cr_assert_eq(guard_install(), 0);
  static struct guard held[256];
  int n = 0;
  while (n < 256 && guard_register(&held[n], 100000 + n, 0) == 0) n++;
  uint64_t full = guard_full();
  unsigned char got[8] = {0};
  cr_expect_eq(guard_read(got, readable, 8, plat_gettid(), guard_mask_now()), -ENOSPC);
  cr_expect_eq(guard_full(), full, "guard_full counts dropped samples only");
  for (int i = 0; i < n; i++) guard_leave(&held[i]);
  guard_uninstall();
}

/* A layout whose heap list lies on a PROT_NONE page: codecache_find answers -EFAULT, through the
 * guard (a contained fault counted) or through process_vm_readv (none). */
static int find_on_bad_heaps(int with_guard, int bound, uint64_t *faults) {
  struct codecache_layout l, own;
  memset(&l, 0, sizeof l);
  l.heaps = (uintptr_t)none;
  l.ga_data = 8;
  if (with_guard) l.read = guard_read, l.mask = guard_mask_now;
  if (bound) codecache_bind(&l, &own); /* the thread's id and mask asked once, here */
  uint64_t before = guard_faults();
  struct codecache_blob b;
  int rc = codecache_find(bound ? &own : &l, (uintptr_t)readable, &b);
  *faults = guard_faults() - before;
  return rc;
}

Test(guard_read, the_reader_reads_through_the_guard_or_the_kernel) {
  pages();
  cr_assert_eq(guard_install(), 0);
  uint64_t faults;
  for (int bound = 0; bound < 2; bound++) {
    cr_expect_eq(find_on_bad_heaps(1, bound, &faults), -EFAULT);
    cr_expect_eq(faults, 1, "the guard's read, its fault contained (bound %d)", bound);
    cr_expect_eq(find_on_bad_heaps(0, bound, &faults), -EFAULT);
    cr_expect_eq(faults, 0, "process_vm_readv: no fault (bound %d)", bound);
  }
  guard_uninstall();
  cr_expect_eq(find_on_bad_heaps(1, 0, &faults), -EFAULT, "the guard taken out: the kernel reads");
  cr_expect_eq(faults, 0);
  cr_expect_eq(find_on_bad_heaps(1, 1, &faults), -EFAULT, "bound, the guard taken out: the kernel");
  cr_expect_eq(faults, 0);
}

/* The reader on a code cache of one nmethod (fake_codecache.h): the blob, its method's
 * jmethodID through the Method's chain, its level, the scope at a pc of its code and none past
 * the last PcDesc; no blob for a pc outside the heaps. */
#define FAKE_METHOD ((jmethodID)0x5000)

Test(codecache, the_nmethod_its_method_and_its_scope_from_a_pc) {
  struct fake_codecache f;
  cr_assert_eq(fake_codecache_make(&f, FAKE_METHOD, 7), 0);
  struct codecache_blob b;
  cr_assert_eq(codecache_find(&f.layout, f.code_begin + 3, &b), 0);
  cr_expect_eq(b.is_nmethod, 1);
  cr_expect_eq(b.comp_level, 4);
  cr_expect_eq(b.jmethod_id, (void *)FAKE_METHOD);
  cr_expect_eq(b.code_begin, f.code_begin);
  cr_expect_eq(b.code_end, f.code_end);
  struct codecache_frame fr[4];
  cr_assert_eq(codecache_scopes(&f.layout, &b, f.code_begin + 3, fr, 4), 1);
  cr_expect_eq(fr[0].jmethod_id, (void *)FAKE_METHOD);
  cr_expect_eq(fr[0].bci, 7);
  cr_expect_eq(codecache_scopes(&f.layout, &b, f.code_begin + 100, fr, 4), -ENOENT,
               "past the last PcDesc");
  struct codecache_blob none;
  cr_expect_eq(codecache_find(&f.layout, (uintptr_t)&none, &none), -ENOENT, "on the stack");
  fake_codecache_free(&f);
}

/* What a sample found in the code cache, put into the code map by the sampler thread: the next
 * lookup there is a map hit with the same inline chain. */
Test(codecache, an_nmethod_from_a_pc_into_the_code_map) {
  cr_assert_eq(codemap_init(), 0);
  struct fake_codecache f;
  cr_assert_eq(fake_codecache_make(&f, FAKE_METHOD, 7), 0);
  struct codemap_hit hit;
  cr_assert_eq(codemap_lookup(f.code_begin + 3, &hit), 0, "not in the map yet");
  struct codemap_cache_stats st;
  cr_assert_eq(codemap_add_cache_at(&f.layout, f.code_begin + 3, &st), 0);
  cr_expect_eq(st.nmethods, 1);
  cr_expect_eq(st.added, 1);
  cr_assert_eq(codemap_lookup(f.code_begin + 3, &hit), 1);
  cr_expect_eq(hit.kind, CODEMAP_NMETHOD);
  cr_expect_eq(hit.method, FAKE_METHOD);
  cr_expect_eq(hit.start, f.code_begin);
  cr_expect_eq(hit.end, f.code_end);
  cr_expect_eq(hit.ninline, 1);
  cr_expect_eq(hit.inl_method[0], FAKE_METHOD);
  cr_expect_eq(hit.inl_bci[0], 7);
  cr_expect_eq(codemap_add_cache_at(&f.layout, (uintptr_t)&st, &st), -ENOENT, "no code there");
  cr_expect_eq(st.added, 0);
  fake_codecache_free(&f);
  codemap_fini();
}

/* A start's walk of the code cache (codemap_add_cache) reads an nmethod's table once: a later
 * walk that finds the same compilation there (address, method, compile id) renews the entry
 * without reading it, and a sweep from before that walk keeps it; another compilation at the
 * same address is read again, and so is an entry an event added (its compile id unknown); what
 * no walk found again is swept. */
Test(codecache, a_later_start_keeps_the_same_compilation_and_reads_another) {
  cr_assert_eq(codemap_init(), 0);
  struct fake_codecache f;
  cr_assert_eq(fake_codecache_make(&f, FAKE_METHOD, 7), 0);
  struct codemap_cache_stats st;
  struct codemap_hit hit;
  cr_assert_eq(codemap_add_cache(&f.layout, &st), 0);
  cr_expect(st.nmethods == 1 && st.added == 1 && st.kept == 0, "first: %lu found, %lu added",
            (unsigned long)st.nmethods, (unsigned long)st.added);
  static char elsewhere[64]; /* an nmethod of another address that no walk finds */
  cr_assert_eq(codemap_add_method((jmethodID)0x6000, elsewhere, sizeof elsewhere, NULL), 0);
  uint64_t gen = codemap_generation();
  cr_assert_eq(codemap_add_cache(&f.layout, &st), 0);
  cr_expect(st.added == 0 && st.kept == 1, "again: %lu added, %lu kept", (unsigned long)st.added,
            (unsigned long)st.kept);
  cr_expect_eq(codemap_sweep(gen), 1, "the one no walk found again");
  cr_assert_eq(codemap_lookup(f.code_begin + 3, &hit), 1, "the renewed one stays");
  cr_expect_eq(hit.inl_bci[0], 7);
  cr_expect_eq(codemap_lookup((uintptr_t)elsewhere, &hit), 0);
  fake_codecache_recompile(&f, 2, 9); /* another compilation at the same address */
  cr_assert_eq(codemap_add_cache(&f.layout, &st), 0);
  cr_expect(st.added == 1 && st.kept == 0, "recompiled: %lu added, %lu kept",
            (unsigned long)st.added, (unsigned long)st.kept);
  cr_assert_eq(codemap_lookup(f.code_begin + 3, &hit), 1);
  cr_expect_eq(hit.inl_bci[0], 9, "its own records");
  cr_assert_eq(codemap_add_method(FAKE_METHOD, (const void *)f.code_begin,
                                  (jint)(f.code_end - f.code_begin), NULL),
               0, "the event of the same compilation");
  cr_assert_eq(codemap_add_cache(&f.layout, &st), 0);
  cr_expect(st.added == 1 && st.kept == 0, "after an event: %lu added, %lu kept",
            (unsigned long)st.added, (unsigned long)st.kept);
  fake_codecache_free(&f);
  codemap_fini();
}

/* With the code cache as the source (no CompiledMethodLoad), a walked frame's method leads to
 * its nmethod (Method::_code, the blob's address), which goes into the map from that address,
 * and then the frame-kind index knows it; the walk during a run sweeps the compiled methods it
 * did not find again, not the stubs (they are not walked: their names are the events'). */
/* How the frame-kind index judges a lone frame of m away from any code (a caller's frame). */
static int kind_of(jmethodID m) {
  asgct_frame f = {.lineno = 3, .method_id = m};
  unsigned char kind = 0;
  codemap_frame_kinds(0, &f, 1, &kind);
  return kind;
}

Test(codecache, a_method_to_its_current_code_and_a_sweep_of_compiled_methods_only) {
  cr_assert_eq(codemap_init(), 0);
  struct fake_codecache f;
  cr_assert_eq(fake_codecache_make(&f, FAKE_METHOD, 7), 0);
  uintptr_t nm = codecache_method_code(&f.layout, f.id_slot);
  cr_assert_eq(nm, f.code_begin - 2048, "the blob (its code at 2048): %#lx", (unsigned long)nm);
  cr_expect_eq(kind_of(FAKE_METHOD), CODEMAP_FRAME_INTERPRETED, "not known before");
  struct codemap_cache_stats st;
  cr_assert_eq(codemap_add_cache_at(&f.layout, nm, &st), 0, "from the blob's address");
  cr_expect_eq(st.added, 1);
  cr_expect_eq(kind_of(FAKE_METHOD), CODEMAP_FRAME_JIT, "known as compiled now");
  struct codemap_hit hit;
  cr_assert_eq(codemap_lookup(f.code_begin + 3, &hit), 1);
  cr_expect_gt(hit.compile_id, 0, "its compile id in the hit");
  cr_expect_eq(codecache_method_code(&f.layout, NULL), 0);
  static uintptr_t unloaded; /* an id whose method is gone: it points to NULL */
  cr_expect_eq(codecache_method_code(&f.layout, &unloaded), 0);
  struct codecache_layout old = f.layout;
  f.layout.method_code = -1;
  cr_expect_eq(codecache_method_code(&f.layout, f.id_slot), 0, "not described: none");
  f.layout = old;

  static char stub[64], gone[64];
  cr_assert_eq(codemap_add_stub("a stub", stub, sizeof stub, 0), 0);
  cr_assert_eq(codemap_add_method((jmethodID)0x6000, gone, sizeof gone, NULL), 0);
  uint64_t gen = codemap_generation();
  cr_assert_eq(codemap_add_cache(&f.layout, &st), 0);
  cr_expect_eq(st.kept, 1);
  cr_expect_eq(codemap_sweep_compiled(gen), 1, "the compiled method no walk found");
  cr_expect_eq(codemap_lookup((uintptr_t)gone, &hit), 0);
  cr_expect_eq(codemap_lookup((uintptr_t)stub, &hit), 1, "the stub stays");
  cr_expect_eq(codemap_lookup(f.code_begin + 3, &hit), 1, "the renewed one stays");
  cr_expect_eq(kind_of((jmethodID)0x6000), CODEMAP_FRAME_INTERPRETED, "the index forgot it");
  cr_expect_eq(codemap_sweep(gen), 1, "a start's sweep takes the stub too");
  fake_codecache_free(&f);
  codemap_fini();
}
