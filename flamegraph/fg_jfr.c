/*
 * fg_jfr.c — JFR recordings in (see fg_jfr.h). Every read is bounds-checked; a malformed file
 * is an error that says what and at which file offset, never a crash.
 *
 * A recording is chunks back to back, each self-contained: a 68-byte big-endian header (sizes,
 * the metadata event's offset, the start in ns since the epoch and in ticks, ticks a second),
 * then events, each "size type fields...", integers LEB128 (the ninth byte whole). Event type 0
 * is the metadata: a string table and an element tree of classes with their fields (name, type
 * id, constantPool, dimension), from which every other event and pool entry is decoded — no
 * layout is assumed beyond the field names read (startTime, sampledThread, stackTrace, frames,
 * method, lineNumber, type, name, string, description, osName, javaName, osThreadId, cpuTime;
 * with --value alloc, jdk.ObjectAllocationSample's eventThread, objectClass and weight; with
 * --value monitor or park, jdk.JavaMonitorEnter's or jdk.ThreadPark's eventThread, duration
 * and monitorClass or parkedClass).
 * Type 1 is a checkpoint: constant pools, entries "key value". One pass over a chunk's events
 * notes where each pool entry is and sums the selected events by (thread, stack[, class]); the stacks
 * are named at the chunk's end, each pair once, methods cached.
 *
 * Hazards of untrusted input, each bounded: counts and lengths are checked against the bytes
 * left in their event; types that nest (or hold themselves) stop at FG_JFR_MAX_NEST; a string
 * that refers to the string pool must find a plain string there (no chains, no cycles); all
 * decoding and naming is charged to a work budget linear in the file's size (fg_jfr.h).
 */
#include "fg_jfr.h"
#include "fg_internal.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define HEADER_SIZE 68

/* ---- errors and the budget ---- */

struct jr {
  const uint8_t *file;
  size_t len;
  fg_read_error *err;
  int rc;
  uint64_t work, budget;
};

static int fail(struct jr *j, int rc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(struct jr *j, int rc, const char *fmt, ...) {
  if (!j->rc) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(j->err->msg, sizeof j->err->msg, fmt, ap);
    va_end(ap);
    j->rc = rc;
  }
  return j->rc;
}

static int charge(struct jr *j, uint64_t n) {
  j->work += n;
  if (j->work <= j->budget) return 0;
  return fail(j, -EINVAL,
              "jfr: decoding the recording takes more than its work budget of %llu M steps (64 M "
              "+ 256 a byte of the file, at most 4096 M: flamegraph/README.md \"Limits\")",
              (unsigned long long)(j->budget >> 20));
}

/* ---- reading bytes ---- */

struct rd {
  const uint8_t *p, *end;
  int bad;
};

static uint64_t rd_var(struct rd *r) {
  uint64_t v = 0;
  for (int i = 0; i < 9; i++) {
    if (r->p >= r->end) break;
    uint8_t c = *r->p++;
    if (i == 8) return v | (uint64_t)c << 56;
    v |= (uint64_t)(c & 0x7f) << (7 * i);
    if (!(c & 0x80)) return v;
  }
  r->bad = 1;
  return 0;
}

static uint8_t rd_u8(struct rd *r) {
  if (r->p >= r->end) {
    r->bad = 1;
    return 0;
  }
  return *r->p++;
}

static void rd_skip(struct rd *r, uint64_t n) {
  if (n > (uint64_t)(r->end - r->p)) {
    r->bad = 1;
    r->p = r->end;
  } else {
    r->p += n;
  }
}

/* A count that must not exceed the bytes left (each item takes at least one, or is skipped). */
static uint64_t rd_count(struct rd *r) {
  uint64_t n = rd_var(r);
  if (n > (uint64_t)(r->end - r->p)) r->bad = 1;
  return r->bad ? 0 : n;
}

static uint64_t be(const uint8_t *p, int n) {
  uint64_t v = 0;
  for (int i = 0; i < n; i++) v = v << 8 | p[i];
  return v;
}

/* ---- an arena for decoded text (a chunk's lifetime) ---- */

struct arena {
  char *block;
  size_t used, cap;
  char **old;
  size_t nold, capold;
};

static char *arena_alloc(struct arena *a, size_t n) {
  if (a->cap - a->used < n) {
    size_t cap = n > (1u << 16) ? n : (1u << 16);
    char *b = malloc(cap);
    if (!b) return NULL;
    if (a->block) {
      if (a->nold == a->capold) {
        size_t c = a->capold ? a->capold * 2 : 16;
        char **o = realloc(a->old, c * sizeof *o);
        if (!o) {
          free(b);
          return NULL;
        }
        a->old = o;
        a->capold = c;
      }
      a->old[a->nold++] = a->block;
    }
    a->block = b;
    a->used = 0;
    a->cap = cap;
  }
  char *p = a->block + a->used;
  a->used += n;
  return p;
}

static void arena_free(struct arena *a) {
  for (size_t i = 0; i < a->nold; i++) free(a->old[i]);
  free(a->old);
  free(a->block);
  memset(a, 0, sizeof *a);
}

/* ---- strings ---- */

struct jstr {
  const char *p; /* NULL: a null string */
  uint32_t len;
  int ref; /* 1: a reference to the string pool, key in pool_key */
  uint64_t pool_key;
};

static size_t put_utf8(char *o, uint32_t c) {
  if (c < 0x80) {
    o[0] = (char)c;
    return 1;
  }
  if (c < 0x800) {
    o[0] = (char)(0xc0 | c >> 6);
    o[1] = (char)(0x80 | (c & 0x3f));
    return 2;
  }
  if (c < 0x10000) {
    o[0] = (char)(0xe0 | c >> 12);
    o[1] = (char)(0x80 | (c >> 6 & 0x3f));
    o[2] = (char)(0x80 | (c & 0x3f));
    return 3;
  }
  o[0] = (char)(0xf0 | c >> 18);
  o[1] = (char)(0x80 | (c >> 12 & 0x3f));
  o[2] = (char)(0x80 | (c >> 6 & 0x3f));
  o[3] = (char)(0x80 | (c & 0x3f));
  return 4;
}

/* A string in one of JFR's encodings: 0 null, 1 empty, 2 a string pool key, 3 UTF-8, 4 UTF-16
 * chars as integers, 5 Latin-1. Text that is not UTF-8 already is converted into the arena (a
 * lone surrogate as U+FFFD). */
static int rd_str(struct jr *j, struct rd *r, struct arena *a, struct jstr *s) {
  memset(s, 0, sizeof *s);
  uint8_t enc = rd_u8(r);
  if (r->bad) return 0;
  switch (enc) {
  case 0: return 0;
  case 1: s->p = ""; return 0;
  case 2:
    s->ref = 1;
    s->pool_key = rd_var(r);
    return 0;
  case 3: {
    uint64_t n = rd_count(r);
    if (r->bad) return 0;
    s->p = (const char *)r->p;
    s->len = (uint32_t)n;
    r->p += n;
    return 0;
  }
  case 4:
  case 5: {
    uint64_t n = rd_count(r);
    if (r->bad) return 0;
    if (charge(j, n)) return j->rc;
    char *o = arena_alloc(a, n * 3 + 1);
    if (!o) return fail(j, -ENOMEM, "out of memory");
    size_t k = 0;
    for (uint64_t i = 0; i < n && !r->bad; i++) {
      uint32_t c = enc == 5 ? rd_u8(r) : (uint32_t)(rd_var(r) & 0xffff);
      if (c >= 0xd800 && c < 0xdc00 && i + 1 < n) { /* a surrogate pair: one character */
        const uint8_t *back = r->p;
        uint32_t d = (uint32_t)(rd_var(r) & 0xffff);
        if (d >= 0xdc00 && d < 0xe000) {
          c = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00);
          i++;
        } else {
          r->p = back;
          c = 0xfffd;
        }
      } else if (c >= 0xd800 && c < 0xe000) {
        c = 0xfffd;
      }
      k += put_utf8(o + k, c);
    }
    s->p = o;
    s->len = (uint32_t)k;
    return 0;
  }
  default: r->bad = 1; return 0;
  }
}

static int str_is(const struct jstr *s, const char *lit) {
  size_t n = strlen(lit);
  return s->p && s->len == n && memcmp(s->p, lit, n) == 0;
}

/* ---- the metadata: classes and their fields ---- */

enum prim { P_OBJECT, P_U8, P_VAR, P_FLOAT, P_DOUBLE, P_STRING };

struct jfield {
  struct jstr name;
  uint64_t type_id;
  uint32_t cls; /* index in classes, set once all are read */
  uint32_t owner;
  uint8_t cp, array;
};

struct jclass {
  uint64_t id;
  struct jstr name;
  uint32_t first, n; /* fields[first .. first + n) */
  enum prim prim;
};

struct meta {
  struct jstr *strings;
  uint64_t nstrings;
  struct jclass *classes;
  size_t nclasses, capclasses;
  struct jfield *fields;
  size_t nfields, capfields;
};

static void meta_free(struct meta *m) {
  free(m->strings);
  free(m->classes);
  free(m->fields);
  memset(m, 0, sizeof *m);
}

static int parse_u64(const struct jstr *s, uint64_t *out) {
  if (!s->p || !s->len || s->len > 20) return -1;
  uint64_t v = 0;
  for (uint32_t i = 0; i < s->len; i++) {
    if (s->p[i] < '0' || s->p[i] > '9') return -1;
    uint64_t d = (uint64_t)(s->p[i] - '0');
    if (v > (UINT64_MAX - d) / 10) return -1;
    v = v * 10 + d;
  }
  *out = v;
  return 0;
}

/* One element of the tree and its children; `cls` the class it is inside (or UINT32_MAX). */
static int meta_element(struct jr *j, struct meta *m, struct rd *r, int depth, uint32_t cls,
                        size_t at) {
  if (depth > FG_JFR_MAX_NEST)
    return fail(j, -EINVAL, "jfr: offset %zu: the metadata's elements nest deeper than %d", at,
                FG_JFR_MAX_NEST);
  if (charge(j, 1)) return j->rc;
  uint64_t name = rd_var(r), nattr = rd_count(r);
  if (r->bad || name >= m->nstrings) goto bad;
  const struct jstr *ename = &m->strings[name];
  int is_class = str_is(ename, "class") && cls == UINT32_MAX;
  int is_field = str_is(ename, "field") && cls != UINT32_MAX;
  struct jclass c = {.prim = P_OBJECT};
  struct jfield f = {.owner = cls};
  int has_id = 0, has_name = 0, has_type = 0;
  for (uint64_t i = 0; i < nattr; i++) {
    uint64_t k = rd_var(r), v = rd_var(r);
    if (r->bad || k >= m->nstrings || v >= m->nstrings) goto bad;
    const struct jstr *key = &m->strings[k], *val = &m->strings[v];
    if (is_class && str_is(key, "id")) {
      if (parse_u64(val, &c.id)) goto bad;
      has_id = 1;
    } else if (is_class && str_is(key, "name")) {
      c.name = *val;
      has_name = 1;
    } else if (is_field && str_is(key, "name")) {
      f.name = *val;
      has_name = 1;
    } else if (is_field && str_is(key, "class")) {
      if (parse_u64(val, &f.type_id)) goto bad;
      has_type = 1;
    } else if (is_field && str_is(key, "constantPool")) {
      f.cp = str_is(val, "true");
    } else if (is_field && str_is(key, "dimension")) {
      uint64_t d;
      if (parse_u64(val, &d) || d > 1)
        return fail(j, -EINVAL, "jfr: offset %zu: a field of dimension '%.*s' (0 or 1 is read)", at,
                    (int)(val->len > 20 ? 20 : val->len), val->p ? val->p : "");
      f.array = d == 1;
    }
  }
  uint32_t inside = UINT32_MAX;
  if (is_class) {
    if (!has_id || !has_name)
      return fail(j, -EINVAL, "jfr: offset %zu: a class without an id or a name", at);
    static const struct {
      const char *name;
      enum prim prim;
    } prims[] = {{"boolean", P_U8},  {"byte", P_U8},       {"char", P_VAR},
                 {"short", P_VAR},   {"int", P_VAR},       {"long", P_VAR},
                 {"float", P_FLOAT}, {"double", P_DOUBLE}, {"java.lang.String", P_STRING}};
    for (size_t i = 0; i < sizeof prims / sizeof *prims; i++)
      if (str_is(&c.name, prims[i].name)) c.prim = prims[i].prim;
    if (fg_grow((void **)&m->classes, &m->capclasses, m->nclasses + 1, sizeof *m->classes))
      return fail(j, -ENOMEM, "out of memory");
    inside = (uint32_t)m->nclasses;
    m->classes[m->nclasses++] = c;
  } else if (is_field) {
    if (!has_name || !has_type)
      return fail(j, -EINVAL, "jfr: offset %zu: a field without a name or a type", at);
    if (fg_grow((void **)&m->fields, &m->capfields, m->nfields + 1, sizeof *m->fields))
      return fail(j, -ENOMEM, "out of memory");
    m->fields[m->nfields++] = f;
  }
  uint64_t nchild = rd_count(r);
  if (r->bad) goto bad;
  for (uint64_t i = 0; i < nchild; i++) {
    int rc = meta_element(j, m, r, depth + 1, is_class ? inside : UINT32_MAX, at);
    if (rc) return rc;
    if (r->bad) goto bad;
  }
  return 0;
bad:
  return fail(j, -EINVAL, "jfr: offset %zu: a malformed metadata event", at);
}

static int by_class_id(const void *a, const void *b) {
  const struct jclass *x = a, *y = b;
  return x->id < y->id ? -1 : x->id > y->id;
}

static int by_owner(const void *a, const void *b) {
  const struct jfield *x = a, *y = b;
  if (x->owner != y->owner) return x->owner < y->owner ? -1 : 1;
  return x < y ? -1 : x > y; /* never equal: qsort is not stable, the order is kept by owner */
}

static uint32_t class_by_id(const struct meta *m, uint64_t id) {
  size_t lo = 0, hi = m->nclasses;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (m->classes[mid].id < id)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < m->nclasses && m->classes[lo].id == id ? (uint32_t)lo : UINT32_MAX;
}

static uint32_t class_by_name(const struct meta *m, const char *name) {
  for (size_t i = 0; i < m->nclasses; i++)
    if (str_is(&m->classes[i].name, name)) return (uint32_t)i;
  return UINT32_MAX;
}

/* The index of cls's field `name` among its fields, -1 when it has none. */
static int field_of(const struct meta *m, uint32_t cls, const char *name) {
  if (cls == UINT32_MAX) return -1;
  const struct jclass *c = &m->classes[cls];
  for (uint32_t i = 0; i < c->n; i++)
    if (str_is(&m->fields[c->first + i].name, name)) return (int)i;
  return -1;
}

/* The metadata event at chunk offset `off` of the chunk at `chunk`. */
static int meta_read(struct jr *j, struct meta *m, struct arena *a, size_t chunk, size_t chunk_len,
                     uint64_t off) {
  size_t at = chunk + (size_t)off;
  if (off < HEADER_SIZE || off >= chunk_len)
    return fail(j, -EINVAL, "jfr: chunk at offset %zu: the metadata offset %llu is outside it",
                chunk, (unsigned long long)off);
  struct rd r = {j->file + at, j->file + chunk + chunk_len, 0};
  uint64_t size = rd_var(&r);
  if (r.bad || size < 2 || size > chunk_len - off) goto bad;
  r.end = j->file + at + size;
  uint64_t type = rd_var(&r);
  if (type != 0)
    return fail(j, -EINVAL, "jfr: offset %zu: the metadata offset points to an event of type %llu",
                at, (unsigned long long)type);
  rd_var(&r); /* start */
  rd_var(&r); /* duration */
  rd_var(&r); /* metadata id */
  m->nstrings = rd_count(&r);
  if (r.bad) goto bad;
  m->strings = calloc(m->nstrings ? m->nstrings : 1, sizeof *m->strings);
  if (!m->strings) return fail(j, -ENOMEM, "out of memory");
  for (uint64_t i = 0; i < m->nstrings && !r.bad; i++) {
    if (rd_str(j, &r, a, &m->strings[i])) return j->rc;
    if (m->strings[i].ref) goto bad;
  }
  if (r.bad) goto bad;
  if (meta_element(j, m, &r, 0, UINT32_MAX, at)) return j->rc;
  /* fields grouped by class, in their order; classes sorted by id */
  for (size_t i = 0; i < m->nclasses; i++) m->classes[i].n = 0;
  if (m->nfields) qsort(m->fields, m->nfields, sizeof *m->fields, by_owner);
  for (size_t i = m->nfields; i-- > 0;) {
    struct jclass *c = &m->classes[m->fields[i].owner];
    c->first = (uint32_t)i;
    c->n++;
  }
  if (m->nclasses) qsort(m->classes, m->nclasses, sizeof *m->classes, by_class_id);
  for (size_t i = 1; i < m->nclasses; i++)
    if (m->classes[i].id == m->classes[i - 1].id)
      return fail(j, -EINVAL, "jfr: offset %zu: two classes with the id %llu", at,
                  (unsigned long long)m->classes[i].id);
  for (size_t i = 0; i < m->nfields; i++) {
    m->fields[i].cls = class_by_id(m, m->fields[i].type_id);
    if (m->fields[i].cls == UINT32_MAX)
      return fail(j, -EINVAL,
                  "jfr: offset %zu: field '%.*s' has the type %llu, which the metadata "
                  "does not describe",
                  at, (int)(m->fields[i].name.len > 60 ? 60 : m->fields[i].name.len),
                  m->fields[i].name.p, (unsigned long long)m->fields[i].type_id);
  }
  return 0;
bad:
  return fail(j, -EINVAL, "jfr: offset %zu: a malformed metadata event", at);
}

/* ---- values ---- */

struct val {
  uint64_t num;      /* an integer, a pool key, an array's count */
  struct jstr s;     /* a string */
  const uint8_t *at; /* an object's or an array's first byte */
};

static int read_value(struct jr *j, const struct meta *m, struct arena *a, struct rd *r,
                      const struct jfield *f, struct val *v, int depth);

/* One value of class cls (no pool, no array). */
static int read_one(struct jr *j, const struct meta *m, struct arena *a, struct rd *r, uint32_t cls,
                    struct val *v, int depth) {
  const struct jclass *c = &m->classes[cls];
  if (charge(j, 1)) return j->rc;
  switch (c->prim) {
  case P_U8: v->num = rd_u8(r); return 0;
  case P_VAR: v->num = rd_var(r); return 0;
  case P_FLOAT: rd_skip(r, 4); return 0;
  case P_DOUBLE: rd_skip(r, 8); return 0;
  case P_STRING: return rd_str(j, r, a, &v->s);
  case P_OBJECT: break;
  }
  if (depth >= FG_JFR_MAX_NEST)
    return fail(j, -EINVAL, "jfr: offset %zu: values of '%.*s' nest deeper than %d",
                (size_t)(r->p - j->file), (int)(c->name.len > 60 ? 60 : c->name.len), c->name.p,
                FG_JFR_MAX_NEST);
  v->at = r->p;
  struct val tmp;
  for (uint32_t i = 0; i < c->n && !r->bad; i++)
    if (read_value(j, m, a, r, &m->fields[c->first + i], &tmp, depth + 1)) return j->rc;
  return 0;
}

static int read_value(struct jr *j, const struct meta *m, struct arena *a, struct rd *r,
                      const struct jfield *f, struct val *v, int depth) {
  memset(v, 0, sizeof *v);
  if (f->array) {
    v->num = rd_count(r);
    v->at = r->p;
    struct val tmp;
    for (uint64_t i = 0; i < v->num && !r->bad; i++) {
      const uint8_t *before = r->p;
      if (f->cp) {
        if (charge(j, 1)) return j->rc;
        rd_var(r);
      } else if (read_one(j, m, a, r, f->cls, &tmp, depth)) {
        return j->rc;
      }
      if (r->p == before) break; /* elements that take no bytes: all alike, nothing to read */
    }
    return 0;
  }
  if (f->cp) {
    v->num = rd_var(r);
    return 0;
  }
  return read_one(j, m, a, r, f->cls, v, depth);
}

/* Reads an object of class cls at r, keeping the values of the fields named in want[0..n)
 * (absent ones stay zero: a null string, 0). */
static int read_object(struct jr *j, const struct meta *m, struct arena *a, struct rd *r,
                       uint32_t cls, const int *want, int n, struct val *out) {
  const struct jclass *c = &m->classes[cls];
  memset(out, 0, (size_t)n * sizeof *out);
  if (charge(j, 1)) return j->rc;
  struct val tmp;
  for (uint32_t i = 0; i < c->n && !r->bad; i++) {
    struct val *dst = &tmp;
    for (int k = 0; k < n; k++)
      if (want[k] == (int)i) dst = &out[k];
    if (read_value(j, m, a, r, &m->fields[c->first + i], dst, 0)) return j->rc;
  }
  if (r->bad)
    return fail(j, -EINVAL, "jfr: offset %zu: a malformed value of '%.*s'",
                (size_t)(r->p - j->file), (int)(c->name.len > 60 ? 60 : c->name.len), c->name.p);
  return 0;
}

/* ---- one open-addressing table: the pools, the sums, the method names ---- */

/* (a, b) -> v (and len): a pool entry (class, key) -> its file offset + 1; a sum (thread,
 * stack) -> the weight; a method (0, key) -> its name (a pointer) and length. */
struct map_slot {
  uint64_t a, b, c, v; /* the key (a, b, c) and its value */
  uint32_t len;
  int used;
};

struct map {
  struct map_slot *slots;
  size_t mask, n;
};

static size_t map_hash(uint64_t a, uint64_t b, uint64_t c) {
  uint64_t x = (b ^ a << 40 ^ c * 0xC2B2AE3D27D4EB4Full) * 0x9E3779B97F4A7C15ull;
  return (size_t)(x ^ x >> 29);
}

/* The slot of (a, b); when absent, a new one (v = 0) if add is set, else NULL. NULL with *oom
 * set when the table cannot grow. At most half full, 32 bytes a slot. */
static struct map_slot *map_at(struct map *m, uint64_t a, uint64_t b, uint64_t c, int add,
                               int *oom) {
  if (add && (m->n + 1) * 2 > (m->slots ? m->mask + 1 : 0)) {
    size_t cap = m->slots ? (m->mask + 1) * 2 : 1024;
    struct map_slot *t = calloc(cap, sizeof *t);
    if (!t) {
      *oom = 1;
      return NULL;
    }
    for (size_t i = 0; m->slots && i <= m->mask; i++) {
      if (!m->slots[i].used) continue;
      size_t h = map_hash(m->slots[i].a, m->slots[i].b, m->slots[i].c) & (cap - 1);
      while (t[h].used) h = (h + 1) & (cap - 1);
      t[h] = m->slots[i];
    }
    free(m->slots);
    m->slots = t;
    m->mask = cap - 1;
  }
  if (!m->slots) return NULL;
  size_t h = map_hash(a, b, c) & m->mask;
  for (; m->slots[h].used; h = (h + 1) & m->mask)
    if (m->slots[h].a == a && m->slots[h].b == b && m->slots[h].c == c) return &m->slots[h];
  if (!add) return NULL;
  m->slots[h] = (struct map_slot){a, b, c, 0, 0, 1};
  m->n++;
  return &m->slots[h];
}

/* Notes where pool entry (cls, key) is; the first of a key stays. 0 or -ENOMEM. */
static int pool_put(struct map *pools, uint32_t cls, uint64_t key, uint64_t off) {
  int oom = 0;
  struct map_slot *e = map_at(pools, cls, key, 0, 1, &oom);
  if (!e) return -ENOMEM;
  if (!e->v) e->v = off + 1;
  return 0;
}

/* The file offset of the entry + 1, or 0 when the pools do not hold it. */
static uint64_t pool_get(struct map *pools, uint32_t cls, uint64_t key) {
  int oom = 0;
  struct map_slot *e = cls == UINT32_MAX ? NULL : map_at(pools, cls, key, 0, 0, &oom);
  return e ? e->v : 0;
}

/* ---- one chunk ---- */

/* The classes and fields a chunk's events are read by (UINT32_MAX / -1 when absent). */
struct types {
  uint32_t event, thread, stacktrace, frame, method, klass, symbol, frametype, string;
  int ev_time, ev_thread, ev_stack, ev_cpu; /* ev_cpu: cpuTime, or an allocation's weight */
  int ev_class; /* an allocation's objectClass, a lock wait's monitorClass/parkedClass, else -1 */
  int lock;     /* --value monitor or park: the class leaf is a lock class (_[l]) */
  int st_frames, fr_method, fr_line, fr_type, me_type, me_name, cl_name, sy_string, ft_desc;
  int th_os_name, th_os_tid, th_java_name;
  uint32_t gc;                         /* jdk.GarbageCollection, for the time axis's marks */
  int gc_time, gc_duration, gc_pauses; /* its startTime, duration, sumOfPauses (ticks) */
  uint32_t mark;                       /* sampler.Mark (our agent's marks), for the same */
  int mk_time, mk_duration, mk_name;   /* its startTime (ticks), duration (ns), name */
};

/* The time axis being built (o->time): the recording's threads in the order first seen (their
 * index on the axis), and where its cells begin. */
struct jtime {
  struct map ids;  /* (0, thread key) -> index + 1 */
  uint64_t *keys;  /* index -> thread key */
  size_t n, cap;   /* threads seen */
  size_t named;    /* of them, given to the profile (fg_profile_time_thread) */
  int64_t from_ns; /* the first cell's start, from the recording's */
};

struct chunk {
  struct jr *j;
  const fg_jfr_options *o;
  struct jtime *tm; /* NULL: no time axis */
  struct map cells; /* (cell << 32 | thread index, stack) -> the weight of its events */
  struct meta m;
  struct types t;
  struct arena a;
  struct map pools;    /* (class, key) -> where the entry is */
  struct map sums;     /* (thread, stack) -> the weight of its events */
  struct map methods;  /* (0, key) -> the method's name, made once */
  uint64_t ft_key[16]; /* frame types named once */
  fg_kind ft_kind[16];
  size_t nft;
  /* the frame being built */
  const char **frames;
  size_t *lens;
  size_t capframes, caplens;
  char *text;
  size_t captext, textlen;
};

static void chunk_free(struct chunk *c) {
  meta_free(&c->m);
  arena_free(&c->a);
  free(c->pools.slots);
  free(c->sums.slots);
  free(c->cells.slots);
  free(c->methods.slots);
  free(c->frames);
  free(c->lens);
  free(c->text);
}

/* The pool entry (cls, key) decoded: the fields in want. Returns 0, 1 when key is 0 and the
 * pools have no such entry (a null reference: JFR writes null as 0, while some pools, the
 * frame types', key an entry 0), or the error. */
static int entry(struct chunk *c, uint32_t cls, uint64_t key, const int *want, int n,
                 struct val *out, const char *what) {
  uint64_t off = pool_get(&c->pools, cls, key);
  memset(out, 0, (size_t)n * sizeof *out);
  if (!off && !key) return 1;
  if (!off)
    return fail(c->j, -EINVAL, "jfr: %s %llu is not in the chunk's constant pools", what,
                (unsigned long long)key);
  struct rd r = {c->j->file + off - 1, c->j->file + c->j->len, 0};
  return read_object(c->j, &c->m, &c->a, &r, cls, want, n, out);
}

/* A string value made plain: a string pool reference followed once (the pool's entry must be a
 * string itself, not another reference). */
static int plain(struct chunk *c, struct jstr *s) {
  if (!s->ref) return 0;
  uint64_t off = pool_get(&c->pools, c->t.string, s->pool_key);
  if (!off)
    return fail(c->j, -EINVAL, "jfr: string %llu is not in the chunk's constant pools",
                (unsigned long long)s->pool_key);
  struct rd r = {c->j->file + off - 1, c->j->file + c->j->len, 0};
  if (rd_str(c->j, &r, &c->a, s)) return c->j->rc;
  if (r.bad || s->ref)
    return fail(c->j, -EINVAL, "jfr: offset %llu: a pooled string that is not a string",
                (unsigned long long)(off - 1));
  return 0;
}

/* A symbol's text (jdk.types.Symbol key). */
static int symbol(struct chunk *c, uint64_t key, struct jstr *out) {
  memset(out, 0, sizeof *out);
  struct val v;
  int rc = entry(c, c->t.symbol, key, &c->t.sy_string, 1, &v, "symbol");
  if (rc) return rc < 0 ? rc : 0;
  *out = v.s;
  return plain(c, out);
}

/* The length of a class's name without a hidden class's suffix. The JDK's recorder names a
 * hidden class in its Java form with its address ("java.util.Foo$$Lambda/0x0000000082045420",
 * JDK 21 and 25) and, on 17, with the address after '+' and its mirror's hash
 * ("java.util.regex.CharPredicates$$Lambda$17+0x800000025/674483268"); the agent names one by
 * its name alone (agent/names.c). n when s[0, n) has no such suffix. */
static size_t hidden_len(const char *s, size_t n) {
  size_t m = n, e = n, h;
  while (e && s[e - 1] >= '0' && s[e - 1] <= '9') e--;
  if (e && e < n && s[e - 1] == '/') m = e - 1; /* 17's "/<hash>" */
  for (h = m; h && isxdigit((unsigned char)s[h - 1]); h--) {}
  if (h > 3 && h < m && s[h - 1] == 'x' && s[h - 2] == '0' && (s[h - 3] == '/' || s[h - 3] == '+'))
    return h - 3;
  return n;
}

/* "pkg/Cls.method" (or the method's name alone when it has no class) of a method key. A hidden
 * class's name as the agent writes it: "pkg/Cls$$Lambda" (hidden_len). */
static int method_name(struct chunk *c, uint64_t key, const char **s, uint32_t *len) {
  int oom = 0;
  struct map_slot *e = map_at(&c->methods, 0, key, 0, 1, &oom); /* naming it adds no method */
  if (!e) return fail(c->j, -ENOMEM, "out of memory");
  if (e->v) {
    *s = (const char *)(uintptr_t)e->v;
    *len = e->len;
    return 0;
  }
  const int want[2] = {c->t.me_type, c->t.me_name};
  struct val v[2];
  int rc = entry(c, c->t.method, key, want, 2, v, "method");
  if (rc) return rc < 0 ? rc : fail(c->j, -EINVAL, "jfr: a stack frame without a method");
  struct jstr cls = {0}, name;
  struct val cv;
  rc = entry(c, c->t.klass, v[0].num, &c->t.cl_name, 1, &cv, "class");
  if (rc < 0 || (rc == 0 && symbol(c, cv.num, &cls))) return c->j->rc;
  if (symbol(c, v[1].num, &name)) return c->j->rc;
  if (!name.p || !name.len)
    return fail(c->j, -EINVAL, "jfr: method %llu has no name", (unsigned long long)key);
  size_t cl = cls.len ? hidden_len(cls.p, cls.len) : 0;
  size_t n = (cl ? cl + 1 : 0) + name.len;
  char *o = arena_alloc(&c->a, n + 1);
  if (!o) return fail(c->j, -ENOMEM, "out of memory");
  size_t k = 0;
  if (cl) {
    for (size_t i = 0; i < cl; i++) /* a hidden class's Java form made internal */
      o[i] = cl < cls.len && cls.p[i] == '.' ? '/' : cls.p[i];
    o[cl] = '.';
    k = cl + 1;
  }
  memcpy(o + k, name.p, name.len);
  o[n] = '\0';
  e->v = (uint64_t)(uintptr_t)o;
  e->len = (uint32_t)n;
  *s = o;
  *len = (uint32_t)n;
  return 0;
}

/* The kind of a frame type key: FG_KIND_JIT, _INLINED, _INTERPRETED (a Java frame) or
 * FG_KIND_NATIVE (native, and types this reader does not know). Cached: a chunk has a few. */
static int frame_kind(struct chunk *c, uint64_t key, fg_kind *kind) {
  *kind = FG_KIND_NATIVE;
  if (c->t.frametype == UINT32_MAX) return 0;
  for (size_t i = 0; i < c->nft; i++)
    if (c->ft_key[i] == key) {
      *kind = c->ft_kind[i];
      return 0;
    }
  struct val v;
  int rc = entry(c, c->t.frametype, key, &c->t.ft_desc, 1, &v, "frame type");
  if (rc < 0 || plain(c, &v.s)) return c->j->rc;
  if (str_is(&v.s, "JIT compiled"))
    *kind = FG_KIND_JIT;
  else if (str_is(&v.s, "Inlined"))
    *kind = FG_KIND_INLINED;
  else if (str_is(&v.s, "Interpreted"))
    *kind = FG_KIND_INTERPRETED;
  if (c->nft < sizeof c->ft_key / sizeof *c->ft_key) {
    c->ft_key[c->nft] = key;
    c->ft_kind[c->nft++] = *kind;
  }
  return 0;
}

/* A name as folded stacks can hold it: ';' (the separator) becomes ':', control characters
 * (a thread named with a newline) ' '. */
static void clean(char *s, size_t n) {
  for (size_t i = 0; i < n; i++) {
    if (s[i] == ';') s[i] = ':';
    if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f) s[i] = ' ';
  }
}

/* Thread `key`'s name (javaName, else osName; may be empty) and OS tid. Returns 0, 1 when the
 * chunk does not know the thread (a null reference, no thread pool, or a key not in it), or the
 * error. */
static int thread_of(struct chunk *c, uint64_t key, struct jstr *name, uint64_t *tid) {
  memset(name, 0, sizeof *name);
  *tid = 0;
  /* a thread no checkpoint of the chunk describes (a JDK recording of a busy suite run had one):
   * its events are kept under an unknown thread, not the file refused */
  if (c->t.thread == UINT32_MAX || !pool_get(&c->pools, c->t.thread, key)) return 1;
  const int want[3] = {c->t.th_os_name, c->t.th_os_tid, c->t.th_java_name};
  struct val v[3];
  int rc = entry(c, c->t.thread, key, want, 3, v, "thread");
  if (rc) return rc;
  if (plain(c, &v[0].s) || plain(c, &v[2].s)) return c->j->rc;
  *name = v[2].s.p && v[2].s.len ? v[2].s : v[0].s;
  *tid = v[1].num;
  return 0;
}

/* The Java name of a class named in internal form ("[B" -> "byte[]", "[Ljava/lang/Object;" ->
 * "java.lang.Object[]", "java/lang/String" -> "java.lang.String") into out[cap]; its length.
 * An empty name is "[unknown class]". */
static size_t java_class_name(const char *s, size_t n, char *out, size_t cap) {
  static const char prim[] = "BbyteCcharDdoubleFfloatIintJlongSshortZboolean";
  size_t dims = 0, o = 0;
  if (!n) return (size_t)snprintf(out, cap, "[unknown class]");
  while (dims < n && s[dims] == '[') dims++;
  const char *e = s + dims;
  size_t el = n - dims;
  if (dims && el >= 2 && e[0] == 'L' && e[el - 1] == ';') e++, el -= 2;
  el = hidden_len(e, el);
  const char *word = dims && el == 1 ? strchr(prim, e[0]) : NULL;
  if (word && e[0] >= 'B' && e[0] <= 'Z') { /* the letter, then its name up to the next letter */
    for (word++; *word >= 'a' && o + 1 < cap; word++) out[o++] = *word;
  } else {
    for (size_t i = 0; i < el && o + 1 < cap; i++) out[o++] = e[i] == '/' ? '.' : e[i];
  }
  for (size_t d = 0; d < dims && o + 3 < cap; d++) out[o++] = '[', out[o++] = ']';
  out[o] = '\0';
  return o;
}

/* Adds the events of one (thread, stack[, class]) key, e->v their weight, to the profile; e->len
 * gets the frame they went to (for the time axis). */
static int add_pair(struct chunk *c, fg_profile *p, int column, struct map_slot *e) {
  const uint64_t thread = e->a, stack = e->b, klass = e->c, weight = e->v;
  struct jr *j = c->j;
  size_t nframes = 0;
  c->textlen = 0;
  /* the names go into c->text, their offsets into frames until the text stops moving */
#define PUSH(A, AL, B, BL, POST)                                                            \
  do {                                                                                      \
    size_t plen_ = strlen(POST), n_ = (AL) + (BL) + plen_;                                  \
    if (nframes >= FG_MAX_DEPTH)                                                            \
      return fail(j, -EINVAL, "jfr: stack trace %llu is deeper than %d frames (the limit)", \
                  (unsigned long long)stack, FG_MAX_DEPTH);                                 \
    if (charge(j, n_ + FG_JFR_FRAME_COST)) return j->rc;                                    \
    if (fg_grow((void **)&c->text, &c->captext, c->textlen + n_ + 1, 1) ||                  \
        fg_grow((void **)&c->lens, &c->caplens, nframes + 1, sizeof *c->lens) ||            \
        fg_grow((void **)&c->frames, &c->capframes, nframes + 1, sizeof *c->frames))        \
      return fail(j, -ENOMEM, "out of memory");                                             \
    memcpy(c->text + c->textlen, (A), (AL));                                                \
    memcpy(c->text + c->textlen + (AL), (B), (BL));                                         \
    memcpy(c->text + c->textlen + (AL) + (BL), (POST), plen_);                              \
    clean(c->text + c->textlen, n_);                                                        \
    c->frames[nframes] = (const char *)(uintptr_t)c->textlen; /* an offset until the end */ \
    c->lens[nframes++] = n_;                                                                \
    c->textlen += n_;                                                                       \
  } while (0)
  if (c->o->threads) {
    struct jstr name;
    uint64_t tid;
    int rc = thread_of(c, thread, &name, &tid);
    if (rc < 0) return rc;
    if (rc) {
      PUSH("[unknown thread]", strlen("[unknown thread]"), "", 0, "");
    } else {
      char post[40];
      snprintf(post, sizeof post, " tid=%llu]", (unsigned long long)tid);
      if (name.p && name.len)
        PUSH("[", 1, name.p, name.len, post);
      else
        PUSH("[unknown", strlen("[unknown"), "", 0, post);
    }
  }
  size_t first = nframes;
  struct val fv;
  int found = entry(c, c->t.stacktrace, stack, &c->t.st_frames, 1, &fv, "stack trace");
  if (found < 0) return found;
  if (found == 0) {
    const struct jfield *ff = &c->m.fields[c->m.classes[c->t.stacktrace].first + c->t.st_frames];
    struct rd r = {fv.at, j->file + j->len, 0};
    const int want[3] = {c->t.fr_method, c->t.fr_line, c->t.fr_type};
    for (uint64_t i = 0; i < fv.num; i++) {
      struct val v[3];
      if (ff->cp) {
        uint64_t key = rd_var(&r);
        if (r.bad) break;
        if (entry(c, c->t.frame, key, want, 3, v, "stack frame"))
          return j->rc ? j->rc : fail(j, -EINVAL, "jfr: a null stack frame");
      } else if (read_object(j, &c->m, &c->a, &r, c->t.frame, want, 3, v)) {
        return j->rc;
      }
      const char *name = "";
      uint32_t nlen = 0;
      fg_kind kind = FG_KIND_NATIVE;
      if (method_name(c, v[0].num, &name, &nlen) || frame_kind(c, v[2].num, &kind)) return j->rc;
      /* as the agent's folded output names it: "Cls.m:12_[j]", the line and the kind for Java
       * frames only */
      char post[48] = "";
      int32_t line = (int32_t)(uint32_t)v[1].num;
      if (kind != FG_KIND_NATIVE && c->o->lines && line > 0)
        snprintf(post, sizeof post, ":%d", (int)line);
      if (kind != FG_KIND_NATIVE && c->o->ann)
        snprintf(post + strlen(post), sizeof post - strlen(post), "%s", fg_kinds[kind].suffix);
      PUSH(name, nlen, "", 0, post);
    }
    if (r.bad)
      return fail(j, -EINVAL, "jfr: stack trace %llu: a malformed frame",
                  (unsigned long long)stack);
  }
  if (nframes == first) PUSH("[no stack]", strlen("[no stack]"), "", 0, "");
  if (c->t.ev_class >= 0) { /* an allocation or a lock wait: its class the leaf, "byte[]_[a]" */
    struct jstr name = {0};
    struct val cv;
    char java[512];
    size_t n = 0;
    if (c->t.lock && klass == 0) { /* a park without a blocker (a null class) */
      n = strlen("[park without blocker]");
      memcpy(java, "[park without blocker]", n);
    } else {
      int rc = entry(c, c->t.klass, klass, &c->t.cl_name, 1, &cv, "class");
      if (rc < 0 || (rc == 0 && symbol(c, cv.num, &name))) return j->rc;
      n = java_class_name(name.p, name.p ? name.len : 0, java, sizeof java);
    }
    /* leaf first in the file: the class goes in before the reversal, as the innermost */
    if (nframes > first) {
      PUSH(java, n, "", 0,
           c->t.lock && klass == 0 ? ""
           : c->t.lock             ? fg_kinds[FG_KIND_LOCK].suffix
                                   : fg_kinds[FG_KIND_ALLOC].suffix);
      const char *t = c->frames[nframes - 1]; /* moved in front of the stack's frames */
      size_t l = c->lens[nframes - 1];
      memmove(&c->frames[first + 1], &c->frames[first], (nframes - 1 - first) * sizeof *c->frames);
      memmove(&c->lens[first + 1], &c->lens[first], (nframes - 1 - first) * sizeof *c->lens);
      c->frames[first] = t;
      c->lens[first] = l;
    }
  }
#undef PUSH
  /* leaf first in the file, root first here: the frames after the thread's are reversed */
  for (size_t lo = first, hi = nframes - 1; lo < hi; lo++, hi--) {
    const char *t = c->frames[lo];
    c->frames[lo] = c->frames[hi];
    c->frames[hi] = t;
    size_t l = c->lens[lo];
    c->lens[lo] = c->lens[hi];
    c->lens[hi] = l;
  }
  for (size_t i = 0; i < nframes; i++) c->frames[i] = c->text + (uintptr_t)c->frames[i];
  uint32_t node = 0;
  int rc = fg_profile_add_n_at(p, c->frames, c->lens, nframes, weight, column, &node);
  e->len = node;
  if (rc == -ENOMEM) return fail(j, rc, "out of memory");
  if (rc) return fail(j, rc, "jfr: the samples add up to more than 2^63 - 1");
  return 0;
}

/* The classes and fields the chunk's events are read by. */
static int find_types(struct chunk *c, size_t at) {
  const struct meta *m = &c->m;
  struct types *t = &c->t;
  int cpu = c->o->value && !strcmp(c->o->value, "cpu");
  int monitor = c->o->value && !strcmp(c->o->value, "monitor");
  int park = c->o->value && !strcmp(c->o->value, "park");
  int alloc = (c->o->value && !strcmp(c->o->value, "alloc")) || monitor || park; /* a class */
  const char *name = cpu       ? "sampler.CPUSample"
                     : monitor ? "jdk.JavaMonitorEnter"
                     : park    ? "jdk.ThreadPark"
                     : alloc   ? "jdk.ObjectAllocationSample"
                               : "jdk.ExecutionSample";
  t->event = class_by_name(m, name);
  t->lock = monitor || park;
  t->thread = class_by_name(m, "java.lang.Thread");
  t->gc = class_by_name(m, "jdk.GarbageCollection");
  t->gc_time = field_of(m, t->gc, "startTime");
  t->gc_duration = field_of(m, t->gc, "duration");
  t->gc_pauses = field_of(m, t->gc, "sumOfPauses");
  t->mark = class_by_name(m, "sampler.Mark");
  t->mk_time = field_of(m, t->mark, "startTime");
  t->mk_duration = field_of(m, t->mark, "duration");
  t->mk_name = field_of(m, t->mark, "name");
  t->stacktrace = class_by_name(m, "jdk.types.StackTrace");
  t->frame = class_by_name(m, "jdk.types.StackFrame");
  t->method = class_by_name(m, "jdk.types.Method");
  t->klass = class_by_name(m, "java.lang.Class");
  t->symbol = class_by_name(m, "jdk.types.Symbol");
  t->frametype = class_by_name(m, "jdk.types.FrameType");
  t->string = class_by_name(m, "java.lang.String");
  t->ev_time = field_of(m, t->event, "startTime");
  t->ev_thread = field_of(m, t->event, alloc ? "eventThread" : "sampledThread");
  t->ev_stack = field_of(m, t->event, "stackTrace");
  t->ev_cpu = field_of(m, t->event, t->lock ? "duration" : alloc ? "weight" : "cpuTime");
  t->ev_class = alloc ? field_of(m, t->event,
                                 monitor ? "monitorClass"
                                 : park  ? "parkedClass"
                                         : "objectClass")
                      : -1;
  t->st_frames = field_of(m, t->stacktrace, "frames");
  t->fr_method = field_of(m, t->frame, "method");
  t->fr_line = field_of(m, t->frame, "lineNumber");
  t->fr_type = field_of(m, t->frame, "type");
  t->me_type = field_of(m, t->method, "type");
  t->me_name = field_of(m, t->method, "name");
  t->cl_name = field_of(m, t->klass, "name");
  t->sy_string = field_of(m, t->symbol, "string");
  t->ft_desc = field_of(m, t->frametype, "description");
  t->th_os_name = field_of(m, t->thread, "osName");
  t->th_os_tid = field_of(m, t->thread, "osThreadId");
  t->th_java_name = field_of(m, t->thread, "javaName");
  if (t->event == UINT32_MAX) return 0; /* none of the events in this chunk */
  /* what naming a stack needs, each a class with a field (the rest is optional) */
  const struct {
    int field;
    const char *what;
  } need[] = {{t->ev_time, "event's startTime"},
              {t->ev_stack, "event's stackTrace"},
              {cpu ? t->ev_cpu : 0, "sampler.CPUSample's cpuTime"},
              {alloc ? t->ev_cpu : 0, "event's weight or duration"},
              {alloc ? t->ev_class : 0, "event's objectClass, monitorClass or parkedClass"},
              {c->o->threads ? t->ev_thread : 0, "event's sampledThread"},
              {t->st_frames, "jdk.types.StackTrace's frames"},
              {t->fr_method, "jdk.types.StackFrame's method"},
              {t->me_type, "jdk.types.Method's type"},
              {t->me_name, "jdk.types.Method's name"},
              {t->cl_name, "java.lang.Class's name"},
              {t->sy_string, "jdk.types.Symbol's string"},
              {c->o->threads ? t->th_os_tid : 0, "java.lang.Thread's osThreadId"}};
  for (size_t i = 0; i < sizeof need / sizeof *need; i++)
    if (need[i].field < 0)
      return fail(c->j, -EINVAL, "jfr: offset %zu: the metadata describes no %s", at, need[i].what);
  const struct jfield *ev = &m->fields[m->classes[t->event].first];
  if (ev[t->ev_stack].cls != t->stacktrace || !ev[t->ev_stack].cp)
    return fail(c->j, -EINVAL,
                "jfr: offset %zu: the event's stackTrace is not a pooled "
                "jdk.types.StackTrace",
                at);
  if (c->o->threads && (ev[t->ev_thread].cls != t->thread || !ev[t->ev_thread].cp))
    return fail(c->j, -EINVAL,
                "jfr: offset %zu: the event's sampledThread is not a pooled "
                "java.lang.Thread",
                at);
  if (alloc && (ev[t->ev_class].cls != t->klass || !ev[t->ev_class].cp))
    return fail(c->j, -EINVAL, "jfr: offset %zu: the event's class is not a pooled java.lang.Class",
                at);
  const struct jfield *fr = &m->fields[m->classes[t->stacktrace].first + t->st_frames];
  const struct jfield *me = &m->fields[m->classes[t->frame].first + t->fr_method];
  if (!fr->array || fr->cls != t->frame || !me->cp || me->cls != t->method)
    return fail(c->j, -EINVAL,
                "jfr: offset %zu: the stack traces' frames are not an array of "
                "jdk.types.StackFrame naming a pooled jdk.types.Method",
                at);
  return 0;
}

/* A checkpoint event's pools: where each entry is. r is after the event's type. */
static int checkpoint(struct chunk *c, struct rd *r, size_t at) {
  rd_var(r); /* start */
  rd_var(r); /* duration */
  rd_var(r); /* delta to the previous checkpoint: every event is visited anyway */
  rd_u8(r);  /* flush / type mask */
  uint64_t npools = rd_count(r);
  for (uint64_t i = 0; i < npools && !r->bad; i++) {
    uint64_t type = rd_var(r), n = rd_count(r);
    if (r->bad) break;
    uint32_t cls = class_by_id(&c->m, type);
    if (cls == UINT32_MAX)
      return fail(c->j, -EINVAL,
                  "jfr: offset %zu: a constant pool of type %llu, which the "
                  "metadata does not describe",
                  at, (unsigned long long)type);
    struct val v;
    for (uint64_t k = 0; k < n && !r->bad; k++) {
      uint64_t key = rd_var(r);
      if (pool_put(&c->pools, cls, key, (uint64_t)(r->p - c->j->file)))
        return fail(c->j, -ENOMEM, "out of memory");
      if (read_one(c->j, &c->m, &c->a, r, cls, &v, 0)) return c->j->rc;
    }
  }
  if (r->bad) return fail(c->j, -EINVAL, "jfr: offset %zu: a malformed checkpoint event", at);
  return 0;
}

/* The chunk at file offset `at`, `size` bytes, starting rel_ns after the recording. */
/* The index on the time axis of thread `key` (a new one when first seen); -1 out of memory. */
static int64_t time_thread(struct jtime *tm, uint64_t key) {
  int oom = 0;
  struct map_slot *e = map_at(&tm->ids, 0, key, 0, 1, &oom);
  if (!e) return -1;
  if (!e->v) {
    if (tm->n >= UINT32_MAX || fg_grow((void **)&tm->keys, &tm->cap, tm->n + 1, sizeof *tm->keys))
      return -1;
    tm->keys[tm->n] = key;
    e->v = ++tm->n;
  }
  return (int64_t)e->v - 1;
}

/* The chunk's part of the time axis: its new threads named, its cells' weights given to the
 * frames their stacks went to (add_pair noted them). */
static int add_cells(struct chunk *c, fg_profile *p) {
  struct jtime *tm = c->tm;
  for (; tm->named < tm->n; tm->named++) {
    struct jstr name;
    uint64_t tid;
    int rc = thread_of(c, tm->keys[tm->named], &name, &tid);
    if (rc < 0) return rc;
    char buf[256];
    size_t len = rc || !name.p ? 0 : name.len < sizeof buf - 1 ? name.len : sizeof buf - 1;
    if (len) memcpy(buf, name.p, len);
    buf[len] = '\0';
    clean(buf, len);
    if (fg_profile_time_thread(p, (int64_t)tid, rc ? "[unknown thread]" : buf) < 0)
      return fail(c->j, -ENOMEM, "out of memory");
  }
  for (size_t i = 0; c->cells.slots && i <= c->cells.mask; i++) {
    const struct map_slot *e = &c->cells.slots[i];
    if (!e->used) continue;
    uint32_t thread = (uint32_t)e->a, cell = (uint32_t)(e->a >> 32);
    int oom = 0;
    const struct map_slot *pair =
        map_at(&c->sums, c->o->threads ? tm->keys[thread] : 0, e->b, e->c, 0, &oom);
    if (!pair || !pair->len) continue; /* (cannot be: every event's pair was added) */
    if (fg_profile_time_add(p, cell, pair->len, thread, e->v))
      return fail(c->j, -ENOMEM, "out of memory");
  }
  return 0;
}

static int read_chunk(struct jr *j, const fg_jfr_options *o, fg_profile *p, int column, size_t at,
                      size_t size, int64_t rel_ns, int64_t from, int64_t to, int *has_event,
                      struct jtime *tm) {
  const uint8_t *h = j->file + at;
  uint64_t meta_off = be(h + 24, 8), start_ticks = be(h + 48, 8), tps = be(h + 56, 8);
  if (tps == 0 || tps > INT64_MAX)
    return fail(j, -EINVAL, "jfr: chunk at offset %zu: %llu ticks a second", at,
                (unsigned long long)tps);
  struct chunk c = {.j = j, .o = o, .tm = tm};
  int rc = meta_read(j, &c.m, &c.a, at, size, meta_off);
  if (!rc) rc = find_types(&c, at + (size_t)meta_off);
  if (!rc && c.t.event != UINT32_MAX) *has_event = 1;
  int cpu = o->value && !strcmp(o->value, "cpu");
  int alloc = o->value && (!strcmp(o->value, "alloc") || !strcmp(o->value, "monitor") ||
                           !strcmp(o->value, "park")); /* a weight and a class */
  uint64_t event_id = !rc && c.t.event != UINT32_MAX ? c.m.classes[c.t.event].id : UINT64_MAX;
  /* GC pauses as marks on the time axis: at the collection's start, for its pauses' sum (a
   * concurrent collector's cycle is mostly not a pause), else its duration */
  uint64_t gc_id =
      !rc && tm && c.t.gc != UINT32_MAX && c.t.gc_time >= 0 ? c.m.classes[c.t.gc].id : UINT64_MAX;
  /* the agent's own marks (a GC pause from JVMTI, a profile written): at their start, for their
   * duration, under their name */
  uint64_t mark_id = !rc && tm && c.t.mark != UINT32_MAX && c.t.mk_time >= 0 && c.t.mk_name >= 0
                         ? c.m.classes[c.t.mark].id
                         : UINT64_MAX;
  size_t off = at + HEADER_SIZE, end = at + size;
  while (!rc && off < end) {
    struct rd r = {j->file + off, j->file + end, 0};
    uint64_t esize = rd_var(&r);
    if (r.bad || esize < 2 || esize > end - off) {
      rc = fail(j, -EINVAL, "jfr: offset %zu: an event of size %llu (%zu bytes left in the chunk)",
                off, (unsigned long long)esize, end - off);
      break;
    }
    r.end = j->file + off + esize;
    uint64_t type = rd_var(&r);
    if (charge(j, 1)) break;
    if (type == 1) {
      rc = checkpoint(&c, &r, off);
    } else if ((type == gc_id || type == mark_id) && !r.bad) {
      int gc = type == gc_id;
      const int want[3] = {gc ? c.t.gc_time : c.t.mk_time, gc ? c.t.gc_duration : c.t.mk_duration,
                           gc ? c.t.gc_pauses : c.t.mk_name};
      struct val v[3];
      rc = read_object(j, &c.m, &c.a, &r, gc ? c.t.gc : c.t.mark, want, 3, v);
      if (!rc && !gc) rc = plain(&c, &v[2].s);
      if (rc) break;
      double t =
          (double)rel_ns + (double)(int64_t)(v[0].num - start_ticks) * 1e9 / (double)(int64_t)tps;
      double d = !gc                  ? (double)v[1].num
                 : c.t.gc_pauses >= 0 ? (double)v[2].num * 1e9 / (double)tps
                                      : (double)v[1].num * 1e9 / (double)tps;
      char name[128] = "GC pause";
      if (!gc) {
        size_t len = v[2].s.p ? (v[2].s.len < sizeof name - 1 ? v[2].s.len : sizeof name - 1) : 0;
        if (len) memcpy(name, v[2].s.p, len);
        name[len] = '\0';
        clean(name, len);
      }
      if (t >= (double)from && t < (double)to && d < 1e15 && name[0]) {
        double at_ns = t - (double)tm->from_ns;
        if (fg_profile_time_mark(p, at_ns > 0 ? (uint64_t)at_ns : 0, (uint64_t)d, name))
          rc = fail(j, -ENOMEM, "out of memory");
      }
    } else if (type == event_id && !r.bad) {
      const int want[5] = {c.t.ev_time, c.t.ev_thread, c.t.ev_stack, c.t.ev_cpu, c.t.ev_class};
      struct val v[5];
      rc = read_object(j, &c.m, &c.a, &r, c.t.event, want, 5, v);
      if (rc) break;
      double t =
          (double)rel_ns + (double)(int64_t)(v[0].num - start_ticks) * 1e9 / (double)(int64_t)tps;
      uint64_t w = cpu || alloc ? v[3].num : 1;
      if (t >= (double)from && t < (double)to && w) {
        int oom = 0;
        struct map_slot *e =
            map_at(&c.sums, o->threads ? v[1].num : 0, v[2].num, alloc ? v[4].num : 0, 1, &oom);
        if (!e)
          rc = fail(j, -ENOMEM, "out of memory");
        else if (w > INT64_MAX - e->v)
          rc = fail(j, -EINVAL, "jfr: the samples add up to more than 2^63 - 1");
        else
          e->v += w;
        if (!rc && tm) {
          int64_t th = time_thread(tm, v[1].num);
          double cell = (t - (double)tm->from_ns) / (double)FG_JFR_CELL_NS;
          uint64_t key = (uint64_t)(cell > 0 ? (cell < UINT32_MAX ? cell : UINT32_MAX) : 0) << 32;
          struct map_slot *ce = th < 0 ? NULL
                                       : map_at(&c.cells, key | (uint64_t)th, v[2].num,
                                                alloc ? v[4].num : 0, 1, &oom);
          if (!ce)
            rc = fail(j, -ENOMEM, "out of memory");
          else
            ce->v += w; /* (no more than the pair's sum, checked above) */
        }
      }
    } else if (r.bad) {
      rc = fail(j, -EINVAL, "jfr: offset %zu: a malformed event header", off);
    }
    off += esize;
  }
  for (size_t i = 0; !rc && c.sums.slots && i <= c.sums.mask; i++)
    if (c.sums.slots[i].used) rc = add_pair(&c, p, column, &c.sums.slots[i]);
  if (!rc && tm) rc = add_cells(&c, p);
  chunk_free(&c);
  return rc;
}

void fg_jfr_options_init(fg_jfr_options *o) { memset(o, 0, sizeof *o); }

/* A bound of the range (fg_jfr_options) in ns from the recording's start (start: ns since the
 * epoch; length: its ns). */
static int64_t bound(int kind, int64_t v, int utc, int64_t start, int64_t length) {
  if (kind == FG_JFR_AT_START) return v < 0 ? length + v : v;
  if (kind == FG_JFR_AT_DAY) { /* the midnight of the start's day, then the nearest day */
    time_t sec = (time_t)(start / 1000000000);
    struct tm t;
    if (!(utc ? gmtime_r(&sec, &t) : localtime_r(&sec, &t))) return 0;
    t.tm_hour = t.tm_min = t.tm_sec = 0;
    t.tm_isdst = -1;
    time_t midnight = utc ? timegm(&t) : mktime(&t);
    const int64_t day = 86400 * 1000000000ll, half = day / 2;
    v += (int64_t)midnight * 1000000000;
    if (v < start - half) v += day;
    if (v > start + half) v -= day;
  }
  return v - start;
}

int fg_read_jfr(fg_profile *p, const void *data, size_t len, int column, const fg_jfr_options *o,
                fg_read_error *err) {
  struct jr j = {.file = data, .len = len, .err = err};
  uint64_t budget = FG_JFR_WORK_BASE + (uint64_t)len * FG_JFR_WORK_PER_BYTE;
  j.budget = budget < FG_JFR_WORK_MAX ? budget : FG_JFR_WORK_MAX;
  err->line = 0;
  err->msg[0] = '\0';
  if (o->value && strcmp(o->value, "samples") && strcmp(o->value, "cpu") &&
      strcmp(o->value, "alloc") && strcmp(o->value, "monitor") && strcmp(o->value, "park"))
    return fail(&j, -EINVAL,
                "--value '%s': a JFR recording gives samples (one per "
                "jdk.ExecutionSample), cpu (sampler.CPUSample's CPU time), alloc (the bytes of "
                "jdk.ObjectAllocationSample's weight), monitor or park (the ns of "
                "jdk.JavaMonitorEnter's or jdk.ThreadPark's duration)",
                o->value);
  /* the chunks, and the recording's start and end */
  int64_t start = INT64_MAX, stop = INT64_MIN;
  size_t nchunks = 0;
  for (size_t at = 0; at < len; nchunks++) {
    const uint8_t *h = j.file + at;
    if (len - at < HEADER_SIZE || memcmp(h, "FLR", 4) != 0)
      return fail(&j, -EINVAL, "jfr: offset %zu: not a JFR chunk (%s)", at,
                  len - at < HEADER_SIZE ? "shorter than its 68-byte header" : "no FLR magic");
    unsigned major = (unsigned)be(h + 4, 2), minor = (unsigned)be(h + 6, 2);
    if (major != 2)
      return fail(&j, -EINVAL, "jfr: offset %zu: chunk format %u.%u (2.0 and 2.1 are read)", at,
                  major, minor);
    uint64_t size = be(h + 8, 8);
    if (size < HEADER_SIZE || size > len - at)
      return fail(&j, -EINVAL,
                  "jfr: offset %zu: a chunk of %llu bytes, %zu in the file (cut "
                  "short, or still being written)",
                  at, (unsigned long long)size, len - at);
    int64_t s = (int64_t)be(h + 32, 8), d = (int64_t)be(h + 40, 8);
    if (s < 0 || d < 0 || d > INT64_MAX - s)
      return fail(&j, -EINVAL, "jfr: offset %zu: a chunk starting at %lld ns for %lld ns", at,
                  (long long)s, (long long)d);
    if (s < start) start = s;
    if (s + d > stop) stop = s + d;
    at += (size_t)size;
  }
  if (!nchunks) return fail(&j, -EINVAL, "jfr: an empty file");
  int64_t length = stop - start;
  int64_t from =
      o->has_from ? bound(o->has_from, o->from_ns, o->from_utc, start, length) : INT64_MIN;
  int64_t to = o->has_to ? bound(o->has_to, o->to_ns, o->to_utc, start, length) : INT64_MAX;
  int has_event = 0;
  struct jtime tm = {.from_ns = from > 0 ? from : 0};
  if (o->time) {
    int64_t end = to < length ? to : length;
    int rc = fg_profile_time_init(
        p, start + tm.from_ns, end > tm.from_ns ? (uint64_t)(end - tm.from_ns) : 0, FG_JFR_CELL_NS);
    if (rc) return fail(&j, rc, "out of memory");
  }
  int rc = 0;
  for (size_t at = 0; at < len && !rc;) {
    size_t size = (size_t)be(j.file + at + 8, 8);
    int64_t rel = (int64_t)be(j.file + at + 32, 8) - start;
    rc = read_chunk(&j, o, p, column, at, size, rel, from, to, &has_event, o->time ? &tm : NULL);
    at += size;
  }
  free(tm.ids.slots);
  free(tm.keys);
  if (rc) return rc;
  if (!has_event && o->value && !strcmp(o->value, "cpu"))
    return fail(&j, -EINVAL,
                "--value cpu: the recording has no sampler.CPUSample events (the "
                "agent's format=jfr writes them; the JDK's own recordings have samples only)");
  return 0;
}
