/*
 * options.c — parsing of the agent's option string (see options.h). Pure: no JVM, no I/O
 * except the clock and pid for %t/%p, so the unit tests can drive every bad input.
 */
#include "options.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sampler.h"

#define MIN_INTERVAL_NS 100000ull           /* 100us */
#define MAX_INTERVAL_NS 10000000000ull      /* 10s */
#define MAX_DEPTH 8192

static const char *const KNOWN =
    "interval, file, format, depth, threads, lines, ann, codemap, hasrun, signal, duration, weight, help";

static const char HELP[] =
    "sampler: a thread-aware CPU sampler for the JVM\n"
    "usage: -agentlib:sampler=opt=value,...  (or -agentpath:/path/to/libsampler.so=...)\n"
    "  interval=TIME   time between samples, with a unit: ns, us, ms or s (100us..10s)\n"
    "                  [default 10ms]\n"
    "  file=PATH       where the profile goes; %p = pid, %t = start time (YYYYmmdd-HHMMSS)\n"
    "                  [default sampler-%p.<format>]\n"
    "  format=FMT      folded | text | svg | html  [default: from file's extension\n"
    "                  (.folded .collapsed .txt .svg .html .htm), else folded]\n"
    "  depth=N         most frames per stack, 1..8192  [default 1024]\n"
    "  threads[=on|off] a root frame per thread: [name tid=N]  [default off]\n"
    "  lines[=on|off]  frames carry their source line: Class.method:152  [default off]\n"
    "  ann[=on|off]    Java frames carry how they ran: _[j] JIT-compiled, _[i] inlined,\n"
    "                  _[0] interpreted (native methods plain)\n"
    "                  [default on for svg and html, off for folded and text]\n"
    "  codemap[=on|off] keep a map of the JIT's code: samples AsyncGetCallTrace cannot walk\n"
    "                  are attributed through it, and ann needs it  [default on]\n"
    "  hasrun=MODE     evidence that a thread ran since its last sample:\n"
    "                  auto: its CPU clock, registers arbitrate tiny deltas [default]\n"
    "                  cpu:  its CPU clock alone\n"
    "                  regs: a checksum of its registers alone (the JVMPI paper)\n"
    "  signal=SIG      sampling signal: RTMIN+N, PROF, VTALRM, ALRM, USR1 or a number\n"
    "                  [default RTMIN+4]\n"
    "  duration=TIME   stop sampling and write the profile after TIME (ms, s, m, h);\n"
    "                  0 = until the JVM exits  [default 0]\n"
    "  weight=W        what a folded count means: samples (one per interval of CPU;\n"
    "                  with hasrun=regs one per stack captured) | cpu (nanoseconds)\n"
    "                  [default samples]\n"
    "  help            print this and stop\n"
    "The profile is also written on kill -3 (SIGQUIT: the profile so far).\n";

const char *opt_help(void) { return HELP; }

const char *opt_format_name(int f) {
  static const char *const n[] = {"folded", "text", "svg", "html"};
  return f >= 0 && f < 4 ? n[f] : "?";
}

static int fail(char *err, size_t len, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, len, fmt, ap);
  va_end(ap);
  return -1;
}

struct unit {
  const char *name;
  uint64_t ns;
};

/* Parses "<digits><unit>" with a unit from the table; returns 0, -1 malformed, -2 no unit,
 * -3 overflow. */
static int parse_time(const char *v, const struct unit *units, uint64_t *out) {
  const char *p = v;
  uint64_t n = 0;
  if (*p < '0' || *p > '9') return -1;
  for (; *p >= '0' && *p <= '9'; p++) {
    if (n > (UINT64_MAX - 9) / 10) return -3;
    n = n * 10 + (uint64_t)(*p - '0');
  }
  if (!*p) return -2;
  for (const struct unit *u = units; u->name; u++) {
    if (strcmp(p, u->name) == 0) {
      if (n && u->ns > UINT64_MAX / n) return -3;
      *out = n * u->ns;
      return 0;
    }
  }
  return -1;
}

static const struct unit INTERVAL_UNITS[] = {
    {"ns", 1}, {"us", 1000}, {"ms", 1000000}, {"s", 1000000000}, {NULL, 0}};
static const struct unit DURATION_UNITS[] = {{"ms", 1000000},
                                             {"s", 1000000000},
                                             {"m", 60ull * 1000000000},
                                             {"h", 3600ull * 1000000000},
                                             {NULL, 0}};

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

static int parse_int(const char *v, long lo, long hi, long *out) {
  char *end;
  errno = 0;
  long n = strtol(v, &end, 10);
  if (!*v || *end || errno || n < lo || n > hi || *v == '+' || *v == ' ') return -1;
  *out = n;
  return 0;
}

static int parse_signal(const char *v, int *sig, char *name, size_t namelen) {
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
    snprintf(name, namelen, "SIG%s", *sig == SIGPROF ? "PROF" : *sig == SIGVTALRM ? "VTALRM"
                                     : *sig == SIGALRM ? "ALRM" : "USR1");
  return 0;
}

/* Expands %p and %t of the file= value into o->file. */
static int expand_file(const char *v, struct agent_options *o) {
  char stamp[32];
  time_t t = time(NULL);
  struct tm tm;
  localtime_r(&t, &tm);
  strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
  size_t n = 0, cap = sizeof o->file;
  for (const char *p = v; *p; p++) {
    char tmp[32];
    const char *add = tmp;
    if (p[0] == '%' && p[1] == 'p') {
      snprintf(tmp, sizeof tmp, "%d", (int)getpid());
      p++;
    } else if (p[0] == '%' && p[1] == 't') {
      add = stamp;
      p++;
    } else if (p[0] == '%' && p[1] == '%') {
      tmp[0] = '%', tmp[1] = '\0';
      p++;
    } else {
      tmp[0] = *p, tmp[1] = '\0';
    }
    size_t l = strlen(add);
    if (n + l >= cap) return -1;
    memcpy(o->file + n, add, l);
    n += l;
  }
  o->file[n] = '\0';
  return 0;
}

static int format_from_name(const char *f) {
  const char *dot = strrchr(f, '.');
  const char *slash = strrchr(f, '/');
  if (!dot || (slash && dot < slash)) return -1;
  if (!strcmp(dot, ".folded") || !strcmp(dot, ".collapsed")) return FORMAT_FOLDED;
  if (!strcmp(dot, ".txt")) return FORMAT_TEXT;
  if (!strcmp(dot, ".svg")) return FORMAT_SVG;
  if (!strcmp(dot, ".html") || !strcmp(dot, ".htm")) return FORMAT_HTML;
  return -1;
}

static int on_off(const char *v, int *out) {
  if (!v || !strcmp(v, "on") || !strcmp(v, "true") || !strcmp(v, "yes")) return *out = 1, 0;
  if (!strcmp(v, "off") || !strcmp(v, "false") || !strcmp(v, "no")) return *out = 0, 0;
  return -1;
}

int opt_parse(const char *s, struct agent_options *o, char *err, size_t errlen) {
  memset(o, 0, sizeof *o);
  o->interval_ns = 10000000;
  o->format = -1;
  o->depth = 1024;
  o->hasrun = SAMPLER_HASRUN_AUTO;
  o->sig = SIGRTMIN + 4;
  snprintf(o->sig_name, sizeof o->sig_name, "SIGRTMIN+4");
  o->weight = WEIGHT_SAMPLES;
  o->codemap = 1;
  const char *file = NULL;
  char filebuf[sizeof o->file];
  unsigned seen = 0;
  static const char *const names[] = {"interval", "file",     "format", "depth", "threads", "hasrun",
                                      "signal",   "duration", "weight", "help",  "lines", "ann", "codemap"};

  char *copy = strdup(s ? s : "");
  if (!copy) return fail(err, errlen, "out of memory");
  int rc = 0;
  char *save = NULL;
  for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    char *v = strchr(tok, '=');
    if (v) *v++ = '\0';
    int which = -1;
    for (int i = 0; i < (int)(sizeof names / sizeof *names); i++)
      if (!strcmp(tok, names[i])) which = i;
    if (which < 0) {
      rc = fail(err, errlen, "unknown option '%s' (known: %s)", tok, KNOWN);
      break;
    }
    if (seen & (1u << which)) {
      rc = fail(err, errlen, "option '%s' given twice", tok);
      break;
    }
    seen |= 1u << which;
    if (!v && which != 4 && which != 9 && which != 10 && which != 11 && which != 12) {
      rc = fail(err, errlen, "option '%s' needs a value (%s=...)", tok, tok);
      break;
    }
    switch (which) {
    case 0: { /* interval */
      uint64_t ns;
      int r = parse_time(v, INTERVAL_UNITS, &ns);
      if (r == -2)
        rc = fail(err, errlen, "interval=%s: needs a unit: ns, us, ms or s (e.g. interval=10ms)", v);
      else if (r == -1)
        rc = fail(err, errlen, "interval=%s: not a time: a whole number with a unit ns, us, ms or s (e.g. interval=10ms)", v);
      else if (r == -3 || ns < MIN_INTERVAL_NS || ns > MAX_INTERVAL_NS)
        rc = fail(err, errlen, "interval=%s: out of range: 100us to 10s", v);
      else
        o->interval_ns = ns;
      break;
    }
    case 1: /* file */
      if (!*v) {
        rc = fail(err, errlen, "file=: empty path");
      } else {
        snprintf(filebuf, sizeof filebuf, "%s", v);
        file = filebuf;
      }
      break;
    case 2: /* format */
      if (!strcmp(v, "folded") || !strcmp(v, "collapsed")) o->format = FORMAT_FOLDED;
      else if (!strcmp(v, "text")) o->format = FORMAT_TEXT;
      else if (!strcmp(v, "svg")) o->format = FORMAT_SVG;
      else if (!strcmp(v, "html")) o->format = FORMAT_HTML;
      else rc = fail(err, errlen, "format=%s: accepted: folded, text, svg, html", v);
      break;
    case 3: { /* depth */
      long n;
      if (parse_int(v, 1, MAX_DEPTH, &n))
        rc = fail(err, errlen, "depth=%s: accepted: a whole number from 1 to %d", v, MAX_DEPTH);
      else
        o->depth = (int)n;
      break;
    }
    case 4: /* threads */
      if (on_off(v, &o->threads)) rc = fail(err, errlen, "threads=%s: accepted: on, off", v);
      break;
    case 5: /* hasrun */
      if (!strcmp(v, "auto")) o->hasrun = SAMPLER_HASRUN_AUTO;
      else if (!strcmp(v, "cpu")) o->hasrun = SAMPLER_HASRUN_CPU;
      else if (!strcmp(v, "regs")) o->hasrun = SAMPLER_HASRUN_REGS;
      else rc = fail(err, errlen, "hasrun=%s: accepted: auto, cpu, regs", v);
      break;
    case 6: /* signal */
      if (parse_signal(v, &o->sig, o->sig_name, sizeof o->sig_name))
        rc = fail(err, errlen,
                  "signal=%s: accepted: RTMIN+N (N = 0..%d), PROF, VTALRM, ALRM, USR1, or their number "
                  "(signals the JVM uses itself are refused)",
                  v, SIGRTMAX - SIGRTMIN);
      break;
    case 7: { /* duration */
      uint64_t ns = 0;
      int r = strcmp(v, "0") == 0 ? 0 : parse_time(v, DURATION_UNITS, &ns);
      if (r == -2)
        rc = fail(err, errlen, "duration=%s: needs a unit: ms, s, m or h (e.g. duration=30s)", v);
      else if (r)
        rc = fail(err, errlen, "duration=%s: accepted: 0 or a whole number with a unit ms, s, m or h (e.g. duration=30s)", v);
      else
        o->duration_ns = ns;
      break;
    }
    case 8: /* weight */
      if (!strcmp(v, "samples")) o->weight = WEIGHT_SAMPLES;
      else if (!strcmp(v, "cpu")) o->weight = WEIGHT_CPU;
      else rc = fail(err, errlen, "weight=%s: accepted: samples, cpu", v);
      break;
    case 9: /* help */
      if (v) rc = fail(err, errlen, "help takes no value");
      else o->help = 1;
      break;
    case 10: /* lines */
      if (on_off(v, &o->lines)) rc = fail(err, errlen, "lines=%s: accepted: on, off", v);
      break;
    case 11: /* ann */
      if (on_off(v, &o->ann)) rc = fail(err, errlen, "ann=%s: accepted: on, off", v);
      break;
    case 12: /* codemap */
      if (on_off(v, &o->codemap)) rc = fail(err, errlen, "codemap=%s: accepted: on, off", v);
      break;
    }
    if (rc) break;
  }
  free(copy);
  if (rc) return rc;

  if (o->weight == WEIGHT_CPU && o->hasrun == SAMPLER_HASRUN_REGS)
    return fail(err, errlen, "weight=cpu: needs hasrun=auto or hasrun=cpu (hasrun=regs does not measure CPU time)");
  if (file) {
    if (expand_file(file, o)) return fail(err, errlen, "file=%s: path too long", file);
    if (o->format < 0) o->format = format_from_name(o->file);
  }
  if (o->format < 0) o->format = FORMAT_FOLDED;
  if (!(seen & (1u << 11))) o->ann = o->codemap && (o->format == FORMAT_SVG || o->format == FORMAT_HTML);
  if (o->ann && !o->codemap)
    return fail(err, errlen, "ann: needs codemap=on (frame kinds come from the compiled-code map)");
  if (!file) {
    static const char *const ext[] = {"folded", "txt", "svg", "html"};
    snprintf(filebuf, sizeof filebuf, "sampler-%%p.%s", ext[o->format]);
    expand_file(filebuf, o);
  }
  return 0;
}
