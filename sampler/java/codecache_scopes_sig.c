/*
 * codecache_scopes_sig.c — the inline chain at a PC of an nmethod from its own debug information
 * (codecache.h: codecache_scopes), read as HotSpot's PcDescContainer::find_pc_desc and
 * ScopeDesc::decode_body read it: the PcDesc table sorted by pc offset, searched for the first
 * offset >= the PC's; its scope decode offset into the scopes data, a stream of compressed ints
 * (sender's decode offset, method index into the nmethod's metadata, bci + 1, then the offsets
 * of the locals, expressions and monitors this reader does not need) and the sender's scope in
 * turn up to the outermost. Signal path, as codecache_find_sig.c: every read of the JVM's memory
 * is a checked copy into the stack (codecache_peek: guarded loads, or process_vm_readv), no lock,
 * no allocation; every loop is bounded and every offset checked against the region it must lie
 * in.
 */
#include <errno.h>
#include <string.h>

#include "codecache_internal.h"

int codecache_stream_uint(const unsigned char *buf, long n, long *pos, int excluded, uint32_t *v) {
  const unsigned x = excluded ? 1 : 0, low = 256 - 64 - x; /* bytes below x + low end a value */
  uint32_t sum = 0;
  for (int i = 0; i < 5; i++) {
    if (*pos < 0 || *pos + i >= n) return -EFAULT;
    unsigned b = buf[*pos + i];
    if (b < x) return -EFAULT;
    sum += (uint32_t)(b - x) << (6 * i); /* wraps past 32 bits, as HotSpot's uint32_t does */
    if (b < x + low || i == 4) {
      *pos += i + 1;
      *v = sum;
      return 0;
    }
  }
  return -EFAULT; /* not reached: the fifth byte ends every value */
}

int codecache_scope_head(const unsigned char *buf, long n, int excluded, uint32_t *sender,
                         uint32_t *method_index, int32_t *bci) {
  long pos = 0;
  uint32_t b = 0;
  if (codecache_stream_uint(buf, n, &pos, excluded, sender) != 0 ||
      codecache_stream_uint(buf, n, &pos, excluded, method_index) != 0 ||
      codecache_stream_uint(buf, n, &pos, excluded, &b) != 0)
    return -EFAULT;
  *bci = (int32_t)(b - 1); /* DebugInfoReadStream::read_bci: the int + InvocationEntryBci (-1) */
  return 0;
}

#define NM_READ 1024    /* bytes of an nmethod's header read at once (its fields lie within) */
#define PCD_WINDOW 1024 /* bytes of PcDescs read at once at the end of the search (64 of 16) */
#define SCOPE_HEAD 15   /* three ints of at most 5 bytes */
#define MAX_REGION (1L << 28) /* no nmethod's debug information comes near 256 MB */

/* An nmethod's debug information: where its PcDescs, scopes data and metadata lie. */
struct regions {
  uintptr_t pcs, scopes, meta;
  long n_pcs, scopes_size, n_meta;
};

/* [begin, end) as a size, or -1 when it is not a plausible region. */
static long span(uintptr_t begin, uintptr_t end) {
  return begin && end >= begin && end - begin < (uintptr_t)MAX_REGION ? (long)(end - begin) : -1;
}

static int regions_of(const struct codecache_layout *l, uintptr_t nm, struct regions *r) {
  unsigned char h[NM_READ];
  long need = 0;
  const long at[] = {l->nm_pcs_offset,    l->nm_deps_offset, l->nm_metadata_offset,
                     l->nm_scopes_begin,  l->nm_immutable,   l->nm_immutable_size,
                     l->nm_scopes_offset, l->blob_mutable,   l->blob_reloc_size,
                     l->blob_mutable_size};
  for (size_t i = 0; i < sizeof at / sizeof at[0]; i++)
    if (at[i] + 8 > need) need = at[i] + 8;
  if (need > NM_READ || codecache_peek(l, nm, h, (size_t)need) != 0) return -EFAULT;
  uintptr_t pcs_end, scopes_end, meta_end;
  int32_t pcs_off = hotspot_i32_at(h, l->nm_pcs_offset);
  if (l->nm_scopes_begin >= 0) { /* JDK 17, 21: inside the nmethod, metadata before scopes */
    r->pcs = nm + (uintptr_t)pcs_off;
    pcs_end = nm + (uintptr_t)hotspot_i32_at(h, l->nm_deps_offset);
    r->scopes = hotspot_word_at(h, l->nm_scopes_begin);
    scopes_end = r->pcs;
    r->meta = nm + (uintptr_t)hotspot_i32_at(h, l->nm_metadata_offset);
    meta_end = r->scopes;
  } else { /* JDK 25: both in the immutable data; metadata after the relocations */
    uintptr_t imm = hotspot_word_at(h, l->nm_immutable), mut = hotspot_word_at(h, l->blob_mutable);
    int32_t scopes_off = hotspot_i32_at(h, l->nm_scopes_offset),
            size = hotspot_i32_at(h, l->nm_immutable_size);
    r->pcs = imm + (uintptr_t)pcs_off;
    r->scopes = imm + (uintptr_t)scopes_off;
    /* 25.0.5 has the PcDescs first, its serviceability agent the scopes: each ends where the
     * other begins, the later one at the data's end (JVMCI's speculations and a reference count
     * may follow: a bound only, the sentinel and the senders end the reads first) */
    pcs_end = scopes_off > pcs_off ? r->scopes : imm + (uintptr_t)size;
    scopes_end = scopes_off > pcs_off ? imm + (uintptr_t)size : r->pcs;
    r->meta = mut + (uintptr_t)hotspot_i32_at(h, l->blob_reloc_size);
    meta_end = mut + (uintptr_t)hotspot_i32_at(h, l->blob_mutable_size);
    if (!imm || !mut || scopes_off < 0 || size < 0) return -EFAULT;
  }
  long pcs = span(r->pcs, pcs_end), meta = span(r->meta, meta_end);
  r->scopes_size = span(r->scopes, scopes_end);
  if (pcs_off < 0 || pcs < 0 || meta < 0 || r->scopes_size < 0) return -EFAULT;
  r->n_pcs = pcs / l->pcd_size;
  r->n_meta = meta / (long)sizeof(uintptr_t);
  return 0;
}

/* The pc offset of PcDesc i. */
static int pcd_offset(const struct codecache_layout *l, const struct regions *r, long i,
                      int32_t *off) {
  return codecache_peek(l, r->pcs + (uintptr_t)(i * l->pcd_size + l->pcd_pc), off, sizeof *off);
}

/* The scope decode offset of the first PcDesc whose pc offset is >= target: 0, -ENOENT (none
 * before the table's last, its closing sentinel — at the code's size + 1 in an nmethod — which
 * HotSpot's search leaves out too), -EFAULT. A binary search (the table is sorted: HotSpot adds
 * PcDescs at growing offsets) down to a window read whole. */
static int find_pcd(const struct codecache_layout *l, const struct regions *r, int32_t target,
                    int32_t *scope) {
  const long end = r->n_pcs - 1; /* the sentinel's index */
  long lo = 0, hi = end;         /* the answer is in [lo, hi]; hi = end: none */
  for (int steps = 0; (hi - lo + 1) * l->pcd_size > PCD_WINDOW; steps++) {
    long mid = lo + (hi - lo) / 2;
    int32_t off;
    if (steps == 64 || pcd_offset(l, r, mid, &off) != 0) return -EFAULT;
    if (off < target)
      lo = mid + 1;
    else
      hi = mid;
  }
  unsigned char w[PCD_WINDOW];
  long n = hi - lo + (hi < end); /* [lo, hi] before the sentinel */
  if (n <= 0) return -ENOENT;
  if (codecache_peek(l, r->pcs + (uintptr_t)(lo * l->pcd_size), w, (size_t)(n * l->pcd_size)) != 0)
    return -EFAULT;
  for (long i = 0; i < n; i++) {
    if (hotspot_i32_at(w, i * l->pcd_size + l->pcd_pc) >= target) {
      *scope = hotspot_i32_at(w, i * l->pcd_size + l->pcd_scope);
      return 0;
    }
  }
  return -ENOENT;
}

/* The chain of the scope at decode offset `scope` (not 0) into out[0, max): its length, -ENOSPC,
 * -EFAULT (codecache_scopes). */
static int chain_at(const struct codecache_layout *l, const struct regions *r, int32_t scope,
                    struct codecache_frame *out, int max) {
  for (int depth = 0;; depth++) {
    if (depth == max) return -ENOSPC;
    if (scope <= 0 || scope >= r->scopes_size) return -EFAULT;
    unsigned char s[SCOPE_HEAD];
    long n = r->scopes_size - scope < SCOPE_HEAD ? r->scopes_size - scope : SCOPE_HEAD;
    uint32_t sender, index;
    int32_t bci;
    uintptr_t method = 0;
    if (codecache_peek(l, r->scopes + (uintptr_t)scope, s, (size_t)n) != 0 ||
        codecache_scope_head(s, n, l->u5_excluded, &sender, &index, &bci) != 0 || index == 0 ||
        index > (uint32_t)r->n_meta ||
        codecache_peek(l, r->meta + sizeof(uintptr_t) * (index - 1), &method, sizeof method) != 0 ||
        !method)
      return -EFAULT;
    out[depth] = (struct codecache_frame){method, codecache_method_id(l, method), bci};
    if (sender == 0) return depth + 1;
    if (sender >= (uint32_t)scope) return -EFAULT; /* each step goes down: the walk ends */
    scope = (int32_t)sender;
  }
}

/* The nmethod b's debug information, after the checks both entry points make. */
static int nmethod_regions(const struct codecache_layout *l, const struct codecache_blob *b,
                           struct regions *r) {
  if (l->scopes_why) return -ENOTSUP;
  if (!b->is_nmethod) return -EINVAL;
  return regions_of(l, b->blob, r);
}

int codecache_scopes(const struct codecache_layout *layout, const struct codecache_blob *b,
                     uintptr_t pc, struct codecache_frame *out, int max) {
  struct codecache_layout own;
  const struct codecache_layout *l = codecache_reader(layout, &own);
  struct regions r;
  int32_t scope = 0;
  if (pc < b->code_begin || pc >= b->code_end || max <= 0) return -EINVAL;
  int rc = nmethod_regions(l, b, &r);
  if (rc == 0) rc = find_pcd(l, &r, (int32_t)(pc - b->code_begin), &scope);
  if (rc != 0) return rc;
  if (scope == 0) { /* DebugInformationRecorder::serialized_null: HotSpot's sentinel scope */
    out[0] = (struct codecache_frame){b->method, b->jmethod_id, -1};
    return 1;
  }
  return chain_at(l, &r, scope, out, max);
}

int codecache_each_scope(const struct codecache_layout *layout, const struct codecache_blob *b,
                         codecache_scope_fn fn, void *ctx) {
  struct codecache_layout own;
  const struct codecache_layout *l = codecache_reader(layout, &own);
  struct regions r;
  int rc = nmethod_regions(l, b, &r);
  if (rc != 0) return rc;
  unsigned char w[PCD_WINDOW];
  const long per = PCD_WINDOW / l->pcd_size;
  struct codecache_frame chain[CODECACHE_CHAIN];
  int32_t last = -1; /* the opening sentinel's offset: real ones come after it */
  int visited = 0;
  for (long i = 0; i < r.n_pcs; i++) {
    if (i % per == 0) {
      long n = r.n_pcs - i < per ? r.n_pcs - i : per;
      if (codecache_peek(l, r.pcs + (uintptr_t)(i * l->pcd_size), w, (size_t)(n * l->pcd_size)) !=
          0)
        return -EFAULT;
    }
    int32_t off = hotspot_i32_at(w, (i % per) * l->pcd_size + l->pcd_pc),
            scope = hotspot_i32_at(w, (i % per) * l->pcd_size + l->pcd_scope);
    if (off < 0 && i == 0) continue; /* the opening sentinel, at -1 */
    if (off <= last) return -EFAULT;
    last = off;
    if (scope == 0) continue; /* no scope (the closing sentinel too): the records leave them out */
    if ((uintptr_t)off > b->code_end - b->code_begin) return -EFAULT;
    int n = chain_at(l, &r, scope, chain, CODECACHE_CHAIN);
    if (n < 0) return n;
    visited++;
    rc = fn(b->code_begin + (uintptr_t)off, chain, n, ctx);
    if (rc < 0) return rc;
  }
  return visited;
}
