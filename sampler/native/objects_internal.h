/*
 * objects_internal.h — the snapshot of loaded objects, shared by its writer (objects.c) and its
 * signal-path reader (objects_lookup_sig.c). Not for use elsewhere.
 */
#ifndef SAMPLER_OBJECTS_INTERNAL_H
#define SAMPLER_OBJECTS_INTERNAL_H

#include "epoch.h"
#include "objects.h"

struct objects_snapshot {
  uint64_t generation;              /* 1 for the first snapshot, then one more each */
  size_t n;                         /* objects */
  size_t nseg;                      /* segments of all objects */
  const struct object *obj;         /* sorted by text_start; executable ranges do not overlap */
  const uintptr_t *start;           /* obj[i].text_start: a search touches a few cache lines,
                                       not one per object it passes */
  const struct object_segment *seg; /* every object's segments, sorted by start, merged where
                                       they touch */
};

struct objects_published {
  _Atomic(struct objects_snapshot *) current;
  struct epoch epoch;
};
extern struct objects_published objects_published;

#endif
