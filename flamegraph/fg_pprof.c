/*
 * fg_pprof.c — pprof profiles in: a gzipped (or plain) profile.proto read into a profile (see
 * fg_pprof.h). Every read is bounds-checked; a malformed file is an error, never a crash.
 *
 * The stacks: pprof's location ids are leaf first and a location's lines innermost first (the
 * last one is the function the others were inlined into); here they become root first. A frame
 * is the function's name, with ":<line>" when the line is known. A sample's `thread` label (and
 * `tid`) becomes a root frame "[NAME tid=N]", as the agent's `threads` option writes it.
 *
 * Hazards of untrusted input, each bounded (the limits are in fg_pprof.h): a gzip bomb (the
 * inflated size is capped by the file's size); table entries of 2 bytes each (every table is
 * counted first and allocated once, at most 8 bytes per inflated byte (16 while one is sorted); samples are not
 * stored but read from the buffer again); samples that name a many-line location many times
 * (N samples x M lines: every frame produced is charged to a budget linear in the file's size,
 * and each stack to FG_MAX_DEPTH). Reading stops at the first limit reached, naming it.
 */
#include "fg_pprof.h"
#include "fg_internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

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

/* ---- the profile's tables ---- */

struct str { /* into the profile, which is at most FG_PPROF_MAX_INFLATED bytes */
  uint32_t off, len;
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
  uint32_t first, n; /* into lines (fewer than half the profile's bytes) */
};

/* Each table is sized by count_tables and filled by the reading pass: n never exceeds cap. */
struct tables {
  const unsigned char *base; /* the profile; strings point into it */
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

/* Pass one: how many entries each table gets, so that each is allocated once and exactly
 * (doubling would add up to as much again to the tables' 8 bytes per input byte). */
static int count_tables(struct tables *t, struct rd r) {
  unsigned f, w;
  while (rd_field(&r, &f, &w)) {
    if (w == 2 && f == 6)
      t->cap_strs++;
    else if (w == 2 && f == 1)
      t->cap_types++;
    else if (w == 2 && f == 5)
      t->cap_funcs++;
    if (w == 2 && f == 4) {
      struct rd m = rd_sub(&r);
      unsigned g, v;
      while (rd_field(&m, &g, &v)) {
        if (g == 4 && v == 2) t->cap_lines++;
        rd_skip(&m, v);
      }
      t->cap_locs++;
    } else {
      rd_skip(&r, w);
    }
  }
  return r.bad ? -EINVAL : 0;
}

static void *alloc_table(size_t n, size_t elem, int *err) {
  if (!n) return NULL;
  void *p = malloc(n * elem);
  if (!p) *err = -ENOMEM;
  return p;
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
  if (m.bad || t->ntypes == t->cap_types) {
    t->err = -EINVAL;
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
  if (m.bad || t->nfuncs == t->cap_funcs) {
    t->err = -EINVAL;
    return;
  }
  t->funcs[t->nfuncs++] = fn;
}

static void read_location(struct tables *t, struct rd m) {
  unsigned f, w;
  struct loc l = {0, (uint32_t)t->nlines, 0};
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
      if (lm.bad || t->nlines == t->cap_lines) {
        m.bad = 1;
        break;
      }
      t->lines[t->nlines++] = ln;
      l.n++;
    } else {
      rd_skip(&m, w);
    }
  }
  if (m.bad || t->nlocs == t->cap_locs) {
    t->err = -EINVAL;
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

/* Whether a[0..n) is already in order (profiles are usually written with ids in order; then
 * qsort and the scratch copy it may allocate are skipped). */
static int in_order(const void *a, size_t n, size_t size, int (*cmp)(const void *, const void *)) {
  const char *p = a;
  for (size_t i = 1; i < n; i++)
    if (cmp(p + (i - 1) * size, p + i * size) > 0) return 0;
  return 1;
}

static const struct str *string_at(const struct tables *t, int64_t i) {
  return i >= 0 && (size_t)i < t->nstrs ? &t->strs[i] : NULL;
}

static const char *str_p(const struct tables *t, const struct str *s) {
  return (const char *)t->base + s->off;
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
  uint64_t budget, spent; /* bytes of frames the samples may still produce (fg_pprof.h) */
  int err;
  int over; /* 1: the expansion budget ran out, 2: a stack reached FG_MAX_DEPTH */
};

static void push_loc(void *ctx, uint64_t v) {
  struct builder *b = ctx;
  if (fg_grow((void **)&b->locs, &b->cap_locs, b->nlocs + 1, sizeof *b->locs))
    b->err = -ENOMEM;
  else
    b->locs[b->nlocs++] = v;
}

static void push_value(void *ctx, uint64_t v) {
  struct builder *b = ctx;
  if (fg_grow((void **)&b->values, &b->cap_values, b->nvalues + 1, sizeof *b->values))
    b->err = -ENOMEM;
  else
    b->values[b->nvalues++] = v;
}

/* Appends one frame name, pre + name[0..nlen) + post, to the names of this sample; its offset
 * goes in lens until the names stop moving. Charged to the budget and the depth limit before
 * anything grows: past either, b->over says which and nothing is added. (No printf of the
 * name: a sample may expand to thousands of frames.) */
/* A pprof string as a frame name every output (and our folded reader) takes: invalid UTF-8
 * becomes U+FFFD a byte, ';' (the folded separator) ':', a control character '?'. Writes into
 * out unless NULL; returns the length (at most 3 bytes a byte). */
static size_t frame_name(const char *name, size_t n, char *out) {
  const unsigned char *u = (const unsigned char *)name;
  size_t o = 0;
  for (size_t i = 0; i < n;) {
    size_t k = fg_utf8_len(u + i, n - i);
    const char *put = (const char *)u + i;
    size_t len = k;
    if (!k) {
      put = "\xEF\xBF\xBD";
      len = 3;
      k = 1;
    } else if (u[i] == ';') {
      put = ":";
    } else if (u[i] < 0x20 || u[i] == 0x7F || (u[i] == 0xC2 && u[i + 1] < 0xA0)) {
      put = "?"; /* C0, DEL, C1 (C2 80..C2 9F) */
      len = 1;
    }
    if (out) memcpy(out + o, put, len);
    o += len;
    i += k;
  }
  return o;
}

static void push_frame(struct builder *b, const char *pre, const char *name, size_t nlen,
                       const char *post) {
  if (b->nframes == FG_MAX_DEPTH) {
    b->over = 2;
    b->err = -EINVAL;
    return;
  }
  size_t ln = nlen ? frame_name(name, nlen, NULL) : 0;
  size_t lp = strlen(pre), lq = strlen(post), n = lp + ln + lq;
  if ((uint64_t)n + FG_PPROF_FRAME_COST > b->budget - b->spent) {
    b->over = 1;
    b->err = -EINVAL;
    return;
  }
  if (fg_grow((void **)&b->names, &b->cap_names, b->names_len + n + 1, 1) ||
      fg_grow((void **)&b->frames, &b->cap_frames, b->nframes + 1, sizeof *b->frames) ||
      fg_grow((void **)&b->lens, &b->cap_lens, b->nframes + 1, sizeof *b->lens)) {
    b->err = -ENOMEM;
    return;
  }
  b->spent += (uint64_t)n + FG_PPROF_FRAME_COST;
  char *at = b->names + b->names_len;
  memcpy(at, pre, lp);
  if (nlen) frame_name(name, nlen, at + lp);
  memcpy(at + lp + ln, post, lq);
  b->frames[b->nframes] = (const char *)(uintptr_t)b->names_len; /* an offset for now */
  b->lens[b->nframes++] = n;
  b->names_len += n;
}

/* The error for a frame that push_frame refused; `file_len` and `index` for the message. */
static int frame_error(const struct builder *b, size_t index, size_t file_len, fg_read_error *err) {
  if (b->over == 2)
    return fail(err, -EINVAL,
                "pprof: sample %zu: a stack deeper than %d frames (the limit, FG_MAX_DEPTH)",
                index + 1, FG_MAX_DEPTH);
  if (b->over == 1)
    return fail(err, -EINVAL,
                "pprof: the samples' stacks expand to more than %llu MiB (the limit for a "
                "%zu-byte file: 64 MiB + 256 bytes per byte, at most 4 GiB)",
                (unsigned long long)(b->budget >> 20), file_len);
  return fail(err, b->err, "out of memory");
}

static int add_sample(fg_profile *p, int column, size_t value_index, struct builder *b, struct rd m,
                      size_t index, size_t file_len, fg_read_error *err) {
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
    char post[32] = "]";
    if (tid >= 0) snprintf(post, sizeof post, " tid=%lld]", (long long)tid);
    push_frame(b, "[", str_p(t, thread), thread->len, post);
  }
  for (size_t i = b->nlocs; i-- > 0 && !b->err;) {
    struct loc key = {b->locs[i], 0, 0};
    const struct loc *l =
        t->nlocs ? bsearch(&key, t->locs, t->nlocs, sizeof *t->locs, by_loc_id) : NULL;
    if (!l)
      return fail(err, -EINVAL, "pprof: a sample names location %llu, which is not there",
                  (unsigned long long)b->locs[i]);
    if (!l->n) {
      char addr[32];
      snprintf(addr, sizeof addr, "[0x%llx]", (unsigned long long)l->id);
      push_frame(b, addr, NULL, 0, "");
      continue;
    }
    for (size_t j = l->n; j-- > 0 && !b->err;) { /* the outermost function first */
      const struct line *ln = &t->lines[l->first + j];
      struct func fkey = {ln->function, 0};
      const struct func *fn =
          t->nfuncs ? bsearch(&fkey, t->funcs, t->nfuncs, sizeof *t->funcs, by_func_id) : NULL;
      const struct str *name = fn ? string_at(t, fn->name) : NULL;
      if (!name)
        return fail(err, -EINVAL, "pprof: location %llu names no function",
                    (unsigned long long)l->id);
      char post[32] = "";
      if (ln->line > 0) snprintf(post, sizeof post, ":%lld", (long long)ln->line);
      if (!name->len)
        push_frame(b, "[unknown]", NULL, 0, "");
      else
        push_frame(b, "", str_p(t, name), name->len, post);
    }
  }
  if (b->err) return frame_error(b, index, file_len, err);
  for (size_t i = 0; i < b->nframes; i++) b->frames[i] = b->names + (uintptr_t)b->frames[i];
  int rc = fg_profile_add_n(p, b->frames, b->lens, b->nframes, count, column);
  return rc ? fail(err, rc, "%s", rc == -ENOMEM ? "out of memory" : "pprof: an empty frame name")
            : 0;
}

/* ---- the whole file ---- */

/* The most a gzipped file of `len` bytes may inflate to (fg_pprof.h). */
static size_t inflate_limit(size_t len) {
  size_t lim = len > FG_PPROF_MAX_INFLATED / FG_PPROF_INFLATE_RATIO ? FG_PPROF_MAX_INFLATED
                                                                    : len * FG_PPROF_INFLATE_RATIO;
  return lim < FG_PPROF_INFLATE_FLOOR ? FG_PPROF_INFLATE_FLOOR : lim;
}

static int inflate_all(const unsigned char *in, size_t len, unsigned char **out, size_t *outlen,
                       fg_read_error *err) {
  z_stream z;
  memset(&z, 0, sizeof z);
  if (inflateInit2(&z, 15 + 32) != Z_OK) return fail(err, -ENOMEM, "out of memory");
  const size_t limit = inflate_limit(len), file_len = len;
  size_t cap = len * 4 + 4096, n = 0;
  if (cap > limit) cap = limit;
  unsigned char *buf = malloc(cap);
  int rc = buf ? 0 : -ENOMEM, zr = Z_OK;
  z.next_in = (unsigned char *)in;
  while (!rc) {
    size_t chunk = len > (1u << 30) ? (1u << 30) : len;
    if (z.avail_in == 0 && chunk) {
      z.avail_in = (uInt)chunk;
      len -= chunk;
    }
    /* at the limit, one more byte of output (into `probe`) means the stream is too large */
    unsigned char probe;
    int at_limit = n == cap && cap >= limit;
    if (n == cap && !at_limit) {
      size_t c = cap * 2 < limit ? cap * 2 : limit;
      unsigned char *p = realloc(buf, c);
      if (!p) {
        rc = -ENOMEM;
        break;
      }
      buf = p;
      cap = c;
    }
    z.next_out = at_limit ? &probe : buf + n;
    z.avail_out = at_limit ? 1 : (uInt)(cap - n > (1u << 30) ? (1u << 30) : cap - n);
    size_t before = z.avail_out;
    zr = inflate(&z, Z_NO_FLUSH);
    if (at_limit && z.avail_out == 0) {
      rc = fail(err, -EINVAL,
                "pprof: inflates to more than %zu bytes (the limit for a %zu-byte file: %d "
                "times its size, at least 16 MiB, at most 1 GiB)",
                limit, file_len, FG_PPROF_INFLATE_RATIO);
      break;
    }
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

/* fg_read_pprof: see fg_pprof.h. Three passes over the (inflated) profile: count the tables,
 * fill them, then the samples. */
int fg_read_pprof(fg_profile *p, const void *data, size_t len, int column, const char *value,
                  fg_read_error *err) {
  unsigned char *inflated = NULL;
  const unsigned char *buf = data;
  const size_t file_len = len;
  if (fg_is_gzip(buf, len)) {
    int rc = inflate_all(buf, len, &inflated, &len, err);
    if (rc) return rc;
    buf = inflated;
  } else if (len > FG_PPROF_MAX_INFLATED) {
    return fail(err, -EINVAL, "pprof: a profile of %zu bytes (the limit is 1 GiB)", len);
  }
  struct tables t;
  memset(&t, 0, sizeof t);
  t.base = buf;
  const struct rd whole = {buf, buf + len, 0};
  int rc = count_tables(&t, whole);
  t.strs = alloc_table(t.cap_strs, sizeof *t.strs, &t.err);
  t.types = alloc_table(t.cap_types, sizeof *t.types, &t.err);
  t.funcs = alloc_table(t.cap_funcs, sizeof *t.funcs, &t.err);
  t.lines = alloc_table(t.cap_lines, sizeof *t.lines, &t.err);
  t.locs = alloc_table(t.cap_locs, sizeof *t.locs, &t.err);
  struct rd r = whole;
  unsigned f, w;
  while (!rc && !t.err && rd_field(&r, &f, &w)) {
    if (f == 6 && w == 2) { /* string_table */
      struct rd s = rd_sub(&r);
      if (t.nstrs == t.cap_strs)
        t.err = -EINVAL;
      else
        t.strs[t.nstrs++] = (struct str){(uint32_t)(s.p - buf), (uint32_t)(s.end - s.p)};
    } else if (f == 1 && w == 2) {
      read_value_type(&t, rd_sub(&r));
    } else if (f == 5 && w == 2) {
      read_function(&t, rd_sub(&r));
    } else if (f == 4 && w == 2) {
      read_location(&t, rd_sub(&r));
    } else {
      rd_skip(&r, w); /* samples (2) are read in the third pass */
    }
  }
  if (!rc && t.err == -ENOMEM)
    rc = fail(err, -ENOMEM, "out of memory");
  else if (rc || r.bad || t.err)
    rc = fail(err, -EINVAL, "not a pprof profile (malformed protobuf)");
  else if (!t.nstrs || t.strs[0].len != 0)
    rc = fail(err, -EINVAL,
              "not a pprof profile (no string table, or its first string is not empty)");
  size_t vi = 0;
  if (!rc && value) {
    for (vi = 0; vi < t.ntypes; vi++) {
      const struct str *s = string_at(&t, t.types[vi]);
      if (s && s->len == strlen(value) && !memcmp(str_p(&t, s), value, s->len)) break;
    }
    if (vi == t.ntypes) {
      char have[128] = "";
      size_t o = 0;
      for (size_t i = 0; i < t.ntypes && o < sizeof have; i++) {
        const struct str *s = string_at(&t, t.types[i]);
        if (s)
          o += (size_t)snprintf(have + o, sizeof have - o, "%s%.*s", i ? ", " : "", (int)s->len,
                                str_p(&t, s));
      }
      rc = fail(err, -EINVAL, "pprof: no sample type '%s' (the profile has: %s)", value, have);
    }
  }
  t.key_thread = t.key_tid = -1;
  for (size_t i = 1; !rc && i < t.nstrs; i++) {
    const char *s = str_p(&t, &t.strs[i]);
    if (t.strs[i].len == 6 && !memcmp(s, "thread", 6) && t.key_thread < 0)
      t.key_thread = (int64_t)i;
    if (t.strs[i].len == 3 && !memcmp(s, "tid", 3) && t.key_tid < 0) t.key_tid = (int64_t)i;
  }
  if (!rc) {
    /* qsort and bsearch want a non-null array even when it is empty (a profile without
     * functions has none) */
    if (t.nfuncs && !in_order(t.funcs, t.nfuncs, sizeof *t.funcs, by_func_id))
      qsort(t.funcs, t.nfuncs, sizeof *t.funcs, by_func_id);
    if (t.nlocs && !in_order(t.locs, t.nlocs, sizeof *t.locs, by_loc_id))
      qsort(t.locs, t.nlocs, sizeof *t.locs, by_loc_id);
    struct builder b;
    memset(&b, 0, sizeof b);
    b.t = &t;
    b.budget = FG_PPROF_EXPAND_BASE + (uint64_t)file_len * FG_PPROF_EXPAND_PER_BYTE;
    if (b.budget > FG_PPROF_EXPAND_MAX) b.budget = FG_PPROF_EXPAND_MAX;
    r = whole;
    for (size_t i = 0; !rc && rd_field(&r, &f, &w);) {
      if (f == 2 && w == 2)
        rc = add_sample(p, column, vi, &b, rd_sub(&r), i++, file_len, err);
      else
        rd_skip(&r, w);
    }
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
  free(inflated);
  return rc;
}
