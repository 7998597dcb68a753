/*
 * output.c — the profile on disk (see output.h). Runs at VM death, on kill -3, or when
 * `duration` ends, on whichever thread that is; the tables are read under traces_lock and
 * copied into a flamegraph profile, so the file is written without holding the lock.
 */
#include "output.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "flamegraph.h"
#include "handler.h"
#include "registry.h"
#include "sampler.h"
#include "stats.h"
#include "traces.h"

static char program[512] = "java";

static const char *anchor_off = "not set up";

void output_set_anchor_walk(const char *why_not) { anchor_off = why_not; }

void output_set_program(const char *p) {
  if (!p || !*p) return;
  snprintf(program, sizeof program, "%s", p);
}

/* Creates a temporary file beside `path`; returns its FILE* and name in tmp, or NULL. */
static FILE *open_temp(const char *path, char *tmp, size_t len) {
  if ((size_t)snprintf(tmp, len, "%s.XXXXXX", path) >= len) {
    errno = ENAMETOOLONG;
    return NULL;
  }
  int fd = mkstemp(tmp);
  if (fd < 0) return NULL;
  fchmod(fd, 0644);
  FILE *f = fdopen(fd, "w");
  if (!f) {
    int e = errno;
    close(fd);
    unlink(tmp);
    errno = e;
  }
  return f;
}

int output_check_writable(const struct agent_options *o, char *err, size_t errlen) {
  char tmp[sizeof o->file + 16];
  FILE *f = open_temp(o->file, tmp, sizeof tmp);
  if (!f) {
    snprintf(err, errlen, "file=%s: cannot be written (a temporary file beside it could not be created: %s)",
             o->file, strerror(errno));
    return -1;
  }
  fclose(f);
  unlink(tmp);
  struct stat st;
  if (stat(o->file, &st) == 0 && S_ISDIR(st.st_mode)) {
    snprintf(err, errlen, "file=%s: is a directory", o->file);
    return -1;
  }
  return 0;
}

/* ---- profile -> flamegraph ---- */

struct build_ctx {
  fg_profile *p;
  int weight;
  const char **frames;
  int cap;
  int err;
};

static void add_trace(void *vctx, const struct trace_view *t) {
  struct build_ctx *c = vctx;
  uint64_t count = c->weight == WEIGHT_CPU ? t->cpu_ns : t->units;
  if (!count || c->err) return;
  if (t->n > c->cap) {
    const char **f = realloc(c->frames, (size_t)t->n * sizeof *f);
    if (!f) {
      c->err = -ENOMEM;
      return;
    }
    c->frames = f;
    c->cap = t->n;
  }
  for (int i = 0; i < t->n; i++) c->frames[i] = traces_str(t->frames[i]);
  c->err = fg_profile_add(c->p, c->frames, (size_t)t->n, count);
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
  const struct trace_view **top; /* heaviest stacks */
  uint64_t *topw;
  int ntop;
  uint32_t *mark; /* per frame id: last trace counted (for total, once per stack) */
  uint32_t serial;
};

static uint64_t view_weight(const struct report_ctx *c, const struct trace_view *t) {
  return c->weight == WEIGHT_CPU ? t->cpu_ns : t->units;
}

static void report_trace(void *vctx, const struct trace_view *t) {
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

static double pct(uint64_t part, uint64_t whole) { return whole ? 100.0 * (double)part / (double)whole : 0.0; }

static double us(uint64_t ns) { return (double)ns / 1000.0; }

static const char *hasrun_name(int h) {
  return h == SAMPLER_HASRUN_CPU ? "cpu" : h == SAMPLER_HASRUN_REGS ? "regs" : "auto";
}

static void write_report(FILE *f, const struct agent_options *o) {
  const struct sampler_stats *st = sampler_stats();
  char ival[32], when[64];
  time_t now = time(NULL);
  struct tm tm;
  strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", localtime_r(&now, &tm));
  opt_format_duration(o->interval_ns, ival, sizeof ival);
  fprintf(f, "sampler CPU profile of %s (pid %d), written %s\n", program, (int)getpid(), when);
  fprintf(f, "interval %s, hasrun %s, weight %s, depth %d, signal %s\n\n", ival, hasrun_name(o->hasrun),
          o->weight == WEIGHT_CPU ? "cpu (ns)" : "samples", o->depth, o->sig_name);

  fprintf(f, "Sampling\n");
  fprintf(f, "  time sampled          %.3f s in %" PRIu64 " rounds (%" PRIu64 " skipped as overrun)\n",
          (double)st->wall_ns / 1e9, st->ticks, st->overruns);
  fprintf(f, "  threads               %d registered in all, %d live now\n", registry_registered(), registry_live());
  fprintf(f, "  stacks captured       %" PRIu64 "\n", st->samples);
  fprintf(f, "  cost units written    %" PRIu64 " (one per %s of CPU%s)\n", st->units, ival,
          o->hasrun == SAMPLER_HASRUN_REGS ? "; regs: one per stack captured" : "");
  fprintf(f, "  CPU time attributed   %.3f s\n", (double)st->cpu_ns / 1e9);
  fprintf(f, "  found blocked         %" PRIu64 " captures (kept with a [cpu before wait] leaf)\n\n", st->blocked);

  fprintf(f, "ThreadHasRun evidence\n");
  fprintf(f, "  CPU clock reads       %" PRIu64 "\n", st->looks);
  fprintf(f, "  not run (CPU clock)   %" PRIu64 " thread-rounds\n", st->skipped_cpu);
  fprintf(f, "  not looked at (idle back-off) %" PRIu64 " thread-rounds\n", st->skipped_idle);
  fprintf(f, "  not run (registers)   %" PRIu64 " requests\n", st->skipped_regs);
  fprintf(f, "  due, waiting for the thread to run %" PRIu64 " thread-rounds\n", st->deferred);
  fprintf(f, "  ambiguous CPU         %.3f ms kept, %.3f ms dropped (registers unchanged)\n",
          (double)st->ambiguous_kept_ns / 1e6, (double)st->ambiguous_dropped_ns / 1e6);
  fprintf(f, "  CPU clock errors      %" PRIu64 "\n\n", st->clock_errors);

  uint64_t fails = 0;
  for (int i = 1; i <= ASGCT_NCODES; i++) fails += st->asgct[i];
  fprintf(f, "AsyncGetCallTrace\n");
  fprintf(f, "  ok                    %" PRIu64 " (%.2f%%)\n", st->asgct[0], pct(st->asgct[0], st->asgct[0] + fails));
  for (int i = 1; i <= ASGCT_NCODES; i++)
    if (st->asgct[i])
      fprintf(f, "  %-21s %" PRIu64 " (code %d)\n", asgct_code_frame(1 - i), st->asgct[i], 1 - i);
  fprintf(f, "  of the failures, through the compiled-code map:\n");
  fprintf(f, "    walked from the Java caller of the stub the PC was in  %" PRIu64 "\n", st->recovered_stub);
  if (anchor_off)
    fprintf(f, "    walked from the Java caller of VM code: off (%s)\n", anchor_off);
  else
    fprintf(f, "    walked from the Java caller of VM code (frame anchor)  %" PRIu64 "\n", st->recovered_anchor);
  fprintf(f, "    attributed to the compiled method (and inline chain)   %" PRIu64 "\n", st->attributed_code);
  fprintf(f, "    stub named, callers not walked                         %" PRIu64 "\n", st->named_stub);
  fprintf(f, "    left under their failure frame                         %" PRIu64 "\n",
          fails - st->recovered_stub - st->recovered_anchor - st->attributed_code - st->named_stub);
  fprintf(f, "\n");

  fprintf(f, "Signals and losses\n");
  fprintf(f, "  signals sent          %" PRIu64 "\n", st->requests);
  fprintf(f, "  not sent (thread gone, queue full) %" PRIu64 ", their %" PRIu64 " units kept under [sample lost]\n",
          st->lost_send, st->lost_units);
  fprintf(f, "  answered late         %" PRIu64 " (not by the next round; recorded when they came)\n", st->late);
  fprintf(f, "  never answered        %" PRIu64 " (at the end; their units kept under [sample lost])\n", st->unanswered);
  fprintf(f, "  still open, skipped   %" PRIu64 " thread-rounds\n", st->outstanding);
  fprintf(f, "  not stored (no memory) %" PRIu64 "\n", st->store_failed);
  const struct handler_counters *hc = handler_counters();
  fprintf(f, "  handler: %" PRIu64 " answered, %" PRIu64 " stray (ours, nothing pending), %" PRIu64
             " from elsewhere (ignored), %" PRIu64 " on a wrong thread\n\n",
          atomic_load(&hc->acks), atomic_load(&hc->stray), atomic_load(&hc->foreign), atomic_load(&hc->wrong_tid));

  fprintf(f, "Cost\n");
  fprintf(f, "  one sample (handler)  median %.1f us, p99 %.1f us, max %.1f us\n", us(hist_quantile(&st->cost, 0.5)),
          us(hist_quantile(&st->cost, 0.99)), us(st->cost.max));
  fprintf(f, "  signal -> handler     median %.1f us, p99 %.1f us\n", us(hist_quantile(&st->latency, 0.5)),
          us(hist_quantile(&st->latency, 0.99)));
  fprintf(f, "  sampler thread CPU    %.3f ms (%.2f%% of one core); per round median %.1f us, p99 %.1f us\n\n",
          (double)st->sampler_cpu_ns / 1e6, pct(st->sampler_cpu_ns, st->wall_ns), us(hist_quantile(&st->tick_cost, 0.5)),
          us(hist_quantile(&st->tick_cost, 0.99)));
}

static void write_hot(FILE *f, struct report_ctx *c, const char *what, int (*cmp)(const void *, const void *), int self) {
  qsort(c->rows, c->nrows, sizeof *c->rows, cmp);
  fprintf(f, "Hot frames by %s\n  %8s %7s  %s\n", what, c->weight == WEIGHT_CPU ? "ms" : "samples", "%", "frame");
  for (size_t i = 0; i < c->nrows && i < 25; i++) {
    uint64_t v = self ? c->rows[i].self : c->rows[i].total;
    if (!v) break;
    if (c->weight == WEIGHT_CPU)
      fprintf(f, "  %8.1f %6.2f%%  %s\n", (double)v / 1e6, pct(v, c->total), traces_str(c->rows[i].id));
    else
      fprintf(f, "  %8" PRIu64 " %6.2f%%  %s\n", v, pct(v, c->total), traces_str(c->rows[i].id));
  }
  fprintf(f, "\n");
}

static int write_text(FILE *f, const struct agent_options *o) {
  write_report(f, o);
  struct report_ctx c = {o->weight, NULL, 0, 0, NULL, NULL, 0, NULL, 0};
  /* frame ids are dense: size the tables by the largest id in use */
  c.nrows = traces_nstrings();
  c.rows = calloc(c.nrows ? c.nrows : 1, sizeof *c.rows);
  c.mark = calloc(c.nrows ? c.nrows : 1, sizeof *c.mark);
  if (!c.rows || !c.mark) {
    free(c.rows);
    free(c.mark);
    return -ENOMEM;
  }
  for (size_t i = 0; i < c.nrows; i++) c.rows[i].id = (uint32_t)i;
  traces_foreach(report_trace, &c);
  fprintf(f, "Total: %" PRIu64 " %s in %zu distinct stacks\n\n", c.total,
          c.weight == WEIGHT_CPU ? "ns of CPU" : "samples", traces_count());
  write_hot(f, &c, "self", by_self, 1);
  write_hot(f, &c, "total (inclusive)", by_total, 0);
  free(c.rows);
  free(c.mark);
  return 0;
}

int output_write(const struct agent_options *o, char *err, size_t errlen) {
  char tmp[sizeof o->file + 16];
  FILE *f = open_temp(o->file, tmp, sizeof tmp);
  if (!f) {
    snprintf(err, errlen, "cannot write %s: %s", o->file, strerror(errno));
    return -1;
  }
  int rc = 0;
  if (o->format == FORMAT_TEXT) {
    traces_lock();
    rc = write_text(f, o);
    traces_unlock();
  } else {
    struct build_ctx c = {fg_profile_new(), o->weight, NULL, 0, 0};
    if (!c.p) {
      rc = -ENOMEM;
    } else {
      traces_lock();
      traces_foreach(add_trace, &c);
      uint64_t samples = sampler_stats()->samples;
      traces_unlock();
      rc = c.err;
      if (!rc && o->format == FORMAT_FOLDED) {
        rc = fg_write_folded(f, c.p);
      } else if (!rc) {
        fg_options fo;
        char title[600], sub[256], ival[32];
        fg_options_init(&fo);
        opt_format_duration(o->interval_ns, ival, sizeof ival);
        snprintf(title, sizeof title, "CPU profile: %s", program);
        snprintf(sub, sizeof sub, "sampler, pid %d, interval %s, hasrun %s, %" PRIu64 " stacks captured", (int)getpid(),
                 ival, hasrun_name(o->hasrun), samples);
        fo.title = title;
        fo.subtitle = sub;
        fo.count_name = o->weight == WEIGHT_CPU ? "ns" : "samples";
        fo.palette = FG_PAL_JAVA;
        rc = o->format == FORMAT_SVG ? fg_write_svg(f, c.p, &fo) : fg_write_html(f, c.p, &fo);
      }
      fg_profile_free(c.p);
      free(c.frames);
    }
  }
  if (fflush(f) != 0 || ferror(f)) rc = rc ? rc : -errno;
  if (!rc && fsync(fileno(f)) != 0) rc = -errno;
  if (fclose(f) != 0 && !rc) rc = -errno;
  if (!rc && rename(tmp, o->file) != 0) rc = -errno;
  if (rc) {
    unlink(tmp);
    snprintf(err, errlen, "cannot write %s: %s", o->file, strerror(rc < 0 ? -rc : rc));
    return -1;
  }
  return 0;
}

void output_summary(FILE *out, const struct agent_options *o) {
  traces_lock();
  const struct sampler_stats *st = sampler_stats();
  uint64_t fails = 0;
  for (int i = 1; i <= ASGCT_NCODES; i++) fails += st->asgct[i];
  fprintf(out,
          "[sampler] file=%s format=%s ticks=%" PRIu64 " overruns=%" PRIu64 " samples=%" PRIu64 " units=%" PRIu64
          " cpu_ms=%.1f stacks=%zu requests=%" PRIu64 " skipped_cpu=%" PRIu64 " skipped_idle=%" PRIu64
          " skipped_regs=%" PRIu64 " deferred=%" PRIu64 " blocked=%" PRIu64 " asgct_ok=%" PRIu64 " asgct_fail=%" PRIu64
          " recovered=%" PRIu64 " lost=%" PRIu64
          " lost_units=%" PRIu64 " late=%" PRIu64 " unanswered=%" PRIu64 " outstanding=%" PRIu64 " cost_median_us=%.1f cost_p99_us=%.1f"
          " latency_median_us=%.1f sampler_cpu_ms=%.1f wall_s=%.3f threads=%d stray=%" PRIu64 " foreign=%" PRIu64 "\n",
          o->file, opt_format_name(o->format), st->ticks, st->overruns, st->samples, st->units,
          (double)st->cpu_ns / 1e6, traces_count(), st->requests, st->skipped_cpu, st->skipped_idle,
          st->skipped_regs, st->deferred, st->blocked, st->asgct[0], fails,
          st->recovered_stub + st->recovered_anchor + st->attributed_code, st->lost_send, st->lost_units, st->late,
          st->unanswered, st->outstanding, us(hist_quantile(&st->cost, 0.5)), us(hist_quantile(&st->cost, 0.99)),
          us(hist_quantile(&st->latency, 0.5)), (double)st->sampler_cpu_ns / 1e6, (double)st->wall_ns / 1e9,
          registry_registered(), atomic_load(&handler_counters()->stray), atomic_load(&handler_counters()->foreign));
  traces_unlock();
  fflush(out);
}
