/*
 * output.h — writing the profile: folded stacks, SVG, HTML (through flamegraph/), pprof or the
 * text report; and the stats file (stats=, JSON). Each is committed whole or not at all
 * (commit.h); the counters come from one table (counters.h).
 */
#ifndef SAMPLER_OUTPUT_H
#define SAMPLER_OUTPUT_H

#include <stddef.h>
#include <stdio.h>

#include "options.h"
#include "sampler.h"

/* Checks at start that o->file, and o->stats when set, can be written: creates and removes a
 * temporary file beside each. Returns 0, or a negative errno-style code with the reason in err
 * (naming the option). */
int output_check_writable(const struct agent_options *o, char *err, size_t errlen);

/* Sets what the profile's title and report say about the program ("sun.java.command", in
 * JVMTI's modified UTF-8: kept as UTF-8, utf8.h). */
void output_set_program(const char *program);

/* Writes the profile of snapshot s to path, as o says: with several events (o's event=) and a
 * format of one event a file (folded, text, svg; html with %e), a file per event, each path's
 * %e its name ("cpu"); else one file (html: a page with an event selector), %e the events'
 * names joined by '+' ("cpu+alloc"). Thread-safe;
 * not signal-safe. Returns 0, or a negative errno-style code with the reason in err (the old
 * file, if any, is then left as it was; of several, those before it are written). On success
 * err holds what the user should be told about the files written (a flame graph drawn with
 * stacks cut), or "". */
int output_write(const struct agent_options *o, const char *path, const struct sampler_snapshot *s,
                 char *err, size_t errlen);

/* The most frames a flame graph (SVG, HTML) holds: 2M by default (~100 MB to build and write
 * it); the heaviest stacks are drawn whole, the rest cut where there is no room. 0 restores the
 * default. Tests set small ones. Not thread-safe: call before writing. */
void output_set_graph_limit(size_t frames);

/* Writes the stats of report r, whose profile went to path, as JSON to o->stats (whole or not at
 * all). Thread-safe; not signal-safe. Returns 0, or a negative errno-style code with the
 * reason in err. */
int output_write_stats(const struct agent_options *o, const char *path,
                       const struct sampler_report *r, char *err, size_t errlen);

#endif
