/*
 * codemap_internal.h — what the code map's files share (see codemap.c for the design): the
 * immutable entries and snapshots, the published root and the readers' epoch counters. Not for
 * use outside the code map.
 */
#ifndef SAMPLER_CODEMAP_INTERNAL_H
#define SAMPLER_CODEMAP_INTERNAL_H

#include <stdatomic.h>

#include "codemap.h"
#include "epoch.h"

struct cm_rec {
  uintptr_t pc;
  uint32_t first; /* index of its innermost frame in fm[] / fb[] */
  uint32_t depth;
};

struct cm_entry {
  uintptr_t start, end;
  int kind;
  jmethodID method;
  const char *name;
  uint32_t name_id;
  int frame_words;
  int interpreter; /* the stub is HotSpot's template interpreter, decided once at add */
  uint64_t gen;
  /* Writers only (under the writers' mutex; no lookup reads them): the nmethod's compile id when
   * it was read from the code cache (0: from an event, unknown), and the generation of the last
   * walk of the code cache that found this very compilation still there (codemap_renew_compiled,
   * 0: none) — a sweep from generation g keeps an entry whose gen or seen is newer than g. */
  int32_t compile_id;
  uint64_t seen;
  uint32_t nrec;
  const struct cm_rec *recs;
  const jmethodID *fm;
  const jint *fb;
};

struct cm_leaf {
  uint32_t n;
  struct cm_entry *e[]; /* n entries, sorted by start */
};

struct cm_root {
  size_t nleaves;
  size_t count;
  uintptr_t *first;        /* first[i] == leaves[i]->e[0]->start */
  struct cm_leaf **leaves; /* both arrays live in the root's own block */
};

/* What readers see: the current snapshot and the counters of readers inside a lookup, by the
 * parity of the epoch they entered in. Writers publish a root with one atomic store. */
struct codemap_published {
  _Atomic(struct cm_root *) root;
  struct epoch epoch;
};
extern struct codemap_published codemap_published;

/* A position in a snapshot: leaf l, index i (i < leaves[l]->n), or l == nleaves for the end. */
struct cm_pos {
  size_t l, i;
};

/* The position of the entry with the greatest start <= addr (found = 1), or else of the first
 * entry (found = 0; the end position if the map is empty). Signal-safe (reads only). */
struct cm_pos codemap_pos_floor(const struct cm_root *r, uintptr_t addr, int *found);

/* The frame-kind index (codemap_kinds.c): adds (delta 1) or drops (-1) what the nmethod entry e
 * says about its methods. Takes the index's own mutex. */
void codemap_kinds_update(const struct cm_entry *e, int delta);

/* Empties the frame-kind index and returns how many facts it could not store. */
uint64_t codemap_kinds_reset(void);

/* Fills out's kinds_lost (facts the frame-kind index could not store: no memory) and
 * kinds_keys (the keys it holds). */
void codemap_kinds_stats(struct codemap_stats *out);

/* Inline records (codemap_cmlr.c): visits the usable PCStackInfo entries of compile_info's
 * JVMTI_CMLR_INLINE_INFO records: counts them (e == NULL) or copies them into e's arrays,
 * adding the chains cut to CODEMAP_MAX_INLINE to *truncated. Returns the number of records and
 * the number of frames in *nframes. */
size_t codemap_cmlr_scan(const void *compile_info, struct cm_entry *e, size_t *nframes,
                         uint64_t *truncated);

#endif
