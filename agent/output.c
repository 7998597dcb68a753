/*
 * output.c — the profile on disk (see output.h), committed whole through commit.c. Runs at VM death, on kill -3, or when
 * `duration` ends, on whichever thread that is; the tables are read under traces_lock and
 * copied into a flamegraph profile, so the file is written without holding the lock.
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
#include "flamegraph.h"
#include "platform.h"
#include "pprof.h"
#include "sampler.h"
#include "utf8.h"

static char program[512] = "java";

void output_set_program(const char *p) {
  if (!p || !*p) return;
  utf8_name(p, strlen(p), program, sizeof program); /* JVMTI's modified UTF-8: a name entering */
}

/* Checks the profile's file at start (output.h), through commit.c's probe. */
int output_check_writable(const struct agent_options *o, char *err, size_t errlen) {
  return commit_check_writable(o->file, "file", err, errlen);
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

static uint64_t stack_weight(int weight, const struct sampler_stack *t) {
  return weight == WEIGHT_CPU ? t->cpu_ns : t->units;
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

/* Builds the flame graph of s into g (within OUTPUT_MAX_NODES frames). Returns 0 or -ENOMEM. */
static int build_graph(const struct sampler_snapshot *s, int weight, struct graph *g) {
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
    rc = fg_profile_add_capped(g->p, frames, (size_t)t->n, w, max_nodes, OUTPUT_CUT_FRAME);
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
  return c->weight == WEIGHT_CPU ? t->cpu_ns : t->units;
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

static double us(uint64_t ns) { return (double)ns / 1000.0; }

static double ms(uint64_t ns) { return (double)ns / 1e6; }

static const char *hasrun_name(int h) {
  return h == SAMPLER_HASRUN_CPU ? "cpu" : h == SAMPLER_HASRUN_REGS ? "regs" : "auto";
}

static void write_report(FILE *f, const struct agent_options *o, const struct sampler_report *r) {
  const struct sampler_counters *n = &r->n;
  char ival[32], when[64];
  time_t now = time(NULL);
  struct tm tm;
  strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", localtime_r(&now, &tm));
  opt_format_duration(o->interval_ns, ival, sizeof ival);
  fprintf(f, "sampler %s profile of %s (pid %d), written %s\n", o->wall ? "wall-clock" : "CPU",
          program, (int)getpid(), when);
  fprintf(f, "interval %s, hasrun %s, weight %s, depth %d, signal %s\n\n", ival,
          hasrun_name(o->hasrun), o->weight == WEIGHT_CPU ? "cpu (ns)" : "samples", o->depth,
          o->sig_name);

  fprintf(f, "Sampling\n");
  fprintf(f,
          "  time sampled          %.3f s in %" PRIu64 " rounds (%" PRIu64 " skipped as overrun)\n",
          (double)n->wall_ns / 1e9, n->ticks, n->overruns);
  fprintf(f, "  threads               %d registered in all, %d live now\n", r->threads_registered,
          r->threads_live);
  if (o->wall)
    fprintf(f,
            "  samples               %" PRIu64 " (one per %s per thread, running or not; %" PRIu64
            " of them given again without a signal: the thread had not run)\n",
            n->units, ival, n->wall_reused);
  else
    fprintf(f, "  samples               %" PRIu64 " (one per %s of a thread's CPU%s)\n", n->units,
            ival, o->hasrun == SAMPLER_HASRUN_REGS ? "; regs: one per capture" : "");
  fprintf(f, "  captures              %" PRIu64 " (stacks taken by the signal handler)\n",
          n->samples);
  fprintf(f, "  CPU time attributed   %.3f s\n", (double)n->cpu_ns / 1e9);
  fprintf(f, "  found blocked         %" PRIu64 " captures (kept with a %s leaf)\n", n->blocked,
          o->wall ? "state" : "[cpu before wait]");
  if (o->hasrun == SAMPLER_HASRUN_REGS)
    fprintf(f, "  coverage              n/a (hasrun=regs measures no CPU time)\n\n");
  else
    fprintf(
        f,
        "  coverage              %.1f%% of the process's CPU (%.3f s) is in the profile (%.1f points of it with "
        "no frame walked: [sample lost], [not sampled: signal blocked], failure frames; %.1f the sampler thread's own); not seen %.1f%% "
        "(threads not sampled, CPU not yet due a sample, the cost of our signals)\n\n",
        r->coverage_permille / 10.0, (double)n->process_cpu_ns / 1e9, r->lost_permille / 10.0,
        r->sampler_permille / 10.0, r->unseen_permille / 10.0);

  fprintf(f, "ThreadHasRun evidence\n");
  fprintf(f, "  CPU clock reads       %" PRIu64 "\n", n->looks);
  fprintf(f, "  not run (CPU clock)   %" PRIu64 " thread-rounds\n", n->skipped_cpu);
  fprintf(f, "  not looked at (idle back-off) %" PRIu64 " thread-rounds\n", n->skipped_idle);
  fprintf(f,
          "  not looked at (in a VM wait: park, wait, sleep, monitor) %" PRIu64 " thread-rounds\n",
          n->skipped_waiting);
  fprintf(f, "  not run (registers)   %" PRIu64 " requests\n", n->skipped_regs);
  fprintf(f, "  due, waiting for the thread to run %" PRIu64 " thread-rounds\n", n->deferred);
  fprintf(f,
          "  is it running?        asked %" PRIu64 " times: %" PRIu64
          " answered by the Java thread's state, the rest by /proc (%s)\n",
          n->running_asked, n->running_jvm, plat_thread_running_source());
  fprintf(f,
          "  due when the thread ended %" PRIu64 " samples (on the last stack it was caught in)\n",
          n->ended_units);
  fprintf(f,
          "  ended before sampled  %" PRIu64 " samples of %" PRIu64
          " threads (the CPU they used before they ended: [thread ended before it was sampled])\n",
          n->unsampled_units, n->unsampled_threads);
  fprintf(f, "  ambiguous CPU         %.3f ms kept, %.3f ms dropped (registers unchanged)\n",
          ms(n->ambiguous_kept_ns), ms(n->ambiguous_dropped_ns));
  fprintf(f, "  CPU clock errors      %" PRIu64 "\n\n", n->clock_errors);

  fprintf(f, "Threads and native frames\n");
  fprintf(f,
          "  threads found in /proc (the JVM's own) %" PRIu64 " in %" PRIu64
          " listings, not sampled (registry full) %" PRIu64 ", ended and dropped %" PRIu64 "\n",
          n->threads_found, n->thread_listings, n->threads_refused, n->threads_gone);
  fprintf(f, "  captures of threads without Java frames %" PRIu64 "\n", n->jvm_thread_samples);
  if (!o->cstack) {
    fprintf(f, "  native frames         off (cstack=no)\n\n");
  } else {
    static const char *const how[] = {"reached Java code",
                                      "reached the thread's start",
                                      "met an unknown pc",
                                      "no unwind info",
                                      "unreadable frame",
                                      "too deep",
                                      "unwinder error",
                                      "not walked",
                                      "fault"};
    fprintf(f, "  native frames         %" PRIu64 "; walks ended:", n->native_frames);
    for (int i = 0; i < (int)(sizeof how / sizeof *how); i++)
      if (n->native_stops[i]) fprintf(f, " %s %" PRIu64 ";", how[i], n->native_stops[i]);
    uint64_t walks = 0;
    for (int i = 0; i < (int)(sizeof how / sizeof *how); i++) walks += n->native_stops[i];
    fprintf(f,
            "\n  walked by libunwind    %" PRIu64
            " (%.2f%%; the rest through the compiled unwind tables)\n\n",
            n->native_general, pct(n->native_general, walks));
  }

  fprintf(f, "AsyncGetCallTrace\n");
  fprintf(f, "  ok                    %" PRIu64 " (%.2f%%)\n", n->asgct[0],
          pct(n->asgct[0], n->asgct[0] + r->asgct_failed));
  for (int i = 1; i <= ASGCT_NCODES; i++)
    if (n->asgct[i])
      fprintf(f, "  %-21s %" PRIu64 " (code %d)\n", asgct_code_frame(1 - i), n->asgct[i], 1 - i);
  fprintf(f, "  of the failures, through the compiled-code map:\n");
  fprintf(f, "    walked from the Java caller of the stub the PC was in  %" PRIu64 "\n",
          n->recovered_stub);
  if (r->anchor_walk_off)
    fprintf(f, "    walked from the Java caller of VM code: off (%s)\n", r->anchor_walk_off);
  else
    fprintf(f, "    walked from the Java caller of VM code (frame anchor)  %" PRIu64 "\n",
            n->recovered_anchor);
  fprintf(f, "    attributed to the compiled method (and inline chain)   %" PRIu64 "\n",
          n->attributed_code);
  fprintf(f, "    given the frames of the last walk in the same VM call   %" PRIu64 "\n",
          n->recovered_same_call);
  fprintf(f, "    walked from the Java caller of a leaf native call       %" PRIu64 "\n",
          n->recovered_native);
  fprintf(f, "    stub named, callers not walked                         %" PRIu64 "\n",
          n->named_stub);
  fprintf(f, "    left under their failure frame                         %" PRIu64 "\n",
          r->failed_kept);
  fprintf(f,
          "  walks that skipped the Java caller of a leaf native call, walked again  %" PRIu64 "\n",
          n->rewalked_native);
  fprintf(f, "\n");

  fprintf(f, "Signals and losses\n");
  fprintf(f, "  signals sent          %" PRIu64 "\n", n->requests);
  if (n->timer_requests || n->timers_refused)
    fprintf(f,
            "  left to CPU-time timers %" PRIu64
            " requests of busy threads (answered at a tick: %" PRIu64
            "; signalled after two ticks without an answer: %" PRIu64
            "; their thread ended first: %" PRIu64
            "; threads whose timer could not be made: %" PRIu64 ")\n",
            n->timer_requests, n->timer_samples, n->timer_fallbacks, n->timer_ended,
            n->timers_refused);
  fprintf(f,
          "  not sent (thread gone, queue full) %" PRIu64 ", their %" PRIu64
          " samples kept under [sample lost]\n",
          n->lost_send, n->lost_units);
  fprintf(f,
          "  answered late         %" PRIu64 " (not by the next round; recorded when they came)\n",
          n->late);
  fprintf(f,
          "  never answered        %" PRIu64 " (withdrawn: %" PRIu64
          " after 1 s while sampling — the signal lost or blocked —, the rest at the end; their"
          " samples kept under [sample lost])\n",
          n->unanswered, n->timed_out);
  fprintf(f,
          "  not signalled         %" PRIu64
          " requests: the thread blocks the sampling signal or has one pending (found %" PRIu64
          " times); their %" PRIu64 " samples kept under [not sampled: signal blocked]\n",
          n->sig_withheld, n->sig_blocked_threads, n->sig_blocked_units);
  if (r->handler_replaced)
    fprintf(f, "  SAMPLING STOPPED      the sampling signal's handler was replaced by someone else"
               " (choose another signal=)\n");
  fprintf(f, "  still open, skipped   %" PRIu64 " thread-rounds\n", n->outstanding);
  fprintf(f, "  tables                %zu stacks, %zu names, %zu cached frame keys: %.1f MB\n",
          r->stacks, r->names, r->keys, (double)r->table_bytes / 1048576.0);
  fprintf(f,
          "  stacks not kept       %" PRIu64 " (the stack table full: %" PRIu64
          "; the rest no memory): kept under [stack not kept: table full]\n",
          n->store_failed, n->stacks_refused);
  fprintf(f,
          "  names not kept        %" PRIu64 " (the name table full: [name not kept: table full]);"
          " frame key cache emptied %" PRIu64 " times (full), %" PRIu64
          " keys of unloaded methods dropped\n",
          n->names_refused, n->keys_refused, n->keys_unloaded);
  fprintf(f,
          "  faults contained      %" PRIu64
          " (a SIGSEGV/SIGBUS during a sample: kept as [fault during sample]; %" PRIu64
          " cut a native walk, each may leave one libunwind pool object); %" PRIu64
          " left to the JVM (its own probes in AsyncGetCallTrace); %" PRIu64
          " walks or reads skipped (every fault guard taken)\n",
          r->faults, r->native_cut, r->vm_handled, r->guard_full);
  fprintf(f,
          "  handler: %" PRIu64 " answered, %" PRIu64 " stray (ours, nothing pending), %" PRIu64
          " from elsewhere (ignored), %" PRIu64 " on a wrong thread, %" PRIu64
          " anchor walks refused (the JNIEnv named another thread's JavaThread)\n\n",
          r->handler_acks, r->handler_stray, r->handler_foreign, r->handler_wrong_tid,
          r->anchor_refused);

  fprintf(f, "Cost\n");
  fprintf(f, "  one capture (handler) median %.1f us, p99 %.1f us, max %.1f us\n",
          us(r->cost_median_ns), us(r->cost_p99_ns), us(r->cost_max_ns));
  fprintf(f, "  its native walk       median %.1f us, p99 %.1f us (captures with native frames)\n",
          us(r->native_median_ns), us(r->native_p99_ns));
  fprintf(f, "  signal -> handler     median %.1f us, p99 %.1f us\n", us(r->latency_median_ns),
          us(r->latency_p99_ns));
  fprintf(
      f,
      "  sampler thread CPU    %.3f ms (%.2f%% of one core); per round median %.1f us, p99 %.1f us\n",
      ms(n->sampler_cpu_ns), pct(n->sampler_cpu_ns, n->wall_ns), us(r->round_median_ns),
      us(r->round_p99_ns));
  fprintf(f,
          "  /proc status reads    %" PRIu64
          ", %.3f ms (does a thread block the sampling signal?)\n",
          n->sig_checks, ms(n->sig_check_ns));
  fprintf(f,
          "  the agent's own CPU   %.3f ms (the sampler thread, and the handler %.3f ms in %" PRIu64
          " captures): %.2f%% of the process's CPU; not in it: the kernel's delivery of our"
          " signals and timers\n\n",
          ms(r->own_cpu_ns), ms(n->handler_ns), n->samples, pct(r->own_cpu_ns, n->process_cpu_ns));
}

static void write_hot(FILE *f, struct report_ctx *c, const char *what,
                      int (*cmp)(const void *, const void *), int self) {
  qsort(c->rows, c->nrows, sizeof *c->rows, cmp);
  fprintf(f, "Hot frames by %s\n  %8s %7s  %s\n", what, c->weight == WEIGHT_CPU ? "ms" : "samples",
          "%", "frame");
  for (size_t i = 0; i < c->nrows && i < 25; i++) {
    uint64_t v = self ? c->rows[i].self : c->rows[i].total;
    if (!v) break;
    if (c->weight == WEIGHT_CPU)
      fprintf(f, "  %8.1f %6.2f%%  %s\n", (double)v / 1e6, pct(v, c->total),
              sampler_frame_name(c->rows[i].id));
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
          c.weight == WEIGHT_CPU ? "ns of CPU" : "samples", s->report.stacks);
  write_hot(f, &c, "self", by_self, 1);
  write_hot(f, &c, "total (inclusive)", by_total, 0);
  free(c.rows);
  free(c.mark);
  return 0;
}

int output_write(const struct agent_options *o, const char *path, const struct sampler_snapshot *s,
                 char *err, size_t errlen) {
  struct commit_file of;
  int rc = commit_open(path, &of);
  if (rc) {
    snprintf(err, errlen, "cannot write %s: %s", path, strerror(-rc));
    return rc;
  }
  FILE *f = of.f;
  if (o->format == FORMAT_TEXT) {
    rc = write_text(f, o, s);
  } else if (o->format == FORMAT_PPROF) {
    char ival[32], comment[128];
    opt_format_duration(o->interval_ns, ival, sizeof ival);
    snprintf(comment, sizeof comment, "sampler, pid %d, interval %s, hasrun %s", (int)getpid(),
             ival, hasrun_name(o->hasrun));
    struct pprof_info info = {o->interval_ns, o->threads, o->wall, comment, program};
    rc = pprof_write(f, &info, s);
  } else if (o->format == FORMAT_FOLDED) {
    rc = write_folded(f, s, o->weight);
  } else {
    struct graph g;
    rc = build_graph(s, o->weight, &g);
    if (!rc) {
      const struct sampler_report *r = &s->report;
      fg_options fo;
      char title[600], sub[256], ival[32], captures[32], total[32], weighed[64] = "";
      fg_options_init(&fo);
      opt_format_duration(o->interval_ns, ival, sizeof ival);
      snprintf(title, sizeof title, "%s profile: %s", o->wall ? "Wall-clock" : "CPU", program);
      grouped(r->n.samples, captures, sizeof captures);
      grouped(g.total, total, sizeof total);
      /* the page shows its total after the subtitle ("... · 5,012 samples"); the SVG has
       * none, so its subtitle says it */
      if (o->format == FORMAT_SVG)
        snprintf(weighed, sizeof weighed, "%s %s from ", total,
                 o->weight == WEIGHT_CPU ? "ns of CPU" : "samples");
      snprintf(sub, sizeof sub, "sampler, pid %d, interval %s, hasrun %s, %s%s captures",
               (int)getpid(), ival, hasrun_name(o->hasrun), weighed, captures);
      fo.title = title;
      fo.subtitle = sub;
      fo.count_name = o->weight == WEIGHT_CPU ? "ns" : "samples";
      fo.palette = FG_PAL_JAVA;
      rc = o->format == FORMAT_SVG ? fg_write_svg(f, g.p, &fo) : fg_write_html(f, g.p, &fo);
      fg_profile_free(g.p);
      if (g.cut_stacks)
        fprintf(stderr,
                "[sampler] %s: %zu of %zu stacks (%.1f%% of the weight) drawn cut under \"%s\": "
                "a flame graph holds at most %zu frames; the folded format keeps them all\n",
                path, g.cut_stacks, r->stacks, 100.0 * (double)g.cut_weight / (double)g.total,
                OUTPUT_CUT_FRAME, max_nodes);
    }
  }
  rc = commit_close(&of, path, rc);
  if (rc) {
    snprintf(err, errlen, "cannot write %s: %s", path, strerror(-rc));
    return rc;
  }
  return 0;
}

void output_summary(FILE *out, const struct agent_options *o, const char *path,
                    const struct sampler_report *rp) {
  const struct sampler_report r = *rp;
  const struct sampler_counters *n = &r.n;
  fprintf(out,
          "[sampler] file=%s format=%s ticks=%" PRIu64 " overruns=%" PRIu64 " samples=%" PRIu64
          " captures=%" PRIu64 " cpu_ms=%.1f stacks=%zu requests=%" PRIu64 " skipped_cpu=%" PRIu64
          " skipped_idle=%" PRIu64 " skipped_regs=%" PRIu64 " deferred=%" PRIu64 " blocked=%" PRIu64
          " asgct_ok=%" PRIu64 " asgct_fail=%" PRIu64 " recovered=%" PRIu64 " lost=%" PRIu64
          " lost_samples=%" PRIu64 " late=%" PRIu64 " unanswered=%" PRIu64 " timed_out=%" PRIu64
          " outstanding=%" PRIu64
          " cost_median_us=%.1f cost_p99_us=%.1f native_median_us=%.1f native_p99_us=%.1f"
          " latency_median_us=%.1f sampler_cpu_ms=%.1f"
          " wall_s=%.3f threads=%d stray=%" PRIu64 " foreign=%" PRIu64 " native_frames=%" PRIu64
          " process_cpu_ms=%.1f coverage=%.1f faults=%" PRIu64 " not_kept=%" PRIu64
          " event=%s wall_reused=%" PRIu64 " tables_kb=%zu unsampled=%" PRIu64
          " unsampled_threads=%" PRIu64 " keys_unloaded=%" PRIu64 " running_asked=%" PRIu64
          " running_jvm=%" PRIu64 " skipped_waiting=%" PRIu64 " timer_requests=%" PRIu64
          " timer_samples=%" PRIu64 " timer_fallbacks=%" PRIu64 " timer_ended=%" PRIu64
          " timers_refused=%" PRIu64 " thread_listings=%" PRIu64
          " handler_ms=%.1f own_cpu_pct=%.2f clock_reads=%" PRIu64 " sig_withheld=%" PRIu64
          " sig_blocked=%" PRIu64 " sig_blocked_threads=%" PRIu64 " sig_checks=%" PRIu64 "\n",
          path, opt_format_name(o->format), n->ticks, n->overruns, n->units, n->samples,
          ms(n->cpu_ns), r.stacks, n->requests, n->skipped_cpu, n->skipped_idle, n->skipped_regs,
          n->deferred, n->blocked, n->asgct[0], r.asgct_failed, r.recovered, n->lost_send,
          n->lost_units, n->late, n->unanswered, n->timed_out, n->outstanding, us(r.cost_median_ns),
          us(r.cost_p99_ns), us(r.native_median_ns), us(r.native_p99_ns), us(r.latency_median_ns),
          ms(n->sampler_cpu_ns), (double)n->wall_ns / 1e9, r.threads_registered, r.handler_stray,
          r.handler_foreign, n->native_frames, ms(n->process_cpu_ns), r.coverage_permille / 10.0,
          r.faults, n->store_failed + n->names_refused, o->wall ? "wall" : "cpu", n->wall_reused,
          r.table_bytes / 1024, n->unsampled_units, n->unsampled_threads, n->keys_unloaded,
          n->running_asked, n->running_jvm, n->skipped_waiting, n->timer_requests, n->timer_samples,
          n->timer_fallbacks, n->timer_ended, n->timers_refused, n->thread_listings,
          ms(n->handler_ns), pct(r.own_cpu_ns, n->process_cpu_ns), n->looks, n->sig_withheld,
          n->sig_blocked_units, n->sig_blocked_threads, n->sig_checks);
  fflush(out);
}
