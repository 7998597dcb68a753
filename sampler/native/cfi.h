/*
 * cfi.h — a loaded object's call-frame information (.eh_frame) compiled, off the signal path,
 * into a table the native walk can follow in a few loads a frame: for each range of code, where
 * the frame's canonical frame address (CFA) is (sp or fp plus an offset), where the caller's fp
 * and return address were saved (at CFA + offset), or that this range needs the general
 * unwinder (libunwind: a DWARF expression, a CFA in another register, a signal frame...).
 *
 * Why: libunwind, with every cache off (its caches take locks or thread-local storage, neither
 * of which a signal handler may touch), parses the CIE and FDE and runs the CFA program of every
 * frame, every sample: 4-7 µs a frame in libjvm. The table answers the same question with two
 * binary searches.
 *
 * Built by cfi_build() while the object is known to be mapped (objects.c, inside
 * dl_iterate_phdr's callback); immutable after; read by cfi_find() on the signal path; freed by
 * the objects table once no walk can see it (epoch.h).
 */
#ifndef SAMPLER_CFI_H
#define SAMPLER_CFI_H

#include <stddef.h>
#include <stdint.h>

/* Where the CFA is: a register plus an offset, or "ask libunwind". */
enum cfi_cfa { CFI_CFA_SP = 0, CFI_CFA_FP = 1, CFI_GENERAL = 2, CFI_NO_INFO = 3 };

/* A saved register's rule, in cfi_row.fp / .ra when it is not an offset from the CFA. */
#define CFI_SAME INT16_MIN            /* the register still holds the caller's value */
#define CFI_UNDEFINED (INT16_MIN + 1) /* the value is lost: for the return address, no caller */

/* How to find the caller's frame from a range of code. */
struct cfi_rule {
  int32_t cfa; /* offset << 2 | enum cfi_cfa */
  int16_t fp;  /* caller's fp saved at CFA + fp, or CFI_SAME, CFI_UNDEFINED */
  int16_t ra;  /* return address at CFA + ra, or CFI_SAME (still in its register), CFI_UNDEFINED */
};

/* The code is cut in buckets of 1 << CFI_BUCKET_SHIFT bytes; a row is stored in one word: where
 * it starts within its bucket (high bits) and its rule's position (low CFI_RULE_BITS). */
#define CFI_BUCKET_SHIFT 10
#define CFI_RULE_BITS 22

/* Row i covers the code from its start up to the next row's with rules[row[i] & rule mask]; the
 * last row ends the covered code (CFI_NO_INFO). bucket[b] is the first row that starts in
 * bucket b or later, so a look-up reads one word of the index, a few adjacent words of row[]
 * and one rule (few rules are distinct: libjvm's ~190,000 rows use a handful): a walk in a
 * thread whose own work keeps the caches cold (a GC worker) pays two or three misses a frame,
 * not a binary search through megabytes. One allocation. */
struct cfi_table {
  size_t n;               /* rows */
  size_t nbuckets;        /* entries of bucket; the last is n */
  size_t nrules;          /* entries of rules */
  uint32_t first;         /* where the first row starts (offset from the object's text_start) */
  int ra_column;          /* the DWARF register of the return address (for CFI_SAME) */
  size_t general;         /* rows that need libunwind (statistics) */
  const uint32_t *row;    /* n: start within its bucket << CFI_RULE_BITS | rule */
  const uint32_t *bucket; /* nbuckets row positions */
  struct cfi_rule rules[];
};

static inline enum cfi_cfa cfi_rule_cfa(const struct cfi_rule *r) {
  return (enum cfi_cfa)(r->cfa & 3);
}
static inline int32_t cfi_rule_cfa_offset(const struct cfi_rule *r) { return r->cfa >> 2; }

/* Compiles the call-frame information of one loaded object: its .eh_frame, found through the
 * binary-search table of .eh_frame_hdr (table: pairs of int32 relative to eh_frame_hdr,
 * entries pairs), for code in [text_start, text_end). Reads only [map_lo, map_hi), which must
 * stay mapped during the call. Returns the table (malloc'd: free() it) or NULL (no memory, or
 * nothing usable). Not signal-safe. */
struct cfi_table *cfi_build(uintptr_t eh_frame_hdr, uintptr_t table, size_t entries,
                            uintptr_t text_start, uintptr_t text_end, uintptr_t map_lo,
                            uintptr_t map_hi);

/* A table of n rows, nbuckets buckets and nrules rules, its pointers set and the rest for the
 * caller to fill (one allocation: free() it), or NULL (no memory, or counts no table has). */
struct cfi_table *cfi_alloc(size_t n, size_t nbuckets, size_t nrules);

/* The size of t's allocation; its rules, rows and buckets follow the header in one block of
 * cfi_bytes(t) - sizeof *t bytes from t->rules (how objects.c keeps it on disk: diskcache.h). */
size_t cfi_bytes(const struct cfi_table *t);

/* Checks a table filled from elsewhere (a file: diskcache.h) into cfi_alloc's block: that
 * cfi_find can read nothing outside it and finds a row for every pc at or past `first` — every
 * rule index in range, the buckets in order and ending at n, the rows in order of their starts,
 * the first at `first` — and sets its statistics. Returns 0, or -1 (the table must not be used).
 * Not signal-safe. */
int cfi_adopt(struct cfi_table *t);

/* The rule for pc (an offset from the object's text_start), or NULL when no row covers it.
 * SIGNAL-SAFE: a short binary search, no calls. */
const struct cfi_rule *cfi_find(const struct cfi_table *t, uintptr_t pc);

#endif
