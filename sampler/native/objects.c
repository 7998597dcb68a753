/*
 * objects.c — the loaded-objects table, writer side (see objects.h): dl_iterate_phdr on the
 * sampler thread (and on symbols.c's callers: objects_sync), a sorted immutable snapshot
 * published with one atomic store, the previous one freed after a grace period. Readers: the
 * signal path (objects_lookup_sig.c), symbols.c (objects_each, under the writer's lock).
 */
#include "objects.h"

#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "cfi.h"
#include "diskcache.h"
#include "objects_internal.h"

static struct {
  pthread_mutex_t mu;
  unsigned long long adds, subs; /* the loader's counters at the last snapshot */
  int inited;
  int untabled;      /* the snapshot has objects whose unwind tables were left for later */
  uint8_t agent_len; /* this agent's own build-id (0: none, or not seen yet): the cache's key */
  unsigned char agent[OBJECTS_BUILD_ID_MAX];
} writer = {.mu = PTHREAD_MUTEX_INITIALIZER};

/* An unwind table with what it was compiled from (diskcache.h): read from the cache before the
 * loader's lock is taken, or compiled under it and written to the cache after. */
struct kept {
  struct cfi_table *t;
  uint64_t text_off, text_size, hdr_off, entries;
  uint8_t id_len;
  unsigned char id[OBJECTS_BUILD_ID_MAX];
};

struct kept_list {
  struct kept *k;
  size_t n, cap;
};

struct collect {
  struct object *obj;
  size_t n, cap;
  unsigned long long adds, subs;
  int tables;   /* compile the unwind tables the published snapshot lacks */
  int untabled; /* objects left without one (tables == 0) */
  int err;
  size_t name_bytes;     /* of the objects' names, with their NULs (each obj[i].name malloc'd) */
  uintptr_t vdso;        /* the vDSO's image (AT_SYSINFO_EHDR), 0 when none */
  struct kept_list read; /* tables read from the cache for this snapshot (each taken once) */
  struct kept_list compiled; /* tables compiled for it, to be written to the cache */
};

/* Frees what collecting left: the names, the array, the tables read from the cache that no
 * object took (the objects' unwind tables are not freed here). */
static void collect_free(struct collect *c) {
  for (size_t i = 0; i < c->n; i++) free((void *)c->obj[i].name);
  free(c->obj);
  c->obj = NULL;
  c->n = c->cap = 0;
  for (size_t i = 0; i < c->read.n; i++) free(c->read.k[i].t);
  free(c->read.k);
  free(c->compiled.k);
  memset(&c->read, 0, sizeof c->read);
  memset(&c->compiled, 0, sizeof c->compiled);
}

/* Reads a DWARF-encoded value of .eh_frame_hdr at *p (only the encodings linkers write there:
 * absptr, udata4/sdata4, pcrel/datarel of those). Returns 0 and advances *p, or -EINVAL. */
static int read_encoded(const unsigned char **p, unsigned char enc, uintptr_t hdr, uintptr_t *out) {
  uintptr_t v;
  const unsigned char *at = *p;
  switch (enc & 0x0f) {
  case 0x00: { /* absptr */
    uint64_t x;
    memcpy(&x, at, 8);
    v = (uintptr_t)x;
    *p += 8;
    break;
  }
  case 0x03: { /* udata4 */
    uint32_t x;
    memcpy(&x, at, 4);
    v = x;
    *p += 4;
    break;
  }
  case 0x0b: { /* sdata4 */
    int32_t x;
    memcpy(&x, at, 4);
    v = (uintptr_t)(intptr_t)x;
    *p += 4;
    break;
  }
  default: return -EINVAL;
  }
  switch (enc & 0x70) {
  case 0x00: break;
  case 0x10: v += (uintptr_t)at; break; /* pcrel */
  case 0x30: v += hdr; break;           /* datarel: from the start of .eh_frame_hdr */
  default: return -EINVAL;
  }
  *out = v;
  return 0;
}

/* Fills o's unwind table from its .eh_frame_hdr at hdr (mapped: part of a loaded segment). */
static void read_eh_frame_hdr(struct object *o, uintptr_t hdr) {
  const unsigned char *p = (const unsigned char *)hdr;
  /* version 1; eh_frame_ptr encoding; fde_count encoding; table encoding (datarel sdata4 for
   * the binary-search table libunwind reads) */
  if (p[0] != 1 || p[3] != 0x3b) return;
  const unsigned char *q = p + 4;
  uintptr_t eh_frame, count;
  if (read_encoded(&q, p[1], hdr, &eh_frame) || read_encoded(&q, p[2], hdr, &count) || !count)
    return;
  o->eh_frame_hdr = hdr;
  o->table = (uintptr_t)q;
  o->table_entries = (size_t)count;
}

/* The GNU build-id among the notes at [p, p + size), aligned `align` (4, or 8 for segments
 * aligned to 8), into o. Reads the image of a loaded object (the loader's lock is held). */
static void note_build_id(struct object *o, const unsigned char *p, size_t size, size_t align) {
  size_t off = 0;
  while (off + sizeof(ElfW(Nhdr)) <= size) {
    ElfW(Nhdr) nh;
    memcpy(&nh, p + off, sizeof nh);
    size_t name = off + sizeof nh;
    size_t desc = name + ((nh.n_namesz + align - 1) & ~(align - 1));
    size_t next = desc + ((nh.n_descsz + align - 1) & ~(align - 1));
    if (desc > size || next > size || next <= off) return;
    if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 && memcmp(p + name, "GNU", 4) == 0 &&
        nh.n_descsz > 0 && nh.n_descsz <= OBJECTS_BUILD_ID_MAX) {
      memcpy(o->build_id, p + desc, nh.n_descsz);
      o->build_id_len = (uint8_t)nh.n_descsz;
      return;
    }
    off = next;
  }
}

static uint64_t hash_name(const char *s) {
  uint64_t h = 1469598103934665603ull; /* FNV-1a */
  for (; s && *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

/* What o's unwind table is compiled from, into k (k->t NULL). */
static void key_of(const struct object *o, struct kept *k) {
  memset(k, 0, sizeof *k);
  k->text_off = o->text_start - o->base;
  k->text_size = o->text_end - o->text_start;
  k->hdr_off = o->eh_frame_hdr - o->base;
  k->entries = o->table_entries;
  k->id_len = o->build_id_len;
  memcpy(k->id, o->build_id, o->build_id_len);
}

static int same_key(const struct kept *a, const struct kept *b) {
  return a->text_off == b->text_off && a->text_size == b->text_size && a->hdr_off == b->hdr_off &&
         a->entries == b->entries && a->id_len == b->id_len && !memcmp(a->id, b->id, a->id_len);
}

/* k's key as the disk cache takes it (writer.mu held: the agent's build-id). */
static struct diskcache_key disk_key(const struct kept *k) {
  return (struct diskcache_key){.id = k->id,
                                .id_len = k->id_len,
                                .agent = writer.agent,
                                .agent_len = writer.agent_len,
                                .k = {k->text_off, k->text_size, k->hdr_off, k->entries}};
}

/* A table's counts, the first part of its entry on disk; the rest is its block (cfi_bytes). */
struct cfi_pre {
  uint64_t n, nbuckets, nrules;
  uint32_t first;
  int32_t ra_column;
};

/* diskcache_load's room: the table the counts describe (into *ctx), its block to be read. */
static int cfi_room(void *ctx, const void *pre, size_t rest, struct iovec out[2]) {
  const struct cfi_pre *p = pre;
  struct cfi_table **tp = ctx;
  if (p->n > UINT32_MAX || p->nbuckets > UINT32_MAX || p->nrules > UINT32_MAX) return 0;
  struct cfi_table *t = *tp = cfi_alloc((size_t)p->n, (size_t)p->nbuckets, (size_t)p->nrules);
  if (!t || cfi_bytes(t) - sizeof *t != rest) return 0;
  t->first = p->first;
  t->ra_column = p->ra_column;
  out[0] = (struct iovec){t->rules, rest};
  return 1;
}

/* The table of k kept on disk, checked (cfi_adopt), or NULL. */
static struct cfi_table *disk_table(const struct kept *k) {
  struct diskcache_key dk = disk_key(k);
  struct cfi_pre pre;
  struct cfi_table *t = NULL;
  if (!diskcache_load(DISKCACHE_CFI, &dk, &pre, sizeof pre, cfi_room, &t)) {
    int ok = !cfi_adopt(t);
    diskcache_took(DISKCACHE_CFI, ok);
    if (ok) return t;
  }
  free(t);
  return NULL;
}

/* Keeps k's table on disk. */
static void disk_store(const struct kept *k) {
  const struct cfi_table *t = k->t;
  struct cfi_pre pre = {t->n, t->nbuckets, t->nrules, t->first, t->ra_column};
  struct iovec parts[2] = {{&pre, sizeof pre}, {(void *)t->rules, cfi_bytes(t) - sizeof *t}};
  struct diskcache_key dk = disk_key(k);
  diskcache_store(DISKCACHE_CFI, &dk, parts, 2);
}

/* Appends k to l: 0, or -1 without memory (a table then not read or not written: no harm). */
static int kept_add(struct kept_list *l, const struct kept *k) {
  if (l->n == l->cap) {
    size_t cap = l->cap ? 2 * l->cap : 8;
    struct kept *more = realloc(l->k, cap * sizeof *more);
    if (!more) return -1;
    l->k = more;
    l->cap = cap;
  }
  l->k[l->n++] = *k;
  return 0;
}

/* The same object in the published snapshot (writer.mu held), or NULL. */
static const struct object *published_twin(const struct object *o) {
  const struct objects_snapshot *s = atomic_load(&objects_published.current);
  for (size_t i = 0; s && i < s->n; i++) {
    const struct object *p = &s->obj[i];
    if (p->text_start == o->text_start && p->text_end == o->text_end && p->base == o->base &&
        p->eh_frame_hdr == o->eh_frame_hdr && p->table_entries == o->table_entries &&
        p->name_hash == o->name_hash)
      return p;
  }
  return NULL;
}

/* The unwind table of o: the published twin's, or compiled now when `tables` (the object is
 * mapped: we are inside dl_iterate_phdr, which holds the loader's lock), else none yet. Reads
 * stay in the segment of .eh_frame_hdr, where linkers put .eh_frame too. */
static const struct cfi_table *unwind_table(const struct object *o, struct collect *c) {
  const struct object *twin = published_twin(o);
  if (twin && (twin->cfi || !c->tables)) return twin->cfi;
  if (!c->tables) return NULL;
  struct kept k;
  key_of(o, &k);
  for (size_t i = 0; i < c->read.n; i++) {
    struct kept *r = &c->read.k[i];
    if (r->t && same_key(r, &k)) {
      const struct cfi_table *t = r->t;
      r->t = NULL; /* the snapshot's now */
      return t;
    }
  }
  for (int i = 0; i < o->nsegments; i++) {
    const struct object_segment *g = &o->segments[i];
    if (o->eh_frame_hdr >= g->start && o->eh_frame_hdr < g->end) {
      k.t = cfi_build(o->eh_frame_hdr, o->table, o->table_entries, o->text_start, o->text_end,
                      g->start, g->end);
      if (k.t && k.id_len) kept_add(&c->compiled, &k); /* or not written: no harm */
      return k.t;
    }
  }
  return NULL;
}

/* Frees the unwind tables of objects[0, n) that no published object shares: a snapshot that was
 * built and is not published after all (writer.mu held). */
static void drop_unpublished(const struct object *obj, size_t n) {
  for (size_t i = 0; i < n; i++) {
    const struct object *twin = published_twin(&obj[i]);
    if (obj[i].cfi && (!twin || twin->cfi != obj[i].cfi)) free((void *)obj[i].cfi);
  }
}

/* What naming needs of the object of info (objects.h: name, map_base ... build_id), into o; the
 * name malloc'd. Returns 0 or -ENOMEM. */
static int identify(struct object *o, const struct dl_phdr_info *info, struct collect *c) {
  uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE), lo = UINTPTR_MAX, hi = 0;
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type == PT_LOAD) {
      if (ph->p_vaddr < lo) lo = ph->p_vaddr;
      if (ph->p_vaddr + ph->p_memsz > hi) hi = ph->p_vaddr + ph->p_memsz;
    } else if (ph->p_type == PT_NOTE && !o->build_id_len) {
      note_build_id(o, (const unsigned char *)(info->dlpi_addr + ph->p_vaddr), ph->p_memsz,
                    ph->p_align == 8 ? 8 : 4);
    }
  }
  o->map_base = info->dlpi_addr + (lo & ~(page - 1));
  o->map_size = ((info->dlpi_addr + hi + page - 1) & ~(page - 1)) - o->map_base;
  o->vdso = c->vdso && o->map_base == c->vdso;
  uintptr_t self = (uintptr_t)&objects_init; /* this agent: its build-id keys the cache */
  if (self - o->map_base < o->map_size && o->build_id_len) {
    memcpy(writer.agent, o->build_id, o->build_id_len);
    writer.agent_len = o->build_id_len;
  }
  o->program = c->n == 0; /* the loader lists the program first */
  const char *name = info->dlpi_name ? info->dlpi_name : "";
  size_t len = strlen(name) + 1;
  char *copy = malloc(len);
  if (!copy) return -ENOMEM;
  memcpy(copy, name, len);
  o->name = copy;
  c->name_bytes += len;
  return 0;
}

static int collect_one(struct dl_phdr_info *info, size_t size, void *vctx) {
  struct collect *c = vctx;
  (void)size;
  c->adds = info->dlpi_adds;
  c->subs = info->dlpi_subs;
  struct object o;
  memset(&o, 0, sizeof o);
  o.base = info->dlpi_addr;
  o.text_start = UINTPTR_MAX;
  uintptr_t hdr = 0;
  long page = sysconf(_SC_PAGESIZE);
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    uintptr_t start = o.base + ph->p_vaddr, end = start + ph->p_memsz;
    if (ph->p_type == PT_GNU_EH_FRAME) hdr = start;
    if (ph->p_type != PT_LOAD || !ph->p_memsz) continue;
    if (ph->p_flags & PF_X) {
      if (start < o.text_start) o.text_start = start;
      if (end > o.text_end) o.text_end = end;
    }
    if ((ph->p_flags & PF_R) && o.nsegments < OBJECTS_MAX_SEGMENTS) {
      o.segments[o.nsegments].start = start & ~(uintptr_t)(page - 1);
      o.segments[o.nsegments].end = end;
      o.nsegments++;
    }
  }
  if (o.text_start >= o.text_end) return 0; /* nothing executable (the vDSO has text; others?) */
  o.name_hash = hash_name(info->dlpi_name);
  if (hdr) read_eh_frame_hdr(&o, hdr);
  if (c->n == c->cap) {
    size_t cap = c->cap ? c->cap * 2 : 64;
    struct object *more = realloc(c->obj, cap * sizeof *more);
    if (!more) goto nomem;
    c->obj = more;
    c->cap = cap;
  }
  if (identify(&o, info, c)) goto nomem;
  if (o.table) {
    o.cfi = unwind_table(&o, c);
    if (!o.cfi && !c->tables) c->untabled = 1;
  }
  c->obj[c->n++] = o;
  return 0;
nomem:
  c->err = -ENOMEM;
  return 1;
}

static int by_text(const void *a, const void *b) {
  const struct object *x = a, *y = b;
  return x->text_start < y->text_start ? -1 : x->text_start > y->text_start;
}

static int by_start(const void *a, const void *b) {
  const struct object_segment *x = a, *y = b;
  return x->start < y->start ? -1 : x->start > y->start;
}

/* Reads from the disk cache (diskcache.h) the unwind tables that the objects loaded now lack, into
 * c->read for unwind_table: file I/O, so before the loader's lock is taken to collect (the
 * objects are listed once more for it: a new one is compiled, a table of one gone is freed).
 * writer.mu held. */
static void read_cached(struct collect *c) {
  char dir[2];
  diskcache_dir(dir, sizeof dir);
  if (!dir[0]) return;
  struct collect scan = {.vdso = c->vdso};
  dl_iterate_phdr(collect_one, &scan); /* which finds this agent's build-id too, the first time */
  for (size_t i = 0; i < scan.n && writer.agent_len; i++) {
    const struct object *o = &scan.obj[i];
    if (!o->table || o->cfi || !o->build_id_len) continue;
    struct kept k;
    key_of(o, &k);
    k.t = disk_table(&k);
    if (k.t && kept_add(&c->read, &k)) free(k.t);
  }
  collect_free(&scan);
}

/* Writes the tables compiled for the snapshot just published to the cache (writer.mu held: they
 * stay while it is). */
static void write_compiled(const struct collect *c) {
  for (size_t i = 0; i < c->compiled.n && writer.agent_len; i++) disk_store(&c->compiled.k[i]);
}

/* Builds and publishes a snapshot, compiling the unwind tables it lacks when `tables` (or
 * reading them from the cache). writer.mu held. */
static int publish(int tables) {
  struct collect c = {.tables = tables};
  c.vdso = (uintptr_t)getauxval(AT_SYSINFO_EHDR);
  if (tables) read_cached(&c);
  dl_iterate_phdr(collect_one, &c);
  if (c.err) {
    drop_unpublished(c.obj, c.n);
    collect_free(&c);
    return c.err;
  }
  qsort(c.obj, c.n, sizeof *c.obj, by_text);
  size_t nseg = 0;
  for (size_t i = 0; i < c.n; i++) nseg += (size_t)c.obj[i].nsegments;
  struct objects_snapshot *s =
      malloc(sizeof *s + c.n * sizeof(struct object) + nseg * sizeof(struct object_segment) +
             c.n * sizeof(uintptr_t) + c.name_bytes);
  if (!s) {
    drop_unpublished(c.obj, c.n);
    collect_free(&c);
    return -ENOMEM;
  }
  struct object *obj = (struct object *)(s + 1);
  struct object_segment *seg = (struct object_segment *)(obj + c.n);
  uintptr_t *start = (uintptr_t *)(seg + nseg);
  char *names = (char *)(start + c.n); /* the names live as long as the snapshot */
  if (c.n) memcpy(obj, c.obj, c.n * sizeof *obj);
  for (size_t i = 0; i < c.n; i++) {
    size_t len = strlen(obj[i].name) + 1;
    memcpy(names, obj[i].name, len);
    obj[i].name = names;
    names += len;
  }
  size_t k = 0;
  for (size_t i = 0; i < c.n; i++)
    for (int j = 0; j < obj[i].nsegments; j++) seg[k++] = obj[i].segments[j];
  qsort(seg, nseg, sizeof *seg, by_start);
  size_t m = 0; /* merge segments that touch or overlap */
  for (size_t i = 0; i < nseg; i++) {
    if (m && seg[i].start <= seg[m - 1].end) {
      if (seg[i].end > seg[m - 1].end) seg[m - 1].end = seg[i].end;
    } else {
      seg[m++] = seg[i];
    }
  }
  const struct objects_snapshot *prev = atomic_load(&objects_published.current);
  s->generation = prev ? prev->generation + 1 : 1;
  for (size_t i = 0; i < c.n; i++) start[i] = obj[i].text_start;
  s->start = start;
  s->n = c.n;
  s->nseg = m;
  s->obj = obj;
  s->seg = seg;
  writer.adds = c.adds;
  writer.subs = c.subs;
  writer.untabled = c.untabled;
  struct objects_snapshot *old = atomic_exchange(&objects_published.current, s);
  if (old) {
    epoch_wait(&objects_published.epoch);
    for (size_t i = 0; i < old->n; i++) { /* the unwind tables of objects gone */
      int kept = 0;
      for (size_t j = 0; j < s->n && !kept; j++) kept = s->obj[j].cfi == old->obj[i].cfi;
      if (!kept) free((void *)old->obj[i].cfi);
    }
    free(old);
  }
  write_compiled(&c);
  collect_free(&c); /* the names copied, the array too: last, for it zeroes c.n */
  return 1;
}

size_t objects_agent_id(unsigned char *out) {
  pthread_mutex_lock(&writer.mu);
  size_t n = writer.agent_len;
  memcpy(out, writer.agent, n);
  pthread_mutex_unlock(&writer.mu);
  return n;
}

int objects_init(int tables) {
  pthread_mutex_lock(&writer.mu);
  int rc = publish(tables);
  writer.inited = rc >= 0;
  pthread_mutex_unlock(&writer.mu);
  return rc < 0 ? rc : 0;
}

void objects_fini(void) {
  pthread_mutex_lock(&writer.mu);
  struct objects_snapshot *old = atomic_exchange(&objects_published.current, NULL);
  if (old) {
    epoch_wait(&objects_published.epoch);
    for (size_t i = 0; i < old->n; i++) free((void *)old->obj[i].cfi);
    free(old);
  }
  writer.adds = writer.subs = 0;
  writer.inited = writer.untabled = 0;
  pthread_mutex_unlock(&writer.mu);
}

static int counters(struct dl_phdr_info *info, size_t size, void *vctx) {
  (void)size;
  unsigned long long *ab = vctx;
  ab[0] = info->dlpi_adds;
  ab[1] = info->dlpi_subs;
  return 1; /* the first object is enough: every entry carries the loader's counters */
}

int objects_sync(uint64_t *generation) {
  unsigned long long ab[2] = {0, 0};
  dl_iterate_phdr(counters, ab);
  pthread_mutex_lock(&writer.mu);
  int rc = 0;
  if (!writer.inited || ab[0] != writer.adds || ab[1] != writer.subs) {
    rc = publish(0); /* the tables it has, the rest for objects_refresh */
    if (rc >= 0) writer.inited = 1;
  }
  const struct objects_snapshot *s = atomic_load(&objects_published.current);
  *generation = s ? s->generation : 0;
  pthread_mutex_unlock(&writer.mu);
  return rc;
}

int objects_each(uint64_t *generation, int (*fn)(void *ctx, const struct object *o), void *ctx) {
  pthread_mutex_lock(&writer.mu);
  const struct objects_snapshot *s = atomic_load(&objects_published.current);
  int rc = 0;
  *generation = s ? s->generation : 0;
  for (size_t i = 0; s && i < s->n && !rc; i++) rc = fn(ctx, &s->obj[i]);
  pthread_mutex_unlock(&writer.mu);
  return rc;
}

int objects_refresh(void) {
  unsigned long long ab[2] = {0, 0};
  dl_iterate_phdr(counters, ab);
  pthread_mutex_lock(&writer.mu);
  int rc = 0;
  if (!writer.inited || writer.untabled || ab[0] != writer.adds || ab[1] != writer.subs)
    rc = publish(1);
  pthread_mutex_unlock(&writer.mu);
  return rc;
}
