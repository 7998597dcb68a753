/* Unit tests of the option parser: defaults, every accepted form, every bad input. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "options.h"
#include "sampler.h"

static struct agent_options o;
static char err[1024];

Test(options, defaults) {
  cr_assert_eq(opt_parse(NULL, &o, err, sizeof err), 0);
  cr_expect_eq(o.interval_ns, 10000000u);
  cr_expect_eq(o.format, FORMAT_FOLDED);
  cr_expect_eq(o.depth, 1024);
  cr_expect_eq(o.threads, 0);
  cr_expect_eq(o.hasrun, SAMPLER_HASRUN_AUTO);
  cr_expect_eq(o.sig, SIGRTMIN + 4);
  cr_expect_eq(o.duration_ns, 0u);
  cr_expect_eq(o.weight, WEIGHT_SAMPLES);
  cr_expect_eq(o.lines, 0);
  cr_expect_eq(o.ann, 0);
  cr_expect_eq(o.codemap, 1);
  cr_expect_eq(o.cstack, 1, "native frames by default");
  cr_expect_eq(o.jvmthreads, 1, "the JVM's threads by default");
  cr_expect_eq(o.help, 0);
  cr_expect_str_eq(o.sig_name, "SIGRTMIN+4");
  char want[64];
  snprintf(want, sizeof want, "sampler-%d.folded", (int)getpid());
  cr_expect_str_eq(o.file, want);
  cr_assert_eq(opt_parse("", &o, err, sizeof err), 0);
}

Test(options, units) {
  static const struct {
    const char *in;
    uint64_t ns;
  } cases[] = {{"interval=100us", 100000},
               {"interval=1ms", 1000000},
               {"interval=250000ns", 250000},
               {"interval=2s", 2000000000},
               {"interval=10s", 10000000000ull}};
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    cr_assert_eq(opt_parse(cases[i].in, &o, err, sizeof err), 0, "%s: %s", cases[i].in, err);
    cr_expect_eq(o.interval_ns, cases[i].ns, "%s", cases[i].in);
  }
  cr_assert_eq(opt_parse("duration=90s", &o, err, sizeof err), 0);
  cr_expect_eq(o.duration_ns, 90000000000ull);
  cr_assert_eq(opt_parse("duration=2m", &o, err, sizeof err), 0);
  cr_expect_eq(o.duration_ns, 120000000000ull);
  cr_assert_eq(opt_parse("duration=0", &o, err, sizeof err), 0);
  cr_expect_eq(o.duration_ns, 0u);
}

Test(options, everything) {
  cr_assert_eq(
      opt_parse(
          "interval=1ms,file=/tmp/p-%p.svg,depth=64,threads,hasrun=regs,signal=PROF,duration=5s",
          &o, err, sizeof err),
      0, "%s", err);
  char want[64];
  snprintf(want, sizeof want, "/tmp/p-%d.svg", (int)getpid());
  cr_expect_str_eq(o.file, want);
  cr_expect_eq(o.format, FORMAT_SVG);
  cr_expect_eq(o.depth, 64);
  cr_expect_eq(o.threads, 1);
  cr_expect_eq(o.lines, 0);
  cr_expect_eq(o.hasrun, SAMPLER_HASRUN_REGS);
  cr_expect_eq(o.sig, SIGPROF);
  cr_expect_str_eq(o.sig_name, "SIGPROF");
  cr_assert_eq(opt_parse("lines", &o, err, sizeof err), 0);
  cr_expect_eq(o.lines, 1);
  cr_assert_eq(opt_parse("lines=off", &o, err, sizeof err), 0);
  cr_expect_eq(o.lines, 0);
}

Test(options, ann_defaults_to_the_format_and_can_be_set) {
  struct agent_options o;
  char err[256];
  static const struct {
    const char *in;
    int ann;
  } cases[] = {{"", 0},
               {"file=p.folded", 0},
               {"file=p.txt", 0},
               {"file=p.svg", 1},
               {"file=p.html", 1},
               {"format=html", 1},
               {"file=p.jfr", 1},
               {"file=p.pb.gz", 0},
               {"file=p.jfr,codemap=off", 0},
               {"file=p.html,ann=off", 0},
               {"file=p.folded,ann", 1},
               {"ann=on,format=text", 1},
               {"file=p.html,codemap=off", 0}};
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    cr_assert_eq(opt_parse(cases[i].in, &o, err, sizeof err), 0, "%s: %s", cases[i].in, err);
    cr_expect_eq(o.ann, cases[i].ann, "%s", cases[i].in);
  }
}

Test(options, format_from_extension_and_explicit) {
  static const struct {
    const char *in;
    int format;
  } cases[] = {{"file=a.folded", FORMAT_FOLDED},
               {"file=a.collapsed", FORMAT_FOLDED},
               {"file=a.txt", FORMAT_TEXT},
               {"file=a.svg", FORMAT_SVG},
               {"file=a.html", FORMAT_HTML},
               {"file=a.htm", FORMAT_HTML},
               {"file=a.out", FORMAT_FOLDED},
               {"file=dir.d/a", FORMAT_FOLDED},
               {"file=a.svg,format=text", FORMAT_TEXT},
               {"format=html", FORMAT_HTML}};
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    cr_assert_eq(opt_parse(cases[i].in, &o, err, sizeof err), 0, "%s: %s", cases[i].in, err);
    cr_expect_eq(o.format, cases[i].format, "%s", cases[i].in);
  }
  char want[64];
  opt_parse("format=html", &o, err, sizeof err);
  snprintf(want, sizeof want, "sampler-%d.html", (int)getpid());
  cr_expect_str_eq(o.file, want);
}

Test(options, signals) {
  cr_assert_eq(opt_parse("signal=RTMIN+7", &o, err, sizeof err), 0);
  cr_expect_eq(o.sig, SIGRTMIN + 7);
  cr_expect_str_eq(o.sig_name, "SIGRTMIN+7");
  cr_assert_eq(opt_parse("signal=SIGRTMIN", &o, err, sizeof err), 0);
  cr_expect_eq(o.sig, SIGRTMIN);
  cr_assert_eq(opt_parse("signal=SIGVTALRM", &o, err, sizeof err), 0);
  cr_expect_eq(o.sig, SIGVTALRM);
  char buf[32];
  snprintf(buf, sizeof buf, "signal=%d", SIGRTMIN + 2);
  cr_assert_eq(opt_parse(buf, &o, err, sizeof err), 0);
  cr_expect_eq(o.sig, SIGRTMIN + 2);
}

Test(options, percent_escapes) {
  cr_assert_eq(opt_parse("file=/tmp/x%%y-%t.folded", &o, err, sizeof err), 0);
  cr_expect(strncmp(o.file, "/tmp/x%y-2", 10) == 0, "%s", o.file);
  cr_expect_eq(strlen(o.file), strlen("/tmp/x%y-20261123-010203.folded"), "%s", o.file);
}

struct bad {
  char in[64];
  char msg[240];
};

ParameterizedTestParameters(options, rejected) {
  static struct bad cases[] = {
      {"interval=5", "interval=5: needs a unit: ns, us, ms or s (e.g. interval=10ms)"},
      {"interval=ms",
       "interval=ms: not a time: a whole number with a unit ns, us, ms or s (e.g. interval=10ms)"},
      {"interval=1.5ms",
       "interval=1.5ms: not a time: a whole number with a unit ns, us, ms or s (e.g. interval=10ms)"},
      {"interval=-1ms",
       "interval=-1ms: not a time: a whole number with a unit ns, us, ms or s (e.g. interval=10ms)"},
      {"interval=10mss",
       "interval=10mss: not a time: a whole number with a unit ns, us, ms or s (e.g. interval=10ms)"},
      {"interval=99us", "interval=99us: out of range: 100us to 10s"},
      {"interval=10001ms", "interval=10001ms: out of range: 100us to 10s"},
      {"interval=99999999999999999999s",
       "interval=99999999999999999999s: out of range: 100us to 10s"},
      {"interval=",
       "interval=: not a time: a whole number with a unit ns, us, ms or s (e.g. interval=10ms)"},
      {"interval", "option 'interval' needs a value (interval=...)"},
      {"depth=0", "depth=0: accepted: a whole number from 1 to 8192"},
      {"depth=8193", "depth=8193: accepted: a whole number from 1 to 8192"},
      {"depth=12x", "depth=12x: accepted: a whole number from 1 to 8192"},
      {"depth=+5", "depth=+5: accepted: a whole number from 1 to 8192"},
      /* no white space anywhere in a number (strtol skips it at the start) */
      {"depth=\t5", "depth=\t5: accepted: a whole number from 1 to 8192"},
      {"depth=\n5", "depth=\n5: accepted: a whole number from 1 to 8192"},
      {"depth= 5", "depth= 5: accepted: a whole number from 1 to 8192"},
      {"depth=\v\f\r5", "depth=\v\f\r5: accepted: a whole number from 1 to 8192"},
      {"depth=5\t", "depth=5\t: accepted: a whole number from 1 to 8192"},
      {"interval=\t1ms",
       "interval=\t1ms: not a time: a whole number with a unit ns, us, ms or s (e.g. interval=10ms)"},
      {"duration=\n5s",
       "duration=\n5s: accepted: 0 or a whole number with a unit ms, s, m or h (e.g. duration=30s)"},
      {"loop=\t2s",
       "loop=\t2s: accepted: 0 or a time from 1s with a unit ms, s, m or h (e.g. loop=10m)"},
      {"format=png", "format=png: accepted: folded, text, svg, html, pprof, jfr"},
      {"threads=2", "threads=2: accepted: on, off"},
      {"hasrun=both", "hasrun=both: accepted: auto, cpu, regs"},
      {"lines=some", "lines=some: accepted: on, off"},
      {"ann=1", "ann=1: accepted: on, off"},
      {"ann,ann=off", "option 'ann' given twice"},
      {"codemap=none", "codemap=none: accepted: on, off"},
      {"ann,codemap=off", "ann: needs codemap=on (frame kinds come from the compiled-code map)"},
      {"cstack=no,jvmthreads",
       "jvmthreads: needs cstack=dwarf (the JVM's threads have no Java frames to show)"},
      {"weight=cycles", "weight=cycles: accepted: samples, cpu"},
      {"duration=5", "duration=5: needs a unit: ms, s, m or h (e.g. duration=30s)"},
      {"duration=5us",
       "duration=5us: accepted: 0 or a whole number with a unit ms, s, m or h (e.g. duration=30s)"},
      {"help=1", "help takes no value"},
      {"file=", "file=: empty path"},
      {"loop=10m,file=/tmp/p.html",
       "loop= with file=/tmp/p.html: every chunk would overwrite the last; put %n (the "
       "chunk's number) or %t (its start time) in file=, e.g. file=profile-%n.html"},
      {"loop=1s,file=/tmp/p-%p-%%n.html",
       "loop= with file=/tmp/p-%p-%%n.html: every chunk would overwrite the last; put %n (the "
       "chunk's number) or %t (its start time) in file=, e.g. file=profile-%n.html"},
      {"nope",
       "unknown option 'nope' (known: event, alloc, lock, interval, file, format, depth, threads, lines, ann, codemap, hasrun, cstack, jvmthreads, signal, cputimers, duration, loop, timeline, weight, reply, stats, cache, help)"},
      {"Interval=1ms",
       "unknown option 'Interval' (known: event, alloc, lock, interval, file, format, depth, threads, lines, ann, codemap, hasrun, cstack, jvmthreads, signal, cputimers, duration, loop, timeline, weight, reply, stats, cache, help)"},
      {"depth=5,depth=6", "option 'depth' given twice"},
      {"hasrun=regs,weight=cpu",
       "weight=cpu: needs hasrun=auto or hasrun=cpu (hasrun=regs does not measure CPU time)"},
      {"event=wall,hasrun=regs", "event=wall: needs hasrun=auto or hasrun=cpu (it tells threads "
                                 "that have not run by their CPU clocks)"},
  };
  return cr_make_param_array(struct bad, cases, sizeof cases / sizeof *cases);
}

ParameterizedTest(struct bad *b, options, rejected) {
  cr_assert_eq(opt_parse(b->in, &o, err, sizeof err), -EINVAL, "%s accepted", b->in);
  cr_expect_str_eq(err, b->msg);
}

ParameterizedTestParameters(options, bad_signals) {
  static struct bad cases[] = {
      {"signal=SEGV", ""},     {"signal=QUIT", ""},     {"signal=USR2", ""},
      {"signal=9", ""},        {"signal=RTMIN+99", ""}, {"signal=RTMIN-1", ""},
      {"signal=11", ""},       {"signal=", ""},         {"signal=KILL", ""},
      {"signal=\t27", ""},     {"signal=\n10", ""},     {"signal=RTMIN+\t1", ""},
      {"signal=RTMIN+ 1", ""}, {"signal=RTMIN+-0", ""}};
  return cr_make_param_array(struct bad, cases, sizeof cases / sizeof *cases);
}

ParameterizedTest(struct bad *b, options, bad_signals) {
  cr_assert_eq(opt_parse(b->in, &o, err, sizeof err), -EINVAL, "%s accepted", b->in);
  cr_expect(strstr(err, ": accepted: RTMIN+N (N = 0..") != NULL, "%s", err);
  cr_expect(strstr(err, "signals the JVM uses itself are refused") != NULL, "%s", err);
}

/* The unwind tables' cache defaults to the user's cache directory (XDG), else none. */
Test(options, cache_defaults_to_the_users_cache_directory) {
  struct agent_options o;
  char err[256];
  setenv("HOME", "/home/u", 1);
  unsetenv("XDG_CACHE_HOME");
  cr_assert_eq(opt_parse("", &o, err, sizeof err), 0, "%s", err);
  cr_expect_str_eq(o.cache, "/home/u/.cache/sampler");
  cr_expect_eq(o.cache_given, 0);
  setenv("XDG_CACHE_HOME", "/var/cache/u", 1);
  cr_assert_eq(opt_parse("", &o, err, sizeof err), 0, "%s", err);
  cr_expect_str_eq(o.cache, "/var/cache/u/sampler");
  setenv("XDG_CACHE_HOME", "relative", 1); /* not absolute: ignored, as the XDG spec says */
  cr_assert_eq(opt_parse("", &o, err, sizeof err), 0, "%s", err);
  cr_expect_str_eq(o.cache, "/home/u/.cache/sampler");
  unsetenv("HOME");
  cr_assert_eq(opt_parse("", &o, err, sizeof err), 0, "%s", err);
  cr_expect_str_eq(o.cache, "", "no home: no cache");
  cr_assert_eq(opt_parse("cache=/tmp/c", &o, err, sizeof err), 0, "%s", err);
  cr_expect_str_eq(o.cache, "/tmp/c");
  cr_expect_eq(o.cache_given, 1);
  cr_assert_eq(opt_parse("cache=off", &o, err, sizeof err), 0, "%s", err);
  cr_expect_str_eq(o.cache, "");
}

Test(options, durations_print) {
  char b[32];
  opt_format_duration(10000000, b, sizeof b);
  cr_expect_str_eq(b, "10ms");
  opt_format_duration(250000, b, sizeof b);
  cr_expect_str_eq(b, "250us");
  opt_format_duration(2000000000, b, sizeof b);
  cr_expect_str_eq(b, "2s");
  opt_format_duration(1500, b, sizeof b);
  cr_expect_str_eq(b, "1500ns");
}

/* ---- every option: a good value, a bad value and its message, the default ---- */

static bool is_interval_1ms(const struct agent_options *p) { return p->interval_ns == 1000000; }
static bool is_file_txt(const struct agent_options *p) {
  return !strcmp(p->file, "/tmp/p.txt") && p->format == FORMAT_TEXT;
}
static bool is_format_svg(const struct agent_options *p) { return p->format == FORMAT_SVG; }
static bool is_depth_64(const struct agent_options *p) { return p->depth == 64; }
static bool is_threads(const struct agent_options *p) { return p->threads == 1; }
static bool is_lines(const struct agent_options *p) { return p->lines == 1; }
static bool is_ann(const struct agent_options *p) {
  return p->ann == 1 && p->format == FORMAT_FOLDED;
}
static bool is_codemap_off(const struct agent_options *p) { return p->codemap == 0 && p->ann == 0; }
static bool is_hasrun_cpu(const struct agent_options *p) { return p->hasrun == SAMPLER_HASRUN_CPU; }
static bool is_cstack_no(const struct agent_options *p) {
  return p->cstack == 0 && p->jvmthreads == 0;
}
static bool is_jvmthreads_off(const struct agent_options *p) {
  return p->jvmthreads == 0 && p->cstack == 1;
}
static bool is_signal_usr1(const struct agent_options *p) {
  return p->sig == SIGUSR1 && !strcmp(p->sig_name, "SIGUSR1");
}
static bool is_cputimers_off(const struct agent_options *p) { return p->cputimers == 0; }
static bool is_duration_90s(const struct agent_options *p) {
  return p->duration_ns == 90000000000ull;
}
static bool is_weight_cpu(const struct agent_options *p) { return p->weight == WEIGHT_CPU; }
static bool is_timeline_64k(const struct agent_options *p) { return p->timeline_bytes == 65536; }
static bool is_help(const struct agent_options *p) { return p->help == 1; }
static bool is_event_wall(const struct agent_options *p) { return p->wall == 1; }
static bool is_alloc_64k(const struct agent_options *p) { return p->alloc_bytes == 65536; }
static bool is_lock_1ms(const struct agent_options *p) { return p->lock_ns == 1000000; }
static bool is_loop_10m(const struct agent_options *p) {
  return p->loop_ns == 600ull * 1000000000ull && strstr(p->file_pattern, "%n") != NULL;
}
static bool is_reply(const struct agent_options *p) { return !strcmp(p->reply, "/tmp/r"); }
static bool is_cache_off(const struct agent_options *p) { return p->cache_given && !p->cache[0]; }
static bool is_stats_pid(const struct agent_options *p) {
  char want[64];
  snprintf(want, sizeof want, "/tmp/s-%d.json", (int)getpid());
  return !strcmp(p->stats, want);
}

struct option_case {
  const char *name;
  const char *good;                              /* accepted ... */
  bool (*good_ok)(const struct agent_options *); /* ... with this result */
  const char *bad;                               /* refused ... */
  const char *bad_msg;                           /* ... with this message; %d: SIGRTMAX-SIGRTMIN */
  const char *dflt;                              /* the default, written out (NULL: none) */
};

/* In the option table's order (options/every_option_has_a_case checks). */
static const struct option_case OPTION_CASES[] = {
    {"event", "event=wall", is_event_wall, "event=mutex",
     "event=mutex: 'mutex' is not an event; accepted: cpu, wall, alloc, lock, or several of "
     "them (cpu or wall, alloc, lock) comma-separated, e.g. event=cpu,alloc,lock",
     "event=cpu"},
    {"alloc", "alloc=64k", is_alloc_64k, "alloc=512",
     "alloc=512: accepted: a size in bytes, with "
     "or without a unit k, m or g, from 1k to 1g (e.g. alloc=512k)",
     "alloc=512k"},
    {"lock", "lock=1ms", is_lock_1ms, "lock=10",
     "lock=10: accepted: 0 or a time up to 1s with a unit ns, us, ms or s (e.g. lock=10us)",
     "lock=10us"},
    {"interval", "interval=1ms", is_interval_1ms, "interval=1min",
     "interval=1min: not a time: a whole number with a unit ns, us, ms or s (e.g. interval=10ms)",
     "interval=10ms"},
    {"file", "file=/tmp/p.txt", is_file_txt, "file=", "file=: empty path",
     "file=sampler-%p.folded"},
    {"format", "format=svg", is_format_svg, "format=pdf",
     "format=pdf: accepted: folded, text, svg, html, pprof, jfr", "format=folded"},
    {"depth", "depth=64", is_depth_64, "depth=-1",
     "depth=-1: accepted: a whole number from 1 to 8192", "depth=1024"},
    {"threads", "threads", is_threads, "threads=1", "threads=1: accepted: on, off", "threads=off"},
    {"lines", "lines=on", is_lines, "lines=ON", "lines=ON: accepted: on, off", "lines=off"},
    {"ann", "ann", is_ann, "ann=", "ann=: accepted: on, off", "ann=off"},
    {"codemap", "codemap=off", is_codemap_off, "codemap=maybe", "codemap=maybe: accepted: on, off",
     "codemap=on"},
    {"hasrun", "hasrun=cpu", is_hasrun_cpu, "hasrun=", "hasrun=: accepted: auto, cpu, regs",
     "hasrun=auto"},
    {"cstack", "cstack=no", is_cstack_no, "cstack=fp", "cstack=fp: accepted: dwarf, no",
     "cstack=dwarf"},
    {"jvmthreads", "jvmthreads=off", is_jvmthreads_off, "jvmthreads=all",
     "jvmthreads=all: accepted: on, off", "jvmthreads=on"},
    {"signal", "signal=SIGUSR1", is_signal_usr1, "signal=USR2",
     "signal=USR2: accepted: RTMIN+N (N = 0..%d), PROF, VTALRM, ALRM, USR1, or their number (signals the JVM "
     "uses itself are refused)",
     "signal=RTMIN+4"},
    {"cputimers", "cputimers=off", is_cputimers_off, "cputimers=2",
     "cputimers=2: accepted: on, off", "cputimers=on"},
    {"duration", "duration=90s", is_duration_90s, "duration=1d",
     "duration=1d: accepted: 0 or a whole number with a unit ms, s, m or h (e.g. duration=30s)",
     "duration=0"},
    {"loop", "loop=10m", is_loop_10m, "loop=500ms",
     "loop=500ms: accepted: 0 or a time from 1s with a unit ms, s, m or h (e.g. loop=10m)",
     "loop=0"},
    {"timeline", "timeline=64k", is_timeline_64k, "timeline=2k",
     "timeline=2k: accepted: a size with a unit k, m or g, from 4k to 1g (e.g. timeline=64m)",
     "timeline=32m"},
    {"weight", "weight=cpu", is_weight_cpu, "weight=", "weight=: accepted: samples, cpu",
     "weight=samples"},
    {"reply", "reply=/tmp/r", is_reply, "reply=", "reply=: empty path", NULL},
    {"stats", "stats=/tmp/s-%p.json", is_stats_pid, "stats=", "stats=: empty path", NULL},
    {"cache", "cache=off", is_cache_off, "cache=", "cache=: empty path", NULL},
    {"help", "help", is_help, "help=on", "help takes no value", NULL},
};
#define OPTION_CASE_COUNT (sizeof OPTION_CASES / sizeof *OPTION_CASES)

/* Every field, compared; the message names the option whose default it is about. */
static void expect_same_options(const struct agent_options *a, const struct agent_options *b,
                                const char *what) {
  cr_expect_eq(a->interval_ns, b->interval_ns, "%s: interval_ns", what);
  cr_expect_str_eq(a->file, b->file, "%s: file", what);
  cr_expect_eq(a->format, b->format, "%s: format", what);
  cr_expect_eq(a->depth, b->depth, "%s: depth", what);
  cr_expect_eq(a->threads, b->threads, "%s: threads", what);
  cr_expect_eq(a->lines, b->lines, "%s: lines", what);
  cr_expect_eq(a->ann, b->ann, "%s: ann", what);
  cr_expect_eq(a->codemap, b->codemap, "%s: codemap", what);
  cr_expect_eq(a->hasrun, b->hasrun, "%s: hasrun", what);
  cr_expect_eq(a->cstack, b->cstack, "%s: cstack", what);
  cr_expect_eq(a->jvmthreads, b->jvmthreads, "%s: jvmthreads", what);
  cr_expect_eq(a->sig, b->sig, "%s: sig", what);
  cr_expect_str_eq(a->sig_name, b->sig_name, "%s: sig_name", what);
  cr_expect_eq(a->cputimers, b->cputimers, "%s: cputimers", what);
  cr_expect_eq(a->duration_ns, b->duration_ns, "%s: duration_ns", what);
  cr_expect_eq(a->weight, b->weight, "%s: weight", what);
  cr_expect_eq(a->loop_ns, b->loop_ns, "%s: loop_ns", what);
  cr_expect_eq(a->wall, b->wall, "%s: wall", what);
  cr_expect_eq(a->alloc, b->alloc, "%s: alloc", what);
  cr_expect_eq(a->alloc_bytes, b->alloc_bytes, "%s: alloc_bytes", what);
  cr_expect_eq(a->lock, b->lock, "%s: lock", what);
  cr_expect_eq(a->lock_ns, b->lock_ns, "%s: lock_ns", what);
  cr_expect_str_eq(a->reply, b->reply, "%s: reply", what);
  cr_expect_str_eq(a->stats, b->stats, "%s: stats", what);
  cr_expect_str_eq(a->cache, b->cache, "%s: cache", what);
  cr_expect_eq(a->help, b->help, "%s: help", what);
}

Test(options, every_option_has_a_case) {
  size_t n = 0;
  for (; opt_name(n); n++)
    cr_expect(n < OPTION_CASE_COUNT && !strcmp(opt_name(n), OPTION_CASES[n].name),
              "option %zu is `%s` in the code, `%s` in OPTION_CASES", n, opt_name(n),
              n < OPTION_CASE_COUNT ? OPTION_CASES[n].name : "(none)");
  cr_expect_eq(n, OPTION_CASE_COUNT, "the code has %zu options, OPTION_CASES %zu", n,
               OPTION_CASE_COUNT);
}

Test(options, every_option_good_bad_default) {
  struct agent_options dflt;
  cr_assert_eq(opt_parse("", &dflt, err, sizeof err), 0, "%s", err);
  for (size_t i = 0; i < OPTION_CASE_COUNT; i++) {
    const struct option_case *c = &OPTION_CASES[i];
    cr_expect_eq(opt_parse(c->good, &o, err, sizeof err), 0, "%s: %s", c->good, err);
    cr_expect(c->good_ok(&o), "%s: parsed to something else", c->good);

    char want[512];
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
    snprintf(want, sizeof want, c->bad_msg, SIGRTMAX - SIGRTMIN);
#pragma GCC diagnostic pop
    err[0] = '\0';
    cr_expect_eq(opt_parse(c->bad, &o, err, sizeof err), -EINVAL, "%s accepted", c->bad);
    cr_expect_str_eq(err, want, "%s", c->bad);

    if (c->dflt) {
      cr_expect_eq(opt_parse(c->dflt, &o, err, sizeof err), 0, "%s: %s", c->dflt, err);
      expect_same_options(&o, &dflt, c->dflt);
    }
  }
}

/* ---- the help text ---- */

Test(options, help_lists_every_option_within_80_columns) {
  const char *help = opt_help();
  cr_assert_eq(help, opt_help(), "made once");
  for (size_t i = 0; opt_name(i); i++) {
    char line[64];
    snprintf(line, sizeof line, "\n  %s", opt_name(i));
    const char *at = strstr(help, line);
    cr_expect(at, "help: no line for %s", opt_name(i));
    if (at)
      cr_expect(strchr("=[ ", at[strlen(line)]), "help: %s is not followed by its value",
                opt_name(i));
  }
  cr_expect(strstr(help, "\n  interval=TIME ") && strstr(help, "\n  threads[=on|off] ") &&
                strstr(help, "[default 10ms]") && strstr(help, "\n  help "),
            "%s", help);
  size_t len = strlen(help);
  const char *last = "The profile is also written on kill -3 (SIGQUIT: the profile so far).\n";
  cr_expect(len > strlen(last) && !strcmp(help + len - strlen(last), last), "help ends with\n%s",
            help + len - 80);
  size_t col = 0, line = 1;
  for (const char *p = help; *p; p++) {
    if (*p == '\n') {
      line++, col = 0;
    } else if (((unsigned char)*p & 0xC0) != 0x80 && ++col > 80) {
      cr_expect_leq(col, 80, "help line %zu is wider than 80 columns", line);
      break;
    }
  }
  cr_expect(!strchr(help, '`'), "help shows markdown backticks");
}

/* ---- README.md's options table is the code's ---- */

struct lines {
  char **at;
  size_t n;
};

static struct lines split_lines(char *text) {
  struct lines l = {NULL, 0};
  for (char *save = NULL, *line = strtok_r(text, "\n", &save); line;
       line = strtok_r(NULL, "\n", &save)) {
    l.at = realloc(l.at, (l.n + 1) * sizeof *l.at);
    cr_assert(l.at);
    l.at[l.n++] = line;
  }
  return l;
}

static char *read_file(const char *path) {
  FILE *f = fopen(path, "r");
  cr_assert(f, "%s: %s", path, strerror(errno));
  char *text = NULL;
  size_t len = 0;
  FILE *m = open_memstream(&text, &len);
  cr_assert(m);
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof buf, f)) > 0;) fwrite(buf, 1, n, m);
  fclose(f);
  fclose(m);
  return text;
}

/* The rows of the README's options table (all: the README's lines): from the first line after
 * "## Using the agent" that is the table's header to the last line starting with '|' (header
 * and rule included). */
static struct lines readme_table(struct lines all) {
  struct lines table = {NULL, 0};
  size_t i = 0;
  while (i < all.n && strcmp(all.at[i], "## Using the agent") != 0) i++;
  cr_assert(i < all.n, "%s: no section \"## Using the agent\"", SAMPLER_README);
  while (++i < all.n && strncmp(all.at[i], "## ", 3) != 0 &&
         strncmp(all.at[i], "| option | values | default |", 29) != 0) {}
  cr_assert(
      i < all.n && all.at[i][0] == '|',
      "%s: no options table (header `| option | values | default |`) under \"## Using the agent\"",
      SAMPLER_README);
  table.at = all.at + i;
  while (i < all.n && all.at[i][0] == '|') i++, table.n++;
  return table;
}

/* Splits "| a | b \| c | d |" into its trimmed cells, a \| staying inside its cell. */
static size_t cells(char *row, char *cell[], size_t max) {
  size_t n = 0;
  char *p = row + (*row == '|');
  while (*p && n < max) {
    char *start = p;
    while (*p && !(*p == '|' && (p == start || p[-1] != '\\'))) p++;
    char *end = p;
    if (*p) *p++ = '\0';
    while (*start == ' ') start++;
    while (end > start && end[-1] == ' ') *--end = '\0';
    cell[n++] = start;
  }
  return n;
}

Test(options, readme_table_is_the_code_table) {
  char *readme = read_file(SAMPLER_README);
  struct lines lines = split_lines(readme), have = readme_table(lines);
  char *code = NULL;
  size_t codelen = 0;
  FILE *m = open_memstream(&code, &codelen);
  cr_assert(m);
  cr_assert_eq(opt_markdown_table(m), 0);
  fclose(m);
  struct lines want = split_lines(code);
  cr_assert_geq(want.n, 3);

  /* The options, in order: compared first, as a list, so that a missing row says which. */
  char have_names[1024] = "", want_names[1024] = "";
  for (size_t i = 2; i < have.n || i < want.n; i++) {
    char row[4096], *cell[3];
    if (i < have.n) {
      snprintf(row, sizeof row, "%s", have.at[i]);
      cells(row, cell, 3);
      snprintf(have_names + strlen(have_names), sizeof have_names - strlen(have_names), "%s ",
               cell[0]);
    }
    if (i < want.n) {
      snprintf(row, sizeof row, "%s", want.at[i]);
      cells(row, cell, 3);
      snprintf(want_names + strlen(want_names), sizeof want_names - strlen(want_names), "%s ",
               cell[0]);
    }
  }
  cr_assert_str_eq(
      have_names, want_names,
      "%s: the options table lists\n  %s\nthe code's table (agent/options.c) has\n  %s",
      SAMPLER_README, have_names, want_names);

  for (size_t i = 0; i < want.n; i++) {
    char hrow[4096], wrow[4096], *h[3] = {"", "", ""}, *w[3] = {"", "", ""};
    snprintf(hrow, sizeof hrow, "%s", have.at[i]);
    snprintf(wrow, sizeof wrow, "%s", want.at[i]);
    size_t hn = cells(hrow, h, 3), wn = cells(wrow, w, 3);
    cr_expect_eq(hn, wn, "%s, line `%s`: %zu columns, want %zu", SAMPLER_README, have.at[i], hn,
                 wn);
    cr_expect_str_eq(h[2], w[2],
                     "%s: option %s: the default column says\n  %s\nthe code's table says\n  %s",
                     SAMPLER_README, w[0], h[2], w[2]);
    cr_expect_str_eq(h[1], w[1],
                     "%s: option %s: the values column says\n  %s\nthe code's table says\n  %s",
                     SAMPLER_README, w[0], h[1], w[1]);
    cr_expect_str_eq(have.at[i], want.at[i], "%s: the row should read\n%s", SAMPLER_README,
                     want.at[i]);
  }
  free(want.at);
  free(code);
  free(lines.at);
  free(readme);
}

/* ---- commands and chunk names ---- */

Test(options, a_command_word_comes_first_and_options_follow) {
  const char *rest = NULL;
  cr_expect_eq(opt_command("stop,file=/tmp/x.svg", &rest), OPT_CMD_STOP);
  cr_expect_str_eq(rest, "file=/tmp/x.svg");
  cr_expect_eq(opt_command("status", &rest), OPT_CMD_STATUS);
  cr_expect_str_eq(rest, "");
  cr_expect_eq(opt_command("dump", &rest), OPT_CMD_DUMP);
  cr_expect_eq(opt_command("start,interval=1ms", &rest), OPT_CMD_START);
  cr_expect_str_eq(rest, "interval=1ms");
  cr_expect_eq(opt_command("interval=1ms", &rest), OPT_CMD_START, "options alone: a start");
  cr_expect_str_eq(rest, "interval=1ms");
  cr_expect_eq(opt_command("stopwatch=1", &rest), OPT_CMD_START, "a word that starts like one");
  cr_expect_str_eq(rest, "stopwatch=1");
  cr_expect_eq(opt_command(NULL, &rest), OPT_CMD_START);
}

Test(options, loop_chunks_are_named_by_number_and_start_time) {
  cr_assert_eq(opt_parse("loop=1m,file=/tmp/p-%n-%t.folded", &o, err, sizeof err), 0, "%s", err);
  char name[256];
  cr_assert_eq(opt_chunk_file(&o, 7, (time_t)0, name, sizeof name), 0);
  struct tm tm;
  time_t zero = 0;
  char stamp[32];
  strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", localtime_r(&zero, &tm));
  char want[256];
  snprintf(want, sizeof want, "/tmp/p-7-%s.folded", stamp);
  cr_expect_str_eq(name, want);
  cr_expect(strstr(o.file, "/tmp/p-0-"), "the first chunk's name: %s", o.file);
  cr_assert_eq(opt_parse("loop=1m,file=/tmp/p-%t.folded", &o, err, sizeof err), 0,
               "%%t alone names the chunks apart: %s", err);
  cr_assert_eq(opt_parse("loop=1m,format=svg", &o, err, sizeof err), 0, "%s", err);
  cr_expect_str_eq(o.file_pattern, "sampler-%p-%n.svg", "the default name numbers the chunks");
  cr_assert_eq(opt_set_file(&o, "/tmp/last.html", err, sizeof err), 0, "%s", err);
  cr_expect_eq(o.format, FORMAT_HTML, "the format follows the new file's extension");
}

/* event=lock: its weight is ns blocked, the thresholds it takes, what it refuses. */
Test(options, event_lock) {
  cr_assert_eq(opt_parse("event=lock", &o, err, sizeof err), 0, "%s", err);
  cr_expect(o.lock && !o.alloc && !o.wall && o.weight == WEIGHT_BLOCKED && o.lock_ns == 10000);
  static const struct {
    const char *s;
    uint64_t ns;
  } good[] = {{"event=lock,lock=0", 0},           {"event=lock,lock=500ns", 500},
              {"event=lock,lock=1s", 1000000000}, {"event=lock,lock=20ms,format=html", 20000000},
              {"event=lock,file=a.pb.gz", 10000}, {"event=lock,file=a.jfr", 10000}};
  for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
    cr_expect_eq(opt_parse(good[i].s, &o, err, sizeof err), 0, "%s: %s", good[i].s, err);
    cr_expect_eq(o.lock_ns, good[i].ns, "%s", good[i].s);
  }
  static const struct {
    const char *s, *msg;
  } bad[] = {{"event=lock,lock=10", "lock=10: accepted"},
             {"event=lock,lock=2s", "lock=2s: accepted"},
             {"event=lock,lock=-1us", "lock=-1us: accepted"},
             {"event=lock,weight=cpu", "weight=cpu: not with event=lock"},
             {"event=lock,hasrun=regs", "hasrun=regs: not with event=lock"}};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    cr_expect_eq(opt_parse(bad[i].s, &o, err, sizeof err), -EINVAL, "%s", bad[i].s);
    cr_expect(strstr(err, bad[i].msg), "%s: %s", bad[i].s, err);
  }
}

/* event=alloc: its weight is bytes, the sizes it takes, and the combinations it refuses. */
Test(options, event_alloc) {
  cr_assert_eq(opt_parse("event=alloc", &o, err, sizeof err), 0, "%s", err);
  cr_expect(o.alloc && !o.wall && o.weight == WEIGHT_BYTES && o.alloc_bytes == 512 << 10);
  static const struct {
    const char *s;
    uint64_t bytes;
  } good[] = {
      {"event=alloc,alloc=1k", 1024},          {"event=alloc,alloc=4096", 4096},
      {"event=alloc,alloc=1g", 1 << 30},       {"event=alloc,alloc=2m,format=html", 2 << 20},
      {"event=alloc,file=a.pb.gz", 512 << 10}, {"event=alloc,file=a.jfr", 512 << 10}};
  for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
    cr_expect_eq(opt_parse(good[i].s, &o, err, sizeof err), 0, "%s: %s", good[i].s, err);
    cr_expect_eq(o.alloc_bytes, good[i].bytes, "%s", good[i].s);
  }
  static const struct {
    const char *s, *msg;
  } bad[] = {{"event=alloc,alloc=1023", "alloc=1023: accepted"},
             {"event=alloc,alloc=2g", "alloc=2g: accepted"},
             {"event=alloc,alloc=-1k", "alloc=-1k: accepted"},
             {"event=alloc,alloc=1kb", "alloc=1kb: accepted"},
             {"event=alloc,alloc=99999999999999999999", "alloc=99999999999999999999: accepted"},
             {"event=alloc,weight=cpu", "weight=cpu: not with event=alloc"},
             {"event=alloc,hasrun=regs", "hasrun=regs: not with event=alloc"}};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    cr_expect_eq(opt_parse(bad[i].s, &o, err, sizeof err), -EINVAL, "%s", bad[i].s);
    cr_expect(strstr(err, bad[i].msg), "%s: %s", bad[i].s, err);
  }
}

/* event= with several events: the names after the first come as the option string's own
 * tokens; what each writer gets (opt_for_event); the combinations refused name the option; a
 * format of one event a file needs %e (the default file has it). */
Test(options, several_events) {
  cr_assert_eq(opt_parse("event=cpu,alloc,lock,file=p-%e.folded,threads", &o, err, sizeof err), 0,
               "%s", err);
  cr_expect(o.clock && !o.wall && o.alloc && o.lock && o.threads);
  cr_expect_eq(o.weight, WEIGHT_SAMPLES, "weight= stays the cpu event's");
  cr_expect_eq(opt_events(&o),
               1u << SAMPLER_EVENT_CPU | 1u << SAMPLER_EVENT_ALLOC | 1u << SAMPLER_EVENT_LOCK);
  cr_expect_str_eq(o.file, "p-%e.folded", "%%e is expanded per event, when writing");
  struct agent_options one;
  opt_for_event(&o, SAMPLER_EVENT_ALLOC, &one);
  cr_expect(one.alloc && !one.lock && !one.clock && one.weight == WEIGHT_BYTES);
  opt_for_event(&o, SAMPLER_EVENT_LOCK, &one);
  cr_expect(one.lock && !one.alloc && !one.clock && one.weight == WEIGHT_BLOCKED);
  opt_for_event(&o, SAMPLER_EVENT_CPU, &one);
  cr_expect(one.clock && !one.alloc && !one.lock && one.weight == WEIGHT_SAMPLES);
  char names[64];
  opt_event_names(opt_events(&o), ",", names, sizeof names);
  cr_expect_str_eq(names, "cpu,alloc,lock");

  static const struct {
    const char *s;
    unsigned events;
  } good[] = {{"event=wall,lock,file=a.pb.gz", 1u << SAMPLER_EVENT_WALL | 1u << SAMPLER_EVENT_LOCK},
              {"event=alloc,lock,alloc=64k,lock=1ms,file=a.jfr",
               1u << SAMPLER_EVENT_ALLOC | 1u << SAMPLER_EVENT_LOCK},
              {"event=lock,cpu,format=html", 1u << SAMPLER_EVENT_CPU | 1u << SAMPLER_EVENT_LOCK},
              {"event=cpu,alloc,file=p.html", 1u << SAMPLER_EVENT_CPU | 1u << SAMPLER_EVENT_ALLOC},
              {"event=cpu,alloc,weight=cpu,file=x-%e-%n.txt,loop=1s",
               1u << SAMPLER_EVENT_CPU | 1u << SAMPLER_EVENT_ALLOC},
              {"event=cpu,alloc,hasrun=regs,file=a.pb.gz",
               1u << SAMPLER_EVENT_CPU | 1u << SAMPLER_EVENT_ALLOC}};
  for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
    cr_expect_eq(opt_parse(good[i].s, &o, err, sizeof err), 0, "%s: %s", good[i].s, err);
    cr_expect_eq(opt_events(&o), good[i].events, "%s", good[i].s);
  }
  cr_assert_eq(opt_parse("event=cpu,alloc,format=svg", &o, err, sizeof err), 0, "%s", err);
  cr_expect(opt_names_events(o.file_pattern), "the default file has %%e: %s", o.file_pattern);
  cr_assert_eq(opt_parse("event=cpu,alloc,format=html", &o, err, sizeof err), 0, "%s", err);
  cr_expect(!opt_names_events(o.file_pattern), "html: one page: %s", o.file_pattern);
  cr_expect(!opt_names_events("a-%%e.svg"), "%%%%e is a literal");
  cr_expect_eq(opt_parse("file=a-%%e.svg", &o, err, sizeof err), -EINVAL, "%%%%e is refused");
  cr_expect(strstr(err, "file=a-%%e.svg: a literal %e"), "%s", err);

  static const struct {
    const char *s, *msg;
  } bad[] = {{"event=cpu,wall", "event=cpu,wall: cpu and wall exclude each other"},
             {"event=alloc,alloc", "event=alloc,alloc: alloc given twice"},
             {"event=cpu,alloc,cpu", "event=cpu,alloc,cpu: cpu given twice"},
             {"event=cpu,mutex", "event=cpu,mutex: 'mutex' is not an event; accepted: cpu, wall"},
             {"event=cpu,depth", "option 'depth' needs a value (depth=...)"},
             {"event=cpu,alloc,file=p.folded",
              "event=cpu,alloc with file=p.folded: a folded file holds one event; put %e"},
             {"event=alloc,lock,file=p.svg", "event=alloc,lock with file=p.svg: a svg file"},
             {"event=cpu,lock,file=p.txt",
              "pick one event (html, pprof and jfr hold several in one file)"},
             {"event=alloc,lock,weight=cpu,file=a.jfr", "weight=cpu: not with event=alloc,lock"},
             {"event=alloc,lock,hasrun=regs,file=a.jfr", "hasrun=regs: not with event=alloc"}};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    cr_expect_eq(opt_parse(bad[i].s, &o, err, sizeof err), -EINVAL, "%s", bad[i].s);
    cr_expect(strstr(err, bad[i].msg), "%s: %s", bad[i].s, err);
  }
  /* dump's file= is checked the same way */
  cr_assert_eq(opt_parse("event=cpu,alloc,file=a.jfr", &o, err, sizeof err), 0, "%s", err);
  cr_expect_eq(opt_set_file(&o, "b.folded", err, sizeof err), -EINVAL);
  cr_expect(strstr(err, "put %e"), "%s", err);
  cr_expect_eq(opt_set_file(&o, "b-%e.folded", err, sizeof err), 0, "%s", err);
}
