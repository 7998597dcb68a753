/*
 * pprof.c — the profile as pprof's profile.proto, gzipped (see pprof.h). A small protobuf
 * writer of our own (varints and length-delimited fields, each message built in a buffer of
 * its own and then copied into its parent), and zlib's gzip.
 *
 * What goes in: two sample types, `samples`/count (cost units: the folded counts) and
 * `cpu`/nanoseconds (`event=wall`: `wall`/nanoseconds between them; `event=alloc`:
 * `alloc_objects`/count and `alloc_space`/bytes, the estimated allocations and bytes, as Go's
 * and async-profiler's allocation profiles name them; `event=lock`: `contentions`/count and
 * `delay`/nanoseconds, the estimated waits and ns blocked, as Go's block profile names them;
 * several events: each one's types in turn, cpu or wall first, a sample's values in its own
 * event's types and 0 in the others'); one Function and one Location per distinct frame name,
 * except that a name
 * ending in ":<line>" (the `lines` option) becomes its function's name plus Line.line, so
 * pprof's views add up the lines of a method; a stack's root frame `[NAME tid=N]` (the
 * `threads` option) becomes the labels thread=NAME and tid=N. Stacks are leaf first, as pprof
 * has them.
 */
#include "pprof.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zlib.h>

#include "names.h"

/* ---- a protobuf writer ---- */

struct pb {
  unsigned char *p;
  size_t n, cap;
  int err; /* -ENOMEM once anything failed: the rest is skipped */
};

static void pb_put(struct pb *b, const void *data, size_t len) {
  if (b->err) return;
  if (b->n + len > b->cap) {
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->n + len) cap *= 2;
    unsigned char *p = realloc(b->p, cap);
    if (!p) {
      b->err = -ENOMEM;
      return;
    }
    b->p = p;
    b->cap = cap;
  }
  memcpy(b->p + b->n, data, len);
  b->n += len;
}

static void pb_varint(struct pb *b, uint64_t v) {
  unsigned char tmp[10];
  size_t n = 0;
  do {
    tmp[n] = (unsigned char)(v & 0x7f);
    v >>= 7;
    if (v) tmp[n] |= 0x80;
    n++;
  } while (v);
  pb_put(b, tmp, n);
}

enum { WIRE_VARINT = 0, WIRE_LEN = 2 };

static void pb_uint(struct pb *b, unsigned field, uint64_t v) {
  pb_varint(b, (uint64_t)field << 3 | WIRE_VARINT);
  pb_varint(b, v);
}

static void pb_int(struct pb *b, unsigned field, int64_t v) { pb_uint(b, field, (uint64_t)v); }

static void pb_bytes(struct pb *b, unsigned field, const void *data, size_t len) {
  pb_varint(b, (uint64_t)field << 3 | WIRE_LEN);
  pb_varint(b, len);
  pb_put(b, data, len);
}

/* Appends message m as field `field` of b, and empties m for the next one. */
static void pb_message(struct pb *b, unsigned field, struct pb *m) {
  if (m->err) b->err = m->err;
  pb_bytes(b, field, m->p, m->n);
  m->n = 0;
}

/* ---- the string table ---- */

struct strtab {
  struct pb out; /* the Profile's string_table fields, in id order */
  char **keys;   /* open addressing, by content */
  int64_t *ids;
  size_t cap, n;
  int err;
};

static uint64_t hash_str(const char *s, size_t len) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < len; i++) h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
  return h;
}

/* The id of string s[0..len) in the table, added if new (0 for "", as pprof wants). */
static int64_t str_id(struct strtab *t, const char *s, size_t len) {
  if (t->err) return 0;
  if ((t->n + 1) * 2 > t->cap) {
    size_t cap = t->cap ? t->cap * 2 : 1024;
    char **keys = calloc(cap, sizeof *keys);
    int64_t *ids = calloc(cap, sizeof *ids);
    if (!keys || !ids) {
      free(keys);
      free(ids);
      t->err = -ENOMEM;
      return 0;
    }
    for (size_t i = 0; i < t->cap; i++) {
      if (!t->keys[i]) continue;
      size_t j = hash_str(t->keys[i], strlen(t->keys[i])) & (cap - 1);
      while (keys[j]) j = (j + 1) & (cap - 1);
      keys[j] = t->keys[i];
      ids[j] = t->ids[i];
    }
    free(t->keys);
    free(t->ids);
    t->keys = keys;
    t->ids = ids;
    t->cap = cap;
  }
  size_t j = hash_str(s, len) & (t->cap - 1);
  for (; t->keys[j]; j = (j + 1) & (t->cap - 1))
    if (strlen(t->keys[j]) == len && !memcmp(t->keys[j], s, len)) return t->ids[j];
  char *copy = malloc(len + 1);
  if (!copy) {
    t->err = -ENOMEM;
    return 0;
  }
  memcpy(copy, s, len);
  copy[len] = '\0';
  t->keys[j] = copy;
  t->ids[j] = (int64_t)t->n++;
  pb_bytes(&t->out, 6, s, len); /* Profile.string_table */
  return t->ids[j];
}

static int64_t str_of(struct strtab *t, const char *s) { return str_id(t, s, strlen(s)); }

static void strtab_free(struct strtab *t) {
  for (size_t i = 0; i < t->cap; i++) free(t->keys[i]);
  free(t->keys);
  free(t->ids);
  free(t->out.p);
}

/* ---- frames ---- */

struct encoder {
  struct pb prof, msg, sub, packed;
  struct strtab str;
  uint64_t *location_of; /* frame id -> Location id, 0 when not written yet */
  size_t nframes;
  uint64_t nlocations;
  int64_t key_thread, key_tid;
  int threads;
  uint64_t wall_ns;          /* wall clock: the wall time of a sample (else 0) */
  int first[SAMPLER_EVENTS]; /* an event kind's first value in Sample.value, -1: none */
  int nvalues;               /* values a sample has */
};

/* The Location id of frame id `frame`, written with its Function the first time. */
static uint64_t location(struct encoder *e, uint32_t frame) {
  if (frame < e->nframes && e->location_of[frame]) return e->location_of[frame];
  const char *name = sampler_frame_name(frame);
  int64_t line;
  size_t len = names_split_line(name, strlen(name), &line);
  uint64_t id = ++e->nlocations;
  int64_t fname = str_id(&e->str, name, len);
  pb_uint(&e->msg, 1, id);   /* Function.id: one per location, named by its frame */
  pb_int(&e->msg, 2, fname); /* name */
  pb_int(&e->msg, 3, fname); /* system_name */
  pb_message(&e->prof, 5, &e->msg);
  pb_uint(&e->sub, 1, id); /* Line.function_id */
  if (line) pb_int(&e->sub, 2, line);
  pb_uint(&e->msg, 1, id); /* Location.id */
  pb_uint(&e->msg, 2, 1);  /* mapping_id: the one mapping, already symbolized */
  pb_message(&e->msg, 4, &e->sub);
  pb_message(&e->prof, 4, &e->msg);
  if (frame < e->nframes) e->location_of[frame] = id;
  return id;
}

static void sample(void *ctx, const struct sampler_stack *s) {
  struct encoder *e = ctx;
  if (!s->units && !s->cpu_ns) return;
  int first = 0;
  const char *tname = NULL;
  size_t tlen = 0;
  int64_t tid = 0;
  if (e->threads && s->n > 1 &&
      names_thread_root(sampler_frame_name(s->frames[0]), &tname, &tlen, &tid))
    first = 1;
  for (int i = s->n - 1; i >= first; i--) pb_varint(&e->packed, location(e, s->frames[i]));
  pb_message(&e->msg, 1, &e->packed); /* Sample.location_id, packed, leaf first */
  int at = s->kind >= 0 && s->kind < SAMPLER_EVENTS ? e->first[s->kind] : -1;
  for (int v = 0; v < e->nvalues;) { /* its event's values; 0 for the other events' */
    if (v != at) {
      pb_varint(&e->packed, 0);
      v++;
      continue;
    }
    int clock = s->kind == SAMPLER_EVENT_CPU || s->kind == SAMPLER_EVENT_WALL;
    pb_varint(&e->packed, s->units);
    if (clock && e->wall_ns) pb_varint(&e->packed, s->units * e->wall_ns);
    pb_varint(&e->packed, s->cpu_ns);
    v += clock && e->wall_ns ? 3 : 2;
  }
  pb_message(&e->msg, 2, &e->packed); /* Sample.value */
  if (tname) {
    pb_int(&e->sub, 1, e->key_thread); /* Label{key, str} */
    pb_int(&e->sub, 2, str_id(&e->str, tname, tlen));
    pb_message(&e->msg, 3, &e->sub);
    pb_int(&e->sub, 1, e->key_tid); /* Label{key, num} */
    pb_int(&e->sub, 3, tid);
    pb_message(&e->msg, 3, &e->sub);
  }
  pb_message(&e->prof, 2, &e->msg);
}

static void value_type(struct encoder *e, unsigned field, const char *type, const char *unit) {
  pb_int(&e->sub, 1, str_of(&e->str, type));
  pb_int(&e->sub, 2, str_of(&e->str, unit));
  pb_message(&e->prof, field, &e->sub);
}

/* Gzips data[0..len) onto f. Returns 0, -EIO or -ENOMEM. */
static int gzip_to(FILE *f, const unsigned char *data, size_t len) {
  z_stream z;
  memset(&z, 0, sizeof z);
  if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) return -ENOMEM;
  unsigned char out[65536];
  int rc = 0, zr;
  z.next_in = (unsigned char *)data;
  do {
    size_t chunk = len > (1u << 30) ? (1u << 30) : len;
    z.avail_in = (uInt)chunk;
    len -= chunk;
    int flush = len ? Z_NO_FLUSH : Z_FINISH;
    do {
      z.next_out = out;
      z.avail_out = sizeof out;
      zr = deflate(&z, flush);
      size_t have = sizeof out - z.avail_out;
      if (have && fwrite(out, 1, have, f) != have) rc = -EIO;
    } while (z.avail_out == 0 && !rc);
  } while (len && !rc);
  if (!rc && zr != Z_STREAM_END) rc = -EIO;
  deflateEnd(&z);
  return rc;
}

int pprof_write(FILE *f, const struct pprof_info *info, const struct sampler_snapshot *s) {
  struct encoder e;
  memset(&e, 0, sizeof e);
  e.threads = info->threads;
  e.nframes = sampler_frame_count();
  e.location_of = calloc(e.nframes ? e.nframes : 1, sizeof *e.location_of);
  if (!e.location_of) return -ENOMEM;
  str_of(&e.str, ""); /* string_table[0] */
  e.wall_ns = info->wall ? info->interval_ns : 0;
  /* the sample types in the order sample() writes the values, event by event: units, [wall],
   * second weight */
  int alloc = info->alloc_bytes != 0, lock = info->lock;
  int clock = info->clock || (!alloc && !lock);
  for (int k = 0; k < SAMPLER_EVENTS; k++) e.first[k] = -1;
  if (clock) {
    e.first[SAMPLER_EVENT_CPU] = e.first[SAMPLER_EVENT_WALL] = e.nvalues; /* one of them */
    value_type(&e, 1, "samples", "count");
    if (info->wall) value_type(&e, 1, "wall", "nanoseconds");
    value_type(&e, 1, "cpu", "nanoseconds");
    e.nvalues += info->wall ? 3 : 2;
  }
  if (alloc) {
    e.first[SAMPLER_EVENT_ALLOC] = e.nvalues;
    value_type(&e, 1, "alloc_objects", "count");
    value_type(&e, 1, "alloc_space", "bytes");
    e.nvalues += 2;
  }
  if (lock) {
    e.first[SAMPLER_EVENT_LOCK] = e.nvalues;
    value_type(&e, 1, "contentions", "count");
    value_type(&e, 1, "delay", "nanoseconds");
    e.nvalues += 2;
  }
  /* the period and the default type: the first event's */
  alloc = alloc && !clock;
  lock = lock && !clock && !alloc;
  /* one Mapping for everything, with functions and lines: nothing for pprof to symbolize */
  pb_uint(&e.sub, 1, 1);                                                     /* id */
  pb_int(&e.sub, 5, str_of(&e.str, info->program ? info->program : "java")); /* filename */
  pb_uint(&e.sub, 7, 1);                                                     /* has_functions */
  pb_uint(&e.sub, 9, 1);                                                     /* has_line_numbers */
  pb_message(&e.prof, 3, &e.sub);
  e.key_thread = str_of(&e.str, "thread");
  e.key_tid = str_of(&e.str, "tid");
  sampler_snapshot_foreach(s, sample, &e);
  uint64_t wall = s->report.n.wall_ns;
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  uint64_t now_ns = (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
  pb_uint(&e.prof, 9, now_ns > wall ? now_ns - wall : 0); /* time_nanos: the start */
  pb_uint(&e.prof, 10, wall);                             /* duration_nanos */
  const char *dflt = alloc ? "alloc_space" : lock ? "delay" : info->wall ? "wall" : "cpu";
  value_type(&e, 11, alloc ? "space" : dflt, alloc ? "bytes" : "nanoseconds"); /* period_type */
  /* period: alloc= bytes, lock= ns (the threshold), the interval */
  pb_uint(&e.prof, 12, alloc ? info->alloc_bytes : lock ? info->lock_ns : info->interval_ns);
  if (info->comment) pb_int(&e.prof, 13, str_of(&e.str, info->comment));
  pb_int(&e.prof, 14, str_of(&e.str, dflt)); /* default_sample_type */
  int rc = e.prof.err ? e.prof.err : e.msg.err ? e.msg.err : e.sub.err ? e.sub.err : e.packed.err;
  if (!rc) rc = e.str.err ? e.str.err : e.str.out.err;
  if (!rc) { /* fields may come in any order: the strings after the rest */
    pb_put(&e.prof, e.str.out.p, e.str.out.n);
    rc = e.prof.err;
  }
  if (!rc) rc = gzip_to(f, e.prof.p, e.prof.n);
  free(e.prof.p);
  free(e.msg.p);
  free(e.sub.p);
  free(e.packed.p);
  strtab_free(&e.str);
  free(e.location_of);
  return rc;
}
