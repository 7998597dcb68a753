/*
 * Tests of the call-frame compiler (sampler/native/cfi.c) and its look-up (cfi_lookup_sig.c): a
 * hand-assembled .eh_frame whose every row is known, the table of this test's own code, and
 * garbage that must give rows or nothing but never a read outside the range it was given
 * (the sanitizer build catches one).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfi.h"
#include "objects.h"
#include "platform.h"

/* ---- a hand-assembled .eh_frame ---- */

struct asm_buf {
  unsigned char b[4096];
  size_t n;
};

static void put(struct asm_buf *a, const void *p, size_t n) {
  cr_assert_leq(a->n + n, sizeof a->b);
  memcpy(a->b + a->n, p, n);
  a->n += n;
}
static void put1(struct asm_buf *a, unsigned v) {
  unsigned char c = (unsigned char)v;
  put(a, &c, 1);
}
static void put4(struct asm_buf *a, uint32_t v) { put(a, &v, 4); }
static void put8(struct asm_buf *a, uint64_t v) { put(a, &v, 8); }

#define RA 16 /* the CIE's return-address column: any register number does */
#define TEXT 0x10000000u

/* Appends a CIE (augmentation "zR", absolute FDE addresses, code_align 1, data_align -8,
 * initial rules CFA = sp + 8, return address at CFA - 8); returns its offset. */
static size_t cie(struct asm_buf *a) {
  size_t at = a->n;
  struct asm_buf body = {.n = 0};
  put4(&body, 0); /* CIE id */
  put1(&body, 1); /* version */
  put(&body, "zR", 3);
  put1(&body, 1);    /* code_align */
  put1(&body, 0x78); /* data_align -8 */
  put1(&body, RA);
  put1(&body, 1);    /* augmentation data: */
  put1(&body, 0x00); /* FDE pointers: absptr */
  put1(&body, 0x0c), put1(&body, (unsigned)plat_dwarf_sp), put1(&body, 8); /* def_cfa sp, 8 */
  put1(&body, 0x80 | RA), put1(&body, 1);                                  /* offset ra, 1 */
  put4(a, (uint32_t)body.n);
  put(a, body.b, body.n);
  return at;
}

/* Appends an FDE for [TEXT + start, TEXT + end) with the given instructions; returns its
 * offset. */
static size_t fde(struct asm_buf *a, size_t cie_at, uint32_t start, uint32_t end,
                  const unsigned char *ins, size_t nins) {
  size_t at = a->n;
  put4(a, (uint32_t)(4 + 8 + 8 + 1 + nins));
  put4(a, (uint32_t)(a->n - cie_at)); /* CIE pointer: back from here to the CIE */
  put8(a, TEXT + start);
  put8(a, end - start);
  put1(a, 0); /* augmentation data length */
  put(a, ins, nins);
  return at;
}

static struct cfi_table *table;
static unsigned char *mem;

static void assemble(void) {
  const unsigned sp = (unsigned)plat_dwarf_sp, fp = (unsigned)plat_dwarf_fp;
  /* f1 at 0x10..0x50: a frame-pointer function */
  const unsigned char f1[] = {
      0x41,               /* advance 1 (0x11) */
      0x0e,      16,      /* def_cfa_offset 16 */
      0x80 | fp, 2,       /* fp at CFA - 16 */
      0x43,               /* advance 3 (0x14) */
      0x0d,      fp,      /* def_cfa_register fp */
      0x02,      0x2c,    /* advance1 44 (0x40) */
      0x0a,               /* remember_state */
      0x0c,      sp,   8, /* def_cfa sp, 8 */
      0x41,               /* advance 1 (0x41) */
      0x0b,               /* restore_state */
  };
  /* f2 at 0x50..0x60, right after f1: the first thread function (no caller) */
  const unsigned char f2[] = {0x07, RA}; /* undefined ra */
  /* f3 at 0x80..0x100 (a gap before it): a rule by DWARF expression */
  const unsigned char f3[] = {0x10, fp, 2,   0x77, 0x00, /* expression fp */
                              0x50,                      /* advance 16 */
                              0x0f, 1,  0x9c};           /* def_cfa_expression */
  /* f4 in another bucket: the CIE's rules only */
  const unsigned char f4[] = {0};
  struct asm_buf a = {.n = 0};
  size_t table_at = 16, entries = 4;
  a.n = table_at + entries * 8; /* .eh_frame_hdr's table, filled below */
  size_t c = cie(&a);
  size_t fdes[4] = {fde(&a, c, 0x10, 0x50, f1, sizeof f1), fde(&a, c, 0x50, 0x60, f2, sizeof f2),
                    fde(&a, c, 0x80, 0x100, f3, sizeof f3),
                    fde(&a, c, 0x3000, 0x3010, f4, sizeof f4)};
  const uint32_t starts[4] = {0x10, 0x50, 0x80, 0x3000};
  for (size_t i = 0; i < entries; i++) {
    int32_t pair[2] = {(int32_t)starts[i], (int32_t)fdes[i]}; /* relative to the header */
    memcpy(a.b + table_at + i * 8, pair, 8);
  }
  mem = malloc(a.n); /* exactly: a read past it is the sanitizer's to catch */
  memcpy(mem, a.b, a.n);
  uintptr_t hdr = (uintptr_t)mem;
  table = cfi_build(hdr, hdr + table_at, entries, TEXT, TEXT + 0x4000, hdr, hdr + a.n);
  cr_assert_not_null(table, "the table compiles");
}

static void cleanup(void) {
  free(table);
  free(mem);
}

/* A rule in words, for messages and comparisons: "sp+8 fp=same ra=-8". */
static const char *say(const struct cfi_rule *r, char *buf, size_t len) {
  if (!r) return "(none)";
  static const char *const kind[] = {"sp", "fp", "general", "none"};
  char fp[16], ra[16];
  if (r->fp == CFI_SAME)
    snprintf(fp, sizeof fp, "same");
  else if (r->fp == CFI_UNDEFINED)
    snprintf(fp, sizeof fp, "undef");
  else
    snprintf(fp, sizeof fp, "%d", r->fp);
  if (r->ra == CFI_SAME)
    snprintf(ra, sizeof ra, "same");
  else if (r->ra == CFI_UNDEFINED)
    snprintf(ra, sizeof ra, "undef");
  else
    snprintf(ra, sizeof ra, "%d", r->ra);
  if (cfi_rule_cfa(r) >= CFI_GENERAL)
    snprintf(buf, len, "%s", kind[cfi_rule_cfa(r)]);
  else
    snprintf(buf, len, "%s+%d fp=%s ra=%s", kind[cfi_rule_cfa(r)], cfi_rule_cfa_offset(r), fp, ra);
  return buf;
}

Test(cfi, every_row_of_a_hand_assembled_eh_frame, .init = assemble, .fini = cleanup) {
  static const struct {
    uint32_t pc;
    const char *want;
  } cases[] = {
      {0x0f, "(none)"},             /* before the first function */
      {0x10, "sp+8 fp=same ra=-8"}, /* entry: the CIE's rules */
      {0x11, "sp+16 fp=-16 ra=-8"}, /* after push fp */
      {0x13, "sp+16 fp=-16 ra=-8"},
      {0x14, "fp+16 fp=-16 ra=-8"}, /* after mov sp, fp */
      {0x3f, "fp+16 fp=-16 ra=-8"},
      {0x40, "sp+8 fp=-16 ra=-8"},  /* the epilogue, remembered state */
      {0x41, "fp+16 fp=-16 ra=-8"}, /* restored */
      {0x4f, "fp+16 fp=-16 ra=-8"},
      {0x50, "sp+8 fp=same ra=undef"}, /* the next function starts where f1 ends */
      {0x5f, "sp+8 fp=same ra=undef"},
      {0x60, "none"}, /* a gap: no FDE */
      {0x7f, "none"},
      {0x80, "general"}, /* an expression: libunwind's */
      {0xff, "general"},
      {0x100, "none"},
      {0x2fff, "none"},
      {0x3000, "sp+8 fp=same ra=-8"}, /* another bucket */
      {0x300f, "sp+8 fp=same ra=-8"},
      {0x3010, "none"}, /* past the last function */
      {0x100000, "none"},
  };
  char buf[64];
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    const char *got = say(cfi_find(table, cases[i].pc), buf, sizeof buf);
    cr_expect_str_eq(got, cases[i].want, "pc +0x%x: %s, not %s", cases[i].pc, got, cases[i].want);
  }
  cr_expect_eq(table->ra_column, RA);
  cr_expect_eq(table->general, 1, "one row needs libunwind (%zu)", table->general);
}

/* ---- this test's own code ---- */

__attribute__((noinline)) int a_function(int x) { return x * 3 + 1; }

Test(cfi, the_entry_of_a_compiled_function_has_its_cfa_at_sp) {
  cr_assert_eq(objects_init(1), 0);
  unsigned t = objects_enter();
  uintptr_t pc = (uintptr_t)a_function;
  const struct object *o = objects_find(pc);
  cr_assert_not_null(o, "the test's own code is a loaded object");
  cr_assert_not_null(o->cfi, "with a compiled unwind table");
  const struct cfi_rule *r = cfi_find(o->cfi, pc - o->text_start);
  char buf[64];
  cr_assert_not_null(r);
  cr_expect_eq(cfi_rule_cfa(r), CFI_CFA_SP, "at entry the CFA is sp-relative: %s",
               say(r, buf, sizeof buf));
  cr_expect(r->fp == CFI_SAME, "nothing saved yet: %s", say(r, buf, sizeof buf));
  cr_expect_lt(o->cfi->general * 100, o->cfi->n, "almost every row is followed without libunwind");
  objects_exit(t);
}

/* The agent's start leaves the tables to the sampler thread's first refresh (objects.h). */
Test(cfi, a_start_without_tables_gets_them_at_the_first_refresh) {
  uintptr_t pc = (uintptr_t)a_function;
  cr_assert_eq(objects_init(0), 0);
  unsigned t = objects_enter();
  const struct object *o = objects_find(pc);
  cr_assert_not_null(o, "the test's own code is a loaded object");
  cr_expect_null(o->cfi, "objects_init(0) compiles no table");
  uint64_t generation = objects_generation();
  objects_exit(t);
  cr_expect_eq(objects_refresh(), 1, "the first refresh publishes the tables");
  t = objects_enter();
  o = objects_find(pc);
  cr_assert_not_null(o);
  cr_expect_not_null(o->cfi, "with the table compiled");
  cr_expect_gt(objects_generation(), generation);
  objects_exit(t);
  cr_expect_eq(objects_refresh(), 0, "the next refresh has nothing to do");
}

/* ---- garbage ---- */

Test(cfi, garbage_gives_rows_or_nothing_and_stays_in_its_range) {
  enum { SIZE = 64 * 1024, ENTRIES = 512 };
  unsigned seed = 12345;
  for (int round = 0; round < 200; round++) {
    unsigned char *m = malloc(SIZE);
    cr_assert_not_null(m);
    for (size_t i = 0; i < SIZE; i++) m[i] = (unsigned char)(rand_r(&seed) >> 7);
    /* a table whose FDE pointers land anywhere in the buffer, and some outside it */
    for (size_t i = 0; i < ENTRIES; i++) {
      int32_t pair[2] = {(int32_t)(i * 16), (int32_t)(rand_r(&seed) % (SIZE + 4096)) - 2048};
      memcpy(m + i * 8, pair, 8);
    }
    /* half the rounds with plausible CIE/FDE headers at the start of the entries */
    if (round % 2) {
      for (size_t i = 0; i < 64; i++) {
        size_t at = ENTRIES * 8 + (size_t)(rand_r(&seed) % (SIZE - ENTRIES * 8 - 64));
        uint32_t len = (uint32_t)(rand_r(&seed) % 64);
        memcpy(m + at, &len, 4);
      }
    }
    uintptr_t base = (uintptr_t)m;
    struct cfi_table *t = cfi_build(base, base, ENTRIES, 0, UINTPTR_MAX, base, base + SIZE);
    for (uint32_t pc = 0; t && pc < 0x10000; pc += 7) cfi_find(t, pc); /* every answer readable */
    free(t);
    free(m);
  }
}
