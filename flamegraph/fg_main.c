/*
 * fg_main.c — the `flamegraph` command-line tool: folded stacks (files or stdin, from this
 * agent, perf + stackcollapse, async-profiler's collapsed output), pprof profiles and JFR
 * recordings (fg_jfr.c: --from/--to cut a time range of them) to SVG, HTML or folded.
 * Two inputs make a differential graph (first = base, second = the new profile).
 *
 * Lifecycle: parse options, read every input (a bad line stops with FILE:LINE: reason and
 * exit status 1 before any output file is touched), keep the stacks -I/-X select (fg_filter.c),
 * write, close and check. Usage errors exit with 2.
 */
#include "fg_filter.h"
#include "fg_jfr.h"
#include "fg_pprof.h"
#include "flamegraph.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

enum { FMT_SVG, FMT_HTML, FMT_FOLDED };

#define STR2(x) #x
#define STR(x) STR2(x) /* a macro's value as a string literal: the help cannot drift */
#define FG_MAX_DEPTH_TEXT STR(FG_MAX_DEPTH)

static const char k_help[] =
    "Usage: flamegraph [options] [INPUT|-] [SECOND]\n"
    "Reads folded stacks (frame;frame;... COUNT per line), a pprof profile (a gzipped\n"
    "profile.proto file) or a JFR recording (a file), and writes a flame graph.\n"
    "No INPUT or '-': standard input. Two inputs: a differential graph of SECOND against\n"
    "INPUT (widths from SECOND; red grew, blue shrank, by share of each total). Lines\n"
    "'stack BASE NEW' (two counts: a diff written with -f folded) are read as a diff.\n"
    "\n"
    "Options:\n"
    "  -o, --output FILE     write to FILE instead of standard output\n"
    "  -f, --format FMT      svg, html or folded (default: from the -o extension\n"
    "                        .svg/.html/.htm/.folded/.collapsed/.txt, else svg)\n"
    "      --title TEXT      title (default \"Flame Graph\")\n"
    "      --subtitle TEXT   second line under the title\n"
    "      --width PX        SVG image width (default 1200)\n"
    "      --height PX       SVG frame height (default 16)\n"
    "      --minwidth N[%]   SVG: omit frames narrower than N px, or N% of all samples\n"
    "                        (default 0.1 px)\n"
    "  -c, --colors NAME     palette: hot (default), mem, io, java, red, green, blue, aqua,\n"
    "      --palette NAME    yellow, purple, orange. java colours frames by kind, with a\n"
    "                        legend: JIT _[j] green, inlined _[i] aqua, interpreted _[0]\n"
    "                        lime, C++ (JVM) yellow, native C red, kernel _[k] orange,\n"
    "                        [pseudo-frames] lavender, [thread roots] grey\n"
    "      --hash            colour by a hash of the name (same name, same colour)\n"
    "      --countname NAME  what a count is (default \"samples\")\n"
    "      --reverse         reverse the stacks: merge at the leaves (SVG, folded)\n"
    "      --inverted        icicle graph: root at the top (SVG)\n"
    "      --diff-absolute   diff colours by raw count change instead of share change\n"
    "      --html-prune PCT  HTML: leave out subtrees below PCT% of all samples\n"
    "                        (default 0.001; 0 keeps everything)\n"
    "      --html-max-nodes N  HTML: keep at most N frames, the largest (the pruning cut\n"
    "                        rises until they fit; default 200000; 0: no limit)\n"
    "      --value TYPE      pprof input: the sample type to count (e.g. cpu; default\n"
    "                        the first, samples in the agent's files); JFR input:\n"
    "                        samples (one per jdk.ExecutionSample, the default), cpu\n"
    "                        (the CPU time of the agent's sampler.CPUSample events, ns)\n"
    "                        alloc (jdk.ObjectAllocationSample's weight in bytes,\n"
    "                        the allocated class as the leaf, byte[]_[a]), monitor\n"
    "                        or park (jdk.JavaMonitorEnter's or jdk.ThreadPark's\n"
    "                        duration in ns, the lock's class as the leaf, _[l])\n"
    "  -I, --include REGEX   keep only the stacks with a frame matching REGEX (POSIX\n"
    "                        extended, anywhere in the name; repeated: any of them)\n"
    "  -X, --exclude REGEX   drop the stacks with a frame matching REGEX (repeatable)\n"
    "JFR input (a recording of the agent's format=jfr or of the JDK's own JFR; its\n"
    "HTML page has the time axis, a heat map of 20 ms cells):\n"
    "      --from TIME       only events from TIME on (after the recording's start)\n"
    "      --to TIME         only events before TIME; TIME: 1.5s, 3000ms or seconds,\n"
    "                        negative: before the recording's end (--from -10s), or a\n"
    "                        wall-clock time, local (Z: UTC): 14:03:05.250, or\n"
    "                        2026-11-28T14:03 (without a date: the day of the start)\n"
    "      --threads         the sampled thread as a root frame \"[NAME tid=N]\"\n"
    "      --lines           Java frames carry their source line: Cls.method:152\n"
    "      --ann, --no-ann   Java frames carry their kind: _[j] JIT compiled, _[i]\n"
    "                        inlined, _[0] interpreted (default: on for svg and html,\n"
    "                        off for folded, as the agent's ann option)\n"
    "  -h, --help            this help\n"
    "  -V, --version         the version\n"
    "\n"
    "Errors name the input and line: \"flamegraph: FILE:LINE: what is wrong\", exit 1.\n"
    "Inputs are read within limits: stacks of at most " FG_MAX_DEPTH_TEXT " frames; for\n"
    "pprof, an inflated size and an expansion budget set by the file's size (see\n"
    "flamegraph/README.md). An input past one is refused with an error naming the limit.\n";

static int usage_error(const char *fmt, const char *arg) {
  fprintf(stderr, "flamegraph: ");
  fprintf(stderr, fmt, arg);
  fprintf(stderr, "\nTry 'flamegraph --help'.\n");
  return 2;
}

static int parse_int(const char *s, int lo, int hi, int *out) {
  char *end;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (errno || end == s || *end || v < lo || v > hi) return -1;
  *out = (int)v;
  return 0;
}

static int parse_double(const char *s, double lo, double hi, double *out, int *pct) {
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (pct) *pct = 0;
  if (pct && *end == '%' && end != s) {
    *pct = 1;
    end++;
  }
  if (errno || end == s || *end || !(v >= lo && v <= hi)) return -1;
  *out = v;
  return 0;
}

static int ends_with(const char *s, const char *suf) {
  size_t n = strlen(s), k = strlen(suf);
  return n >= k && strcasecmp(s + n - k, suf) == 0;
}

/* The whole of file fd into *buf (malloc'd). Returns 0 or a negative errno. */
static int slurp(int fd, unsigned char **buf, size_t *len) {
  size_t cap = 1 << 20, n = 0;
  unsigned char *b = malloc(cap);
  if (!b) return -ENOMEM;
  for (;;) {
    if (n == cap) {
      unsigned char *g = realloc(b, cap * 2);
      if (!g) {
        free(b);
        return -ENOMEM;
      }
      b = g;
      cap *= 2;
    }
    ssize_t r = read(fd, b + n, cap - n);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) {
      int e = errno;
      free(b);
      return -e;
    }
    if (r == 0) break;
    n += (size_t)r;
  }
  *buf = b;
  *len = n;
  return 0;
}

/* A file that starts as gzip does is read as a pprof profile. */
static int is_gzip_file(int fd) {
  unsigned char magic[2];
  return pread(fd, magic, sizeof magic, 0) == 2 && fg_is_gzip(magic, 2);
}

static const char *pprof_value; /* --value */
static fg_jfr_options jfr_opts; /* --from, --to, --threads, --lines, --ann */
static int jfr_only;            /* the first option given that only JFR input takes, or 0 */
static const char *jfr_only_name;

/* A wall-clock time for --from / --to: [YYYY-MM-DD(T| )]HH:MM[:SS[.fff]][Z] — local time, UTC
 * with Z; without a date, the time of day nearest the recording's start. *kind gets
 * FG_JFR_AT_EPOCH (*ns: since the epoch) or FG_JFR_AT_DAY (*ns: since midnight, *utc set with Z). */
static int parse_clock(const char *s, int *kind, int64_t *ns, int *utc) {
  int y = 0, mo = 0, d = 0, h, mi, n = 0;
  const char *p = s;
  if (sscanf(p, "%4d-%2d-%2d%n", &y, &mo, &d, &n) == 3 && (p[n] == 'T' || p[n] == ' '))
    p += n + 1;
  else
    y = 0;
  n = 0;
  if (sscanf(p, "%2d:%2d%n", &h, &mi, &n) != 2 || h < 0 || h > 23 || mi < 0 || mi > 59) return -1;
  p += n;
  double sec = 0;
  if (*p == ':') {
    char *end;
    if (p[1] < '0' || p[1] > '9') return -1;
    sec = strtod(p + 1, &end);
    if (!(sec >= 0 && sec < 61)) return -1;
    p = end;
  }
  *utc = *p == 'Z';
  if (*p == 'Z') p++;
  if (*p) return -1;
  int64_t day_ns = ((int64_t)h * 3600 + mi * 60) * 1000000000 + (int64_t)(sec * 1e9);
  if (!y) {
    *kind = FG_JFR_AT_DAY;
    *ns = day_ns;
    return 0;
  }
  if (mo < 1 || mo > 12 || d < 1 || d > 31) return -1;
  struct tm t = {.tm_year = y - 1900, .tm_mon = mo - 1, .tm_mday = d, .tm_isdst = -1};
  time_t midnight = *utc ? timegm(&t) : mktime(&t);
  if (midnight == (time_t)-1) return -1;
  *kind = FG_JFR_AT_EPOCH;
  *ns = (int64_t)midnight * 1000000000 + day_ns;
  return 0;
}

/* A time for --from / --to: a number of seconds, or with the unit s or ms, from the recording's
 * start (negative: from its end; *kind FG_JFR_AT_START), or a wall-clock time (parse_clock). */
static int parse_time(const char *s, int *kind, int64_t *ns, int *utc) {
  if (strchr(s, ':')) return parse_clock(s, kind, ns, utc);
  *kind = FG_JFR_AT_START;
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  double scale = 1e9;
  if (end != s && strcmp(end, "ms") == 0)
    scale = 1e6;
  else if (end == s || (*end && strcmp(end, "s") != 0))
    return -1;
  if (errno || !(v * scale > -9e18 && v * scale < 9e18)) return -1;
  *ns = (int64_t)(v * scale);
  return 0;
}

/* A file that starts as a JFR chunk does ("FLR\0") is read as a recording. */
static int is_jfr_file(int fd) {
  unsigned char magic[4];
  return pread(fd, magic, sizeof magic, 0) == 4 && fg_is_jfr(magic, 4);
}

static int read_input(fg_profile *p, const char *path, int column) {
  int fd = 0;
  const char *label = "<stdin>";
  if (strcmp(path, "-") != 0) {
    label = path;
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      fprintf(stderr, "flamegraph: %s: %s\n", path, strerror(errno));
      return 1;
    }
  }
  fg_read_error err;
  memset(&err, 0, sizeof err);
  int rc;
  int jfr = fd != 0 && is_jfr_file(fd);
  if (!jfr && jfr_only) {
    fprintf(stderr,
            "flamegraph: %s: %s takes a JFR recording; this input has no events to "
            "cut or name (folded stacks and pprof carry no time)\n",
            label, jfr_only_name);
    if (fd != 0) close(fd);
    return 2;
  }
  if (fd != 0 && (jfr || is_gzip_file(fd))) {
    unsigned char *buf = NULL;
    size_t len = 0;
    rc = slurp(fd, &buf, &len);
    if (rc == 0)
      rc = jfr ? fg_read_jfr(p, buf, len, column, &jfr_opts, &err)
               : fg_read_pprof(p, buf, len, column, pprof_value, &err);
    else
      snprintf(err.msg, sizeof err.msg, "%s", strerror(-rc));
    free(buf);
  } else {
    rc = fg_read_fd(p, fd, column, &err);
  }
  if (fd != 0) close(fd);
  if (rc) {
    if (err.line)
      fprintf(stderr, "flamegraph: %s:%lu: %s\n", label, err.line, err.msg);
    else
      fprintf(stderr, "flamegraph: %s: %s\n", label, err.msg[0] ? err.msg : strerror(-rc));
    return 1;
  }
  return 0;
}

/* The tool: exit 0 on success, 1 on an input, output or memory error, 2 on a usage error. */
int main(int argc, char **argv) {
  /* Big arrays from the heap, kept after free: the tree view written after reading then
   * reuses the pages of the freed lookup tables instead of faulting in fresh zeroed pages
   * (zeroing memory was a quarter of the run time on this project's VMs). */
  mallopt(M_MMAP_MAX, 0);
  mallopt(M_TRIM_THRESHOLD, INT_MAX);
  enum {
    O_TITLE = 256,
    O_SUBTITLE,
    O_WIDTH,
    O_HEIGHT,
    O_MINWIDTH,
    O_HASH,
    O_COUNTNAME,
    O_REVERSE,
    O_INVERTED,
    O_DIFFABS,
    O_PRUNE,
    O_MAXNODES,
    O_VALUE,
    O_FROM,
    O_TO,
    O_THREADS,
    O_LINES,
    O_ANN,
    O_NOANN
  };
  static const struct option longopts[] = {
      {"output", required_argument, 0, 'o'},
      {"format", required_argument, 0, 'f'},
      {"title", required_argument, 0, O_TITLE},
      {"subtitle", required_argument, 0, O_SUBTITLE},
      {"width", required_argument, 0, O_WIDTH},
      {"height", required_argument, 0, O_HEIGHT},
      {"minwidth", required_argument, 0, O_MINWIDTH},
      {"colors", required_argument, 0, 'c'},
      {"palette", required_argument, 0, 'c'},
      {"hash", no_argument, 0, O_HASH},
      {"countname", required_argument, 0, O_COUNTNAME},
      {"reverse", no_argument, 0, O_REVERSE},
      {"inverted", no_argument, 0, O_INVERTED},
      {"diff-absolute", no_argument, 0, O_DIFFABS},
      {"html-prune", required_argument, 0, O_PRUNE},
      {"html-max-nodes", required_argument, 0, O_MAXNODES},
      {"value", required_argument, 0, O_VALUE},
      {"include", required_argument, 0, 'I'},
      {"exclude", required_argument, 0, 'X'},
      {"from", required_argument, 0, O_FROM},
      {"to", required_argument, 0, O_TO},
      {"threads", no_argument, 0, O_THREADS},
      {"lines", no_argument, 0, O_LINES},
      {"ann", no_argument, 0, O_ANN},
      {"no-ann", no_argument, 0, O_NOANN},
      {"help", no_argument, 0, 'h'},
      {"version", no_argument, 0, 'V'},
      {0, 0, 0, 0},
  };
  fg_options o;
  fg_options_init(&o);
  const char *output = NULL;
  int format = -1, opt, ann = -1;
  enum { MAX_PATTERNS = 64 };
  static regex_t patterns[2][MAX_PATTERNS]; /* -I, -X */
  size_t npatterns[2] = {0, 0};
  fg_jfr_options_init(&jfr_opts);
  while ((opt = getopt_long(argc, argv, "o:f:c:I:X:hV", longopts, NULL)) != -1) {
    switch (opt) {
    case 'o': output = optarg; break;
    case O_VALUE:
      pprof_value = optarg;
      jfr_opts.value = optarg;
      break;
    case O_FROM:
    case O_TO: {
      int64_t ns;
      int kind, utc = 0;
      if (parse_time(optarg, &kind, &ns, &utc)) {
        char msg[1024];
        snprintf(msg, sizeof msg,
                 "%s '%.800s': expected a time from the start (1.5s, 3000ms or seconds; negative "
                 "from the end) or a wall-clock time ([YYYY-MM-DDT]HH:MM[:SS.fff][Z])",
                 opt == O_FROM ? "--from" : "--to", optarg);
        return usage_error("%s", msg);
      }
      if (opt == O_FROM) {
        jfr_opts.has_from = kind;
        jfr_opts.from_ns = ns;
        jfr_opts.from_utc = utc;
      } else {
        jfr_opts.has_to = kind;
        jfr_opts.to_ns = ns;
        jfr_opts.to_utc = utc;
      }
      break;
    }
    case 'I':
    case 'X': {
      size_t *n = &npatterns[opt == 'X'];
      if (*n == MAX_PATTERNS)
        return usage_error("%s: at most 64 patterns each", opt == 'I' ? "-I" : "-X");
      int e = regcomp(&patterns[opt == 'X'][*n], optarg, REG_EXTENDED | REG_NOSUB);
      if (e) {
        char why[128];
        regerror(e, &patterns[opt == 'X'][*n], why, sizeof why);
        fprintf(stderr, "flamegraph: %s '%s': not a regular expression: %s\n",
                opt == 'I' ? "-I" : "-X", optarg, why);
        fprintf(stderr, "Try 'flamegraph --help'.\n");
        return 2;
      }
      (*n)++;
      break;
    }
    case O_THREADS: jfr_opts.threads = 1; break;
    case O_LINES: jfr_opts.lines = 1; break;
    case O_ANN:
    case O_NOANN: ann = opt == O_ANN; break;
    case 'f':
      if (strcmp(optarg, "svg") == 0)
        format = FMT_SVG;
      else if (strcmp(optarg, "html") == 0)
        format = FMT_HTML;
      else if (strcmp(optarg, "folded") == 0)
        format = FMT_FOLDED;
      else
        return usage_error("unknown format '%s' (svg, html or folded)", optarg);
      break;
    case O_TITLE: o.title = optarg; break;
    case O_SUBTITLE: o.subtitle = optarg; break;
    case O_WIDTH:
      if (parse_int(optarg, 50, 1000000, &o.width))
        return usage_error("--width '%s': expected a whole number of px, 50 to 1000000", optarg);
      break;
    case O_HEIGHT:
      if (parse_int(optarg, 1, 1000, &o.frame_height))
        return usage_error("--height '%s': expected a whole number of px, 1 to 1000", optarg);
      break;
    case O_MINWIDTH:
      if (parse_double(optarg, 0, 1e9, &o.min_width, &o.min_width_pct) ||
          (o.min_width_pct && o.min_width > 100))
        return usage_error("--minwidth '%s': expected px (0.1) or a percentage (0.5%%)", optarg);
      break;
    case 'c': {
      fg_palette pal;
      if (fg_palette_parse(optarg, &pal))
        return usage_error("unknown palette '%s' (hot, mem, io, java, red, green, blue, aqua, "
                           "yellow, purple, orange)",
                           optarg);
      o.palette = pal;
      break;
    }
    case O_HASH: o.hash = 1; break;
    case O_COUNTNAME: o.count_name = optarg; break;
    case O_REVERSE: o.reverse = 1; break;
    case O_INVERTED: o.inverted = 1; break;
    case O_DIFFABS: o.diff_absolute = 1; break;
    case O_PRUNE: {
      double pct;
      if (parse_double(optarg, 0, 100, &pct, NULL))
        return usage_error("--html-prune '%s': expected a percentage, 0 to 100", optarg);
      o.html_prune = pct / 100.0;
      break;
    }
    case O_MAXNODES: {
      int n;
      if (parse_int(optarg, 0, 2000000000, &n))
        return usage_error("--html-max-nodes '%s': expected a whole number >= 0", optarg);
      o.html_max_nodes = (size_t)n;
      break;
    }
    case 'h': fputs(k_help, stdout); return 0;
    case 'V': printf("flamegraph %s\n", FG_VERSION); return 0;
    default: fprintf(stderr, "Try 'flamegraph --help'.\n"); return 2;
    }
    if (!jfr_only && opt >= O_FROM && opt <= O_NOANN) {
      static const char *const names[] = {"--from",  "--to",  "--threads",
                                          "--lines", "--ann", "--no-ann"};
      jfr_only = opt;
      jfr_only_name = names[opt - O_FROM];
    }
  }
  int ninputs = argc - optind;
  if (ninputs > 2)
    return usage_error("too many inputs (at most two: BASE and NEW), '%s'", argv[optind + 2]);
  if (format < 0) {
    format = FMT_SVG;
    if (output && (ends_with(output, ".html") || ends_with(output, ".htm")))
      format = FMT_HTML;
    else if (output && (ends_with(output, ".folded") || ends_with(output, ".collapsed") ||
                        ends_with(output, ".txt")))
      format = FMT_FOLDED;
  }
  jfr_opts.ann = ann >= 0 ? ann : format != FMT_FOLDED; /* as the agent's ann option */
  jfr_opts.time = format == FMT_HTML && ninputs <= 1;   /* the page's heat map (not for a diff) */
  if (ninputs == 2 && strcmp(argv[optind], "-") == 0 && strcmp(argv[optind + 1], "-") == 0)
    return usage_error("%s", "standard input can be only one of the two inputs");

  fg_profile *p = fg_profile_new();
  if (!p) {
    fprintf(stderr, "flamegraph: out of memory\n");
    return 1;
  }
  int status = 0;
  if (ninputs == 0)
    status = read_input(p, "-", FG_MAIN);
  else if (ninputs == 1)
    status = read_input(p, argv[optind], FG_MAIN);
  else {
    status = read_input(p, argv[optind], FG_BASE);
    if (!status) status = read_input(p, argv[optind + 1], FG_MAIN);
  }
  if (status) {
    fg_profile_free(p);
    return status;
  }
  if (npatterns[0] || npatterns[1]) {
    fg_profile *f = fg_profile_filtered(p, patterns[0], npatterns[0], patterns[1], npatterns[1]);
    fg_profile_free(p);
    p = f;
    if (!p) {
      fprintf(stderr, "flamegraph: out of memory\n");
      return 1;
    }
  }
  fg_profile_trim(p); /* reading is done: the lookup tables are dead weight now */
  if (format == FMT_FOLDED && o.reverse) {
    fg_profile *r = fg_profile_reversed(p);
    fg_profile_free(p);
    p = r;
    if (!p) {
      fprintf(stderr, "flamegraph: out of memory\n");
      return 1;
    }
  }
  FILE *out = stdout;
  if (output) {
    out = fopen(output, "w");
    if (!out) {
      fprintf(stderr, "flamegraph: %s: %s\n", output, strerror(errno));
      fg_profile_free(p);
      return 1;
    }
  }
  static char outbuf[1 << 16];
  setvbuf(out, outbuf, _IOFBF, sizeof outbuf);
  int rc = format == FMT_HTML     ? fg_write_html(out, p, &o)
           : format == FMT_FOLDED ? fg_write_folded(out, p)
                                  : fg_write_svg(out, p, &o);
  if (fflush(out) != 0 && !rc) rc = -EIO;
  if (output && fclose(out) != 0 && !rc) rc = -EIO;
  if (rc) {
    fprintf(stderr, "flamegraph: writing %s: %s\n", output ? output : "<stdout>", strerror(-rc));
    if (output) unlink(output);
    status = 1;
  }
  fg_profile_free(p);
  return status;
}
