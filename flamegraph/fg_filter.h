/*
 * fg_filter.h — keeping the stacks of a profile that hold a frame matching a pattern, and
 * dropping those that hold one matching another: the `flamegraph` tool's -I / -X (as
 * async-profiler's converter has them), for every input. Apart from flamegraph_lib (the agent's
 * part), which never filters.
 */
#ifndef SAMPLER_FG_FILTER_H
#define SAMPLER_FG_FILTER_H
#include <regex.h>
#include <stddef.h>

#include "flamegraph.h"

/* A new profile holding the stacks of p (both columns) that have a frame matching one of
 * include[0..ninclude) (any stack when ninclude is 0) and none matching one of
 * exclude[0..nexclude): patterns compiled by regcomp, matched anywhere in a frame's whole name
 * (its kind suffix included). Each name is matched once, each stack costs its depth. Returns
 * the new profile, or NULL when out of memory; p is left as it was. Not thread-safe. */
fg_profile *fg_profile_filtered(const fg_profile *p, const regex_t *include, size_t ninclude,
                                const regex_t *exclude, size_t nexclude);

#endif
