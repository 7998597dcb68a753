/*
 * fg_filter.c — stacks kept or dropped by the frames they hold (see fg_filter.h). Parents have
 * smaller indices than their children (fg_internal.h), so whether a stack holds a matching
 * frame is one forward pass over the nodes; the kept stacks are then added to a new profile,
 * each walked up from where it ends. A time axis goes along: its entries follow their frames into
 * the new profile, those of dropped stacks are dropped with them.
 */
#include "fg_filter.h"
#include "fg_internal.h"

#include <stdlib.h>

enum { HAS_INCLUDE = 1, HAS_EXCLUDE = 2 };

static int matches(const regex_t *re, size_t n, const char *s) {
  for (size_t i = 0; i < n; i++)
    if (regexec(&re[i], s, 0, NULL, 0) == 0) return 1;
  return 0;
}

fg_profile *fg_profile_filtered(const fg_profile *p, const regex_t *include, size_t ninclude,
                                const regex_t *exclude, size_t nexclude) {
  fg_profile *out = fg_profile_new();
  unsigned char *name_flags = calloc(p->nnames ? p->nnames : 1, 1);
  unsigned char *flags = calloc(p->nnodes ? p->nnodes : 1, 1);
  uint32_t *moved =
      p->time ? calloc(p->nnodes ? p->nnodes : 1, sizeof *moved) : NULL; /* 0: dropped */
  const char **frames = NULL;
  size_t *lens = NULL, cap = 0;
  int rc = out && name_flags && flags && (moved || !p->time) ? 0 : -1;
  for (uint32_t i = 0; !rc && i < p->nnames; i++)
    name_flags[i] = (unsigned char)(matches(include, ninclude, p->names[i].s) * HAS_INCLUDE |
                                    matches(exclude, nexclude, p->names[i].s) * HAS_EXCLUDE);
  for (uint32_t n = 1; !rc && n < p->nnodes; n++) {
    const fg_node *node = &p->nodes[n];
    flags[n] = (unsigned char)(flags[node->parent] | name_flags[node->name]);
    uint64_t self = node->self, base = p->self_base ? p->self_base[n] : 0;
    if ((!self && !base) || (ninclude && !(flags[n] & HAS_INCLUDE)) || (flags[n] & HAS_EXCLUDE))
      continue;
    size_t depth = 0;
    for (uint32_t k = n; k != 0; k = p->nodes[k].parent) depth++;
    if (depth > cap) {
      const char **f = realloc(frames, depth * sizeof *f);
      if (f) frames = f;
      size_t *l = realloc(lens, depth * sizeof *l);
      if (l) lens = l;
      if (!f || !l) {
        rc = -1;
        break;
      }
      cap = depth;
    }
    size_t i = depth;
    for (uint32_t k = n; k != 0; k = p->nodes[k].parent) {
      frames[--i] = p->names[p->nodes[k].name].s;
      lens[i] = p->names[p->nodes[k].name].len;
    }
    if (self)
      rc = fg_profile_add_n_at(out, frames, lens, depth, self, FG_MAIN, moved ? &moved[n] : NULL);
    if (!rc && base) rc = fg_profile_add_n(out, frames, lens, depth, base, FG_BASE);
  }
  if (out) out->diff = p->diff; /* a diff stays one, even with no base stack left */
  const fg_time *t = p->time;
  if (!rc && t) rc = fg_profile_time_init(out, t->start_wall_ns, t->duration_ns, t->cell_ns);
  for (size_t i = 0; !rc && t && i < t->nthreads; i++)
    rc = fg_profile_time_thread(out, t->threads[i].tid, t->threads[i].name) < 0 ? -1 : 0;
  for (size_t i = 0; !rc && t && i < t->nmarks; i++)
    rc = fg_profile_time_mark(out, t->marks[i].at_ns, t->marks[i].dur_ns, t->marks[i].what);
  if (!rc && t) fg_profile_time_marks_lost(out, t->marks_lost);
  for (size_t i = 0; !rc && t && i < t->n; i++) {
    const fg_time_entry *e = &t->entries[i];
    if (moved[e->node])
      rc = fg_profile_time_add(out, e->cell, moved[e->node], e->thread, e->weight);
  }
  free(moved);
  free(name_flags);
  free(flags);
  free(frames);
  free(lens);
  if (rc) {
    fg_profile_free(out);
    return NULL;
  }
  return out;
}
