/*
 * output.c — the profile and the stats on disk (see output.h), each committed whole through
 * commit.c; the counters as counters.c's table gives them. Runs at VM death, on kill -3, at a
 * `loop` cut or when `duration` ends, on whichever thread that is; the tables are read under
 * traces_lock and copied into a flamegraph profile, so the file is written without holding the
 * lock.
 *
 * The words users read, the same in every output (and the README): a *sample* is one cost
 * unit — one interval of a thread's CPU — as counted in the folded file, the flame graph and
 * the text report; a *capture* is one stack the signal handler took (the sampler's
 * `samples` counter), which can carry several samples, or none when the thread had not run.
 */
#include "output.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "commit.h"
#include "counters.h"
#include "flamegraph.h"
#include "jfr_profile.h"
#include "platform.h"
#include "pprof.h"
#include "sampler.h"

static char program[512] = "java";

void output_set_program(const char *p) {
  if (!p || !*p) return;
  utf8_name(p, strlen(p), program, sizeof program); /* JVMTI's modified UTF-8: a name entering */
}

/* ---- profile -> flamegraph ---- */

/* A flame graph (SVG, HTML) holds at most this many frames, so that writing one needs ~100 MB at
 * most however full the stack table is (a frame costs ~48 bytes while the graph is built and
 * written; the table's limits, 1M stacks and 32M frames, would otherwise make a 1.4 GB graph).
 * The heaviest stacks are drawn whole; the others are cut where the graph has no room for
 * them, under OUTPUT_CUT_FRAME. The folded format needs no graph and keeps every stack. */
#define OUTPUT_MAX_NODES (2u << 20)
static size_t max_nodes = OUTPUT_MAX_NODES;
#define OUTPUT_CUT_FRAME "[frames not drawn: the flame graph's limit]"

void output_set_graph_limit(size_t frames) { max_nodes = frames ? frames : OUTPUT_MAX_NODES; }

/* Of a stack's two weights, the one `weight` (enum opt_weight) counts: its cost units
 * (samples), or its second weight — CPU ns, or an allocation profile's estimated bytes. */
static uint64_t pick(int weight, uint64_t units, uint64_t second) {
  return weight == WEIGHT_SAMPLES ? units : second;
}

/* The unit of `weight` as the outputs name it. */
static const char *unit_of(int weight) {
  return weight == WEIGHT_BYTES                             ? "bytes"
         : weight == WEIGHT_CPU || weight == WEIGHT_BLOCKED ? "ns"
                                                            : "samples";
}

static uint64_t stack_weight(int weight, const struct sampler_stack *t) {
  return pick(weight, t->units, t->cpu_ns);
}

/* qsort_r order of stack indices: the heaviest first, then the order first seen. */
static int heavier_first(const void *a, const void *b, void *vs) {
  const struct sampler_snapshot *s = ((void **)vs)[0];
  int weight = *(const int *)((void **)vs)[1];
  size_t i = *(const size_t *)a, j = *(const size_t *)b;
  uint64_t x = stack_weight(weight, &s->stacks[i]), y = stack_weight(weight, &s->stacks[j]);
  return x != y ? (x < y ? 1 : -1) : (i > j) - (i < j);
}

/* The stacks of s with a weight, heaviest first, into *out (malloc'd); their number or -ENOMEM. */
static ssize_t heaviest_stacks(const struct sampler_snapshot *s, int weight, size_t **out) {
  size_t *idx = malloc((s->n ? s->n : 1) * sizeof *idx), n = 0;
  if (!idx) return -ENOMEM;
  for (size_t i = 0; i < s->n; i++)
    if (s->stacks[i].n > 0 && stack_weight(weight, &s->stacks[i])) idx[n++] = i;
  void *ctx[2] = {(void *)s, &weight};
  qsort_r(idx, n, sizeof *idx, heavier_first, ctx);
  *out = idx;
  return (ssize_t)n;
}

struct graph {
  fg_profile *p;
  uint64_t total;    /* of the counts added: the flame graph's whole width */
  size_t cut_stacks; /* stacks cut at the limit, and their weight */
  uint64_t cut_weight;
};

/* Builds the flame graph of s into g (within OUTPUT_MAX_NODES frames); node_of (s->n entries,
 * or NULL) gets the graph frame each stack's weight went to, UINT32_MAX for stacks not drawn
 * (no frames or no weight). Returns 0 or -ENOMEM. */
static int build_graph(const struct sampler_snapshot *s, int weight, struct graph *g,
                       uint32_t *node_of) {
  memset(g, 0, sizeof *g);
  size_t *order = NULL, cap = 0;
  const char **frames = NULL;
  ssize_t n = heaviest_stacks(s, weight, &order);
  if (n < 0 || !(g->p = fg_profile_new())) {
    free(order);
    return -ENOMEM;
  }
  int rc = 0;
  for (ssize_t k = 0; k < n && !rc; k++) {
    const struct sampler_stack *t = &s->stacks[order[k]];
    if ((size_t)t->n > cap) {
      const char **f = realloc(frames, (size_t)t->n * sizeof *f);
      if (!f) {
        rc = -ENOMEM;
        break;
      }
      frames = f;
      cap = (size_t)t->n;
    }
    for (int i = 0; i < t->n; i++) frames[i] = sampler_frame_name(t->frames[i]);
    uint64_t w = stack_weight(weight, t);
    uint32_t node;
    rc = fg_profile_add_capped_node(g->p, frames, (size_t)t->n, w, max_nodes, OUTPUT_CUT_FRAME,
                                    &node);
    if (rc >= 0 && node_of) node_of[order[k]] = node;
    if (rc == 1) {
      g->cut_stacks++;
      g->cut_weight += w;
      rc = 0;
    }
    if (!rc) g->total += w;
  }
  free(frames);
  free(order);
  if (rc) {
    fg_profile_free(g->p);
    g->p = NULL;
  }
  return rc;
}

/* The page's time axis: s's time entries into g's profile, each under the frame its stack went
 * to (node_of, from build_graph), in the graph's unit. Returns 0 or a negative errno. */
static int add_time(const struct sampler_snapshot *s, int weight, struct graph *g,
                    const uint32_t *node_of) {
  const struct sampler_time *tm = &s->time;
  int rc = fg_profile_time_init(g->p, tm->start_wall_ns, tm->duration_ns, tm->cell_ns);
  for (size_t i = 0; i < tm->nthreads && rc >= 0; i++)
    rc = fg_profile_time_thread(g->p, tm->threads[i].tid, tm->threads[i].name);
  for (size_t i = 0; i < tm->n && rc >= 0; i++) {
    const struct sampler_time_entry *e = &tm->entries[i];
    uint64_t w = pick(weight, e->units, e->cpu_ns);
    if (w && e->stack < s->n && node_of[e->stack] != UINT32_MAX)
      rc = fg_profile_time_add(g->p, e->cell, node_of[e->stack], e->thread, w);
  }
  for (size_t i = 0; i < tm->nmarks && rc >= 0; i++) {
    const struct sampler_time_mark *m = &tm->marks[i];
    const char *what = sampler_mark_name(m->kind);
    if (what) rc = fg_profile_time_mark(g->p, m->at_ns, m->dur_ns, what);
  }
  if (rc >= 0) fg_profile_time_marks_lost(g->p, tm->marks_lost);
  return rc < 0 ? rc : 0;
}

/* qsort_r order of stack indices: by their frames' names, frame by frame (a stack before the
 * longer ones it begins), as the folded format is sorted. */
static int by_names(const void *a, const void *b, void *vs) {
  const struct sampler_snapshot *s = vs;
  const struct sampler_stack *x = &s->stacks[*(const size_t *)a],
                             *y = &s->stacks[*(const size_t *)b];
  for (int i = 0; i < x->n && i < y->n; i++) {
    if (x->frames[i] == y->frames[i]) continue;
    int c = strcmp(sampler_frame_name(x->frames[i]), sampler_frame_name(y->frames[i]));
    if (c) return c;
  }
  return (x->n > y->n) - (x->n < y->n);
}

/* 1 if stacks a and b have the same names (distinct stacks can: ids that name alike). */
static int same_names(const struct sampler_stack *a, const struct sampler_stack *b) {
  if (a->n != b->n) return 0;
  for (int i = 0; i < a->n; i++)
    if (a->frames[i] != b->frames[i] &&
        strcmp(sampler_frame_name(a->frames[i]), sampler_frame_name(b->frames[i])))
      return 0;
  return 1;
}

/* Writes s as folded stacks, sorted, straight from the snapshot: no graph is built, so the
 * memory it needs is an index of the stacks (8 bytes each). Returns 0 or a negative errno. */
static int write_folded(FILE *f, const struct sampler_snapshot *s, int weight) {
  size_t *idx = malloc((s->n ? s->n : 1) * sizeof *idx), n = 0;
  if (!idx) return -ENOMEM;
  for (size_t i = 0; i < s->n; i++)
    if (s->stacks[i].n > 0 && stack_weight(weight, &s->stacks[i])) idx[n++] = i;
  qsort_r(idx, n, sizeof *idx, by_names, (void *)s);
  for (size_t k = 0; k < n;) {
    const struct sampler_stack *t = &s->stacks[idx[k]];
    uint64_t w = 0;
    for (; k < n && same_names(t, &s->stacks[idx[k]]); k++)
      w += stack_weight(weight, &s->stacks[idx[k]]);
    for (int i = 0; i < t->n; i++) {
      if (i) putc(';', f);
      fputs(sampler_frame_name(t->frames[i]), f);
    }
    fprintf(f, " %" PRIu64 "\n", w);
  }
  free(idx);
  return ferror(f) ? -EIO : 0;
}

/* v with a ',' between thousands ("1,234,567") into buf, as the flame graph page shows its
 * numbers. */
static void grouped(uint64_t v, char *buf, size_t len) {
  char digits[24];
  int n = snprintf(digits, sizeof digits, "%" PRIu64, v);
  size_t o = 0;
  for (int i = 0; i < n && o + 1 < len; i++) {
    if (i > 0 && (n - i) % 3 == 0 && o + 2 < len) buf[o++] = ',';
    buf[o++] = digits[i];
  }
  buf[o] = '\0';
}

/* ---- the text report ---- */

struct method_row {
  uint32_t id;
  uint64_t self, total;
};

struct report_ctx {
  int weight;
  struct method_row *rows; /* indexed by frame id */
  size_t nrows;
  uint64_t total;
  uint32_t *mark; /* per frame id: last trace counted (for total, once per stack) */
  uint32_t serial;
};

static uint64_t view_weight(const struct report_ctx *c, const struct sampler_stack *t) {
  return stack_weight(c->weight, t);
}

static void report_trace(void *vctx, const struct sampler_stack *t) {
  struct report_ctx *c = vctx;
  uint64_t w = view_weight(c, t);
  if (!w || !t->n) return;
  c->total += w;
  c->serial++;
  for (int i = 0; i < t->n; i++) {
    uint32_t id = t->frames[i];
    if (id >= c->nrows) continue;
    if (c->mark[id] != c->serial) {
      c->rows[id].total += w;
      c->mark[id] = c->serial;
    }
  }
  uint32_t leaf = t->frames[t->n - 1];
  if (leaf < c->nrows) c->rows[leaf].self += w;
}

static int by_self(const void *a, const void *b) {
  const struct method_row *x = a, *y = b;
  return x->self < y->self ? 1 : x->self > y->self ? -1 : 0;
}

static int by_total(const void *a, const void *b) {
  const struct method_row *x = a, *y = b;
  return x->total < y->total ? 1 : x->total > y->total ? -1 : 0;
}

static double pct(uint64_t part, uint64_t whole) {
  return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

static const char *hasrun_name(int h) {
  return h == SAMPLER_HASRUN_CPU ? "cpu" : h == SAMPLER_HASRUN_REGS ? "regs" : "auto";
}

/* Why native walks ended (enum native_stop in native.h), and AsyncGetCallTrace's failures by
 * code: arrays of counts that the counter table (counters.c) sums up in one key each. */
static void write_breakdowns(FILE *f, const struct agent_options *o,
                             const struct sampler_report *r) {
  const struct sampler_counters *n = &r->n;
  static const char *const how[] = {"reached Java code",
                                    "reached the thread's start",
                                    "met an unknown pc",
                                    "no unwind info",
                                    "unreadable frame",
                                    "too deep",
                                    "unwinder error",
                                    "not walked",
                                    "fault"};
  fprintf(f, "Breakdowns\n");
  if (!o->cstack) {
    fprintf(f, "  native frames off (cstack=no)\n");
  } else {
    fprintf(f, "  native walks ended:");
    for (size_t i = 0; i < sizeof how / sizeof *how; i++)
      if (n->native_stops[i]) fprintf(f, " %s %" PRIu64 ";", how[i], n->native_stops[i]);
    fputc('\n', f);
  }
  fprintf(f, "  AsyncGetCallTrace ok %" PRIu64 " (%.2f%%)", n->asgct[0],
          pct(n->asgct[0], n->asgct[0] + r->asgct_failed));
  for (int i = 1; i <= ASGCT_NCODES; i++)
    if (n->asgct[i])
      fprintf(f, "; %s %" PRIu64 " (code %d)", asgct_code_frame(1 - i), n->asgct[i], 1 - i);
  fputc('\n', f);
  if (r->code_source) fprintf(f, "  compiled methods found from: %s\n", r->code_source);
  if (r->disk_cache && (n->native_frames || r->tables_read || r->tables_written))
    fprintf(f,
            "  unwind tables: %" PRIu64 " read from the cache, %" PRIu64 " compiled and written;"
            " symbols: %" PRIu64 " objects read from it, %" PRIu64 " written (%s)\n",
            r->tables_read, r->tables_written, r->symbols_read, r->symbols_written, r->disk_cache);
  if (r->anchor_walk_off)
    fprintf(f, "  walks from the Java caller of VM code: off (%s)\n", r->anchor_walk_off);
  if (r->handler_replaced)
    fprintf(f, "  SAMPLING STOPPED: the sampling signal's handler was replaced by someone else"
               " (choose another signal=)\n");
  fputc('\n', f);
}

/* The report's head: what was profiled and how; then every counter (counters.c's table), and
 * the breakdowns the table sums up. */
static void write_report(FILE *f, const struct agent_options *o, const struct sampler_report *r) {
  char ival[32], when[64];
  time_t now = time(NULL);
  struct tm tm;
  strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", localtime_r(&now, &tm));
  opt_format_duration(o->interval_ns, ival, sizeof ival);
  fprintf(f, "sampler %s profile of %s (pid %d), written %s\n",
          o->alloc  ? "allocation"
          : o->lock ? "lock"
          : o->wall ? "wall-clock"
                    : "CPU",
          program, (int)getpid(), when);
  if (o->lock) {
    const struct sampler_counters *n = &r->n;
    char thr[32];
    opt_format_duration(o->lock_ns, thr, sizeof thr);
    fprintf(f,
            "lock waits (contended synchronized, parks), weight ns blocked (estimated), threshold "
            "%s (shorter waits sampled), depth %d, recorded every %s\n",
            o->lock_ns ? thr : "0", o->depth, ival);
    fprintf(f,
            "%" PRIu64 " waits seen, %" PRIu64 " recorded, standing for %" PRIu64
            " ns blocked (estimated); lost: %" PRIu64 " waits (%" PRIu64
            " ns), kept under [sample lost]\n\n",
            n->lock_waits, n->lock_samples + n->lock_lost, n->lock_ns + n->lock_lost_ns,
            n->lock_lost, n->lock_lost_ns);
  } else if (o->alloc) {
    const struct sampler_counters *n = &r->n;
    fprintf(f,
            "allocation sampling interval %" PRIu64 " bytes (mean, JVMTI SampledObjectAlloc), "
            "weight bytes (estimated), depth %d, recorded every %s\n",
            o->alloc_bytes, o->depth, ival);
    fprintf(f,
            "%" PRIu64 " samples stand for %" PRIu64 " bytes in %" PRIu64
            " allocations (estimated); lost: %" PRIu64 " samples (%" PRIu64
            " bytes), kept under [sample lost]\n\n",
            n->alloc_samples + n->alloc_lost, n->alloc_bytes + n->alloc_lost_bytes,
            n->alloc_objects, n->alloc_lost, n->alloc_lost_bytes);
  } else {
    fprintf(f, "interval %s, hasrun %s, weight %s, depth %d, signal %s, is it running: %s\n\n",
            ival, hasrun_name(o->hasrun), o->weight == WEIGHT_CPU ? "cpu (ns)" : "samples",
            o->depth, o->sig_name, plat_thread_running_source());
  }
  counters_text(f, r);
  write_breakdowns(f, o, r);
}

static void write_hot(FILE *f, struct report_ctx *c, const char *what,
                      int (*cmp)(const void *, const void *), int self) {
  qsort(c->rows, c->nrows, sizeof *c->rows, cmp);
  fprintf(f, "Hot frames by %s\n  %8s %7s  %s\n", what,
          c->weight == WEIGHT_CPU || c->weight == WEIGHT_BLOCKED ? "ms"
          : c->weight == WEIGHT_BYTES                            ? "kB"
                                                                 : "samples",
          "%", "frame");
  for (size_t i = 0; i < c->nrows && i < 25; i++) {
    uint64_t v = self ? c->rows[i].self : c->rows[i].total;
    if (!v) break;
    if (c->weight != WEIGHT_SAMPLES)
      fprintf(f, "  %8.1f %6.2f%%  %s\n", (double)v / (c->weight == WEIGHT_BYTES ? 1024.0 : 1e6),
              pct(v, c->total), sampler_frame_name(c->rows[i].id));
    else
      fprintf(f, "  %8" PRIu64 " %6.2f%%  %s\n", v, pct(v, c->total),
              sampler_frame_name(c->rows[i].id));
  }
  fprintf(f, "\n");
}

static int write_text(FILE *f, const struct agent_options *o, const struct sampler_snapshot *s) {
  write_report(f, o, &s->report);
  struct report_ctx c = {o->weight, NULL, 0, 0, NULL, 0};
  /* frame ids are dense: size the tables by the ids in use (names added later are skipped) */
  c.nrows = sampler_frame_count();
  c.rows = calloc(c.nrows ? c.nrows : 1, sizeof *c.rows);
  c.mark = calloc(c.nrows ? c.nrows : 1, sizeof *c.mark);
  if (!c.rows || !c.mark) {
    free(c.rows);
    free(c.mark);
    return -ENOMEM;
  }
  for (size_t i = 0; i < c.nrows; i++) c.rows[i].id = (uint32_t)i;
  sampler_snapshot_foreach(s, report_trace, &c);
  fprintf(f, "Total: %" PRIu64 " %s in %zu distinct stacks\n\n", c.total,
          c.weight == WEIGHT_CPU       ? "ns of CPU"
          : c.weight == WEIGHT_BYTES   ? "bytes allocated (estimated)"
          : c.weight == WEIGHT_BLOCKED ? "ns blocked on locks (estimated)"
                                       : "samples",
          s->report.stacks);
  write_hot(f, &c, "self", by_self, 1);
  write_hot(f, &c, "total (inclusive)", by_total, 0);
  free(c.rows);
  free(c.mark);
  return 0;
}

/* A flame graph's page title and subtitle (fg_options points at them). */
struct graph_text {
  char title[600], sub[256];
};

/* The flame graph of s (one event's) as o says, into *g (g->p to fg_profile_free), and the
 * options to draw it with, their strings in *t. 0 or -ENOMEM (nothing to free then). */
static int graph_of(const struct agent_options *o, const struct sampler_snapshot *s,
                    struct graph *g, fg_options *fo, struct graph_text *t) {
  int rc = 0;
  uint32_t *node_of = NULL; /* the HTML's time axis: stack -> graph frame */
  memset(g, 0, sizeof *g);
  if (o->format == FORMAT_HTML && s->time.cell_ns) {
    node_of = malloc((s->n ? s->n : 1) * sizeof *node_of);
    if (node_of)
      memset(node_of, 0xff, (s->n ? s->n : 1) * sizeof *node_of);
    else
      rc = -ENOMEM;
  }
  if (!rc) rc = build_graph(s, o->weight, g, node_of);
  if (!rc && node_of) rc = add_time(s, o->weight, g, node_of);
  free(node_of);
  if (rc) {
    if (g->p) fg_profile_free(g->p);
    g->p = NULL;
    return rc;
  }
  const struct sampler_report *r = &s->report;
  char ival[32], captures[32], total[32], weighed[64] = "";
  fg_options_init(fo);
  opt_format_duration(o->interval_ns, ival, sizeof ival);
  snprintf(t->title, sizeof t->title, "%s profile: %s",
           o->alloc  ? "Allocation"
           : o->lock ? "Lock (time blocked)"
           : o->wall ? "Wall-clock"
                     : "CPU",
           program);
  grouped(o->alloc  ? r->n.alloc_samples
          : o->lock ? r->n.lock_samples
                    : r->n.samples,
          captures, sizeof captures);
  grouped(g->total, total, sizeof total);
  /* the page shows its total after the subtitle ("... · 5,012 samples"); the SVG has
   * none, so its subtitle says it */
  if (o->format == FORMAT_SVG)
    snprintf(weighed, sizeof weighed, "%s %s from ", total,
             o->weight == WEIGHT_CPU       ? "ns of CPU"
             : o->weight == WEIGHT_BYTES   ? "bytes"
             : o->weight == WEIGHT_BLOCKED ? "ns blocked"
                                           : "samples");
  if (o->lock) {
    char thr[32];
    opt_format_duration(o->lock_ns, thr, sizeof thr);
    snprintf(t->sub, sizeof t->sub,
             "sampler, pid %d, time blocked on locks (ns, estimated), waits under %s "
             "sampled, %s%s waits recorded",
             (int)getpid(), o->lock_ns ? thr : "0", weighed, captures);
  } else if (o->alloc)
    snprintf(t->sub, sizeof t->sub,
             "sampler, pid %d, allocations sampled every %" PRIu64
             " bytes on average, %s%s samples (bytes estimated)",
             (int)getpid(), o->alloc_bytes, weighed, captures);
  else
    snprintf(t->sub, sizeof t->sub, "sampler, pid %d, interval %s, hasrun %s, %s%s captures",
             (int)getpid(), ival, hasrun_name(o->hasrun), weighed, captures);
  fo->title = t->title;
  fo->subtitle = t->sub;
  fo->count_name = unit_of(o->weight);
  fo->palette = FG_PAL_JAVA;
  return 0;
}

/* What the user is told of a flame graph drawn with stacks cut (of `stacks` in all), into
 * err (appended after what is there); nothing when none was. */
static void cut_note(const struct graph *g, const char *path, size_t stacks, char *err,
                     size_t errlen) {
  size_t used = errlen ? strlen(err) : 0;
  if (!g->cut_stacks || used + 2 >= errlen) return;
  snprintf(err + used, errlen - used,
           "%s%s: %zu of %zu stacks (%.1f%% of the weight) drawn cut under \"%s\": a flame "
           "graph holds at most %zu frames; the folded format keeps them all",
           used ? "; " : "", path, g->cut_stacks, stacks,
           100.0 * (double)g->cut_weight / (double)g->total, OUTPUT_CUT_FRAME, max_nodes);
}

/* The part of s of event kind `kind`: its stacks (renumbered) and their time entries; the rest
 * (frames, threads, marks, the report) shared with s. Free with free_event_view. 0 or -ENOMEM. */
static int event_view(const struct sampler_snapshot *s, int kind, struct sampler_snapshot *v) {
  *v = *s;
  v->stacks = malloc((s->n ? s->n : 1) * sizeof *v->stacks);
  uint32_t *index = malloc((s->n ? s->n : 1) * sizeof *index);
  v->time.entries = malloc((s->time.n ? s->time.n : 1) * sizeof *v->time.entries);
  if (!v->stacks || !index || !v->time.entries) {
    free(v->stacks);
    free(index);
    free(v->time.entries);
    return -ENOMEM;
  }
  v->n = 0;
  for (size_t i = 0; i < s->n; i++) {
    index[i] = UINT32_MAX;
    if (s->stacks[i].kind != kind) continue;
    index[i] = (uint32_t)v->n;
    v->stacks[v->n++] = s->stacks[i];
  }
  v->time.n = 0;
  for (size_t i = 0; i < s->time.n; i++) {
    const struct sampler_time_entry *e = &s->time.entries[i];
    if (e->stack >= s->n || index[e->stack] == UINT32_MAX) continue;
    v->time.entries[v->time.n] = *e;
    v->time.entries[v->time.n++].stack = index[e->stack];
  }
  v->report.stacks = v->n;
  v->report.events = 1u << kind;
  free(index);
  return 0;
}

static void free_event_view(struct sampler_snapshot *v) {
  free(v->stacks);
  free(v->time.entries);
}

/* Several events in one page (html without %e): each event's flame graph, function table and
 * heat map, chosen by the page's event selector. */
static int write_events_page(FILE *f, const struct agent_options *o, const char *path,
                             const struct sampler_snapshot *s, char *err, size_t errlen) {
  int rc = 0;
  unsigned ev = opt_events(o);
  struct graph g[SAMPLER_EVENTS];
  fg_options fo[SAMPLER_EVENTS];
  struct graph_text t[SAMPLER_EVENTS];
  const fg_profile *ps[SAMPLER_EVENTS];
  const char *names[SAMPLER_EVENTS];
  size_t n = 0;
  for (int k = 0; k < SAMPLER_EVENTS && !rc; k++) {
    if (!(ev & 1u << k)) continue;
    struct agent_options one;
    struct sampler_snapshot v;
    opt_for_event(o, k, &one);
    rc = event_view(s, k, &v);
    if (rc) break;
    rc = graph_of(&one, &v, &g[n], &fo[n], &t[n]);
    free_event_view(&v);
    if (rc) break;
    cut_note(&g[n], path, v.n, err, errlen);
    ps[n] = g[n].p;
    names[n++] = opt_event_name(k);
  }
  if (!rc) rc = fg_write_html_events(f, ps, fo, names, n);
  for (size_t i = 0; i < n; i++) fg_profile_free(g[i].p);
  return rc;
}

/* Writes s to path in o's format (the events o has: one, except for pprof, jfr and an html
 * page). */
static int write_one(const struct agent_options *o, const char *path,
                     const struct sampler_snapshot *s, char *err, size_t errlen) {
  struct commit_file of;
  int rc = commit_open(path, &of);
  if (rc) {
    snprintf(err, errlen, "cannot write %s: %s", path, strerror(-rc));
    return rc;
  }
  if (errlen) err[0] = '\0';
  FILE *f = of.f;
  if (o->format == FORMAT_TEXT) {
    rc = write_text(f, o, s);
  } else if (o->format == FORMAT_PPROF) {
    char ival[32], comment[256];
    opt_format_duration(o->interval_ns, ival, sizeof ival);
    unsigned ev = opt_events(o);
    if (ev & (ev - 1)) {
      char names[64];
      opt_event_names(ev, ", ", names, sizeof names);
      snprintf(comment, sizeof comment,
               "sampler, pid %d, events %s: interval %s, alloc %" PRIu64 " bytes, lock %" PRIu64
               " ns",
               (int)getpid(), names, ival, o->alloc_bytes, o->lock_ns);
    } else if (o->alloc)
      snprintf(comment, sizeof comment,
               "sampler, pid %d, allocations sampled every %" PRIu64 " bytes on average",
               (int)getpid(), o->alloc_bytes);
    else if (o->lock)
      snprintf(comment, sizeof comment,
               "sampler, pid %d, lock waits, those under %" PRIu64 " ns sampled", (int)getpid(),
               o->lock_ns);
    else
      snprintf(comment, sizeof comment, "sampler, pid %d, interval %s, hasrun %s", (int)getpid(),
               ival, hasrun_name(o->hasrun));
    struct pprof_info info = {o->interval_ns, o->threads, o->wall,
                              comment,        program,    o->alloc ? o->alloc_bytes : 0,
                              o->lock,        o->lock_ns, o->clock};
    rc = pprof_write(f, &info, s);
  } else if (o->format == FORMAT_JFR) {
    char ival[32];
    opt_format_duration(o->interval_ns, ival, sizeof ival);
    char thr[32];
    opt_format_duration(o->lock_ns, thr, sizeof thr);
    struct jfr_profile_info info = {o->wall,
                                    ival,
                                    hasrun_name(o->hasrun),
                                    program,
                                    o->alloc ? o->alloc_bytes : 0,
                                    o->lock,
                                    o->lock_ns ? thr : "0",
                                    o->clock,
                                    o->ann};
    rc = jfr_profile_write(f, &info, s);
  } else if (o->format == FORMAT_FOLDED) {
    rc = write_folded(f, s, o->weight);
  } else if (o->format == FORMAT_HTML && (opt_events(o) & (opt_events(o) - 1))) {
    rc = write_events_page(f, o, path, s, err, errlen);
  } else {
    struct graph g;
    fg_options fo;
    struct graph_text t;
    rc = graph_of(o, s, &g, &fo, &t);
    if (!rc) {
      rc = o->format == FORMAT_SVG ? fg_write_svg(f, g.p, &fo) : fg_write_html(f, g.p, &fo);
      cut_note(&g, path, s->report.stacks, err, errlen); /* said by the caller once written */
      fg_profile_free(g.p);
    }
  }
  rc = commit_close(&of, path, rc);
  if (rc) {
    snprintf(err, errlen, "cannot write %s: %s", path, strerror(-rc));
    return rc;
  }
  return 0;
}

/* path with each %e as `name` into out[len]. 0 or -ENAMETOOLONG. */
static int event_path(const char *path, const char *name, char *out, size_t len) {
  size_t n = 0, l = strlen(name);
  for (const char *p = path; *p; p++) {
    const char *add = p;
    size_t k = 1;
    if (p[0] == '%' && p[1] == 'e') add = name, k = l, p++;
    if (n + k >= len) return -ENAMETOOLONG;
    memcpy(out + n, add, k);
    n += k;
  }
  out[n] = '\0';
  return 0;
}

/* A profile of several events: one file each for the formats of one event (their names from
 * %e, which settle() made sure of; html without %e: one page with all), else one file with
 * all; %e says which events. */
int output_write(const struct agent_options *o, const char *path, const struct sampler_snapshot *s,
                 char *err, size_t errlen) {
  unsigned ev = opt_events(o);
  char file[OPT_FILE_MAX], names[64];
  int several = (ev & (ev - 1)) && o->format != FORMAT_PPROF && o->format != FORMAT_JFR;
  if (several && o->format == FORMAT_HTML && !opt_names_events(path))
    several = 0; /* one page, with an event selector */
  if (!several) {
    opt_event_names(ev, "+", names, sizeof names);
    if (event_path(path, names, file, sizeof file)) {
      snprintf(err, errlen, "cannot write %s: %s", path, strerror(ENAMETOOLONG));
      return -ENAMETOOLONG;
    }
    return write_one(o, file, s, err, errlen);
  }
  if (errlen) err[0] = '\0';
  for (int k = 0; k < SAMPLER_EVENTS; k++) {
    if (!(ev & 1u << k)) continue;
    struct agent_options one;
    struct sampler_snapshot v;
    char note[OPT_FILE_MAX + 256];
    opt_for_event(o, k, &one);
    int rc = event_path(path, opt_event_name(k), file, sizeof file);
    if (rc) {
      snprintf(err, errlen, "cannot write %s: %s", path, strerror(-rc));
      return rc;
    }
    rc = event_view(s, k, &v);
    if (rc) {
      snprintf(err, errlen, "cannot write %s: %s", file, strerror(-rc));
      return rc;
    }
    rc = write_one(&one, file, &v, note, sizeof note);
    free_event_view(&v);
    if (rc) {
      snprintf(err, errlen, "%s", note);
      return rc;
    }
    size_t used = strlen(err); /* the notes on each file, one after the other */
    if (note[0] && used + 2 < errlen)
      snprintf(err + used, errlen - used, "%s%s", used ? "; " : "", note);
  }
  return 0;
}

/* The stats as JSON to o->stats, whole or not at all (output.h). Returns 0 or a negative errno. */
int output_write_stats(const struct agent_options *o, const char *path,
                       const struct sampler_report *r, char *err, size_t errlen) {
  struct commit_file cf;
  int rc = commit_open(o->stats, &cf);
  if (!rc) rc = commit_close(&cf, o->stats, counters_json(cf.f, o, path, r));
  if (rc) snprintf(err, errlen, "stats=%s: cannot be written: %s", o->stats, strerror(-rc));
  return rc;
}

/* The probe at start of file= and stats= (output.h). Returns 0 or a negative errno. */
int output_check_writable(const struct agent_options *o, char *err, size_t errlen) {
  int rc = commit_check_writable(o->file, "file", err, errlen);
  if (!rc && *o->stats) rc = commit_check_writable(o->stats, "stats", err, errlen);
  return rc;
}
