/*
 * codemap_cmlr.c — the code map's reading of JVMTI compiled-method-load records (jvmticmlr.h):
 * the per-PC inline chains of an nmethod, copied into its entry. A malformed record list is
 * bounded (MAX_CMLR_HEADERS). Writers only (codemap.c, under its mutex).
 */
#include "codemap_internal.h"

#define MAX_CMLR_HEADERS 64 /* guard against a malformed record list */

/* See codemap_internal.h. */
size_t codemap_cmlr_scan(const void *compile_info, struct cm_entry *e, size_t *nframes,
                         uint64_t *truncated) {
  size_t r = 0, f = 0;
  int nh = 0;
  for (const jvmtiCompiledMethodLoadRecordHeader *h = compile_info; h && nh < MAX_CMLR_HEADERS;
       h = h->next, nh++) {
    const jvmtiCompiledMethodLoadInlineRecord *ir = (const void *)h;
    if (h->kind != JVMTI_CMLR_INLINE_INFO || !ir->pcinfo) continue;
    for (jint q = 0; q < ir->numpcs; q++) {
      const PCStackInfo *pi = &ir->pcinfo[q];
      if (pi->numstackframes <= 0 || !pi->methods) continue;
      uint32_t depth = (uint32_t)pi->numstackframes;
      if (depth > CODEMAP_MAX_INLINE) {
        depth = CODEMAP_MAX_INLINE;
        if (e) (*truncated)++;
      }
      if (e) {
        struct cm_rec *recs = (struct cm_rec *)e->recs;
        jmethodID *fm = (jmethodID *)e->fm;
        jint *fb = (jint *)e->fb;
        recs[r] = (struct cm_rec){(uintptr_t)pi->pc, (uint32_t)f, depth};
        for (uint32_t i = 0; i < depth; i++) {
          fm[f + i] = pi->methods[i];
          fb[f + i] = pi->bcis ? pi->bcis[i] : -1;
        }
      }
      r++;
      f += depth;
    }
  }
  *nframes = f;
  return r;
}
