/*
 * test_codemap.c — the compiled-code map: range edges, stubs, unload, address reuse,
 * overlapping replacement, inline chains, 50k entries against a brute-force model, and
 * lookups racing writers that load, unload and reuse ranges.
 *
 * Code addresses here are made up and never dereferenced; jmethodIDs are encoded integers so a
 * hit can be checked against the range it claims. CODEMAP_BENCH=1 prints lookup/add costs.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "codemap.h"

#define MID(x) ((jmethodID)(uintptr_t)(x))
#define ADDR(x) ((const void *)(uintptr_t)(x))

static void setup(void) { cr_assert_eq(codemap_init(), 0); }
static void teardown(void) { codemap_fini(); }

TestSuite(codemap, .init = setup, .fini = teardown);

static uint64_t rng_next(uint64_t *s) { /* xorshift64* */
  *s ^= *s >> 12;
  *s ^= *s << 25;
  *s ^= *s >> 27;
  return *s * 2685821657736338717ull;
}

Test(codemap_noinit, lookup_before_init_finds_nothing) {
  struct codemap_hit h;
  cr_assert_eq(codemap_lookup(0x1000, &h), 0);
  cr_assert_eq(codemap_count(), 0);
  cr_assert_eq(codemap_add_method(MID(1), ADDR(0x1000), 16, NULL), -ENODEV);
  cr_assert_eq(codemap_add_stub("x", ADDR(0x1000), 16, 0), -ENODEV);
  cr_assert_eq(codemap_remove_method(MID(1), ADDR(0x1000)), -ENODEV);
}

Test(codemap, empty_map) {
  struct codemap_hit h;
  uintptr_t pcs[] = {0, 1, 0x1000, UINTPTR_MAX};
  for (size_t i = 0; i < sizeof pcs / sizeof *pcs; i++) cr_assert_eq(codemap_lookup(pcs[i], &h), 0);
  cr_assert_eq(codemap_count(), 0);
  cr_assert_eq(codemap_remove_method(MID(1), ADDR(0x1000)), -ENOENT);
  cr_assert_eq(codemap_init(), 0, "init is idempotent");
}

Test(codemap, invalid_arguments) {
  struct {
    const void *code;
    jint size;
  } cases[] = {{NULL, 16}, {ADDR(0x1000), 0}, {ADDR(0x1000), -5}, {ADDR(UINTPTR_MAX - 4), 16}};
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    cr_assert_eq(codemap_add_method(MID(1), cases[i].code, cases[i].size, NULL), -EINVAL,
                 "case %zu", i);
    cr_assert_eq(codemap_add_stub("s", cases[i].code, cases[i].size, 0), -EINVAL, "case %zu", i);
  }
  cr_assert_eq(codemap_count(), 0);
}

Test(codemap, range_edges) {
  cr_assert_eq(codemap_add_method(MID(7), ADDR(0x1000), 0x100, NULL), 0);
  cr_assert_eq(codemap_add_method(MID(8), ADDR(0x1100), 0x10, NULL), 0); /* adjacent after */
  struct {
    uintptr_t pc;
    int found;
    uintptr_t method;
  } cases[] = {
      {0xfff, 0, 0},  {0x1000, 1, 7}, {0x1080, 1, 7}, {0x10ff, 1, 7},
      {0x1100, 1, 8}, {0x110f, 1, 8}, {0x1110, 0, 0}, {0, 0, 0},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    struct codemap_hit h;
    memset(&h, 0xa5, sizeof h);
    int got = codemap_lookup(cases[i].pc, &h);
    cr_assert_eq(got, cases[i].found, "pc %#lx", (unsigned long)cases[i].pc);
    if (got) {
      cr_assert_eq(h.kind, CODEMAP_NMETHOD);
      cr_assert_eq((uintptr_t)h.method, cases[i].method, "pc %#lx", (unsigned long)cases[i].pc);
      cr_assert_eq(h.start, cases[i].method == 7 ? 0x1000u : 0x1100u);
      cr_assert_eq(h.end, cases[i].method == 7 ? 0x1100u : 0x1110u);
      cr_assert_eq(h.ninline, 0);
      cr_assert_null(h.name);
    }
  }
  cr_assert_eq(codemap_count(), 2);
}

Test(codemap, stubs_by_name) {
  const char *names[] = {"Interpreter", "libmSin", "StubRoutines::arraycopy", "I2C/C2I adapters"};
  char buf[64];
  for (size_t i = 0; i < 4; i++) {
    strcpy(buf, names[i]); /* the map must copy the name */
    cr_assert_eq(codemap_add_stub(buf, ADDR(0x40000 + i * 0x1000), 0x800, 0), 0);
  }
  memset(buf, 'x', sizeof buf - 1);
  cr_assert_eq(codemap_add_stub(NULL, ADDR(0x50000), 8, 0), 0);
  cr_assert_eq(codemap_add_stub("", ADDR(0x50100), 8, 0), 0); /* an empty name: no empty frame */
  for (size_t i = 0; i < 4; i++) {
    struct codemap_hit h;
    cr_assert_eq(codemap_lookup(0x40000 + i * 0x1000 + 0x7ff, &h), 1);
    cr_assert_eq(h.kind, CODEMAP_STUB);
    cr_assert_str_eq(h.name, names[i]);
    cr_assert_null(h.method);
    cr_assert_eq(codemap_lookup(0x40000 + i * 0x1000 + 0x800, &h), 0);
  }
  struct codemap_hit h;
  cr_assert_eq(codemap_lookup(0x50004, &h), 1);
  cr_assert_str_eq(h.name, "unknown stub");
  cr_assert_eq(codemap_lookup(0x50104, &h), 1);
  cr_assert_str_eq(h.name, "unknown stub");
  /* A name stays valid after its stub is replaced; a repeated name is shared. */
  cr_assert_eq(codemap_lookup(0x41000, &h), 1);
  const char *sin = h.name;
  cr_assert_eq(codemap_add_method(MID(3), ADDR(0x41000), 0x800, NULL), 0);
  cr_assert_eq(codemap_add_stub("libmSin", ADDR(0x60000), 0x10, 0), 0);
  cr_assert_eq(codemap_lookup(0x60000, &h), 1);
  cr_assert_eq(h.name, sin);
  cr_assert_str_eq(sin, "libmSin");
  cr_assert_eq(codemap_remove_method(NULL, ADDR(0x60000)), -ENOENT,
               "stubs are not unloaded as methods");
}

Test(codemap, stub_frame_size_and_interpreter_come_back_with_the_hit) {
  struct codemap_hit h;
  cr_assert_eq(codemap_add_stub("_new_array_Java", ADDR(0x70000), 0x60, 2), 0);
  cr_assert_eq(codemap_add_stub("Interpreter", ADDR(0x71000), 0x800, 0), 0);
  cr_assert_eq(codemap_add_stub("bad", ADDR(0x72000), 0x10, -5), 0);
  cr_assert_eq(codemap_lookup(0x7005f, &h), 1);
  cr_assert_eq(h.frame_words, 2);
  cr_assert_eq(h.interpreter, 0);
  cr_assert_eq(codemap_lookup(0x71000, &h), 1);
  cr_assert_eq(h.frame_words, 0);
  cr_assert_eq(h.interpreter, 1, "the template interpreter is told apart once, at add");
  cr_assert_eq(codemap_lookup(0x72000, &h), 1);
  cr_assert_eq(h.frame_words, 0, "a negative size is unknown");
  cr_assert_eq(codemap_add_method(MID(9), ADDR(0x70000), 0x60, NULL), 0);
  cr_assert_eq(codemap_lookup(0x70000, &h), 1);
  cr_assert_eq(h.frame_words, 0, "the nmethod that replaced the stub has no stub frame size");
}

Test(codemap, unload) {
  cr_assert_eq(codemap_add_method(MID(1), ADDR(0x2000), 0x40, NULL), 0);
  cr_assert_eq(codemap_add_method(MID(2), ADDR(0x3000), 0x40, NULL), 0);
  cr_assert_eq(codemap_remove_method(MID(2), ADDR(0x2000)), -ENOENT, "wrong method");
  cr_assert_eq(codemap_remove_method(MID(1), ADDR(0x2010)), -ENOENT, "not the start");
  cr_assert_eq(codemap_remove_method(MID(1), ADDR(0x2000)), 0);
  struct codemap_hit h;
  cr_assert_eq(codemap_lookup(0x2000, &h), 0);
  cr_assert_eq(codemap_lookup(0x203f, &h), 0);
  cr_assert_eq(codemap_lookup(0x3000, &h), 1);
  cr_assert_eq(codemap_count(), 1);
  cr_assert_eq(codemap_remove_method(MID(1), ADDR(0x2000)), -ENOENT, "twice");
  cr_assert_eq(codemap_remove_method(MID(2), ADDR(0x3000)), 0);
  cr_assert_eq(codemap_count(), 0);
  cr_assert_eq(codemap_lookup(0x3000, &h), 0);
  struct codemap_stats st;
  codemap_stats(&st);
  cr_assert_eq(st.adds, 2);
  cr_assert_eq(st.removes, 2);
  cr_assert_eq(st.remove_miss, 3);
}

Test(codemap, address_reuse_by_another_method) {
  struct codemap_hit h;
  cr_assert_eq(codemap_add_method(MID(10), ADDR(0x8000), 0x200, NULL), 0);
  cr_assert_eq(codemap_lookup(0x8100, &h), 1);
  uint64_t g1 = h.generation;
  cr_assert_eq(codemap_remove_method(MID(10), ADDR(0x8000)), 0);
  cr_assert_eq(codemap_add_method(MID(11), ADDR(0x8000), 0x100, NULL), 0);
  cr_assert_eq(codemap_lookup(0x8100, &h), 0, "old tail of the range is gone");
  cr_assert_eq(codemap_lookup(0x80ff, &h), 1);
  cr_assert_eq((uintptr_t)h.method, 11);
  cr_assert_gt(h.generation, g1);
  /* The VM reused the address before we saw the unload: the newer load wins, and the late
   * unload of the old method must not remove the new one. */
  cr_assert_eq(codemap_add_method(MID(12), ADDR(0x8000), 0x100, NULL), 0);
  cr_assert_eq(codemap_remove_method(MID(11), ADDR(0x8000)), -ENOENT);
  cr_assert_eq(codemap_lookup(0x8000, &h), 1);
  cr_assert_eq((uintptr_t)h.method, 12);
  cr_assert_eq(codemap_count(), 1);
  struct codemap_stats st;
  codemap_stats(&st);
  cr_assert_eq(st.replaced, 1);
}

/* Three adjacent ranges [0x1000,0x1100) [0x1100,0x1200) [0x1200,0x1300), then one new range:
 * which old ones survive. */
Test(codemap, overlapping_replacement) {
  struct {
    uintptr_t start, size;
    int survivors[3]; /* 1 if old range i survives */
    uint64_t replaced;
  } cases[] = {
      {0x10c0, 0x180, {0, 0, 0}, 3}, /* touches all three */
      {0x1100, 0x100, {1, 0, 1}, 1}, /* exactly the middle one */
      {0x10ff, 0x2, {0, 0, 1}, 2},   /* one byte of each of two */
      {0x1040, 0x10, {0, 1, 1}, 1},  /* inside the first */
      {0x0f00, 0x100, {1, 1, 1}, 0}, /* ends where the first starts */
      {0x1300, 0x10, {1, 1, 1}, 0},  /* starts where the last ends */
      {0x0f00, 0x1000, {0, 0, 0}, 3},
  };
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
    codemap_fini();
    cr_assert_eq(codemap_init(), 0);
    for (int i = 0; i < 3; i++)
      cr_assert_eq(codemap_add_method(MID(i + 1), ADDR(0x1000 + i * 0x100), 0x100, NULL), 0);
    cr_assert_eq(codemap_add_stub("new", ADDR(cases[c].start), (jint)cases[c].size, 0), 0);
    size_t alive = 1;
    for (int i = 0; i < 3; i++) {
      struct codemap_hit h;
      uintptr_t probe = 0x1000 + i * 0x100;
      int inside_new = probe >= cases[c].start && probe < cases[c].start + cases[c].size;
      if (cases[c].survivors[i]) {
        alive++;
        cr_assert_eq(codemap_lookup(probe, &h), 1, "case %zu old %d", c, i);
        cr_assert_eq((uintptr_t)h.method, (uintptr_t)i + 1, "case %zu old %d", c, i);
      } else if (!inside_new) {
        cr_assert_eq(codemap_lookup(probe, &h), 0, "case %zu old %d gone", c, i);
      } else {
        cr_assert_eq(codemap_lookup(probe, &h), 1);
        cr_assert_eq(h.kind, CODEMAP_STUB, "case %zu old %d replaced", c, i);
      }
    }
    struct codemap_hit h;
    cr_assert_eq(codemap_lookup(cases[c].start + cases[c].size - 1, &h), 1);
    cr_assert_str_eq(h.name, "new");
    cr_assert_eq(h.start, cases[c].start);
    cr_assert_eq(codemap_count(), alive, "case %zu", c);
    struct codemap_stats st;
    codemap_stats(&st);
    cr_assert_eq(st.replaced, cases[c].replaced, "case %zu", c);
  }
}

/* Inline records: pcs 0x10, 0x20, 0x40 past the start (given out of order, behind a dummy
 * record); the chain for a pc is the record with the smallest pc >= it. */
Test(codemap, inline_chains) {
  const uintptr_t code = 0x90000;
  jmethodID m_a[] = {MID(103), MID(101)}; /* innermost first: 103 inlined into 101 */
  jint b_a[] = {5, 2};
  jmethodID m_b[] = {MID(104), MID(102), MID(101)};
  jint b_b[] = {7, 3, 9};
  jmethodID m_c[] = {MID(101)};
  jint b_c[] = {40};
  PCStackInfo pcs[] = {
      {(void *)(code + 0x20), 3, m_b, b_b},
      {(void *)(code + 0x10), 2, m_a, b_a},
      {(void *)(code + 0x40), 1, m_c, b_c},
      {(void *)(code + 0x30), 0, NULL, NULL}, /* no frames: ignored */
  };
  jvmtiCompiledMethodLoadInlineRecord inl = {{JVMTI_CMLR_INLINE_INFO, 1, 0, NULL}, 4, pcs};
  jvmtiCompiledMethodLoadDummyRecord dummy = {{JVMTI_CMLR_DUMMY, 1, 0, &inl.header}, "dummy"};
  cr_assert_eq(codemap_add_method(MID(101), ADDR(code), 0x80, &dummy), 0);
  memset(pcs, 0, sizeof pcs); /* the map keeps its own copy */
  memset(m_b, 0, sizeof m_b);

  struct {
    uintptr_t off;
    int n;
    uintptr_t m0;
    jint b0;
  } cases[] = {
      {0x00, 2, 103, 5}, {0x0f, 2, 103, 5},  {0x10, 2, 103, 5},  {0x11, 3, 104, 7},
      {0x20, 3, 104, 7}, {0x21, 1, 101, 40}, {0x30, 1, 101, 40}, {0x40, 1, 101, 40},
      {0x41, 0, 0, 0},   {0x7f, 0, 0, 0},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    struct codemap_hit h;
    cr_assert_eq(codemap_lookup(code + cases[i].off, &h), 1);
    cr_assert_eq((uintptr_t)h.method, 101);
    cr_assert_eq(h.ninline, cases[i].n, "pc +%#lx", (unsigned long)cases[i].off);
    if (cases[i].n) {
      cr_assert_eq((uintptr_t)h.inl_method[0], cases[i].m0, "pc +%#lx",
                   (unsigned long)cases[i].off);
      cr_assert_eq(h.inl_bci[0], cases[i].b0, "pc +%#lx", (unsigned long)cases[i].off);
      cr_assert_eq((uintptr_t)h.inl_method[cases[i].n - 1], 101,
                   "outermost is the compiled method");
    }
  }
  struct codemap_hit h;
  cr_assert_eq(codemap_lookup(code + 0x18, &h), 1);
  cr_assert_eq((uintptr_t)h.inl_method[1], 102);
  cr_assert_eq(h.inl_bci[1], 3);
  cr_assert_eq(h.inl_bci[2], 9);
}

Test(codemap, inline_chain_deeper_than_max_keeps_innermost) {
  enum { D = CODEMAP_MAX_INLINE + 4 };
  jmethodID m[D];
  for (int i = 0; i < D; i++) m[i] = MID(500 + i);
  PCStackInfo pc = {(void *)0xa0010, D, m, NULL}; /* no bcis: reported as -1 */
  jvmtiCompiledMethodLoadInlineRecord inl = {{JVMTI_CMLR_INLINE_INFO, 1, 0, NULL}, 1, &pc};
  cr_assert_eq(codemap_add_method(MID(500 + D - 1), ADDR(0xa0000), 0x20, &inl), 0);
  struct codemap_hit h;
  cr_assert_eq(codemap_lookup(0xa0008, &h), 1);
  cr_assert_eq(h.ninline, CODEMAP_MAX_INLINE);
  for (int i = 0; i < CODEMAP_MAX_INLINE; i++) {
    cr_assert_eq((uintptr_t)h.inl_method[i], (uintptr_t)500 + i);
    cr_assert_eq(h.inl_bci[i], -1);
  }
  struct codemap_stats st;
  codemap_stats(&st);
  cr_assert_eq(st.inline_trunc, 1);
}

/* ---- frame kinds ------------------------------------------------------------------------------ */

#define J CODEMAP_FRAME_JIT
#define I CODEMAP_FRAME_INLINED
#define Z CODEMAP_FRAME_INTERPRETED
#define NAT CODEMAP_FRAME_NATIVE

/* kinds of frames (method id, bci) walked from pc, as a string "jiz-" (- native) */
static const char *kinds_of(uintptr_t pc, const uintptr_t (*f)[2], int n) {
  static char out[32];
  asgct_frame frames[16];
  unsigned char k[16];
  for (int i = 0; i < n; i++) frames[i] = (asgct_frame){(jint)f[i][1], MID(f[i][0])};
  memset(k, 0xee, sizeof k);
  codemap_frame_kinds(pc, frames, n, k);
  for (int i = 0; i < n; i++)
    out[i] = k[i] == J ? 'j' : k[i] == I ? 'i' : k[i] == Z ? 'z' : k[i] == NAT ? '-' : '?';
  out[n] = '\0';
  return out;
}

/* nmethod of 201 at 0xb0000: 203 inlined into 202 at bci 7, 202 into 201 at bci 9 */
static void add_nmethod_201(void) {
  static jmethodID chain[] = {MID(203), MID(202), MID(201)};
  static jint bcis[] = {4, 7, 9};
  PCStackInfo pcs[] = {{(void *)0xb0040, 3, chain, bcis},
                       {(void *)0xb0080, 1, chain + 2, bcis + 2}};
  jvmtiCompiledMethodLoadInlineRecord inl = {{JVMTI_CMLR_INLINE_INFO, 1, 0, NULL}, 2, pcs};
  cr_assert_eq(codemap_add_method(MID(201), ADDR(0xb0000), 0x100, &inl), 0);
}

Test(codemap, frame_kinds_at_the_pc_are_exact) {
  add_nmethod_201();
  cr_assert_eq(codemap_add_stub("Interpreter", ADDR(0xc0000), 0x1000, 0), 0);
  /* in the inlined code: 203 and 202 inlined, 201 JIT, its caller 300 (never compiled) interpreted */
  const uintptr_t walk[][2] = {{203, 4}, {202, 7}, {201, 9}, {300, 12}};
  cr_expect_str_eq(kinds_of(0xb0030, walk, 4), "iijz");
  /* in 201's own code after the inlined part */
  const uintptr_t own[][2] = {{201, 9}, {300, 12}};
  cr_expect_str_eq(kinds_of(0xb0070, own, 2), "jz");
  /* the walk disagrees with the chain (another compile's view): up to the nmethod's method */
  const uintptr_t other[][2] = {{202, 1}, {201, 9}, {300, 12}};
  cr_expect_str_eq(kinds_of(0xb0030, other, 3), "ijz");
  /* in the interpreter: the leaf is interpreted though 201 has compiled code */
  const uintptr_t interp[][2] = {{201, 3}, {300, 12}};
  cr_expect_str_eq(kinds_of(0xc0010, interp, 2), "zz");
  /* a native method on top (lineno -3) stays plain */
  const uintptr_t native[][2] = {{400, (uintptr_t)-3}, {201, 9}};
  cr_expect_str_eq(kinds_of(0xdead0, native, 2), "-j");
}

Test(codemap, frame_kinds_of_callers_follow_the_live_code) {
  add_nmethod_201();
  /* walked from a pc outside the map (a runtime call): callers judged by what is compiled */
  const uintptr_t walk[][2] = {{203, 4}, {202, 7}, {201, 9}, {300, 12}};
  cr_expect_str_eq(kinds_of(0xdead0, walk, 4), "iijz");
  /* 203 called (not inlined) from 202 at another bci: not inlined; 203 itself not compiled */
  const uintptr_t call[][2] = {{203, 4}, {202, 8}, {201, 9}};
  cr_expect_str_eq(kinds_of(0xdead0, call, 3), "zij");
  /* unloaded: nothing is compiled any more */
  cr_assert_eq(codemap_remove_method(MID(201), ADDR(0xb0000)), 0);
  cr_expect_str_eq(kinds_of(0xdead0, walk, 4), "zzzz");
  /* a reload elsewhere brings it back; a replacing overlap takes it away again */
  add_nmethod_201();
  cr_expect_str_eq(kinds_of(0xdead0, walk, 4), "iijz");
  cr_assert_eq(codemap_add_method(MID(999), ADDR(0xb0080), 0x10, NULL), 0);
  cr_expect_str_eq(kinds_of(0xdead0, walk, 4), "zzzz");
  /* two live nmethods say the same: one unload leaves the other's word */
  add_nmethod_201();
  cr_assert_eq(codemap_add_method(MID(201), ADDR(0xe0000), 0x100, NULL), 0);
  cr_assert_eq(codemap_remove_method(MID(201), ADDR(0xb0000)), 0);
  cr_expect_str_eq(kinds_of(0xdead0, walk, 4), "zzjz");
}

/* A run's start: the map's events were off since the last run, so a replay of the live code
 * renews what lives; the sweep drops the rest — across many leaves, kinds included. */
Test(codemap, sweep_drops_what_a_replay_did_not_renew) {
  add_nmethod_201(); /* will be unloaded while nobody listens */
  for (uintptr_t i = 0; i < 1000; i++)
    cr_assert_eq(codemap_add_method(MID(1000 + i), ADDR(0x100000 + i * 0x100), 0x80, NULL), 0);
  cr_assert_eq(codemap_add_stub("StubRoutines::x", ADDR(0x90000), 0x40, 2), 0);
  cr_expect_str_eq(kinds_of(0xdead0, (const uintptr_t[][2]){{203, 4}, {202, 7}, {201, 9}}, 3),
                   "iij");
  uint64_t before = codemap_generation();
  cr_assert_gt(before, 0);
  cr_assert_eq(codemap_sweep(before), 1002, "no replay: all of it goes");
  cr_assert_eq(codemap_count(), 0);
  /* again, with a replay of the odd methods and the stub between the generation and the sweep */
  add_nmethod_201();
  for (uintptr_t i = 0; i < 1000; i++)
    cr_assert_eq(codemap_add_method(MID(1000 + i), ADDR(0x100000 + i * 0x100), 0x80, NULL), 0);
  cr_assert_eq(codemap_add_stub("StubRoutines::x", ADDR(0x90000), 0x40, 2), 0);
  before = codemap_generation();
  for (uintptr_t i = 1; i < 1000; i += 2)
    cr_assert_eq(codemap_add_method(MID(1000 + i), ADDR(0x100000 + i * 0x100), 0x80, NULL), 0);
  cr_assert_eq(codemap_add_stub("StubRoutines::x", ADDR(0x90000), 0x40, 2), 0);
  cr_assert_eq(codemap_sweep(before), 501, "the even methods and 201");
  cr_assert_eq(codemap_count(), 501);
  struct codemap_hit h;
  for (uintptr_t i = 0; i < 1000; i++) {
    int hit = codemap_lookup(0x100000 + i * 0x100 + 0x10, &h);
    cr_assert_eq(hit, (int)(i & 1), "method %lu", (unsigned long)i);
    if (hit) cr_assert_eq(h.method, MID(1000 + i));
  }
  cr_assert_eq(codemap_lookup(0x90010, &h), 1);
  cr_assert_eq(h.kind, CODEMAP_STUB);
  cr_assert_eq(codemap_lookup(0xb0010, &h), 0, "201 was not renewed");
  cr_expect_str_eq(kinds_of(0xdead0, (const uintptr_t[][2]){{203, 4}, {202, 7}, {201, 9}}, 3),
                   "zzz");
  cr_assert_eq(codemap_sweep(before), 0, "twice: nothing more");
  struct codemap_stats st;
  codemap_stats(&st);
  cr_assert_eq(st.swept, 1002 + 501);
}

/* A replay of the stubs renews the ones the map holds, name and range the same, instead of adding
 * them again: the sweep after it keeps them; another name or range is not that stub. */
Test(codemap, a_stubs_replay_renews_what_the_map_holds) {
  cr_assert_eq(codemap_add_stub("vtable stub", ADDR(0x90000), 0x40, 0), 0);
  cr_assert_eq(codemap_add_stub("I2C/C2I adapters", ADDR(0x91000), 0x80, 0), 0);
  uint64_t before = codemap_generation();
  cr_assert_eq(codemap_renew_stub("vtable stub", ADDR(0x90000), 0x40), 0);
  cr_assert_eq(codemap_renew_stub("itable stub", ADDR(0x91000), 0x80), -ENOENT, "another name");
  cr_assert_eq(codemap_renew_stub("I2C/C2I adapters", ADDR(0x91000), 0x40), -ENOENT,
               "another range");
  cr_assert_eq(codemap_renew_stub("vtable stub", ADDR(0x92000), 0x40), -ENOENT, "none there");
  cr_assert_eq(codemap_sweep(before), 1, "the adapter was not renewed");
  struct codemap_hit h;
  cr_assert_eq(codemap_lookup(0x90010, &h), 1);
  cr_assert_eq(h.kind, CODEMAP_STUB);
  cr_expect_str_eq(h.name, "vtable stub");
  cr_assert_eq(codemap_lookup(0x91010, &h), 0);
}

Test(codemap, frame_kinds_index_grows_and_keeps_counts) {
  /* many nmethods, each inlining its own callee: the index grows past its first size */
  for (uintptr_t k = 0; k < 3000; k++) {
    jmethodID chain[] = {MID(0x100000 + 16 * k), MID(0x200000 + 16 * k)};
    jint bcis[] = {1, (jint)k};
    PCStackInfo pc = {(void *)(0x4000000 + 0x100 * k + 8), 2, chain, bcis};
    jvmtiCompiledMethodLoadInlineRecord inl = {{JVMTI_CMLR_INLINE_INFO, 1, 0, NULL}, 1, &pc};
    cr_assert_eq(codemap_add_method(chain[1], ADDR(0x4000000 + 0x100 * k), 0x100, &inl), 0);
  }
  for (uintptr_t k = 0; k < 3000; k += 7) {
    const uintptr_t walk[][2] = {{0x100000 + 16 * k, 1}, {0x200000 + 16 * k, k}};
    cr_assert_str_eq(kinds_of(0xdead0, walk, 2), "ij", "k=%lu", (unsigned long)k);
  }
  for (uintptr_t k = 0; k < 3000; k += 2)
    cr_assert_eq(codemap_remove_method(MID(0x200000 + 16 * k), ADDR(0x4000000 + 0x100 * k)), 0);
  for (uintptr_t k = 0; k < 10; k++) {
    const uintptr_t walk[][2] = {{0x100000 + 16 * k, 1}, {0x200000 + 16 * k, k}};
    cr_assert_str_eq(kinds_of(0xdead0, walk, 2), k % 2 ? "ij" : "zz", "k=%lu", (unsigned long)k);
  }
  struct codemap_stats st;
  codemap_stats(&st);
  cr_assert_eq(st.kinds_lost, 0);
}

/* Classes unloaded and loaded again: every round brings methods with new jmethodIDs, compiled
 * with an inlined callee, then unloaded. The index holds the live code's keys, not every key
 * ever seen. */
Test(codemap, frame_kinds_index_follows_the_live_code_not_all_code_ever) {
  for (uintptr_t round = 0; round < 200; round++) {
    for (uintptr_t k = 0; k < 100; k++) {
      uintptr_t id = 0x100000 + 16 * (round * 100 + k), at = 0x4000000 + 0x100 * k;
      jmethodID chain[] = {MID(id), MID(id + 8)};
      jint bcis[] = {1, 2};
      PCStackInfo pc = {(void *)(at + 8), 2, chain, bcis};
      jvmtiCompiledMethodLoadInlineRecord inl = {{JVMTI_CMLR_INLINE_INFO, 1, 0, NULL}, 1, &pc};
      cr_assert_eq(codemap_add_method(chain[1], ADDR(at), 0x100, &inl), 0);
    }
    const uintptr_t walk[][2] = {{0x100000 + 16 * round * 100, 1},
                                 {0x100000 + 16 * round * 100 + 8, 2}};
    cr_assert_str_eq(kinds_of(0xdead0, walk, 2), "ij", "round %lu", (unsigned long)round);
    for (uintptr_t k = 0; k < 100; k++) {
      uintptr_t id = 0x100000 + 16 * (round * 100 + k);
      cr_assert_eq(codemap_remove_method(MID(id + 8), ADDR(0x4000000 + 0x100 * k)), 0);
    }
    cr_assert_str_eq(kinds_of(0xdead0, walk, 2), "zz", "round %lu: unloaded", (unsigned long)round);
  }
  struct codemap_stats st;
  codemap_stats(&st);
  cr_expect_eq(st.kinds_lost, 0);
  /* 200 rounds x 200 keys were seen; at most a rebuild's worth of dead ones stay */
  cr_expect_leq(st.kinds_keys, 2048, "the index holds %lu keys", (unsigned long)st.kinds_keys);
}

/* ---- 50k entries against a brute-force model ----------------------------------------------- */

#define CELL 16
#define BASE 0x10000000u
#define NCELLS (1u << 22) /* 64 MiB of fake address space */

struct model_ent {
  uintptr_t start, end;
  int live;
};

static uint32_t *owner;        /* cell -> entry id (0: none) */
static struct model_ent *ents; /* by id */
static uint32_t nents;

static void model_drop(uint32_t id) {
  for (uintptr_t a = ents[id].start; a < ents[id].end; a += CELL) owner[(a - BASE) / CELL] = 0;
  ents[id].live = 0;
}

static void model_check(uintptr_t pc) {
  struct codemap_hit h;
  uint32_t id = owner[(pc - BASE) / CELL];
  int got = codemap_lookup(pc, &h);
  cr_assert_eq(got, id != 0, "pc %#lx: lookup %d, model id %u", (unsigned long)pc, got, id);
  if (got) {
    cr_assert_eq((uintptr_t)h.method, id, "pc %#lx", (unsigned long)pc);
    cr_assert_eq(h.start, ents[id].start);
    cr_assert_eq(h.end, ents[id].end);
  }
}

Test(codemap, fifty_thousand_entries_against_model, .timeout = 120) {
  owner = calloc(NCELLS, sizeof *owner);
  ents = calloc(200000, sizeof *ents);
  cr_assert(owner && ents);
  nents = 0;
  uint64_t seed = 42;
  size_t live = 0;
  /* Phase 1: 50k non-overlapping loads at random places (adds in random order). */
  while (live < 50000) {
    uint32_t cell = (uint32_t)(rng_next(&seed) % (NCELLS - 64));
    uint32_t len = 1 + (uint32_t)(rng_next(&seed) % 48);
    int free_ = 1;
    for (uint32_t c = cell; c < cell + len && free_; c++) free_ = owner[c] == 0;
    if (!free_) continue;
    uint32_t id = ++nents;
    ents[id] = (struct model_ent){BASE + cell * CELL, BASE + (cell + len) * CELL, 1};
    for (uint32_t c = cell; c < cell + len; c++) owner[c] = id;
    cr_assert_eq(codemap_add_method(MID(id), ADDR(ents[id].start), (jint)(len * CELL), NULL), 0);
    live++;
  }
  cr_assert_eq(codemap_count(), 50000);
  for (int i = 0; i < 100000; i++) model_check(BASE + rng_next(&seed) % ((uint64_t)NCELLS * CELL));
  for (uint32_t id = 1; id <= nents; id += 97) { /* edges of some */
    model_check(ents[id].start);
    model_check(ents[id].end - 1);
    model_check(ents[id].start - 1);
    model_check(ents[id].end);
  }
  /* Phase 2: unloads, and loads that overlap and replace. */
  for (int op = 0; op < 30000; op++) {
    if (rng_next(&seed) % 2) {
      uint32_t id = 1 + (uint32_t)(rng_next(&seed) % nents);
      int rc = codemap_remove_method(MID(id), ADDR(ents[id].start));
      cr_assert_eq(rc, ents[id].live ? 0 : -ENOENT, "remove id %u", id);
      if (ents[id].live) {
        model_drop(id);
        live--;
      }
    } else {
      uint32_t cell = (uint32_t)(rng_next(&seed) % (NCELLS - 256));
      uint32_t len = 1 + (uint32_t)(rng_next(&seed) % 200);
      for (uint32_t c = cell; c < cell + len; c++)
        if (owner[c]) {
          model_drop(owner[c]);
          live--;
        }
      uint32_t id = ++nents;
      ents[id] = (struct model_ent){BASE + cell * CELL, BASE + (cell + len) * CELL, 1};
      for (uint32_t c = cell; c < cell + len; c++) owner[c] = id;
      cr_assert_eq(codemap_add_method(MID(id), ADDR(ents[id].start), (jint)(len * CELL), NULL), 0);
      live++;
    }
    if (op % 16 == 0) model_check(BASE + rng_next(&seed) % ((uint64_t)NCELLS * CELL));
  }
  cr_assert_eq(codemap_count(), live);
  for (int i = 0; i < 100000; i++) model_check(BASE + rng_next(&seed) % ((uint64_t)NCELLS * CELL));
  for (uint32_t id = 1; id <= nents; id += 31)
    if (ents[id].live) {
      model_check(ents[id].start);
      model_check(ents[id].end - 1);
    }
  /* Phase 3: unload everything that is left. */
  for (uint32_t id = 1; id <= nents; id++)
    if (ents[id].live) {
      cr_assert_eq(codemap_remove_method(MID(id), ADDR(ents[id].start)), 0);
      model_drop(id);
    }
  cr_assert_eq(codemap_count(), 0);
  for (int i = 0; i < 10000; i++) model_check(BASE + rng_next(&seed) % ((uint64_t)NCELLS * CELL));
  free(owner);
  free(ents);
}

/* ---- concurrency ------------------------------------------------------------------------------ */

/*
 * Each writer owns NSLOT slots of STRIDE bytes. Version v of slot k is a range whose offset and
 * size follow from (k, v) and may reach into slot k+1 (replacing its range). Its method id
 * encodes (k, v), so a reader can recompute the range a hit must have. After an unload or a
 * replacement returns, the writer publishes retired[k] = v: a lookup that starts after that
 * must never return version <= v of slot k.
 */
#define NWRITER 3
#define NSLOT 64
#define STRIDE 0x1000u
#define REGION 0x100000u
#define CBASE 0x20000000u

static atomic_uint_fast64_t retired[NWRITER * NSLOT];
static atomic_int stop;
static atomic_long lookups, hits, bad;

static uintptr_t slot_base(unsigned k) {
  return CBASE + (k / NSLOT) * REGION + (k % NSLOT) * STRIDE;
}
static uintptr_t ver_off(unsigned k, uint64_t v) {
  return ((k * 7919u + v * 104729u) % 32) * (STRIDE / 64);
}
static uintptr_t ver_size(unsigned k, uint64_t v) {
  return STRIDE / 4 + ((k * 31u + v * 131u) % 64) * (STRIDE / 64); /* may cross into k+1 */
}
static jmethodID ver_id(unsigned k, uint64_t v) { return MID(((uint64_t)v << 16) | k); }

static void *writer(void *arg) {
  unsigned w = (unsigned)(uintptr_t)arg;
  uint64_t seed = 0x9e3779b97f4a7c15ull * (w + 1);
  uint64_t ver[NSLOT] = {0}; /* live version per slot, 0 = none */
  uint64_t next[NSLOT];
  for (unsigned i = 0; i < NSLOT; i++) next[i] = 1;
  while (!atomic_load(&stop)) {
    unsigned i = (unsigned)(rng_next(&seed) % NSLOT), k = w * NSLOT + i;
    if (ver[i] && rng_next(&seed) % 2) {
      if (codemap_remove_method(ver_id(k, ver[i]), ADDR(slot_base(k) + ver_off(k, ver[i]))) != 0)
        atomic_fetch_add(&bad, 1); /* no cr_assert off the test's thread */
      atomic_store(&retired[k], ver[i]);
      ver[i] = 0;
    } else {
      uint64_t v = next[i]++;
      uintptr_t s = slot_base(k) + ver_off(k, v), e = s + ver_size(k, v);
      if (ver[i]) { /* the old version is replaced if the new one overlaps it, else unloaded */
        uintptr_t os = slot_base(k) + ver_off(k, ver[i]), oe = os + ver_size(k, ver[i]);
        if ((oe <= s || os >= e) && codemap_remove_method(ver_id(k, ver[i]), ADDR(os)) != 0)
          atomic_fetch_add(&bad, 1);
      }
      if (codemap_add_method(ver_id(k, v), ADDR(s), (jint)(e - s), NULL) != 0)
        atomic_fetch_add(&bad, 1);
      uint64_t old = ver[i];
      ver[i] = v;
      if (old) /* reuse of the slot: the old version is replaced */
        atomic_store(&retired[k], old);
      for (unsigned j = i + 1; j < NSLOT && j <= i + 1; j++) /* did it reach the next slot's? */
        if (ver[j] && slot_base(k + 1) + ver_off(k + 1, ver[j]) < e) {
          atomic_store(&retired[k + 1], ver[j]);
          ver[j] = 0;
        }
      if (i > 0 && ver[i - 1] && /* or the previous slot's range reaches into it */
          slot_base(k - 1) + ver_off(k - 1, ver[i - 1]) + ver_size(k - 1, ver[i - 1]) > s) {
        atomic_store(&retired[k - 1], ver[i - 1]);
        ver[i - 1] = 0;
      }
    }
  }
  return NULL;
}

static void *reader(void *arg) {
  uint64_t seed = (uintptr_t)arg * 0x2545f4914f6cdd1dull + 1;
  while (!atomic_load(&stop)) {
    unsigned k = (unsigned)(rng_next(&seed) % (NWRITER * NSLOT));
    uintptr_t pc = slot_base(k) + rng_next(&seed) % STRIDE;
    uint64_t before_k = atomic_load(&retired[k]);
    uint64_t before_prev = k % NSLOT ? atomic_load(&retired[k - 1]) : 0;
    struct codemap_hit h;
    atomic_fetch_add(&lookups, 1);
    if (!codemap_lookup(pc, &h)) continue;
    atomic_fetch_add(&hits, 1);
    unsigned hk = (unsigned)((uintptr_t)h.method & 0xffff);
    uint64_t hv = (uintptr_t)h.method >> 16;
    uintptr_t s = slot_base(hk) + ver_off(hk, hv);
    int ok = (hk == k || (hk + 1 == k && k % NSLOT)) && h.start == s &&
             h.end == s + ver_size(hk, hv) && pc >= h.start && pc < h.end &&
             h.kind == CODEMAP_NMETHOD && hv > (hk == k ? before_k : before_prev);
    if (!ok && atomic_fetch_add(&bad, 1) == 0)
      fprintf(stderr, "bad hit: pc %#lx slot %u (retired %lu/%lu) -> [%#lx,%#lx) slot %u v%lu\n",
              (unsigned long)pc, k, (unsigned long)before_k, (unsigned long)before_prev,
              (unsigned long)h.start, (unsigned long)h.end, hk, (unsigned long)hv);
  }
  return NULL;
}

/* Asks for frame kinds while the writers run: a live method is JIT or interpreted, never
 * anything else, and nothing is read after it was freed (the sanitizer build checks that). */
static void *kinds_reader(void *arg) {
  (void)arg;
  uint64_t seed = 99;
  while (!atomic_load(&stop)) {
    asgct_frame f[4];
    unsigned char k[4];
    for (int i = 0; i < 4; i++)
      f[i] = (asgct_frame){
          (jint)(rng_next(&seed) % 8),
          ver_id((unsigned)(rng_next(&seed) % (NWRITER * NSLOT)), 1 + rng_next(&seed) % 4)};
    codemap_frame_kinds(slot_base((unsigned)(rng_next(&seed) % (NWRITER * NSLOT))), f, 4, k);
    for (int i = 0; i < 4; i++)
      if (k[i] != CODEMAP_FRAME_JIT && k[i] != CODEMAP_FRAME_INTERPRETED &&
          k[i] != CODEMAP_FRAME_INLINED)
        atomic_fetch_add(&bad, 1);
  }
  return NULL;
}

Test(codemap, lookups_race_loads_unloads_and_reuse, .timeout = 60) {
  pthread_t wt[NWRITER], rt[3];
  for (unsigned i = 0; i < NWRITER; i++) pthread_create(&wt[i], NULL, writer, (void *)(uintptr_t)i);
  for (unsigned i = 0; i < 2; i++) pthread_create(&rt[i], NULL, reader, (void *)(uintptr_t)i);
  pthread_create(&rt[2], NULL, kinds_reader, NULL);
  struct timespec d = {1, 500000000};
  nanosleep(&d, NULL);
  atomic_store(&stop, 1);
  for (unsigned i = 0; i < NWRITER; i++) pthread_join(wt[i], NULL);
  for (unsigned i = 0; i < 3; i++) pthread_join(rt[i], NULL);
  struct codemap_stats st;
  codemap_stats(&st);
  cr_log_info("%ld lookups, %ld hits, %lu adds, %lu removes, %lu replaced, %lu grace periods",
              atomic_load(&lookups), atomic_load(&hits), (unsigned long)st.adds,
              (unsigned long)st.removes, (unsigned long)st.replaced, (unsigned long)st.grace_waits);
  cr_assert_eq(atomic_load(&bad), 0, "%ld inconsistent or stale hits", atomic_load(&bad));
  cr_assert_gt(atomic_load(&hits), 1000);
  cr_assert_gt(st.removes, 100);
  cr_assert_gt(st.replaced, 100);
  cr_assert_gt(st.grace_waits, 0);
}

/* ---- costs (CODEMAP_BENCH=1) -------------------------------------------------------------- */

static double now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e9 + t.tv_nsec;
}

Test(codemap, costs, .timeout = 120) {
  if (!getenv("CODEMAP_BENCH")) cr_skip_test("CODEMAP_BENCH not set");
  size_t sizes[] = {1000, 50000};
  for (size_t si = 0; si < 2; si++) {
    codemap_fini();
    cr_assert_eq(codemap_init(), 0);
    size_t n = sizes[si];
    uint64_t seed = 7;
    uintptr_t *starts = malloc(n * sizeof *starts);
    for (size_t i = 0; i < n; i++) /* shuffled order of adds: sorted positions, random order */
      starts[i] = 0x40000000u + i * 0x400;
    for (size_t i = n - 1; i > 0; i--) {
      size_t j = rng_next(&seed) % (i + 1);
      uintptr_t t = starts[i];
      starts[i] = starts[j];
      starts[j] = t;
    }
    double t0 = now_ns();
    for (size_t i = 0; i < n; i++) codemap_add_method(MID(i + 1), ADDR(starts[i]), 0x300, NULL);
    double t1 = now_ns();
    enum { L = 2000000 };
    uintptr_t *pcs = malloc(L / 100 * sizeof *pcs);
    for (size_t i = 0; i < L / 100; i++) pcs[i] = 0x40000000u + rng_next(&seed) % (n * 0x400);
    long found = 0;
    struct codemap_hit h;
    double t2 = now_ns();
    for (size_t i = 0; i < L; i++) found += codemap_lookup(pcs[i % (L / 100)], &h);
    double t3 = now_ns();
    for (size_t i = 0; i < n; i++) codemap_remove_method(MID(i + 1), ADDR(starts[i]));
    double t4 = now_ns();
    printf("codemap %6zu entries: add %.0f ns, lookup %.1f ns (%.0f%% hits), remove %.0f ns\n", n,
           (t1 - t0) / n, (t3 - t2) / L, 100.0 * found / L, (t4 - t3) / n);
    free(pcs);
    free(starts);
  }
}
