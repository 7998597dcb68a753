/*
 * options.c — the agent's options (see options.h), defined once, in OPTIONS[] below: each
 * entry is an option's name, the placeholder of its value, the function that parses the value,
 * its default and its help. The parser, the `help` text and the README's options table are
 * all made from that table, so they cannot disagree; a default is applied by parsing its own
 * text, so the default shown is the default used.
 *
 * Pure: no JVM, no I/O except the clock and pid for %t/%p, so the unit tests can drive every
 * bad input. Not signal-safe (it allocates).
 */
#include "options.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sampler.h"

#define MIN_INTERVAL_NS 100000ull      /* 100us */
#define MAX_INTERVAL_NS 10000000000ull /* 10s */
#define MAX_DEPTH 8192
#define MIN_LOOP_NS 1000000000ull
#define MIN_TIMELINE_BYTES (4ull << 10)
#define MIN_ALLOC_BYTES (1ull << 10)
#define MAX_ALLOC_BYTES (1ull << 30) /* SetHeapSamplingInterval takes a jint */
#define MAX_TIMELINE_BYTES (1ull << 30)
#define MAX_LOCK_NS 1000000000ull
#define HELP_WIDTH 80 /* columns of the help text */

/* How an option takes its value. */
enum opt_value_kind {
  OPT_TAKES_VALUE, /* name=VALUE; the value is required */
  OPT_SWITCH,      /* name (on), name=on, name=off */
  OPT_NO_VALUE,    /* name alone */
};

struct opt_spec;

/* Parses value (NULL for a switch or an option that takes none, given alone) into o.
 * Returns 0, or -EINVAL with the message for the user in err. */
typedef int opt_parser(const struct opt_spec *opt, const char *value, struct agent_options *o,
                       char *err, size_t errlen);

struct opt_spec {
  const char *name;
  const char *placeholder; /* TIME in interval=TIME; only for OPT_TAKES_VALUE */
  enum opt_value_kind kind;
  opt_parser *parse;
  size_t field; /* offsetof the int an OPT_SWITCH sets, or the path parse_path sets */
  /* The default: default_value is parsed by `parse` before the user's options, and shown in
   * backticks, followed by default_note; without a default_value the default is worked out
   * after parsing (from other options) and default_note says how. Both NULL: no default. */
  const char *default_value;
  const char *default_note; /* markdown: `code` in backticks */
  const char *help;         /* markdown, one paragraph; `help` prints it without backticks */
};

static int fail(char *err, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int fail(char *err, size_t len, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, len, fmt, ap);
  va_end(ap);
  return -EINVAL;
}

/* ---- values ---- */

struct unit {
  const char *name;
  uint64_t ns;
};

static const struct unit INTERVAL_UNITS[] = {
    {"ns", 1}, {"us", 1000}, {"ms", 1000000}, {"s", 1000000000}, {NULL, 0}};
static const struct unit DURATION_UNITS[] = {{"ms", 1000000},
                                             {"s", 1000000000},
                                             {"m", 60ull * 1000000000},
                                             {"h", 3600ull * 1000000000},
                                             {NULL, 0}};

enum time_status { TIME_OK = 0, TIME_MALFORMED, TIME_NO_UNIT, TIME_OVERFLOW };

/* Parses "<digits><unit>" with a unit from the table. */
static enum time_status parse_time(const char *v, const struct unit *units, uint64_t *out) {
  const char *p = v;
  uint64_t n = 0;
  if (*p < '0' || *p > '9') return TIME_MALFORMED;
  for (; *p >= '0' && *p <= '9'; p++) {
    if (n > (UINT64_MAX - 9) / 10) return TIME_OVERFLOW;
    n = n * 10 + (uint64_t)(*p - '0');
  }
  if (!*p) return TIME_NO_UNIT;
  for (const struct unit *u = units; u->name; u++) {
    if (strcmp(p, u->name) == 0) {
      if (n && u->ns > UINT64_MAX / n) return TIME_OVERFLOW;
      *out = n * u->ns;
      return TIME_OK;
    }
  }
  return TIME_MALFORMED;
}

/* Parses a decimal in lo..hi, digits only (no sign, no white space). Returns 0 or -1. */
static int parse_int(const char *v, long lo, long hi, long *out) {
  /* strtol alone would skip leading white space ("\t5", "\n5") and take a sign ("-0") */
  if (!*v || strspn(v, "0123456789") != strlen(v)) return -1;
  char *end;
  errno = 0;
  long n = strtol(v, &end, 10);
  if (*end || errno || n < lo || n > hi) return -1;
  *out = n;
  return 0;
}

/* Parses RTMIN+N, PROF, VTALRM, ALRM, USR1 (each with or without SIG) or one of their numbers;
 * names the signal in name. Returns 0 or -1. */
static int parse_signal_name(const char *v, int *sig, char *name, size_t namelen) {
  const char *p = strncmp(v, "SIG", 3) == 0 ? v + 3 : v;
  long n;
  if (strncmp(p, "RTMIN", 5) == 0) {
    long off = 0;
    if (p[5] == '+') {
      if (parse_int(p + 6, 0, SIGRTMAX - SIGRTMIN, &off)) return -1;
    } else if (p[5]) {
      return -1;
    }
    *sig = SIGRTMIN + (int)off;
  } else if (strcmp(p, "PROF") == 0) {
    *sig = SIGPROF;
  } else if (strcmp(p, "VTALRM") == 0) {
    *sig = SIGVTALRM;
  } else if (strcmp(p, "ALRM") == 0) {
    *sig = SIGALRM;
  } else if (strcmp(p, "USR1") == 0) {
    *sig = SIGUSR1;
  } else if (parse_int(v, 1, SIGRTMAX, &n) == 0) {
    if (!(n == SIGPROF || n == SIGVTALRM || n == SIGALRM || n == SIGUSR1 ||
          (n >= SIGRTMIN && n <= SIGRTMAX)))
      return -1;
    *sig = (int)n;
  } else {
    return -1;
  }
  if (*sig >= SIGRTMIN)
    snprintf(name, namelen, "SIGRTMIN+%d", *sig - SIGRTMIN);
  else
    snprintf(name, namelen, "SIG%s",
             *sig == SIGPROF     ? "PROF"
             : *sig == SIGVTALRM ? "VTALRM"
             : *sig == SIGALRM   ? "ALRM"
                                 : "USR1");
  return 0;
}

/* Expands %p (pid), %t (time t), %n (seq) and %% of pattern v into out[cap]; %e (the event) is
 * kept as it is, for the writer of each event's file (output.c). Returns 0, or -1 when the
 * result does not fit. */
static int expand_pattern(const char *v, uint64_t seq, time_t t, char *out, size_t cap) {
  char stamp[32];
  struct tm tm;
  localtime_r(&t, &tm);
  strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
  size_t n = 0;
  for (const char *p = v; *p; p++) {
    char tmp[32];
    const char *add = tmp;
    if (p[0] == '%' && p[1] == 'p') {
      snprintf(tmp, sizeof tmp, "%d", (int)getpid());
      p++;
    } else if (p[0] == '%' && p[1] == 't') {
      add = stamp;
      p++;
    } else if (p[0] == '%' && p[1] == 'n') {
      snprintf(tmp, sizeof tmp, "%" PRIu64, seq);
      p++;
    } else if (p[0] == '%' && p[1] == '%') {
      tmp[0] = '%', tmp[1] = '\0';
      p++;
    } else if (p[0] == '%' && p[1] == 'e') {
      add = "%e";
      p++;
    } else {
      tmp[0] = *p, tmp[1] = '\0';
    }
    size_t l = strlen(add);
    if (n + l >= cap) return -1;
    memcpy(out + n, add, l);
    n += l;
  }
  out[n] = '\0';
  return 0;
}

/* Whether pattern v names each chunk of `loop` apart: it has %n or %t (not %%n, a literal). */
static int names_chunks(const char *v) {
  for (const char *p = v; *p; p++) {
    if (p[0] != '%') continue;
    if (p[1] == 'n' || p[1] == 't') return 1;
    if (p[1]) p++; /* %% and %p */
  }
  return 0;
}

int opt_names_events(const char *v) {
  for (const char *p = v; *p; p++) {
    if (p[0] != '%') continue;
    if (p[1] == 'e') return 1;
    if (p[1]) p++; /* %% and the others */
  }
  return 0;
}

/* o->file from o->file_pattern: the profile (or the first chunk) now. */
static int expand_file(struct agent_options *o) {
  return expand_pattern(o->file_pattern, 0, time(NULL), o->file, sizeof o->file);
}

int opt_chunk_file(const struct agent_options *o, uint64_t seq, time_t t, char *out, size_t len) {
  return expand_pattern(o->file_pattern, seq, t, out, len) ? -ENAMETOOLONG : 0;
}

/* The format a file name's extension implies, or -1. */
static int format_from_name(const char *f) {
  const char *dot = strrchr(f, '.');
  const char *slash = strrchr(f, '/');
  if (!dot || (slash && dot < slash)) return -1;
  if (!strcmp(dot, ".folded") || !strcmp(dot, ".collapsed")) return FORMAT_FOLDED;
  if (!strcmp(dot, ".txt")) return FORMAT_TEXT;
  if (!strcmp(dot, ".svg")) return FORMAT_SVG;
  if (!strcmp(dot, ".html") || !strcmp(dot, ".htm")) return FORMAT_HTML;
  if (!strcmp(dot, ".pprof") || !strcmp(dot, ".pb") ||
      (!strcmp(dot, ".gz") && strlen(f) > 6 && !strcmp(f + strlen(f) - 6, ".pb.gz")))
    return FORMAT_PPROF;
  if (!strcmp(dot, ".jfr")) return FORMAT_JFR;
  return -1;
}

/* ---- one parser per option (a switch's is shared) ---- */

static int parse_interval(const struct opt_spec *opt, const char *v, struct agent_options *o,
                          char *err, size_t errlen) {
  (void)opt;
  uint64_t ns = 0;
  switch (parse_time(v, INTERVAL_UNITS, &ns)) {
  case TIME_NO_UNIT:
    return fail(err, errlen, "interval=%s: needs a unit: ns, us, ms or s (e.g. interval=10ms)", v);
  case TIME_MALFORMED:
    return fail(
        err, errlen,
        "interval=%s: not a time: a whole number with a unit ns, us, ms or s (e.g. interval=10ms)",
        v);
  case TIME_OVERFLOW: return fail(err, errlen, "interval=%s: out of range: 100us to 10s", v);
  case TIME_OK: break;
  }
  if (ns < MIN_INTERVAL_NS || ns > MAX_INTERVAL_NS)
    return fail(err, errlen, "interval=%s: out of range: 100us to 10s", v);
  o->interval_ns = ns;
  return 0;
}

/* Keeps the path as given; %p, %t and %n are expanded once every option is known, %e as each
 * event's file is written. */
static int parse_file(const struct opt_spec *opt, const char *v, struct agent_options *o, char *err,
                      size_t errlen) {
  (void)opt;
  if (!*v) return fail(err, errlen, "file=: empty path");
  if (strlen(v) >= sizeof o->file_pattern) return fail(err, errlen, "file=%s: path too long", v);
  if (strstr(v, "%%e")) /* %e stays in the expanded name until each event's file is written */
    return fail(err, errlen, "file=%s: a literal %%e (%%%%e) cannot be in a file name", v);
  strcpy(o->file_pattern, v);
  return 0;
}

/* A path into the char[OPT_FILE_MAX] at opt->field (reply=, stats=; stats= is expanded once
 * every option is known). */
static int parse_path(const struct opt_spec *opt, const char *v, struct agent_options *o, char *err,
                      size_t errlen) {
  char *path = (char *)o + opt->field;
  if (!*v) return fail(err, errlen, "%s=: empty path", opt->name);
  if (strlen(v) >= OPT_FILE_MAX) return fail(err, errlen, "%s=%s: path too long", opt->name, v);
  strcpy(path, v);
  return 0;
}

static int parse_format(const struct opt_spec *opt, const char *v, struct agent_options *o,
                        char *err, size_t errlen) {
  (void)opt;
  if (!strcmp(v, "folded") || !strcmp(v, "collapsed"))
    o->format = FORMAT_FOLDED;
  else if (!strcmp(v, "text"))
    o->format = FORMAT_TEXT;
  else if (!strcmp(v, "svg"))
    o->format = FORMAT_SVG;
  else if (!strcmp(v, "html"))
    o->format = FORMAT_HTML;
  else if (!strcmp(v, "pprof"))
    o->format = FORMAT_PPROF;
  else if (!strcmp(v, "jfr"))
    o->format = FORMAT_JFR;
  else
    return fail(err, errlen, "format=%s: accepted: folded, text, svg, html, pprof, jfr", v);
  return 0;
}

static int parse_depth(const struct opt_spec *opt, const char *v, struct agent_options *o,
                       char *err, size_t errlen) {
  (void)opt;
  long n;
  if (parse_int(v, 1, MAX_DEPTH, &n))
    return fail(err, errlen, "depth=%s: accepted: a whole number from 1 to %d", v, MAX_DEPTH);
  o->depth = (int)n;
  return 0;
}

/* On/off into the int at opt->field; the name alone means on. */
static int parse_switch(const struct opt_spec *opt, const char *v, struct agent_options *o,
                        char *err, size_t errlen) {
  int *flag = (int *)((char *)o + opt->field);
  if (!v || !strcmp(v, "on") || !strcmp(v, "true") || !strcmp(v, "yes"))
    *flag = 1;
  else if (!strcmp(v, "off") || !strcmp(v, "false") || !strcmp(v, "no"))
    *flag = 0;
  else
    return fail(err, errlen, "%s=%s: accepted: on, off", opt->name, v);
  return 0;
}

static int parse_hasrun(const struct opt_spec *opt, const char *v, struct agent_options *o,
                        char *err, size_t errlen) {
  (void)opt;
  if (!strcmp(v, "auto"))
    o->hasrun = SAMPLER_HASRUN_AUTO;
  else if (!strcmp(v, "cpu"))
    o->hasrun = SAMPLER_HASRUN_CPU;
  else if (!strcmp(v, "regs"))
    o->hasrun = SAMPLER_HASRUN_REGS;
  else
    return fail(err, errlen, "hasrun=%s: accepted: auto, cpu, regs", v);
  return 0;
}

static int parse_cstack(const struct opt_spec *opt, const char *v, struct agent_options *o,
                        char *err, size_t errlen) {
  (void)opt;
  if (!strcmp(v, "dwarf"))
    o->cstack = 1;
  else if (!strcmp(v, "no"))
    o->cstack = 0;
  else
    return fail(err, errlen, "cstack=%s: accepted: dwarf, no", v);
  return 0;
}

static int parse_signal(const struct opt_spec *opt, const char *v, struct agent_options *o,
                        char *err, size_t errlen) {
  (void)opt;
  if (parse_signal_name(v, &o->sig, o->sig_name, sizeof o->sig_name))
    return fail(
        err, errlen,
        "signal=%s: accepted: RTMIN+N (N = 0..%d), PROF, VTALRM, ALRM, USR1, or their number "
        "(signals the JVM uses itself are refused)",
        v, SIGRTMAX - SIGRTMIN);
  return 0;
}

static int parse_duration(const struct opt_spec *opt, const char *v, struct agent_options *o,
                          char *err, size_t errlen) {
  (void)opt;
  uint64_t ns = 0;
  enum time_status r = strcmp(v, "0") == 0 ? TIME_OK : parse_time(v, DURATION_UNITS, &ns);
  if (r == TIME_NO_UNIT)
    return fail(err, errlen, "duration=%s: needs a unit: ms, s, m or h (e.g. duration=30s)", v);
  if (r != TIME_OK)
    return fail(
        err, errlen,
        "duration=%s: accepted: 0 or a whole number with a unit ms, s, m or h (e.g. duration=30s)",
        v);
  o->duration_ns = ns;
  return 0;
}

const char *opt_event_name(int ev) {
  static const char *const names[SAMPLER_EVENTS] = {"cpu", "wall", "alloc", "lock"};
  return ev >= 0 && ev < SAMPLER_EVENTS ? names[ev] : "?";
}

void opt_event_names(unsigned events, const char *sep, char *buf, size_t len) {
  size_t n = 0;
  if (len) buf[0] = '\0';
  for (int k = 0; k < SAMPLER_EVENTS && n < len; k++) {
    if (!(events & 1u << k)) continue;
    int w = snprintf(buf + n, len - n, "%s%s", n ? sep : "", opt_event_name(k));
    n += w < 0 ? 0 : (size_t)w;
  }
}

unsigned opt_events(const struct agent_options *o) {
  return (o->clock ? 1u << (o->wall ? SAMPLER_EVENT_WALL : SAMPLER_EVENT_CPU) : 0) |
         (o->alloc ? 1u << SAMPLER_EVENT_ALLOC : 0) | (o->lock ? 1u << SAMPLER_EVENT_LOCK : 0);
}

void opt_for_event(const struct agent_options *o, int ev, struct agent_options *one) {
  *one = *o;
  one->clock = ev == SAMPLER_EVENT_CPU || ev == SAMPLER_EVENT_WALL;
  one->wall = ev == SAMPLER_EVENT_WALL;
  one->alloc = ev == SAMPLER_EVENT_ALLOC;
  one->lock = ev == SAMPLER_EVENT_LOCK;
  if (one->alloc) one->weight = WEIGHT_BYTES;
  if (one->lock) one->weight = WEIGHT_BLOCKED;
}

/* event=: one name or several, comma-separated (the option string's own commas: opt_parse
 * gives the names after the first back here, joined). */
static int parse_event(const struct opt_spec *opt, const char *v, struct agent_options *o,
                       char *err, size_t errlen) {
  (void)opt;
  unsigned seen = 0;
  const char *p = v;
  for (;;) {
    size_t len = strcspn(p, ",");
    int ev = -1;
    for (int k = 0; k < SAMPLER_EVENTS; k++)
      if (strlen(opt_event_name(k)) == len && !strncmp(p, opt_event_name(k), len)) ev = k;
    if (ev < 0)
      return fail(err, errlen,
                  "event=%s: '%.*s' is not an event; accepted: cpu, wall, alloc, lock, or several "
                  "of them (cpu or wall, alloc, lock) comma-separated, e.g. event=cpu,alloc,lock",
                  v, (int)len, p);
    if (seen & 1u << ev)
      return fail(err, errlen, "event=%s: %s given twice; each event is named once", v,
                  opt_event_name(ev));
    seen |= 1u << ev;
    if (!p[len]) break;
    p += len + 1;
  }
  if ((seen & 1u << SAMPLER_EVENT_CPU) && (seen & 1u << SAMPLER_EVENT_WALL))
    return fail(err, errlen,
                "event=%s: cpu and wall exclude each other (both are the sampler's rounds); pick "
                "one",
                v);
  o->wall = !!(seen & 1u << SAMPLER_EVENT_WALL);
  o->clock = o->wall || (seen & 1u << SAMPLER_EVENT_CPU);
  o->alloc = !!(seen & 1u << SAMPLER_EVENT_ALLOC);
  o->lock = !!(seen & 1u << SAMPLER_EVENT_LOCK);
  return 0;
}

static int parse_lock(const struct opt_spec *opt, const char *v, struct agent_options *o, char *err,
                      size_t errlen) {
  (void)opt;
  uint64_t ns = 0;
  enum time_status r = strcmp(v, "0") == 0 ? TIME_OK : parse_time(v, INTERVAL_UNITS, &ns);
  if (r != TIME_OK || ns > MAX_LOCK_NS)
    return fail(err, errlen,
                "lock=%s: accepted: 0 or a time up to 1s with a unit ns, us, ms or s (e.g. "
                "lock=10us)",
                v);
  o->lock_ns = ns;
  return 0;
}

static int parse_loop(const struct opt_spec *opt, const char *v, struct agent_options *o, char *err,
                      size_t errlen) {
  (void)opt;
  uint64_t ns = 0;
  enum time_status r = strcmp(v, "0") == 0 ? TIME_OK : parse_time(v, DURATION_UNITS, &ns);
  if (r == TIME_NO_UNIT)
    return fail(err, errlen, "loop=%s: needs a unit: ms, s, m or h (e.g. loop=10m)", v);
  if (r != TIME_OK || (ns && ns < MIN_LOOP_NS))
    return fail(err, errlen,
                "loop=%s: accepted: 0 or a time from 1s with a unit ms, s, m or h (e.g. loop=10m)",
                v);
  o->loop_ns = ns;
  return 0;
}

/* A size: a whole number with a unit k, m or g (KiB, MiB, GiB). */
static int parse_timeline(const struct opt_spec *opt, const char *v, struct agent_options *o,
                          char *err, size_t errlen) {
  (void)opt;
  char *end;
  errno = 0;
  unsigned long long n = strtoull(v, &end, 10);
  unsigned shift = *end == 'k' ? 10 : *end == 'm' ? 20 : *end == 'g' ? 30 : 0;
  if (v[0] < '0' || v[0] > '9' || errno || !shift || end[1] || n > (1ull << 20) ||
      (n << shift) < MIN_TIMELINE_BYTES || (n << shift) > MAX_TIMELINE_BYTES)
    return fail(err, errlen,
                "timeline=%s: accepted: a size with a unit k, m or g, from 4k to 1g (e.g. "
                "timeline=64m)",
                v);
  o->timeline_bytes = (size_t)(n << shift);
  return 0;
}

/* A size in bytes: digits with an optional unit k, m or g (KiB, MiB, GiB), in lo..hi; into
 * *out. Returns 0 or -1. */
static int parse_size(const char *v, uint64_t lo, uint64_t hi, uint64_t *out) {
  char *end;
  errno = 0;
  if (v[0] < '0' || v[0] > '9') return -1;
  unsigned long long n = strtoull(v, &end, 10);
  unsigned shift = *end == 'k' ? 10 : *end == 'm' ? 20 : *end == 'g' ? 30 : 0;
  if (errno || (shift && end[1]) || (!shift && *end) || n > (1ull << 34) || (n << shift) < lo ||
      (n << shift) > hi)
    return -1;
  *out = n << shift;
  return 0;
}

static int parse_alloc(const struct opt_spec *opt, const char *v, struct agent_options *o,
                       char *err, size_t errlen) {
  (void)opt;
  if (parse_size(v, MIN_ALLOC_BYTES, MAX_ALLOC_BYTES, &o->alloc_bytes))
    return fail(err, errlen,
                "alloc=%s: accepted: a size in bytes, with or without a unit k, m or g, from 1k "
                "to 1g (e.g. alloc=512k)",
                v);
  return 0;
}

static int parse_weight(const struct opt_spec *opt, const char *v, struct agent_options *o,
                        char *err, size_t errlen) {
  (void)opt;
  if (!strcmp(v, "samples"))
    o->weight = WEIGHT_SAMPLES;
  else if (!strcmp(v, "cpu"))
    o->weight = WEIGHT_CPU;
  else
    return fail(err, errlen, "weight=%s: accepted: samples, cpu", v);
  return 0;
}

/* cache=DIR or off (the default directory is settle()'s, from the environment). */
static int parse_cache(const struct opt_spec *opt, const char *v, struct agent_options *o,
                       char *err, size_t errlen) {
  o->cache_given = 1;
  if (!strcmp(v, "off")) {
    o->cache[0] = 0;
    return 0;
  }
  return parse_path(opt, v, o, err, errlen);
}

static int parse_help(const struct opt_spec *opt, const char *v, struct agent_options *o, char *err,
                      size_t errlen) {
  (void)opt, (void)v, (void)err, (void)errlen;
  o->help = 1;
  return 0;
}

/* ---- the table: the one place an option is defined ---- */

/* The kind, parser and field of an on/off option that sets o->member. */
#define SWITCH(member) OPT_SWITCH, parse_switch, offsetof(struct agent_options, member)

static const struct opt_spec OPTIONS[] = {
    {"event", "EV", OPT_TAKES_VALUE, parse_event, 0, "cpu", NULL,
     "`cpu`: where threads use CPU (a sample per interval of a thread's CPU time); `wall`: where "
     "they spend wall-clock time, running or waiting (a sample per interval per thread, its "
     "state — `[running]`, `[sleeping]`, `[parked]`, `[waiting]`, `[blocked on monitor]`, `[in "
     "system call]` — as the leaf; a thread that has not run since its last sample gives it "
     "again without being signalled); `alloc`: what allocates (JVMTI's sampled allocations, "
     "every `alloc=` bytes on average, TLAB or not): the allocating Java stack, the allocated "
     "class as the leaf (`byte[]_[a]`), weighed in estimated bytes (the folded counts) and "
     "allocations; `lock`: which locks threads wait for (contended `synchronized` entries and "
     "parks, e.g. `ReentrantLock`), the waiting Java stack, the lock's class as the leaf "
     "(`java.lang.Object_[l]`), weighed in ns blocked (waits shorter than `lock=` sampled); "
     "both: Java frames only (`cstack`, `jvmthreads`, `hasrun`, `signal`, `cputimers` do "
     "not apply to them; `interval` is how often their samples are recorded); several in one "
     "run, comma-separated (`event=cpu,alloc,lock`; cpu or wall, not both): each event its own "
     "stacks and units — folded, text and svg write a file per event (`%e` in `file=`), html "
     "one page with an event selector (or a page each with `%e`), pprof a sample type per "
     "event and unit, jfr each event's JDK events"},
    {"alloc", "SIZE", OPT_TAKES_VALUE, parse_alloc, 0, "512k", NULL,
     "with `event=alloc`: the mean number of bytes a thread allocates between two samples "
     "(HotSpot draws each distance at random, so every size is seen in proportion); `k`, `m`, "
     "`g` or bytes, from `1k` to `1g`"},
    {"lock", "TIME", OPT_TAKES_VALUE, parse_lock, 0, "10us", NULL,
     "with `event=lock`: waits this long or longer are all recorded; a shorter one of d is "
     "recorded with probability d / `lock` and weighed `lock` (so the total stays unbiased and "
     "the cost bounded); 0 records every wait; a unit `ns`, `us`, `ms`, `s`, up to 1s"},
    {"interval", "TIME", OPT_TAKES_VALUE, parse_interval, 0, "10ms", NULL,
     "time between samples, with a unit `ns`, `us`, `ms`, `s`; 100us to 10s"},
    {"file", "PATH", OPT_TAKES_VALUE, parse_file, 0, NULL, "`sampler-%p.<format>`",
     "output path; `%p` is the pid, `%t` the start time (`YYYYmmdd-HHMMSS`), `%e` the event "
     "(`cpu`, `wall`, `alloc`, `lock`: a file each), `%%` a `%`"},
    {"format", "FMT", OPT_TAKES_VALUE, parse_format, 0, NULL,
     "from the file's extension (`.folded`/`.collapsed`, `.txt`, `.svg`, `.html`/`.htm`, "
     "`.pb.gz`/`.pprof`, `.jfr`), else `folded`",
     "`folded`, `text`, `svg`, `html`, `pprof` (gzipped profile.proto: `go tool pprof`, "
     "Pyroscope, speedscope), `jfr` (a JFR recording: the JDK's `jfr`, JDK Mission Control, "
     "IntelliJ)"},
    {"depth", "N", OPT_TAKES_VALUE, parse_depth, 0, "1024", NULL,
     "most frames per stack, 1 to 8192; above 1365, fewer threads can be sampled at once "
     "(16,384 at most; 2,560 at 8192: 24 bytes a frame a thread, 512 MB at most)"},
    {"threads", NULL, SWITCH(threads), "off", NULL, "a root frame `[name tid=N]` per thread"},
    {"lines", NULL, SWITCH(lines), "off", NULL,
     "frames carry their source line, `java/lang/String.hashCode:152` (bytecode index → line "
     "through `GetLineNumberTable`)"},
    {"ann", NULL, SWITCH(ann), NULL, "on for `svg`, `html` and `jfr`, off for the others",
     "Java frames carry how they ran — `_[j]` JIT-compiled, `_[i]` inlined into its caller, `_[0]` "
     "interpreted; native methods stay plain; needs `codemap`"},
    {"codemap", NULL, SWITCH(codemap), "on", NULL,
     "keep the compiled-code map (recovery of samples `AsyncGetCallTrace` cannot walk, and `ann`); "
     "`off` is for measuring what the map costs"},
    {"hasrun", "MODE", OPT_TAKES_VALUE, parse_hasrun, 0, "auto", NULL,
     "evidence that a thread ran since its last sample — `auto`: its CPU clock, the registers "
     "arbitrating tiny deltas; `cpu`: its CPU clock alone; `regs`: a checksum of its registers "
     "alone (the JVMPI paper)"},
    {"cstack", "MODE", OPT_TAKES_VALUE, parse_cstack, 0, "dwarf", NULL,
     "native frames (C/C++: the JVM, libc, JNI libraries) — `dwarf`: walked from the interrupted "
     "code up to the Java frames with the objects' DWARF call frame information (compiled into "
     "tables by the sampler thread when it first sees an object, or read from `cache`; libunwind "
     "for frames they cannot describe, and until then); `no`: Java frames only"},
    {"jvmthreads", NULL, SWITCH(jvmthreads), NULL, "on with `cstack=dwarf`, off with `cstack=no`",
     "sample the JVM's own threads too (GC workers, JIT compilers, the VM thread: every thread "
     "of the process), with their native frames; needs `cstack=dwarf`"},
    {"signal", "SIG", OPT_TAKES_VALUE, parse_signal, 0, "RTMIN+4", NULL,
     "the sampling signal: `RTMIN+N`, `PROF`, `VTALRM`, `ALRM`, `USR1` or a number; signals the "
     "JVM uses itself are refused, and so is one that already has a handler"},
    {"cputimers", NULL, SWITCH(cputimers), "on", NULL,
     "with `event=cpu` and an interval of at least the kernel's scheduler tick (4 ms on a "
     "250 Hz kernel): a thread found busy gets its next sample from a timer on its own CPU "
     "clock, which the kernel fires at a tick on the thread's own CPU, instead of a signal from "
     "the sampler thread (a cross-CPU interrupt); threads that run in short bursts are always "
     "signalled; `off`: signals only"},
    {"duration", "TIME", OPT_TAKES_VALUE, parse_duration, 0, "0", "(until the JVM exits)",
     "`0` or a time with a unit `ms`, `s`, `m`, `h`: stop sampling and write the profile then"},
    {"loop", "TIME", OPT_TAKES_VALUE, parse_loop, 0, "0", "(one profile)",
     "continuous profiling: every TIME (from `1s`) a complete profile of that period is written "
     "and the next starts from zero; `file=` must name each with `%n` (0, 1, 2...) or `%t` (the "
     "period's start)"},
    {"timeline", "SIZE", OPT_TAKES_VALUE, parse_timeline, 0, "32m", NULL,
     "memory for the time axis (when each sample was taken: 20 ms cells, one entry of 16 bytes "
     "per stack, thread and cell); when it is full the cells coarsen — 100 ms, 1 s, 10 s, 1 min, "
     "10 min, 1 h — and no sample is dropped; `k`, `m`, `g`, from `4k` to `1g`"},
    {"weight", "W", OPT_TAKES_VALUE, parse_weight, 0, "samples", NULL,
     "what a folded count means: `samples` (one per interval of CPU; with `hasrun=regs`, one per "
     "stack captured) or `cpu` (nanoseconds of CPU; not with `hasrun=regs`)"},
    {"reply", "PATH", OPT_TAKES_VALUE, parse_path, offsetof(struct agent_options, reply), NULL,
     "(none)",
     "also write the agent's answers (errors, where the profile went) to this file, and `status` "
     "to it alone; the `sampler` launcher uses it to show them"},
    {"stats", "PATH", OPT_TAKES_VALUE, parse_path, offsetof(struct agent_options, stats), NULL,
     "(none)",
     "write every counter of the run (samples, coverage, losses, costs: "
     "docs/how-it-works.md) to this file as JSON, whole or not at all, each time a profile is "
     "written (with `loop=`, each chunk's); `%p` is the pid, `%t` the start time; at exit "
     "only one short line is said"},
    {"cache", "DIR", OPT_TAKES_VALUE, parse_cache, offsetof(struct agent_options, cache), NULL,
     "`$XDG_CACHE_HOME/sampler`, else `$HOME/.cache/sampler`",
     "where the native walk's compiled unwind tables and the libraries' function symbols are "
     "kept between runs, a file each per library build (its GNU build-id; a few MB for a JVM's "
     "libraries): a JVM's start reads them instead of making them again (`cstack=dwarf`); made "
     "with mode 0700 when missing, used only when it is this user's and nobody else can write "
     "it; `off`: make them at every start, write nothing"},
    {"help", NULL, OPT_NO_VALUE, parse_help, 0, NULL, NULL,
     "print the options; the program then runs without sampling"},
};

#define OPTION_COUNT (sizeof OPTIONS / sizeof *OPTIONS)

static const struct opt_spec *opt_find(const char *name) {
  for (size_t i = 0; i < OPTION_COUNT; i++)
    if (!strcmp(name, OPTIONS[i].name)) return &OPTIONS[i];
  return NULL;
}

/* The i-th option's name, NULL past the last (options.h). Thread-safe, signal-safe. */
const char *opt_name(size_t i) { return i < OPTION_COUNT ? OPTIONS[i].name : NULL; }

/* The format's name, "?" if none (options.h). Thread-safe, signal-safe. */
const char *opt_format_name(int f) {
  static const char *const n[] = {"folded", "text", "svg", "html", "pprof", "jfr"};
  return f >= 0 && f < (int)(sizeof n / sizeof *n) ? n[f] : "?";
}

/* ns as "10ms", "2s", ... into buf (options.h). Thread-safe; not signal-safe. */
void opt_format_duration(uint64_t ns, char *buf, size_t len) {
  if (ns && ns % 1000000000 == 0)
    snprintf(buf, len, "%" PRIu64 "s", ns / 1000000000);
  else if (ns && ns % 1000000 == 0)
    snprintf(buf, len, "%" PRIu64 "ms", ns / 1000000);
  else if (ns && ns % 1000 == 0)
    snprintf(buf, len, "%" PRIu64 "us", ns / 1000);
  else
    snprintf(buf, len, "%" PRIu64 "ns", ns);
}

/* ---- parsing ---- */

/* "unknown option 'x' (known: interval, file, ...)", the list from the table. */
static int fail_unknown(const char *name, char *err, size_t errlen) {
  int n = snprintf(err, errlen, "unknown option '%s' (known:", name);
  for (size_t i = 0; i < OPTION_COUNT && n >= 0 && (size_t)n < errlen; i++)
    n += snprintf(err + n, errlen - (size_t)n, "%s %s", i ? "," : "", OPTIONS[i].name);
  if (n >= 0 && (size_t)n < errlen) snprintf(err + n, errlen - (size_t)n, ")");
  return -EINVAL;
}

/* Sets every default the table gives by parsing its text; the rest are worked out by
 * settle() once the user's options are known (format and ann: -1 until then). */
static int apply_defaults(struct agent_options *o, char *err, size_t errlen) {
  memset(o, 0, sizeof *o);
  o->format = -1;
  o->ann = -1;
  o->jvmthreads = -1;
  for (size_t i = 0; i < OPTION_COUNT; i++) {
    const struct opt_spec *opt = &OPTIONS[i];
    if (opt->default_value) {
      int rc = opt->parse(opt, opt->default_value, o, err, errlen);
      if (rc) return rc;
    }
  }
  return 0;
}

/* Whether o's format holds one event a file (folded, text, svg) and o has several. */
static int one_per_event(const struct agent_options *o) {
  unsigned ev = opt_events(o);
  return (ev & (ev - 1)) && o->format != FORMAT_PPROF && o->format != FORMAT_JFR &&
         o->format != FORMAT_HTML;
}

/* Several events to a format of one event a file need %e in the file's name (pattern). */
static int check_event_files(const struct agent_options *o, const char *pattern, char *err,
                             size_t errlen) {
  if (!one_per_event(o) || opt_names_events(pattern)) return 0;
  char names[64];
  opt_event_names(opt_events(o), ",", names, sizeof names);
  return fail(err, errlen,
              "event=%s with file=%s: a %s file holds one event; put %%e (the event's name: "
              "cpu, wall, alloc, lock) in file= for a file each (e.g. file=profile-%%e.%s), or "
              "pick one event (html, pprof and jfr hold several in one file)",
              names, pattern, opt_format_name(o->format),
              o->format == FORMAT_TEXT ? "txt" : opt_format_name(o->format));
}

/* The checks between options and the defaults that depend on other options, in this order:
 * weight against hasrun, the file's expansion, the format (from the file), the stats file's
 * expansion, ann (from the format) against codemap, jvmthreads (from cstack) against cstack,
 * the file's default name (from the format). */
static int settle(struct agent_options *o, char *err, size_t errlen) {
  if (o->wall && o->hasrun == SAMPLER_HASRUN_REGS)
    return fail(err, errlen,
                "event=wall: needs hasrun=auto or hasrun=cpu (it tells threads that have not run "
                "by their CPU clocks)");
  /* alone, alloc and lock weigh their own units; beside cpu or wall, weight= is those's */
  int alone = !o->clock && !(o->alloc && o->lock);
  if (alone && o->alloc && o->weight == WEIGHT_CPU)
    return fail(err, errlen, "weight=cpu: not with event=alloc (its weight is bytes)");
  if (!o->clock && o->alloc && o->hasrun == SAMPLER_HASRUN_REGS)
    return fail(err, errlen, "hasrun=regs: not with event=alloc (no thread is signalled)");
  if (alone && o->alloc) o->weight = WEIGHT_BYTES;
  if (alone && o->lock && o->weight == WEIGHT_CPU)
    return fail(err, errlen, "weight=cpu: not with event=lock (its weight is ns blocked)");
  if (!o->clock && o->lock && o->hasrun == SAMPLER_HASRUN_REGS)
    return fail(err, errlen, "hasrun=regs: not with event=lock (no thread is signalled)");
  if (alone && o->lock) o->weight = WEIGHT_BLOCKED;
  if (!o->clock && o->weight == WEIGHT_CPU)
    return fail(err, errlen,
                "weight=cpu: not with event=alloc,lock (their weights are bytes and ns blocked)");
  if (o->weight == WEIGHT_CPU && o->hasrun == SAMPLER_HASRUN_REGS)
    return fail(
        err, errlen,
        "weight=cpu: needs hasrun=auto or hasrun=cpu (hasrun=regs does not measure CPU time)");
  if (*o->file_pattern && o->loop_ns && !names_chunks(o->file_pattern))
    return fail(err, errlen,
                "loop= with file=%s: every chunk would overwrite the last; put %%n (the chunk's "
                "number) or %%t (its start time) in file=, e.g. file=profile-%%n.html",
                o->file_pattern);
  if (*o->file_pattern) {
    if (expand_file(o)) return fail(err, errlen, "file=%s: path too long", o->file_pattern);
    if (o->format < 0) o->format = format_from_name(o->file);
  }
  if (o->format < 0) o->format = FORMAT_FOLDED;
  if (*o->stats) {
    char pattern[sizeof o->stats];
    snprintf(pattern, sizeof pattern, "%s", o->stats);
    if (expand_pattern(pattern, 0, time(NULL), o->stats, sizeof o->stats))
      return fail(err, errlen, "stats=%s: path too long", pattern);
  }
  if (!o->cache_given) { /* the default: the user's cache directory (XDG), if there is one */
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    int n = xdg && xdg[0] == '/' ? snprintf(o->cache, sizeof o->cache, "%s/sampler", xdg)
            : home && home[0] == '/'
                ? snprintf(o->cache, sizeof o->cache, "%s/.cache/sampler", home)
                : 0;
    if (n < 0 || (size_t)n >= sizeof o->cache) o->cache[0] = 0;
  }
  if (o->ann < 0) /* the formats that show how a frame ran (JFR: its frames' types) */
    o->ann = o->codemap &&
             (o->format == FORMAT_SVG || o->format == FORMAT_HTML || o->format == FORMAT_JFR);
  if (o->ann && !o->codemap)
    return fail(err, errlen, "ann: needs codemap=on (frame kinds come from the compiled-code map)");
  if (o->jvmthreads < 0) o->jvmthreads = o->cstack;
  if (o->jvmthreads && !o->cstack)
    return fail(err, errlen,
                "jvmthreads: needs cstack=dwarf (the JVM's threads have no Java frames to show)");
  if (!*o->file_pattern) {
    static const char *const ext[] = {"folded", "txt", "svg", "html", "pb.gz", "jfr"};
    snprintf(o->file_pattern, sizeof o->file_pattern, "sampler-%%p%s%s.%s", o->loop_ns ? "-%n" : "",
             one_per_event(o) ? "-%e" : "", ext[o->format]);
    expand_file(o);
  }
  return check_event_files(o, o->file_pattern, err, errlen);
}

/* Parses the option string s into o (options.h). Returns 0, -EINVAL or -ENOMEM, with the
 * user's message in err. Thread-safe; not signal-safe. */
int opt_parse(const char *s, struct agent_options *o, char *err, size_t errlen) {
  int rc = apply_defaults(o, err, errlen);
  if (rc) return rc;
  char *copy = strdup(s ? s : "");
  if (!copy) {
    snprintf(err, errlen, "out of memory");
    return -ENOMEM;
  }
  bool given[OPTION_COUNT] = {false};
  char *save = NULL;
  char events[128] = ""; /* event='s names so far: the ones after the first come as tokens */
  int in_event = 0;
  for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    char *value = strchr(tok, '=');
    if (value) *value++ = '\0';
    const struct opt_spec *opt = opt_find(tok);
    /* a bare name after event=... is one more event (alloc and lock are options with values
     * too: bare, they are events); one that is no option at all is a wrong event name */
    int is_event = 0;
    for (int k = 0; k < SAMPLER_EVENTS; k++) is_event |= !strcmp(tok, opt_event_name(k));
    int more = in_event && !value && (is_event || !opt);
    in_event = more || (opt && !strcmp(opt->name, "event") && value);
    if (more) {
      size_t l = strlen(events);
      if (l + 1 + strlen(tok) >= sizeof events)
        rc = fail(err, errlen, "event=%s,%s: accepted: cpu, wall, alloc, lock, each once", events,
                  tok);
      else {
        snprintf(events + l, sizeof events - l, ",%s", tok);
        rc = parse_event(NULL, events, o, err, errlen);
      }
    } else if (!opt) {
      rc = fail_unknown(tok, err, errlen);
    } else if (given[opt - OPTIONS]) {
      rc = fail(err, errlen, "option '%s' given twice", tok);
    } else if (!value && opt->kind == OPT_TAKES_VALUE) {
      rc = fail(err, errlen, "option '%s' needs a value (%s=...)", tok, tok);
    } else if (value && opt->kind == OPT_NO_VALUE) {
      rc = fail(err, errlen, "%s takes no value", tok);
    } else {
      given[opt - OPTIONS] = true;
      if (in_event) snprintf(events, sizeof events, "%s", value);
      rc = opt->parse(opt, value, o, err, errlen);
    }
    if (rc) break;
  }
  free(copy);
  return rc ? rc : settle(o, err, errlen);
}

int opt_command(const char *s, const char **rest) {
  static const struct {
    const char *word;
    int cmd;
  } words[] = {{"start", OPT_CMD_START},
               {"stop", OPT_CMD_STOP},
               {"dump", OPT_CMD_DUMP},
               {"status", OPT_CMD_STATUS}};
  s = s ? s : "";
  for (size_t i = 0; i < sizeof words / sizeof *words; i++) {
    size_t l = strlen(words[i].word);
    if (!strncmp(s, words[i].word, l) && (s[l] == ',' || s[l] == '\0')) {
      *rest = s[l] ? s + l + 1 : s + l;
      return words[i].cmd;
    }
  }
  *rest = s;
  return OPT_CMD_START;
}

int opt_set_file(struct agent_options *o, const char *v, char *err, size_t errlen) {
  int rc = parse_file(NULL, v, o, err, errlen);
  if (rc) return rc;
  if (expand_file(o)) return fail(err, errlen, "file=%s: path too long", v);
  int f = format_from_name(o->file);
  if (f >= 0) o->format = f;
  return check_event_files(o, v, err, errlen);
}

/* ---- the help text ---- */

/* A bounded string builder: writes what fits (test_options checks that all of help does). */
struct text {
  char *p;
  size_t len, cap;
};

static void text_put(struct text *t, const char *s, size_t n) {
  if (t->len + n >= t->cap) n = t->cap - t->len - 1;
  memcpy(t->p + t->len, s, n);
  t->len += n;
  t->p[t->len] = '\0';
}

static void text_puts(struct text *t, const char *s) { text_put(t, s, strlen(s)); }

/* Whether c starts a column of the help text: backticks are markdown, not text; a UTF-8
 * continuation byte belongs to the character before. */
static bool starts_column(char c) { return c != '`' && ((unsigned char)c & 0xC0) != 0x80; }

/* Appends the markdown paragraph md without its backticks, wrapped at HELP_WIDTH: it
 * continues the line at column col, new lines start at column indent; a `code span` is not
 * broken. Returns the column it ends at. */
static size_t text_wrap(struct text *t, const char *md, size_t col, size_t indent) {
  const char *p = md;
  while (*p) {
    size_t spaces = strspn(p, " ");
    const char *word = p + spaces, *end = word;
    size_t width = 0;
    for (bool code = false; *end && (code || *end != ' '); end++) {
      if (*end == '`') code = !code;
      width += starts_column(*end);
    }
    if (end == word) break;
    if (col > indent && col + spaces + width > HELP_WIDTH) {
      text_puts(t, "\n");
      for (col = 0; col < indent; col++) text_puts(t, " ");
    } else {
      text_put(t, p, spaces);
      col += spaces;
    }
    for (const char *c = word; c < end; c++)
      if (*c != '`') text_put(t, c, 1);
    col += width;
    p = end;
  }
  return col;
}

/* "interval=TIME", "threads[=on|off]", "help". */
static void opt_form(const struct opt_spec *opt, char *buf, size_t len) {
  switch (opt->kind) {
  case OPT_TAKES_VALUE: snprintf(buf, len, "%s=%s", opt->name, opt->placeholder); break;
  case OPT_SWITCH: snprintf(buf, len, "%s[=on|off]", opt->name); break;
  case OPT_NO_VALUE: snprintf(buf, len, "%s", opt->name); break;
  }
}

/* The default as the README shows it: "`10ms`", "`0` (until the JVM exits)", or "". */
static void opt_default(const struct opt_spec *opt, char *buf, size_t len) {
  const char *note = opt->default_note ? opt->default_note : "";
  if (opt->default_value)
    snprintf(buf, len, "`%s`%s%s", opt->default_value, *note ? " " : "", note);
  else
    snprintf(buf, len, "%s", note);
}

static char help_text[12288];
static pthread_once_t help_once = PTHREAD_ONCE_INIT;

static void make_help(void) {
  struct text t = {help_text, 0, sizeof help_text};
  text_puts(&t, "sampler: a thread-aware CPU sampler for the JVM\n"
                "usage: -agentlib:sampler=opt=value,...\n"
                "   or: -agentpath:/path/to/libsampler.so=opt=value,...\n");
  char form[64];
  size_t width = 0;
  for (size_t i = 0; i < OPTION_COUNT; i++) {
    opt_form(&OPTIONS[i], form, sizeof form);
    if (strlen(form) > width) width = strlen(form);
  }
  size_t indent = 2 + width + 2;
  for (size_t i = 0; i < OPTION_COUNT; i++) {
    const struct opt_spec *opt = &OPTIONS[i];
    char shown[256], dflt[272];
    opt_form(opt, form, sizeof form);
    text_puts(&t, "  "); /* the option, padded to the widest one's width plus two */
    text_puts(&t, form);
    for (size_t pad = strlen(form); pad < width + 2; pad++) text_puts(&t, " ");
    size_t col = text_wrap(&t, opt->help, indent, indent);
    opt_default(opt, shown, sizeof shown);
    if (*shown) {
      /* "[default X]" in one piece: after the help if it fits, else on a line of its own */
      snprintf(dflt, sizeof dflt, "[default %s]", shown);
      size_t w = 0;
      for (const char *c = dflt; *c; c++) w += starts_column(*c);
      if (col + 2 + w > HELP_WIDTH) {
        text_puts(&t, "\n");
        for (col = 0; col < indent; col++) text_puts(&t, " ");
      } else {
        text_puts(&t, "  ");
        col += 2;
      }
      text_wrap(&t, dflt, col, indent);
    }
    text_puts(&t, "\n");
  }
  text_puts(&t, "The profile is also written on kill -3 (SIGQUIT: the profile so far).\n");
}

/* The help text, made from OPTIONS[] once (options.h). Thread-safe; not signal-safe. */
const char *opt_help(void) {
  pthread_once(&help_once, make_help);
  return help_text;
}

/* ---- the README's table ---- */

/* Writes " s |": s as one markdown table cell, its | escaped (options.h). */
void opt_markdown_cell(FILE *out, const char *s) {
  if (*s) fputc(' ', out);
  for (; *s; s++) {
    if (*s == '|') fputc('\\', out);
    fputc(*s, out);
  }
  fputs(" |", out);
}

/* Writes README.md's options table (options.h). Returns 0 or -EIO. Thread-safe as stdio is. */
int opt_markdown_table(FILE *out) {
  fputs("| option | values | default |\n|---|---|---|\n", out);
  for (size_t i = 0; i < OPTION_COUNT; i++) {
    const struct opt_spec *opt = &OPTIONS[i];
    char name[64], values[4096], dflt[256];
    snprintf(name, sizeof name, "`%s`", opt->name);
    if (opt->kind == OPT_SWITCH)
      snprintf(values, sizeof values, "`%s`, `%s=on`, `%s=off`: %s", opt->name, opt->name,
               opt->name, opt->help);
    else
      snprintf(values, sizeof values, "%s", opt->help);
    opt_default(opt, dflt, sizeof dflt);
    fputs("|", out);
    opt_markdown_cell(out, name);
    opt_markdown_cell(out, values);
    opt_markdown_cell(out, dflt);
    fputs("\n", out);
  }
  return ferror(out) ? -EIO : 0;
}
