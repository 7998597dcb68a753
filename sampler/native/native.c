/*
 * native.c — set-up of the native stack walk (see native.h): libunwind's address space with
 * this project's accessors (native_walk_sig.c), caching off. Not signal-safe.
 */
#include "native.h"

#include <errno.h>
#include <libunwind.h>

#include "codemap.h"

extern unw_addr_space_t native_space;
extern const unw_accessors_t native_accessors;

int native_init(void) {
  if (native_space) return 0;
  static unw_accessors_t accessors; /* libunwind keeps a copy; it takes a non-const pointer */
  accessors = native_accessors;
  unw_addr_space_t as = unw_create_addr_space(&accessors, 0);
  if (!as) return -ENOMEM;
  unw_set_caching_policy(as, UNW_CACHE_NONE);
  native_space = as;
  return 0;
}

void native_fini(void) {
  unw_addr_space_t as = native_space;
  native_space = NULL;
  if (as) unw_destroy_addr_space(as);
}

void native_end_resolve(struct native_end *end) {
  struct codemap_hit hit;
  if (end->stop == NATIVE_STOP_UNKNOWN && codemap_lookup(end->pc, &hit))
    end->stop = NATIVE_STOP_JAVA;
}
