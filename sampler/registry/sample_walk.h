/*
 * sample_walk.h — what a sample's walk leaves beside the handshake record (sample.h), in
 * types of the code map and the native walk: the Java frames, where a failed walk's PC was, and
 * the handler's memo of the thread's last native walk. Apart from sample.h so that the
 * handshake record stays a leaf of fixed-width types; preallocated with the record (registry.c),
 * owned like it: by the handler while the word is BUSY, by the sampler thread otherwise.
 */
#ifndef SAMPLER_SAMPLE_WALK_H
#define SAMPLER_SAMPLE_WALK_H

#include "asgct.h"
#include "codemap.h"
#include "native.h"

struct sample_walk {
  asgct_frame *frames;     /* `depth` entries, leaf first (preallocated with the record) */
  struct codemap_hit hit;  /* when AsyncGetCallTrace failed: where the PC was (for
                             RECOVERY_ANCHOR: where the VM call returns to) */
  struct native_memo memo; /* the handler's own state: the thread's last native walk */
};

#endif
