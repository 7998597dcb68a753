/*
 * cfi.c — compiles a loaded object's .eh_frame into the row table of cfi.h. Not signal-safe
 * (allocates); runs while the object cannot be unmapped (objects.c calls it inside
 * dl_iterate_phdr's callback, under the loader's lock). Every read stays inside the mapped range
 * the caller gives, and every length is checked against it: a malformed .eh_frame gives rows
 * that send the walk to libunwind, or no table, never a fault.
 *
 * What a row can say is kept to what a frame-pointer or sp-relative frame needs (CFA = sp or
 * fp + offset; caller's fp and return address saved at CFA + offset, or unchanged); anything
 * else — a CFA in another register or given by an expression, a register rule by expression or
 * in another register, a signal frame, a remember-state stack deeper than ours — makes the row
 * CFI_GENERAL, and the walk hands such frames to libunwind.
 */
#include "cfi.h"

#include <stdlib.h>
#include <string.h>

#include "platform.h"

/* ---- reading .eh_frame, bounded ---- */

struct reader {
  const unsigned char *p, *end; /* end: the end of the entry (CIE or FDE) being read */
  int bad;                      /* a read went past end */
};

static uint64_t get_uleb(struct reader *r) {
  uint64_t v = 0;
  for (int shift = 0; r->p < r->end; shift += 7) {
    unsigned char b = *r->p++;
    if (shift < 64) v |= (uint64_t)(b & 0x7f) << shift;
    if (!(b & 0x80)) return v;
  }
  r->bad = 1;
  return 0;
}

static int64_t get_sleb(struct reader *r) {
  int64_t v = 0;
  int shift = 0;
  while (r->p < r->end) {
    unsigned char b = *r->p++;
    if (shift < 64) v |= (int64_t)((uint64_t)(b & 0x7f) << shift);
    shift += 7;
    if (!(b & 0x80)) {
      if (shift < 64 && (b & 0x40)) v |= -((int64_t)1 << shift);
      return v;
    }
  }
  r->bad = 1;
  return 0;
}

static uint64_t get_fixed(struct reader *r, size_t n) {
  if ((size_t)(r->end - r->p) < n) {
    r->bad = 1;
    r->p = r->end;
    return 0;
  }
  uint64_t v = 0;
  memcpy(&v, r->p, n); /* little-endian: both architectures this builds for */
  r->p += n;
  return v;
}

/* A pointer in the DWARF encoding enc (DW_EH_PE_*). pcrel values are made absolute; the
 * indirect bit is not followed (only personality routines use it, and they are skipped). */
static uintptr_t get_encoded(struct reader *r, unsigned char enc) {
  if (enc == 0xff) return 0; /* DW_EH_PE_omit */
  const unsigned char *at = r->p;
  uint64_t v;
  switch (enc & 0x0f) {
  case 0x00: v = get_fixed(r, sizeof(uintptr_t)); break;             /* absptr */
  case 0x01: v = get_uleb(r); break;                                 /* uleb128 */
  case 0x02: v = get_fixed(r, 2); break;                             /* udata2 */
  case 0x03: v = get_fixed(r, 4); break;                             /* udata4 */
  case 0x04: v = get_fixed(r, 8); break;                             /* udata8 */
  case 0x09: v = (uint64_t)get_sleb(r); break;                       /* sleb128 */
  case 0x0a: v = (uint64_t)(int64_t)(int16_t)get_fixed(r, 2); break; /* sdata2 */
  case 0x0b: v = (uint64_t)(int64_t)(int32_t)get_fixed(r, 4); break; /* sdata4 */
  case 0x0c: v = get_fixed(r, 8); break;                             /* sdata8 */
  default: r->bad = 1; return 0;
  }
  switch (enc & 0x70) {
  case 0x00: break;
  case 0x10: v += (uint64_t)(uintptr_t)at; break; /* pcrel */
  default: r->bad = 1; return 0; /* textrel, datarel, funcrel: not in .eh_frame FDEs here */
  }
  return (uintptr_t)v;
}

/* ---- the CFA program ---- */

enum rule { RULE_SAME = 0, RULE_UNDEFINED, RULE_OFFSET, RULE_OTHER };

struct state {
  int cfa_reg; /* DWARF register, or -1: an expression */
  int64_t cfa_off;
  unsigned char fp_rule, ra_rule;
  int64_t fp_off, ra_off;
};

#define STATE_STACK 16

struct cie {
  uint64_t code_align;
  int64_t data_align;
  int ra_column;
  unsigned char fde_enc; /* 'R' */
  int has_aug_data;      /* 'z': FDEs carry augmentation data to skip */
  int signal_frame;      /* 'S' */
  const unsigned char *insns, *insns_end;
};

struct row {
  uint32_t pc;
  struct cfi_rule r;
};

struct rows {
  struct row *row;
  size_t n, cap;
  size_t general;
  int nomem;
};

struct program {
  const struct cie *cie;
  struct state st, initial;
  struct state stack[STATE_STACK];
  int depth;
  int all_general; /* rows from here on are general: a restore_state past what remember_state
                      could keep, or a CIE whose return-address column is not the table's */
};

/* Applies a rule for register reg. */
static void set_rule(struct program *pg, uint64_t reg, unsigned char rule, int64_t off) {
  if (reg == (uint64_t)plat_dwarf_fp) {
    pg->st.fp_rule = rule;
    pg->st.fp_off = off;
  } else if (reg == (uint64_t)pg->cie->ra_column) {
    pg->st.ra_rule = rule;
    pg->st.ra_off = off;
  } /* other registers: the walk needs only sp, fp and the return address */
}

static void restore_rule(struct program *pg, uint64_t reg) {
  if (reg == (uint64_t)plat_dwarf_fp)
    set_rule(pg, reg, pg->initial.fp_rule, pg->initial.fp_off);
  else if (reg == (uint64_t)pg->cie->ra_column)
    set_rule(pg, reg, pg->initial.ra_rule, pg->initial.ra_off);
}

/* The rule a state compiles to. */
static struct cfi_rule compile(const struct program *pg) {
  const struct state *s = &pg->st;
  struct cfi_rule row = {0};
  int general = pg->cie->signal_frame || pg->all_general || s->fp_rule == RULE_OTHER ||
                s->ra_rule == RULE_OTHER || s->cfa_off < -(1 << 28) || s->cfa_off >= (1 << 28);
  int kind = s->cfa_reg == plat_dwarf_sp   ? CFI_CFA_SP
             : s->cfa_reg == plat_dwarf_fp ? CFI_CFA_FP
                                           : -1;
  if (kind < 0) general = 1;
  int16_t fp = CFI_SAME, ra = CFI_SAME;
  if (s->fp_rule == RULE_OFFSET) {
    if (s->fp_off <= CFI_UNDEFINED || s->fp_off > INT16_MAX) general = 1;
    fp = (int16_t)s->fp_off;
  } else if (s->fp_rule == RULE_UNDEFINED) {
    fp = CFI_UNDEFINED;
  }
  if (s->ra_rule == RULE_OFFSET) {
    if (s->ra_off <= CFI_UNDEFINED || s->ra_off > INT16_MAX) general = 1;
    ra = (int16_t)s->ra_off;
  } else if (s->ra_rule == RULE_UNDEFINED) {
    ra = CFI_UNDEFINED;
  }
  if (general) {
    row.cfa = CFI_GENERAL;
    return row;
  }
  row.cfa = (int32_t)((uint32_t)s->cfa_off << 2) | kind;
  row.fp = fp;
  row.ra = ra;
  return row;
}

static int same_rule(const struct cfi_rule *a, const struct cfi_rule *b) {
  return a->cfa == b->cfa && a->fp == b->fp && a->ra == b->ra;
}

/* Appends a row at pc; a row at the same pc as the last replaces it, and a row that says what
 * the one before says is not kept. */
static void emit(struct rows *t, uint32_t pc, struct cfi_rule rule) {
  if (t->n && t->row[t->n - 1].pc == pc) t->n--;
  if (t->n && same_rule(&t->row[t->n - 1].r, &rule)) return;
  if (t->n == t->cap) {
    size_t cap = t->cap ? t->cap * 2 : 1024;
    struct row *more = realloc(t->row, cap * sizeof *more);
    if (!more) {
      t->nomem = 1;
      return;
    }
    t->row = more;
    t->cap = cap;
  }
  t->row[t->n++] = (struct row){pc, rule};
}

/* Runs a CFA program from loc. With rows NULL (the CIE's initial instructions) it only sets
 * the state; otherwise it emits a row before each advance, up to end_pc (offsets from text
 * start). Returns the location reached, or -1 when the program is malformed.
 * Long: one switch with a case per DWARF call-frame instruction, in opcode order, so that it
 * reads against the standard's table; split by kind of instruction, the cases would only be
 * scattered over functions that share the reader and the state. */
static int64_t run(struct program *pg, struct reader *r, int64_t loc, int64_t end_pc,
                   struct rows *rows) {
  const struct cie *c = pg->cie;
  while (r->p < r->end && !r->bad) {
    unsigned char op = *r->p++;
    uint64_t reg, delta = 0;
    int advance = 0;
    switch (op >> 6) {
    case 1:
      delta = (op & 0x3f) * c->code_align;
      advance = 1;
      break; /* advance_loc */
    case 2: set_rule(pg, op & 0x3f, RULE_OFFSET, (int64_t)get_uleb(r) * c->data_align); continue;
    case 3: restore_rule(pg, op & 0x3f); continue; /* restore */
    default: break;
    }
    if (!advance) {
      switch (op) {
      case 0x00: break;     /* nop */
      case 0x01: return -1; /* set_loc: not emitted by the toolchains here; give up this FDE */
      case 0x02:
        delta = get_fixed(r, 1) * c->code_align;
        advance = 1;
        break;
      case 0x03:
        delta = get_fixed(r, 2) * c->code_align;
        advance = 1;
        break;
      case 0x04:
        delta = get_fixed(r, 4) * c->code_align;
        advance = 1;
        break;
      case 0x05:
        reg = get_uleb(r);
        set_rule(pg, reg, RULE_OFFSET, (int64_t)get_uleb(r) * c->data_align);
        break;
      case 0x06: restore_rule(pg, get_uleb(r)); break;
      case 0x07: set_rule(pg, get_uleb(r), RULE_UNDEFINED, 0); break;
      case 0x08: set_rule(pg, get_uleb(r), RULE_SAME, 0); break;
      case 0x09:
        reg = get_uleb(r);
        get_uleb(r);
        set_rule(pg, reg, RULE_OTHER, 0);
        break;   /* register */
      case 0x0a: /* remember_state */
        if (pg->depth < STATE_STACK) pg->stack[pg->depth] = pg->st;
        pg->depth++;
        break;
      case 0x0b: /* restore_state */
        if (pg->depth == 0) return -1;
        pg->depth--;
        if (pg->depth < STATE_STACK)
          pg->st = pg->stack[pg->depth]; /* the whole row, CFA rule too (as libgcc and
                                            libunwind do) */
        else
          pg->all_general = 1;
        break;
      case 0x0c:
        pg->st.cfa_reg = (int)get_uleb(r);
        pg->st.cfa_off = (int64_t)get_uleb(r);
        break;
      case 0x0d: pg->st.cfa_reg = (int)get_uleb(r); break;
      case 0x0e: pg->st.cfa_off = (int64_t)get_uleb(r); break;
      case 0x0f: { /* def_cfa_expression */
        uint64_t len = get_uleb(r);
        if (len > (uint64_t)(r->end - r->p)) return -1;
        r->p += len;
        pg->st.cfa_reg = -1;
        break;
      }
      case 0x10:   /* expression */
      case 0x16: { /* val_expression */
        reg = get_uleb(r);
        uint64_t len = get_uleb(r);
        if (len > (uint64_t)(r->end - r->p)) return -1;
        r->p += len;
        set_rule(pg, reg, RULE_OTHER, 0);
        break;
      }
      case 0x11:
        reg = get_uleb(r);
        set_rule(pg, reg, RULE_OFFSET, get_sleb(r) * c->data_align);
        break;
      case 0x12:
        pg->st.cfa_reg = (int)get_uleb(r);
        pg->st.cfa_off = get_sleb(r) * c->data_align;
        break;
      case 0x13: pg->st.cfa_off = get_sleb(r) * c->data_align; break;
      case 0x14:   /* val_offset */
      case 0x15: { /* val_offset_sf */
        reg = get_uleb(r);
        if (op == 0x14)
          get_uleb(r);
        else
          get_sleb(r);
        set_rule(pg, reg, RULE_OTHER, 0);
        break;
      }
      case 0x2e: get_uleb(r); break; /* GNU_args_size */
      case 0x2f:
        reg = get_uleb(r);
        set_rule(pg, reg, RULE_OFFSET, -(int64_t)get_uleb(r) * c->data_align);
        break;
      case 0x2d: /* GNU_window_save; on aarch64 negate_ra_state: a signed return address */
        pg->st.ra_rule = RULE_OTHER;
        break;
      default: return -1; /* an op we do not know: its operands cannot be skipped */
      }
    }
    if (advance) {
      if (rows) {
        if (loc >= end_pc) return loc;
        emit(rows, (uint32_t)loc, compile(pg));
      }
      loc += (int64_t)delta;
    }
  }
  return r->bad ? -1 : loc;
}

/* ---- CIEs and FDEs ---- */

/* Reads the length of the entry at p; sets r to its body. Returns 0, or -1 when it does not fit
 * in [p, lim). */
static int entry(const unsigned char *p, const unsigned char *lim, struct reader *r) {
  if (lim - p < 4) return -1;
  uint32_t len32;
  memcpy(&len32, p, 4);
  p += 4;
  uint64_t len = len32;
  if (len32 == 0xffffffffu) { /* 64-bit DWARF */
    if (lim - p < 8) return -1;
    memcpy(&len, p, 8);
    p += 8;
  }
  if (len == 0 || len > (uint64_t)(lim - p)) return -1;
  r->p = p;
  r->end = p + len;
  r->bad = 0;
  return 0;
}

static int parse_cie(const unsigned char *at, const unsigned char *hi, struct cie *c) {
  struct reader r;
  if (entry(at, hi, &r) || get_fixed(&r, 4) != 0) return -1; /* CIE id 0 in .eh_frame */
  memset(c, 0, sizeof *c);
  unsigned version = (unsigned)get_fixed(&r, 1);
  if (version != 1 && version != 3 && version != 4) return -1;
  const char *aug = (const char *)r.p;
  size_t auglen = strnlen(aug, (size_t)(r.end - r.p));
  if (auglen == (size_t)(r.end - r.p)) return -1;
  r.p += auglen + 1;
  if (version == 4) get_fixed(&r, 2); /* address size, segment selector size */
  c->code_align = get_uleb(&r);
  c->data_align = get_sleb(&r);
  c->ra_column = (int)(version == 1 ? get_fixed(&r, 1) : get_uleb(&r));
  c->fde_enc = 0; /* absptr */
  if (aug[0] == 'z') {
    c->has_aug_data = 1;
    uint64_t len = get_uleb(&r);
    if (len > (uint64_t)(r.end - r.p)) return -1;
    struct reader a = {r.p, r.p + len, 0};
    for (const char *k = aug + 1; *k; k++) {
      switch (*k) {
      case 'R': c->fde_enc = (unsigned char)get_fixed(&a, 1); break;
      case 'L': get_fixed(&a, 1); break;
      case 'P': get_encoded(&a, (unsigned char)(get_fixed(&a, 1) & 0x7f)); break;
      case 'S': c->signal_frame = 1; break;
      case 'B':
      case 'G': break; /* aarch64 BTI / MTE tagged frames: nothing to read */
      default: return -1;
      }
    }
    if (a.bad) return -1;
    r.p += len;
  } else if (aug[0] != '\0') {
    return -1;
  }
  if (r.bad) return -1;
  c->insns = r.p;
  c->insns_end = r.end;
  return 0;
}

/* The distinct rules, with an open-addressed index of their positions: few are distinct
 * (libjvm.so's ~190,000 rows use 8), so the index starts small and doubles when half full. */
struct ruleset {
  struct cfi_rule *rules; /* n distinct, in order of first use */
  size_t n;
  uint32_t *slot; /* cap (a power of two) positions + 1; 0: empty */
  size_t cap;
};

static size_t rule_hash(const struct cfi_rule *r, size_t cap) {
  uint64_t k = (uint64_t)(uint32_t)r->cfa << 32 | (uint64_t)(uint16_t)r->fp << 16 | (uint16_t)r->ra;
  return (size_t)((k * 0x9e3779b97f4a7c15ull) >> 32) & (cap - 1);
}

static int ruleset_grow(struct ruleset *s) {
  size_t cap = s->cap ? 2 * s->cap : 64;
  uint32_t *slot = calloc(cap, sizeof *slot);
  if (!slot) return -1;
  for (size_t i = 0; i < s->n; i++) {
    size_t h = rule_hash(&s->rules[i], cap);
    while (slot[h]) h = (h + 1) & (cap - 1);
    slot[h] = (uint32_t)(i + 1);
  }
  free(s->slot);
  s->slot = slot;
  s->cap = cap;
  return 0;
}

/* The rule's position in s->rules (room for one more there is the caller's), added when new;
 * -1 when the index cannot grow. */
static long rule_id(struct ruleset *s, const struct cfi_rule *r) {
  if (2 * (s->n + 1) > s->cap && ruleset_grow(s)) return -1;
  size_t h = rule_hash(r, s->cap);
  for (; s->slot[h]; h = (h + 1) & (s->cap - 1))
    if (same_rule(&s->rules[s->slot[h] - 1], r)) return (long)(s->slot[h] - 1);
  s->rules[s->n] = *r;
  s->slot[h] = (uint32_t)++s->n;
  return (long)(s->n - 1);
}

/* ---- the table's one allocation ---- */

/* The bytes of t's allocation: the header, the rules, the rows, the buckets. */
size_t cfi_bytes(const struct cfi_table *t) {
  return sizeof *t + t->nrules * sizeof(struct cfi_rule) + (t->n + t->nbuckets) * sizeof(uint32_t);
}

struct cfi_table *cfi_alloc(size_t n, size_t nbuckets, size_t nrules) {
  if (!n || nbuckets < 2 || !nrules || n > (1u << CFI_RULE_BITS) || nrules > n ||
      nbuckets > (UINT32_MAX >> CFI_BUCKET_SHIFT) + 2)
    return NULL;
  struct cfi_table probe = {.n = n, .nbuckets = nbuckets, .nrules = nrules};
  struct cfi_table *t = malloc(cfi_bytes(&probe));
  if (!t) return NULL;
  *t = probe;
  uint32_t *row = (uint32_t *)(t->rules + nrules); /* rules, rows, buckets: one block */
  t->row = row;
  t->bucket = row + n;
  return t;
}

static size_t count_general(const struct cfi_table *t) {
  size_t general = 0;
  for (size_t i = 0; i < t->n; i++)
    general += cfi_rule_cfa(&t->rules[t->row[i] & ((1u << CFI_RULE_BITS) - 1)]) == CFI_GENERAL;
  return general;
}

int cfi_adopt(struct cfi_table *t) {
  const uint32_t mask = (1u << CFI_RULE_BITS) - 1;
  if (t->ra_column < 0 || t->ra_column > 127 || t->bucket[t->nbuckets - 1] != t->n) return -1;
  size_t b = 0;      /* the bucket of row i: bucket[b] <= i < bucket[b + 1] */
  uint64_t last = 0; /* the previous row's start */
  for (size_t i = 0; i < t->n; i++) {
    if ((t->row[i] & mask) >= t->nrules) return -1;
    while (b + 1 < t->nbuckets && t->bucket[b + 1] <= i) {
      if (t->bucket[b + 1] < t->bucket[b]) return -1;
      b++;
    }
    if (b + 1 >= t->nbuckets || t->bucket[b] > i) return -1;
    uint64_t start = (uint64_t)b << CFI_BUCKET_SHIFT | t->row[i] >> CFI_RULE_BITS;
    /* rows in order (the search within a bucket), the first at `first` (a pc at or past it
     * always finds a row that starts at or before it: cfi_find reads row[lo - 1]) */
    if (i ? start <= last : start != t->first) return -1;
    last = start;
  }
  for (; b + 1 < t->nbuckets; b++)
    if (t->bucket[b + 1] < t->bucket[b]) return -1;
  t->general = count_general(t);
  return 0;
}

/* The table of rows (at least one, the last ending the code): rows packed with their rules'
 * positions, the buckets' index, the distinct rules. NULL: no memory, or too many rows. */
static struct cfi_table *pack(const struct rows *rows, int ra_column) {
  size_t n = rows->n;
  struct ruleset set = {.rules = malloc(n * sizeof *set.rules)};
  /* buckets up to the end row's, and one more (n): any pc past it is the end row's */
  size_t nbuckets = (rows->row[n - 1].pc >> CFI_BUCKET_SHIFT) + 2;
  struct cfi_table *t = NULL;
  uint32_t *row = malloc(n * sizeof *row), *bucket = malloc(nbuckets * sizeof *bucket);
  if (!set.rules || !row || !bucket || n >= UINT32_MAX || n > (1u << CFI_RULE_BITS)) goto out;
  plat_prefault(row, n * sizeof *row);
  const uint32_t low = (1u << CFI_BUCKET_SHIFT) - 1;
  for (size_t i = 0; i < n; i++) { /* n distinct rules at most: set.rules has room */
    long id = rule_id(&set, &rows->row[i].r);
    if (id < 0) goto out;
    row[i] = (rows->row[i].pc & low) << CFI_RULE_BITS | (uint32_t)id;
  }
  for (size_t b = 0, r = 0; b < nbuckets;
       b++) { /* r: the first row starting at b's start or later */
    while (r < n && rows->row[r].pc >> CFI_BUCKET_SHIFT < b) r++;
    bucket[b] = (uint32_t)r;
  }
  bucket[nbuckets - 1] = (uint32_t)n;
  t = cfi_alloc(n, nbuckets, set.n);
  if (!t) goto out;
  plat_prefault(t, cfi_bytes(t));
  memcpy(t->rules, set.rules, set.n * sizeof *set.rules);
  memcpy((uint32_t *)t->row, row, n * sizeof *row);
  memcpy((uint32_t *)t->bucket, bucket, nbuckets * sizeof *bucket);
  t->first = rows->row[0].pc;
  t->ra_column = ra_column;
  t->general = count_general(t);
out:
  free(set.rules), free(set.slot), free(row), free(bucket);
  return t;
}

struct cfi_table *cfi_build(uintptr_t eh_frame_hdr, uintptr_t table, size_t entries,
                            uintptr_t text_start, uintptr_t text_end, uintptr_t map_lo,
                            uintptr_t map_hi) {
  const unsigned char *lo = (const unsigned char *)map_lo, *hi = (const unsigned char *)map_hi;
  if (table < map_lo || entries > (map_hi - table) / 8) return NULL;
  /* room for the rows at once: ~4.4 a function in libjvm.so, whose 3 MB of rows grown by
   * doubling were copied and faulted in again at each step */
  struct rows rows = {.cap = entries < SIZE_MAX / 5 / sizeof(struct row) ? entries * 5 + 16 : 0};
  rows.row = rows.cap ? malloc(rows.cap * sizeof *rows.row) : NULL;
  plat_prefault(rows.row, rows.cap * sizeof *rows.row); /* ~87% of it used (libjvm.so) */
  if (!rows.row) rows.cap = 0;
  const unsigned char *cie_at = NULL;
  int ra_column = 0; /* the first CIE's: a row whose CIE names another is general */
  struct cie cie;
  struct state cie_state; /* the state cie's initial instructions leave */
  int cie_ok = 0, cie_general = 0;
  for (size_t i = 0; i < entries && !rows.nomem; i++) {
    int32_t rel[2];
    memcpy(rel, (const void *)(table + i * 8), 8);
    const unsigned char *fde = (const unsigned char *)(eh_frame_hdr + (intptr_t)rel[1]);
    if (fde < lo || fde >= hi) continue;
    struct reader r;
    if (entry(fde, hi, &r)) continue;
    const unsigned char *idp = r.p;
    uint32_t id = (uint32_t)get_fixed(&r, 4);
    if (id == 0) continue; /* a CIE where an FDE was expected */
    const unsigned char *c = idp - id;
    if (c < lo || c >= hi) continue;
    if (c != cie_at) { /* the CIE's initial instructions run once for the FDEs that follow it */
      cie_at = c;
      cie_ok = parse_cie(c, hi, &cie) == 0;
      if (cie_ok && !ra_column) ra_column = cie.ra_column;
      if (cie_ok) {
        struct program init = {.cie = &cie};
        init.st.cfa_reg = plat_dwarf_sp;
        init.st.fp_rule = RULE_SAME;
        init.st.ra_rule = RULE_SAME;
        struct reader ci = {cie.insns, cie.insns_end, 0};
        cie_ok = run(&init, &ci, 0, 0, NULL) >= 0;
        cie_state = init.st;
        cie_general = init.all_general;
      }
    }
    if (!cie_ok) continue;
    uintptr_t begin = get_encoded(&r, cie.fde_enc);
    uintptr_t range = get_encoded(&r, cie.fde_enc & 0x0f);
    if (r.bad || !range || begin < text_start || begin >= text_end || range > text_end - begin)
      continue;
    if (cie.has_aug_data) {
      uint64_t len = get_uleb(&r);
      if (r.bad || len > (uint64_t)(r.end - r.p)) continue;
      r.p += len;
    }
    int64_t start = (int64_t)(begin - text_start), end = start + (int64_t)range;
    if (end > UINT32_MAX) continue;
    if (rows.n && rows.row[rows.n - 1].pc > start) continue; /* overlaps the previous FDE */
    struct program pg; /* not zeroed whole: its stack is written before it is read, and
                          clearing it for each of libjvm.so's ~44,000 FDEs was a tenth of the
                          build */
    pg.cie = &cie;
    pg.st = pg.initial = cie_state;
    pg.depth = 0;
    pg.all_general = cie_general || cie.ra_column != ra_column;
    size_t mark = rows.n;
    int64_t at = run(&pg, &r, start, end, &rows);
    if (at < 0) { /* malformed: the whole function goes to libunwind */
      rows.n = mark;
      emit(&rows, (uint32_t)start, (struct cfi_rule){.cfa = CFI_GENERAL});
    } else if (at < end) {
      emit(&rows, (uint32_t)at, compile(&pg));
    }
    emit(&rows, (uint32_t)end, (struct cfi_rule){.cfa = CFI_NO_INFO});
  }
  if (rows.nomem || !rows.n) {
    free(rows.row);
    return NULL;
  }
  struct cfi_table *t = pack(&rows, ra_column);
  free(rows.row);
  return t;
}
