/*
 * fg_pprof.c — pprof profiles in: a gzipped (or plain) profile.proto read into a profile (see
 * fg_pprof.h). Every read is bounds-checked; a malformed file is an error, never a crash.
 *
 * The stacks: pprof's location ids are leaf first and a location's lines innermost first (the
 * last one is the function the others were inlined into); here they become root first. A frame
 * is the function's name, with ":<line>" when the line is known. A sample's `thread` label (and
 * `tid`) becomes a root frame "[NAME tid=N]", as the agent's `threads` option writes it.
 */
#include "fg_pprof.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#define MAX_INFLATED ((size_t)1 << 31) /* 2 GiB: a larger profile is refused */

/* ---- protobuf reading ---- */

struct rd {
  const unsigned char *p, *end;
  int bad;
};

static uint64_t rd_varint(struct rd *r) {
  uint64_t v = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (r->p >= r->end) break;
    unsigned char c = *r->p++;
    v |= (uint64_t)(c & 0x7f) << shift;
    if (!(c & 0x80)) return v;
  }
  r->bad = 1;
  return 0;
}

/* The next field's number and wire type; 0 at the end or on an error. */
static int rd_field(struct rd *r, unsigned *field, unsigned *wire) {
  if (r->bad || r->p >= r->end) return 0;
  uint64_t key = rd_varint(r);
  *field = (unsigned)(key >> 3);
  *wire = (unsigned)(key & 7);
  if (r->bad || *field == 0) {
    r->bad = 1;
    return 0;
  }
  return 1;
}

/* A length-delimited field's contents as a reader of their own. */
static struct rd rd_sub(struct rd *r) {
  uint64_t len = rd_varint(r);
  struct rd s = {r->p, r->p, 0};
  if (r->bad || len > (uint64_t)(r->end - r->p)) {
    r->bad = 1;
    s.bad = 1;
    return s;
  }
  s.end = r->p + len;
  r->p += len;
  return s;
}

static void rd_skip(struct rd *r, unsigned wire) {
  switch (wire) {
  case 0: rd_varint(r); break;
  case 1:
    if (r->end - r->p < 8)
      r->bad = 1;
    else
      r->p += 8;
    break;
  case 2: rd_sub(r); break;
  case 5:
    if (r->end - r->p < 4)
      r->bad = 1;
    else
      r->p += 4;
    break;
  default: r->bad = 1;
  }
}

/* Calls fn for each value of a repeated varint field, packed (wire 2) or not (wire 0). */
static void rd_varints(struct rd *r, unsigned wire, void (*fn)(void *ctx, uint64_t v), void *ctx) {
  if (wire == 0) {
    uint64_t v = rd_varint(r);
    if (!r->bad) fn(ctx, v);
  } else if (wire == 2) {
    struct rd s = rd_sub(r);
    while (!s.bad && s.p < s.end) {
      uint64_t v = rd_varint(&s);
      if (!s.bad) fn(ctx, v);
    }
    if (s.bad) r->bad = 1;
  } else {
    r->bad = 1;
  }
}

/* ---- growable arrays ---- */

static int grow(void **a, size_t *cap, size_t need, size_t elem) {
  if (need <= *cap) return 0;
  size_t c = *cap ? *cap * 2 : 64;
  while (c < need) c *= 2;
  void *p = realloc(*a, c * elem);
  if (!p) return -ENOMEM;
  *a = p;
  *cap = c;
  return 0;
}

/* ---- the profile's tables ---- */

struct str {
  const char *p;
  size_t len;
};
struct func {
  uint64_t id;
  int64_t name;
};
struct line {
  uint64_t function;
  int64_t line;
};
struct loc {
  uint64_t id;
  size_t first, n; /* into lines */
};

struct tables {
  struct str *strs;
  size_t nstrs, cap_strs;
  int64_t *types; /* sample_type[i].type, a string index */
  size_t ntypes, cap_types;
  struct func *funcs;
  size_t nfuncs, cap_funcs;
  struct line *lines;
  size_t nlines, cap_lines;
  struct loc *locs;
  size_t nlocs, cap_locs;
  struct rd *samples;
  size_t nsamples, cap_samples;
  int64_t key_thread, key_tid; /* the strings "thread" and "tid", -1 when absent */
  int err;
};

static int fail(fg_read_error *err, int rc, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  err->line = 0;
  vsnprintf(err->msg, sizeof err->msg, fmt, ap);
  va_end(ap);
  return rc;
}

static void read_value_type(struct tables *t, struct rd m) {
  unsigned f, w;
  int64_t type = 0;
  while (rd_field(&m, &f, &w)) {
    if (f == 1 && w == 0)
      type = (int64_t)rd_varint(&m);
    else
      rd_skip(&m, w);
  }
  if (m.bad || grow((void **)&t->types, &t->cap_types, t->ntypes + 1, sizeof *t->types)) {
    t->err = m.bad ? -EINVAL : -ENOMEM;
    return;
  }
  t->types[t->ntypes++] = type;
}

static void read_function(struct tables *t, struct rd m) {
  unsigned f, w;
  struct func fn = {0, 0};
  while (rd_field(&m, &f, &w)) {
    if (f == 1 && w == 0)
      fn.id = rd_varint(&m);
    else if (f == 2 && w == 0)
      fn.name = (int64_t)rd_varint(&m);
    else
      rd_skip(&m, w);
  }
  if (m.bad || grow((void **)&t->funcs, &t->cap_funcs, t->nfuncs + 1, sizeof *t->funcs)) {
    t->err = m.bad ? -EINVAL : -ENOMEM;
    return;
  }
  t->funcs[t->nfuncs++] = fn;
}

static void read_location(struct tables *t, struct rd m) {
  unsigned f, w;
  struct loc l = {0, t->nlines, 0};
  while (rd_field(&m, &f, &w)) {
    if (f == 1 && w == 0) {
      l.id = rd_varint(&m);
    } else if (f == 4 && w == 2) {
      struct rd lm = rd_sub(&m);
      struct line ln = {0, 0};
      unsigned g, v;
      while (rd_field(&lm, &g, &v)) {
        if (g == 1 && v == 0)
          ln.function = rd_varint(&lm);
        else if (g == 2 && v == 0)
          ln.line = (int64_t)rd_varint(&lm);
        else
          rd_skip(&lm, v);
      }
      if (lm.bad) m.bad = 1;
      if (grow((void **)&t->lines, &t->cap_lines, t->nlines + 1, sizeof *t->lines)) {
        t->err = -ENOMEM;
        return;
      }
      t->lines[t->nlines++] = ln;
      l.n++;
    } else {
      rd_skip(&m, w);
    }
  }
  if (m.bad || grow((void **)&t->locs, &t->cap_locs, t->nlocs + 1, sizeof *t->locs)) {
    t->err = m.bad ? -EINVAL : -ENOMEM;
    return;
  }
  t->locs[t->nlocs++] = l;
}

static int by_func_id(const void *a, const void *b) {
  const struct func *x = a, *y = b;
  return x->id < y->id ? -1 : x->id > y->id;
}

static int by_loc_id(const void *a, const void *b) {
  const struct loc *x = a, *y = b;
  return x->id < y->id ? -1 : x->id > y->id;
}

static const struct str *string_at(const struct tables *t, int64_t i) {
  return i >= 0 && (size_t)i < t->nstrs ? &t->strs[i] : NULL;
}

/* ---- one sample into the profile ---- */

struct builder {
  const struct tables *t;
  uint64_t *locs;
  size_t nlocs, cap_locs;
  uint64_t *values;
  size_t nvalues, cap_values;
  char *names; /* the frames' names, one after another */
  size_t names_len, cap_names;
  const char **frames;
  size_t *lens, nframes, cap_frames, cap_lens;
  int err;
};

static void push_loc(void *ctx, uint64_t v) {
  struct builder *b = ctx;
  if (grow((void **)&b->locs, &b->cap_locs, b->nlocs + 1, sizeof *b->locs))
    b->err = -ENOMEM;
  else
    b->locs[b->nlocs++] = v;
}

static void push_value(void *ctx, uint64_t v) {
  struct builder *b = ctx;
  if (grow((void **)&b->values, &b->cap_values, b->nvalues + 1, sizeof *b->values))
    b->err = -ENOMEM;
  else
    b->values[b->nvalues++] = v;
}

/* Appends one frame name (printf-style) to the names of this sample; its offset goes in lens
 * until the names stop moving. */
static void push_frame(struct builder *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n <= 0 || grow((void **)&b->names, &b->cap_names, b->names_len + (size_t)n + 1, 1) ||
      grow((void **)&b->frames, &b->cap_frames, b->nframes + 1, sizeof *b->frames) ||
      grow((void **)&b->lens, &b->cap_lens, b->nframes + 1, sizeof *b->lens)) {
    b->err = n <= 0 ? -EINVAL : -ENOMEM;
    return;
  }
  va_start(ap, fmt);
  vsnprintf(b->names + b->names_len, (size_t)n + 1, fmt, ap);
  va_end(ap);
  b->frames[b->nframes] = (const char *)(uintptr_t)b->names_len; /* an offset for now */
  b->lens[b->nframes++] = (size_t)n;
  b->names_len += (size_t)n;
}

static int add_sample(fg_profile *p, int column, size_t value_index, struct builder *b, struct rd m,
                      fg_read_error *err) {
  const struct tables *t = b->t;
  b->nlocs = b->nvalues = b->names_len = b->nframes = 0;
  const struct str *thread = NULL;
  int64_t tid = -1;
  int64_t key_thread = t->key_thread, key_tid = t->key_tid;
  unsigned f, w;
  while (rd_field(&m, &f, &w)) {
    if (f == 1) {
      rd_varints(&m, w, push_loc, b);
    } else if (f == 2) {
      rd_varints(&m, w, push_value, b);
    } else if (f == 3 && w == 2) {
      struct rd lm = rd_sub(&m);
      int64_t key = 0, str = 0, num = 0;
      unsigned g, v;
      while (rd_field(&lm, &g, &v)) {
        if (g == 1 && v == 0)
          key = (int64_t)rd_varint(&lm);
        else if (g == 2 && v == 0)
          str = (int64_t)rd_varint(&lm);
        else if (g == 3 && v == 0)
          num = (int64_t)rd_varint(&lm);
        else
          rd_skip(&lm, v);
      }
      if (lm.bad) m.bad = 1;
      if (key == key_thread && str > 0) thread = string_at(t, str);
      if (key == key_tid) tid = num;
    } else {
      rd_skip(&m, w);
    }
  }
  if (m.bad) return fail(err, -EINVAL, "pprof: a malformed sample");
  if (b->err) return fail(err, b->err, "out of memory");
  if (value_index >= b->nvalues) return 0; /* no such value: nothing to add */
  uint64_t count = b->values[value_index];
  if (!count || !b->nlocs) return 0;
  if (thread) {
    if (tid >= 0)
      push_frame(b, "[%.*s tid=%lld]", (int)thread->len, thread->p, (long long)tid);
    else
      push_frame(b, "[%.*s]", (int)thread->len, thread->p);
  }
  for (size_t i = b->nlocs; i-- > 0;) {
    struct loc key = {b->locs[i], 0, 0};
    const struct loc *l = bsearch(&key, t->locs, t->nlocs, sizeof *t->locs, by_loc_id);
    if (!l)
      return fail(err, -EINVAL, "pprof: a sample names location %llu, which is not there",
                  (unsigned long long)b->locs[i]);
    if (!l->n) {
      push_frame(b, "[0x%llx]", (unsigned long long)l->id);
      continue;
    }
    for (size_t j = l->n; j-- > 0;) { /* the outermost function first */
      const struct line *ln = &t->lines[l->first + j];
      struct func fkey = {ln->function, 0};
      const struct func *fn = bsearch(&fkey, t->funcs, t->nfuncs, sizeof *t->funcs, by_func_id);
      const struct str *name = fn ? string_at(t, fn->name) : NULL;
      if (!name)
        return fail(err, -EINVAL, "pprof: location %llu names no function",
                    (unsigned long long)l->id);
      if (!name->len)
        push_frame(b, "[unknown]");
      else if (ln->line > 0)
        push_frame(b, "%.*s:%lld", (int)name->len, name->p, (long long)ln->line);
      else
        push_frame(b, "%.*s", (int)name->len, name->p);
    }
  }
  if (b->err) return fail(err, b->err, "out of memory");
  for (size_t i = 0; i < b->nframes; i++) b->frames[i] = b->names + (uintptr_t)b->frames[i];
  int rc = fg_profile_add_n(p, b->frames, b->lens, b->nframes, count, column);
  return rc ? fail(err, rc, "%s", rc == -ENOMEM ? "out of memory" : "pprof: an empty frame name")
            : 0;
}

/* ---- the whole file ---- */

static int inflate_all(const unsigned char *in, size_t len, unsigned char **out, size_t *outlen,
                       fg_read_error *err) {
  z_stream z;
  memset(&z, 0, sizeof z);
  if (inflateInit2(&z, 15 + 32) != Z_OK) return fail(err, -ENOMEM, "out of memory");
  size_t cap = len * 4 + 4096, n = 0;
  unsigned char *buf = malloc(cap);
  int rc = buf ? 0 : -ENOMEM, zr = Z_OK;
  z.next_in = (unsigned char *)in;
  while (!rc) {
    size_t chunk = len > (1u << 30) ? (1u << 30) : len;
    if (z.avail_in == 0 && chunk) {
      z.avail_in = (uInt)chunk;
      len -= chunk;
    }
    if (n == cap) {
      if (cap >= MAX_INFLATED) {
        rc = fail(err, -EINVAL, "pprof: more than 2 GiB when inflated");
        break;
      }
      unsigned char *p = realloc(buf, cap * 2);
      if (!p) {
        rc = -ENOMEM;
        break;
      }
      buf = p;
      cap *= 2;
    }
    z.next_out = buf + n;
    z.avail_out = (uInt)(cap - n > (1u << 30) ? (1u << 30) : cap - n);
    size_t before = z.avail_out;
    zr = inflate(&z, Z_NO_FLUSH);
    n += before - z.avail_out;
    if (zr == Z_STREAM_END) break;
    if (zr != Z_OK && zr != Z_BUF_ERROR) {
      rc = fail(err, -EINVAL, "pprof: not a valid gzip stream (%s)", z.msg ? z.msg : "corrupt");
      break;
    }
    if (zr == Z_BUF_ERROR && z.avail_in == 0 && len == 0) {
      rc = fail(err, -EINVAL, "pprof: the gzip stream is cut short");
      break;
    }
  }
  inflateEnd(&z);
  if (rc == -ENOMEM) fail(err, rc, "out of memory");
  if (rc) {
    free(buf);
    return rc;
  }
  *out = buf;
  *outlen = n;
  return 0;
}

int fg_read_pprof(fg_profile *p, const void *data, size_t len, int column, const char *value,
                  fg_read_error *err) {
  unsigned char *inflated = NULL;
  const unsigned char *buf = data;
  if (len >= 2 && buf[0] == 0x1f && buf[1] == 0x8b) {
    int rc = inflate_all(buf, len, &inflated, &len, err);
    if (rc) return rc;
    buf = inflated;
  }
  struct tables t;
  memset(&t, 0, sizeof t);
  struct rd r = {buf, buf + len, 0};
  unsigned f, w;
  while (!t.err && rd_field(&r, &f, &w)) {
    if (f == 6 && w == 2) { /* string_table */
      struct rd s = rd_sub(&r);
      if (grow((void **)&t.strs, &t.cap_strs, t.nstrs + 1, sizeof *t.strs))
        t.err = -ENOMEM;
      else
        t.strs[t.nstrs++] = (struct str){(const char *)s.p, (size_t)(s.end - s.p)};
    } else if (f == 1 && w == 2) {
      read_value_type(&t, rd_sub(&r));
    } else if (f == 5 && w == 2) {
      read_function(&t, rd_sub(&r));
    } else if (f == 4 && w == 2) {
      read_location(&t, rd_sub(&r));
    } else if (f == 2 && w == 2) {
      struct rd s = rd_sub(&r);
      if (grow((void **)&t.samples, &t.cap_samples, t.nsamples + 1, sizeof *t.samples))
        t.err = -ENOMEM;
      else
        t.samples[t.nsamples++] = s;
    } else {
      rd_skip(&r, w);
    }
  }
  int rc = 0;
  if (t.err == -ENOMEM)
    rc = fail(err, -ENOMEM, "out of memory");
  else if (r.bad || t.err)
    rc = fail(err, -EINVAL, "not a pprof profile (malformed protobuf)");
  else if (!t.nstrs || t.strs[0].len != 0)
    rc = fail(err, -EINVAL,
              "not a pprof profile (no string table, or its first string is not empty)");
  size_t vi = 0;
  if (!rc && value) {
    for (vi = 0; vi < t.ntypes; vi++) {
      const struct str *s = string_at(&t, t.types[vi]);
      if (s && s->len == strlen(value) && !memcmp(s->p, value, s->len)) break;
    }
    if (vi == t.ntypes) {
      char have[128] = "";
      size_t o = 0;
      for (size_t i = 0; i < t.ntypes && o < sizeof have; i++) {
        const struct str *s = string_at(&t, t.types[i]);
        if (s)
          o += (size_t)snprintf(have + o, sizeof have - o, "%s%.*s", i ? ", " : "", (int)s->len,
                                s->p);
      }
      rc = fail(err, -EINVAL, "pprof: no sample type '%s' (the profile has: %s)", value, have);
    }
  }
  t.key_thread = t.key_tid = -1;
  for (size_t i = 1; i < t.nstrs; i++) {
    if (t.strs[i].len == 6 && !memcmp(t.strs[i].p, "thread", 6) && t.key_thread < 0)
      t.key_thread = (int64_t)i;
    if (t.strs[i].len == 3 && !memcmp(t.strs[i].p, "tid", 3) && t.key_tid < 0)
      t.key_tid = (int64_t)i;
  }
  if (!rc) {
    qsort(t.funcs, t.nfuncs, sizeof *t.funcs, by_func_id);
    qsort(t.locs, t.nlocs, sizeof *t.locs, by_loc_id);
    struct builder b;
    memset(&b, 0, sizeof b);
    b.t = &t;
    for (size_t i = 0; i < t.nsamples && !rc; i++)
      rc = add_sample(p, column, vi, &b, t.samples[i], err);
    free(b.locs);
    free(b.values);
    free(b.names);
    free(b.frames);
    free(b.lens);
  }
  free(t.strs);
  free(t.types);
  free(t.funcs);
  free(t.lines);
  free(t.locs);
  free(t.samples);
  free(inflated);
  return rc;
}
