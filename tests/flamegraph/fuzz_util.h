/*
 * fuzz_util.h — what the reader fuzz targets share: the writers run over what was read, with
 * options varied by the input's size.
 */
#ifndef SAMPLER_FUZZ_UTIL_H
#define SAMPLER_FUZZ_UTIL_H

#include "fg_internal.h"

#include <stdlib.h>

/* Writes p as SVG and HTML to `out` (options chosen by `size`); aborts when a writer fails. */
static inline void fuzz_render(FILE *out, const fg_profile *p, size_t size) {
  fg_options o;
  fg_options_init(&o);
  o.min_width = 0;
  o.html_prune = 0;
  o.palette = (fg_palette)(size % FG_PAL_COUNT);
  o.hash = (int)(size & 1);
  o.inverted = (int)(size >> 1 & 1);
  o.reverse = (int)(size >> 2 & 1);
  if (fg_write_svg(out, p, &o) != 0 || fg_write_html(out, p, &o) != 0) abort();
}

#endif
