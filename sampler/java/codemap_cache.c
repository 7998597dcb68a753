/*
 * codemap_cache.c — the code map filled from HotSpot's code cache itself (codecache.h): at a
 * run's start, instead of from GenerateEvents(COMPILED_METHOD_LOAD)'s replay, every live
 * nmethod (codecache_each_nmethod) with its whole PcDesc table (codecache_each_scope), made into
 * the inline record CompiledMethodLoad would carry (jvmticmlr.h) — the same pcs and chains,
 * record for record (jvm_codecache checks the reader against the events) — and added as the
 * event adds it — or, when the map holds that very compilation from an earlier start (the same
 * address, method and compile id), renewed without reading its table again; during a run, the
 * one nmethod a sample found there before its event came (codemap_add_cache_at). Not
 * signal-safe (it allocates); the sampler thread's.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "codecache.h"
#include "codemap.h"

/* One nmethod's records as they are read: the pcs, and their frames (each pc's `methods` an
 * offset into the frames until all are read: the arrays grow meanwhile). Kept across nmethods. */
struct records {
  PCStackInfo *pcs;
  jmethodID *methods;
  jint *bcis;
  size_t npcs, cap_pcs, nframes, cap_methods, cap_bcis;
  const struct codecache_layout *l; /* bound to the calling thread (reader_of) */
  struct codecache_layout own;      /* where reader_of binds a layout that is not */
  struct codemap_cache_stats *st;
};

/* Room for `need` items of `each` bytes in *p (capacity *cap). 0 or -ENOMEM. */
static int grow(void **p, size_t *cap, size_t need, size_t each) {
  if (need <= *cap) return 0;
  size_t n = *cap ? *cap * 2 : 64;
  while (n < need) n *= 2;
  void *q = realloc(*p, n * each);
  if (!q) return -ENOMEM;
  *p = q;
  *cap = n;
  return 0;
}

/* codecache_each_scope's visit: one record. */
static int add_record(uintptr_t pc, const struct codecache_frame *chain, int n, void *ctx) {
  struct records *r = ctx;
  for (int i = 0; i < n; i++)
    if (!chain[i].jmethod_id) { /* no id made for that method yet: nothing to name it with */
      r->st->records_unnamed++;
      return 0;
    }
  size_t frames = r->nframes + (size_t)n;
  if (grow((void **)&r->pcs, &r->cap_pcs, r->npcs + 1, sizeof *r->pcs) ||
      grow((void **)&r->methods, &r->cap_methods, frames, sizeof *r->methods) ||
      grow((void **)&r->bcis, &r->cap_bcis, frames, sizeof *r->bcis))
    return -ENOMEM;
  PCStackInfo *p = &r->pcs[r->npcs++];
  p->pc = (void *)pc;
  p->numstackframes = n;
  p->methods = (jmethodID *)(uintptr_t)r->nframes;
  p->bcis = NULL;
  for (int i = 0; i < n; i++) {
    r->methods[r->nframes + (size_t)i] = (jmethodID)chain[i].jmethod_id;
    r->bcis[r->nframes + (size_t)i] = chain[i].bci;
  }
  r->nframes = frames;
  return 0;
}

/* codecache_each_nmethod's visit: the nmethod and its records into the map. */
static int add_nmethod(const struct codecache_blob *b, void *ctx) {
  struct records *r = ctx;
  if (!b->jmethod_id) { /* no id made for its method yet: AsyncGetCallTrace could not name it */
    r->st->unnamed++;
    return 0;
  }
  /* the same compilation, read at an earlier start: its records are what they were */
  const jint size = (jint)(b->code_end - b->code_begin);
  int32_t id = codecache_compile_id(r->l, b);
  if (id > 0 && codemap_renew_compiled((jmethodID)b->jmethod_id, (const void *)b->code_begin, size,
                                       id) == 0) {
    r->st->kept++;
    return 0;
  }
  r->npcs = r->nframes = 0;
  int n = codecache_each_scope(r->l, b, add_record, r);
  if (n == -ENOMEM) return n;
  if (n < 0) { /* freed or being freed meanwhile, or a table that does not read: left out */
    r->st->unread++;
    return 0;
  }
  for (size_t i = 0; i < r->npcs; i++) {
    size_t at = (size_t)(uintptr_t)r->pcs[i].methods;
    r->pcs[i].methods = r->methods + at;
    r->pcs[i].bcis = r->bcis + at;
  }
  jvmtiCompiledMethodLoadInlineRecord rec;
  memset(&rec, 0, sizeof rec);
  rec.header.kind = JVMTI_CMLR_INLINE_INFO;
  rec.header.majorinfoversion = JVMTI_CMLR_MAJOR_VERSION;
  rec.header.minorinfoversion = JVMTI_CMLR_MINOR_VERSION;
  rec.numpcs = (jint)r->npcs;
  rec.pcinfo = r->pcs;
  int rc = codemap_add_compiled((jmethodID)b->jmethod_id, (const void *)b->code_begin, size,
                                r->npcs ? &rec : NULL, id);
  if (rc == -ENOMEM) return rc;
  if (rc == 0) r->st->added++;
  return 0;
}

/* The layout the reads go through: l when the caller bound it already (no copy, no system
 * call), else l bound to this thread into r->own. */
static void reader_of(const struct codecache_layout *l, struct records *r) {
  if (!l->read_bound) codecache_bind(l, &r->own);
  r->l = l->read_bound ? l : &r->own;
}

int codemap_add_cache_at(const struct codecache_layout *l, uintptr_t pc,
                         struct codemap_cache_stats *st) {
  memset(st, 0, sizeof *st);
  if (l->scopes_why) return -ENOTSUP;
  struct records r = {.st = st};
  reader_of(l, &r);
  struct codecache_blob b;
  int rc = codecache_find(r.l, pc, &b);
  if (rc == 0 && b.is_nmethod) {
    st->nmethods = 1;
    rc = add_nmethod(&b, &r);
  }
  free(r.pcs);
  free(r.methods);
  free(r.bcis);
  return rc;
}

int codemap_add_cache(const struct codecache_layout *l, struct codemap_cache_stats *st) {
  memset(st, 0, sizeof *st);
  if (l->scopes_why) return -ENOTSUP; /* the records could not be read: the events' replay */
  struct records r = {.st = st};
  reader_of(l, &r);
  long skipped = 0;
  int n = codecache_each_nmethod(r.l, add_nmethod, &r, &skipped);
  st->nmethods = n > 0 ? (uint64_t)n : 0;
  st->skipped_segments = (uint64_t)skipped;
  free(r.pcs);
  free(r.methods);
  free(r.bcis);
  return n < 0 ? n : 0;
}
