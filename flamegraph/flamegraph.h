/*
 * flamegraph.h — folded stacks in, flame graphs out. A library the agent links and the
 * `flamegraph` command-line tool is built on.
 *
 * CONTRACT WITH THE AGENT (agent/ calls exactly these; keep their signatures):
 *   fg_profile_new / fg_profile_add / fg_profile_free, fg_options_init,
 *   fg_write_folded / fg_write_svg / fg_write_html.
 * The agent builds a profile from its own trace table at dump time (outside any signal
 * handler, malloc allowed) and writes it to a FILE* it opened (temp file + rename is the
 * agent's job). Frame names arrive as the agent prints them, kind suffix included
 * (`java/lang/String.hashCode_[j]`, `[unknown Java]`, `[main tid=123]`).
 */
#ifndef SAMPLER_FLAMEGRAPH_H
#define SAMPLER_FLAMEGRAPH_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef struct fg_profile fg_profile;

/* A new empty profile, or NULL when out of memory. */
fg_profile *fg_profile_new(void);
void fg_profile_free(fg_profile *p);

/* Adds one stack (frames[0] is the root) with `count` samples. Frame strings are copied.
 * Returns 0 or -ENOMEM / -EINVAL. */
int fg_profile_add(fg_profile *p, const char *const *frames, size_t nframes, uint64_t count);

typedef struct fg_options {
  const char *title;      /* NULL: "Flame Graph" */
  const char *subtitle;   /* NULL: none */
  const char *count_name; /* NULL: "samples" */
  int width;              /* px, SVG; 0: 1200 */
  /* flamegraph/ adds its further fields here; fg_options_init sets every default */
} fg_options;

void fg_options_init(fg_options *o);

/* Each writes the whole profile to `out`; returns 0 or a negative errno-style code. */
int fg_write_folded(FILE *out, const fg_profile *p);
int fg_write_svg(FILE *out, const fg_profile *p, const fg_options *o);
int fg_write_html(FILE *out, const fg_profile *p, const fg_options *o);

#endif
