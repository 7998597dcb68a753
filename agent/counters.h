/*
 * counters.h — what the sampler counted, defined once, in counters.c's table COUNTERS[]: each
 * entry is a key, where its value comes from in struct sampler_report (or a getter for a
 * derived value), its unit, its meaning, and whether it is a loss. The stats file (stats=, JSON),
 * the text report's counter sections, the `status` answer, the line at exit and the docs'
 * table (docs/how-it-works.md, held equal by tests/agent/test_counters.c) all come from it.
 */
#ifndef SAMPLER_COUNTERS_H
#define SAMPLER_COUNTERS_H

#include <stddef.h>
#include <stdio.h>

#include "options.h"
#include "sampler.h"

/* Writes the stats of report r as one JSON object: "file" (path), "format", "event", then
 * every counter in the table's order, key: number. Returns 0, -EIO or -ENOMEM. Thread-safe as
 * stdio is; not signal-safe. */
int counters_json(FILE *f, const struct agent_options *o, const char *path,
                  const struct sampler_report *r);

/* Writes every counter of r, grouped in the table's sections (a title line, then one line per
 * counter: key, value, unit, meaning), as the text report and `status` show them. Returns 0
 * or -EIO. Thread-safe as stdio is; not signal-safe. */
int counters_text(FILE *f, const struct sampler_report *r);

/* Writes the short line said at exit into buf: where the profile went, its samples, coverage
 * and the agent's own CPU, and the losses that are not 0 ("lost_samples 12, faults 1"); where
 * the stats went when stats (may be NULL) names the file they were written to. Thread-safe;
 * not signal-safe. */
void counters_exit_line(char *buf, size_t len, const struct agent_options *o, const char *path,
                        const char *stats, const struct sampler_report *r);

/* Writes the table in markdown, as docs/how-it-works.md carries it: `| key | unit | meaning |`,
 * its rule, one row per counter in the table's order. Returns 0 or -EIO. */
int counters_markdown_table(FILE *f);

/* Calls fn with the key and the value (as the stats file shows it) of every counter of r, in
 * the table's order, until fn returns non-zero; returns that, or 0. Thread-safe. */
int counters_each(const struct sampler_report *r,
                  int (*fn)(void *ctx, const char *key, const char *value), void *ctx);

/* The key of the i-th counter in the table's order, NULL past the last. Thread-safe,
 * signal-safe. */
const char *counter_name(size_t i);

#endif
