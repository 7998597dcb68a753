/*
 * Tests of writing the profile (agent/output.c): the folded file holds exactly the recorded
 * stacks; SVG, HTML and text files are complete; the target is replaced whole or not at all
 * (no temporary file is left behind); an unwritable target is an error that names the path;
 * the stats file (stats=) carries every counter, the line at exit only what matters; samples
 * (cost units) and captures (stacks taken) are named so everywhere. Stacks are put into the trace table directly,
 * with the fake JVM behind sampler_init.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "counters.h"
#include "fake_jvm.h"
#include "intern.h"
#include "options.h"
#include "output.h"
#include "traces.h"

static char dir[] = "/tmp/sampler-test-output-XXXXXX";

/* Two stacks: main;A 3 units and main;B c 2 units (a name with a space). */
static void setup_profile(void) {
  cr_assert_not_null(mkdtemp(dir));
  struct sampler_config c = {
      .interval_ns = 1000000, .depth = 16, .codemap = 0, .sig = SIGRTMIN + 4};
  struct sampler_jvm jvm = fake_jvm();
  cr_assert_eq(sampler_init(&c, &jvm), 0);
  uint32_t root = intern_string("main", 4), a = intern_string("A.run", 5),
           b = intern_string("B c.run", 7);
  uint32_t s1[] = {root, a}, s2[] = {root, b};
  cr_assert_eq(traces_add(s1, 2, 3, 3000000, NULL), 0);
  cr_assert_eq(traces_add(s2, 2, 2, 2000000, NULL), 0);
}

static char *slurp(const char *path) {
  FILE *f = fopen(path, "r");
  cr_assert_not_null(f, "%s", path);
  static char buf[1 << 20];
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  buf[n] = '\0';
  fclose(f);
  return buf;
}

/* Entries of dir other than `keep`: none means no temporary file was left. */
static int others_in_dir(const char *keep) {
  DIR *d = opendir(dir);
  struct dirent *e;
  int n = 0;
  while ((e = readdir(d)))
    if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") && strcmp(e->d_name, keep)) n++;
  closedir(d);
  return n;
}

static void options_for(struct agent_options *o, const char *file, const char *extra) {
  char opts[512], err[512];
  snprintf(opts, sizeof opts, "file=%s/%s%s%s", dir, file, extra ? "," : "", extra ? extra : "");
  cr_assert_eq(opt_parse(opts, o, err, sizeof err), 0, "%s", err);
}

static void remove_dir(void) {
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0) cr_log_warn("could not remove %s", dir);
}

TestSuite(output, .init = setup_profile, .fini = remove_dir);

/* Writes what the sampler holds now to o->file, as the agent does. */
static int write_now(const struct agent_options *o, char *err, size_t errlen) {
  struct sampler_snapshot s;
  int rc = sampler_snapshot(&s, 0);
  if (rc) return rc;
  rc = output_write(o, o->file, &s, err, errlen);
  sampler_snapshot_free(&s);
  return rc;
}

Test(output, folded_holds_exactly_the_stacks) {
  struct agent_options o;
  options_for(&o, "p.folded", NULL);
  char err[512];
  cr_assert_eq(write_now(&o, err, sizeof err), 0, "%s", err);
  cr_expect_str_eq(slurp(o.file), "main;A.run 3\nmain;B c.run 2\n");
  cr_expect_eq(others_in_dir("p.folded"), 0, "no temporary file left beside it");
  options_for(&o, "p.folded", "weight=cpu");
  cr_assert_eq(write_now(&o, err, sizeof err), 0, "%s", err);
  cr_expect_str_eq(slurp(o.file), "main;A.run 3000000\nmain;B c.run 2000000\n",
                   "weight=cpu: nanoseconds");
}

/* A flame graph holds at most its limit of frames: the heaviest stacks whole, the others cut
 * under a named frame where the graph has no room, every count kept; the folded file keeps
 * every stack whole. */
Test(output, a_flame_graph_past_its_frame_limit_keeps_the_heaviest_whole_and_every_count) {
  uint32_t root = intern_string("main", 4), c = intern_string("C.run", 5),
           d = intern_string("D.run", 5);
  uint32_t s3[] = {root, c, d};
  cr_assert_eq(traces_add(s3, 3, 1, 1000000, NULL), 0);
  output_set_graph_limit(4); /* the root, main, A.run and B c.run */
  struct agent_options o;
  char err[512];
  options_for(&o, "p.svg", NULL);
  int rc = write_now(&o, err, sizeof err);
  output_set_graph_limit(0);
  cr_assert_eq(rc, 0, "%s", err);
  char *svg = slurp(o.file);
  cr_expect(strstr(svg, "A.run") && strstr(svg, "B c.run"), "the heaviest stacks are whole");
  cr_expect(!strstr(svg, "C.run"), "the lightest found no room");
  cr_expect(strstr(svg, "frames not drawn"), "it is counted under the cut frame:\n%s", svg);
  cr_expect(strstr(svg, "6 samples from"), "every count kept (3 + 2 + 1)");
  cr_expect(strstr(err, "1 of 3 stacks") && strstr(err, "drawn cut") &&
                strstr(err, "at most 4 frames"),
            "the writer tells the caller what it cut: '%s'", err);
  options_for(&o, "p.folded", NULL);
  cr_assert_eq(write_now(&o, err, sizeof err), 0, "%s", err);
  cr_expect_str_eq(err, "", "nothing to tell of a folded file");
  cr_expect_str_eq(slurp(o.file), "main;A.run 3\nmain;B c.run 2\nmain;C.run;D.run 1\n");
}

Test(output, svg_html_and_text_are_complete) {
  struct agent_options o;
  char err[512];
  options_for(&o, "p.svg", NULL);
  cr_assert_eq(write_now(&o, err, sizeof err), 0, "%s", err);
  char *svg = slurp(o.file);
  cr_expect(strstr(svg, "A.run") && strstr(svg, "</svg>\n"), "SVG complete with its frames");
  options_for(&o, "p.html", NULL);
  cr_assert_eq(write_now(&o, err, sizeof err), 0, "%s", err);
  char *html = slurp(o.file);
  cr_expect(strstr(html, "</html>"), "HTML complete");
  options_for(&o, "p.txt", NULL);
  cr_assert_eq(write_now(&o, err, sizeof err), 0, "%s", err);
  char *txt = slurp(o.file);
  cr_expect(strstr(txt, "Total: 5 samples in 2 distinct stacks"), "%s", txt);
  cr_expect(strstr(txt, "Hot frames by self"), "the hot frames table");
  cr_expect(strstr(txt, "     3  60.00%  A.run"), "A.run has 3 of 5 by self:\n%s", txt);
  cr_expect(strstr(txt, "AsyncGetCallTrace"), "the report");
  cr_expect(strstr(txt, "\n  samples   ") && strstr(txt, "\n  captures  "),
            "the report names samples and captures:\n%s", txt);
  cr_expect(!strstr(txt, "units") && !strstr(txt, "stacks captured"), "the old words:\n%s", txt);
  for (size_t i = 0; counter_name(i); i++) {
    char want[96];
    snprintf(want, sizeof want, "\n  %s ", counter_name(i));
    cr_expect(strstr(txt, want), "the text report lacks %s", counter_name(i));
  }
}

/* The subtitle of a flame graph: captures, and (the SVG has no total of its own) the samples,
 * with thousands separators like the page's numbers. */
Test(output, flame_graph_subtitles_count_with_thousands_separators) {
  uint32_t s3[] = {intern_string("main", 4), intern_string("C.run", 5)};
  cr_assert_eq(traces_add(s3, 2, 1234560, 1234560000000ull, NULL), 0);
  struct agent_options o;
  char err[512];
  options_for(&o, "p.svg", NULL);
  cr_assert_eq(write_now(&o, err, sizeof err), 0, "%s", err);
  char *svg = slurp(o.file);
  cr_expect(strstr(svg, "hasrun auto, 1,234,565 samples from 0 captures</text>"), "%s", svg);
  options_for(&o, "p.html", NULL);
  cr_assert_eq(write_now(&o, err, sizeof err), 0, "%s", err);
  char *html = slurp(o.file);
  cr_expect(strstr(html, "hasrun auto, 0 captures\""), "the page adds its own total");
  options_for(&o, "p.svg", "weight=cpu");
  cr_assert_eq(write_now(&o, err, sizeof err), 0, "%s", err);
  svg = slurp(o.file);
  cr_expect(strstr(svg, "1,234,565,000,000 ns of CPU from 0 captures</text>"), "weight=cpu");
}

Test(output, an_unwritable_target_is_an_error_and_changes_nothing) {
  struct agent_options o;
  char err[512];
  options_for(&o, "sub", NULL);
  cr_assert_eq(mkdir(o.file, 0755), 0);
  cr_expect_eq(output_check_writable(&o, err, sizeof err), -EISDIR);
  cr_expect(strstr(err, "is a directory"), "%s", err);
  int rc = write_now(&o, err, sizeof err);
  cr_expect_lt(rc, 0, "renaming over a directory fails");
  cr_expect(strstr(err, o.file) != NULL, "the message names the path: %s", err);
  struct stat st;
  cr_expect(stat(o.file, &st) == 0 && S_ISDIR(st.st_mode), "the directory is untouched");
  cr_expect_eq(others_in_dir("sub"), 0, "the temporary file is removed");
  options_for(&o, "missing/p.folded", NULL);
  cr_expect_eq(output_check_writable(&o, err, sizeof err), -ENOENT);
  cr_expect(strstr(err, "cannot be written"), "%s", err);
}

/* stats=: every counter of the table as one JSON object, committed whole (no temporary left). */
Test(output, the_stats_file_holds_every_counter_as_json) {
  struct agent_options o;
  char err[512], extra[128];
  snprintf(extra, sizeof extra, "stats=%s/s.json", dir);
  options_for(&o, "p.folded", extra);
  struct sampler_report r;
  sampler_report(&r);
  cr_assert_eq(output_write_stats(&o, o.file, &r, err, sizeof err), 0, "%s", err);
  char *json = slurp(o.stats);
  cr_expect(strncmp(json, "{\n  \"file\": \"", 13) == 0 && strstr(json, "\"format\": \"folded\"") &&
                strstr(json, "\"event\": \"cpu\""),
            "%s", json);
  cr_expect(strstr(json, "\n  \"stacks\": 2,\n") && strstr(json, "\n  \"samples\": 0,\n") &&
                strstr(json, "\n  \"captures\": 0,\n"),
            "samples (cost units) and captures (stacks taken): %s", json);
  size_t keys = 0;
  for (const char *k; (k = counter_name(keys)); keys++) {
    char want[96];
    snprintf(want, sizeof want, "\n  \"%s\": ", k);
    cr_expect(strstr(json, want), "the stats lack %s", k);
  }
  cr_expect_gt(keys, 50);
  cr_expect(!strstr(json, "units"), "no key says units: %s", json);
  cr_expect(strlen(json) > 2 && strcmp(json + strlen(json) - 2, "}\n") == 0, "complete: %s", json);
  cr_expect_eq(others_in_dir("s.json"), 0, "no temporary file left");
}

Test(output, an_unwritable_stats_file_is_refused_at_start_and_named) {
  struct agent_options o;
  char err[512], extra[128];
  snprintf(extra, sizeof extra, "stats=%s/missing/s.json", dir);
  options_for(&o, "p.folded", extra);
  cr_expect_eq(output_check_writable(&o, err, sizeof err), -ENOENT);
  cr_expect(strstr(err, "stats=") && strstr(err, "cannot be written"), "%s", err);
}

/* The line at exit is short: where, samples, coverage, own CPU; losses only when not 0. */
Test(output, the_exit_line_is_short_and_names_losses_only_when_not_zero) {
  struct agent_options o;
  options_for(&o, "p.folded", NULL);
  struct sampler_report r;
  sampler_report(&r);
  char line[8192];
  counters_exit_line(line, sizeof line, &o, o.file, NULL, &r);
  cr_expect(strstr(line, "profile written to ") && strstr(line, ": 0 samples, coverage ") &&
                strstr(line, ", own CPU "),
            "%s", line);
  cr_expect(!strstr(line, "lost") && !strstr(line, "faults") && !strchr(line, ';') &&
                !strchr(line, '='),
            "nothing else: %s", line);
  r.n.lost_units = 7;
  r.faults = 2;
  counters_exit_line(line, sizeof line, &o, o.file, NULL, &r);
  cr_expect(strstr(line, "; lost_samples 7, faults 2"), "%s", line);
  char extra[128];
  snprintf(extra, sizeof extra, "stats=%s/s.json", dir);
  options_for(&o, "p.folded", extra);
  counters_exit_line(line, sizeof line, &o, o.file, o.stats, &r);
  cr_expect(strstr(line, "; stats in ") && strstr(line, "/s.json"), "%s", line);
}

/* The profile is created as any file of the program: 0666 less the process's umask (not a fixed
 * mode that would expose it, or hide it, against the user's choice). */
Test(output, the_file_mode_follows_the_umask) {
  struct agent_options o;
  char err[512];
  options_for(&o, "p.folded", NULL);
  mode_t old = umask(077);
  cr_assert_eq(write_now(&o, err, sizeof err), 0, "%s", err);
  struct stat st;
  cr_assert_eq(stat(o.file, &st), 0);
  cr_expect_eq(st.st_mode & 0777, 0600u, "umask 077: %o", st.st_mode & 0777);
  umask(022);
  cr_assert_eq(write_now(&o, err, sizeof err), 0, "%s", err);
  cr_assert_eq(stat(o.file, &st), 0);
  cr_expect_eq(st.st_mode & 0777, 0644u, "umask 022: %o", st.st_mode & 0777);
  umask(old);
}

/* 1 when the file at path ends as a complete page does. */
static int ends_with_html(const char *path) {
  FILE *f = fopen(path, "r");
  if (!f) return 0;
  char tail[64] = {0};
  fseek(f, -(long)(sizeof tail - 1), SEEK_END);
  size_t n = fread(tail, 1, sizeof tail - 1, f);
  fclose(f);
  tail[n] = '\0';
  return strstr(tail, "</html>") != NULL;
}

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

Test(output, a_writer_killed_at_any_moment_leaves_the_whole_profile_or_nothing) {
  /* 30,000 more stacks: a page that takes a while to write */
  uint32_t root = intern_string("main", 4);
  for (int i = 0; i < 30000; i++) {
    char m[32], c[32];
    int km = snprintf(m, sizeof m, "Work.m%d", i),
        kc = snprintf(c, sizeof c, "Caller.c%d", i % 101);
    uint32_t s[] = {root, intern_string(c, (size_t)kc), intern_string(m, (size_t)km)};
    cr_assert_eq(traces_add(s, 3, 1, 1000, NULL), 0);
  }
  struct agent_options o;
  options_for(&o, "p.html", NULL);
  char err[512];
  double t0 = now_s();
  cr_assert_eq(write_now(&o, err, sizeof err), 0, "%s", err);
  double took = now_s() - t0;
  cr_assert(ends_with_html(o.file));
  unlink(o.file);
  int whole = 0, none = 0;
  unsigned seed = 7;
  for (int round = 0; round < 40; round++) {
    pid_t child = fork();
    cr_assert_geq(child, 0);
    if (child == 0) _exit(write_now(&o, err, sizeof err) == 0 ? 0 : 1);
    usleep((useconds_t)(took * 1.2e6 * (double)(rand_r(&seed) % 1000) / 1000.0));
    kill(child, SIGKILL); /* as Runtime.halt or a crash would end the writer */
    waitpid(child, NULL, 0);
    cr_expect_eq(others_in_dir("p.html"), 0, "round %d: no temporary file left", round);
    struct stat st;
    if (stat(o.file, &st) == 0) {
      cr_expect(ends_with_html(o.file), "round %d: a profile that is there is complete", round);
      whole++;
      unlink(o.file);
    } else {
      none++;
    }
  }
  cr_expect_gt(none, 0, "some writers were killed midway (%d of 40; a write takes %.0f ms)", none,
               took * 1e3);
  cr_log_info("40 writers killed: %d finished, %d midway; a write takes %.0f ms", whole, none,
              took * 1e3);
}

/* ---- pprof ---- */

#include <zlib.h>

#include "fg_pprof.h"

/* The file's bytes. */
static unsigned char *slurp_bytes(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  cr_assert_not_null(f, "%s", path);
  static unsigned char buf[1 << 20];
  *len = fread(buf, 1, sizeof buf, f);
  fclose(f);
  return buf;
}

/* fg_write_folded of p into a string. */
static char *folded_of(fg_profile *p) {
  char *out = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&out, &len);
  cr_assert_eq(fg_write_folded(f, p), 0);
  fclose(f);
  return out;
}

Test(output, pprof_reads_back_as_the_same_stacks_in_both_sample_types) {
  /* a thread root, a frame with a line, and one with a ':' that is not a line */
  uint32_t root = intern_string("[worker 1 tid=42]", 17), m = intern_string("p/C.m:152", 9),
           odd = intern_string("weird:name", 10);
  uint32_t s3[] = {root, m, odd};
  cr_assert_eq(traces_add(s3, 3, 4, 4000000, NULL), 0);
  struct agent_options o;
  options_for(&o, "p.pb.gz", "threads");
  cr_assert_eq(o.format, FORMAT_PPROF, "the format from .pb.gz");
  char err[512];
  cr_assert_eq(write_now(&o, err, sizeof err), 0, "%s", err);
  cr_expect_eq(others_in_dir("p.pb.gz"), 0, "no temporary file left beside it");
  size_t len;
  unsigned char *buf = slurp_bytes(o.file, &len);
  cr_assert(fg_is_gzip(buf, len), "gzipped");
  fg_profile *p = fg_profile_new();
  fg_read_error e;
  cr_assert_eq(fg_read_pprof(p, buf, len, FG_MAIN, NULL, &e), 0, "%s", e.msg);
  cr_expect_str_eq(folded_of(p),
                   "[worker 1 tid=42];p/C.m:152;weird:name 4\nmain;A.run 3\nmain;B c.run 2\n",
                   "the first sample type: units; the thread label back as the root frame");
  fg_profile_free(p);
  p = fg_profile_new();
  cr_assert_eq(fg_read_pprof(p, buf, len, FG_MAIN, "cpu", &e), 0, "%s", e.msg);
  cr_expect_str_eq(folded_of(p),
                   "[worker 1 tid=42];p/C.m:152;weird:name 4000000\nmain;A.run 3000000\n"
                   "main;B c.run 2000000\n",
                   "cpu: nanoseconds");
  cr_expect_eq(fg_read_pprof(p, buf, len, FG_MAIN, "wall", &e), -EINVAL);
  cr_expect(strstr(e.msg, "no sample type 'wall' (the profile has: samples, cpu)"), "%s", e.msg);
  fg_profile_free(p);
}

/* data[0..len) gunzipped into out (at most cap bytes); returns its length. */
static size_t gunzip(const unsigned char *data, size_t len, unsigned char *out, size_t cap) {
  z_stream z;
  memset(&z, 0, sizeof z);
  cr_assert_eq(inflateInit2(&z, 15 + 16), Z_OK);
  z.next_in = (unsigned char *)data;
  z.avail_in = (uInt)len;
  z.next_out = out;
  z.avail_out = (uInt)cap;
  cr_assert_eq(inflate(&z, Z_FINISH), Z_STREAM_END);
  size_t n = cap - z.avail_out;
  inflateEnd(&z);
  return n;
}

Test(output, a_damaged_pprof_file_is_an_error_not_a_crash) {
  uint32_t root = intern_string("[worker 1 tid=42]", 17), m = intern_string("p/C.m:152", 9);
  uint32_t s3[] = {root, m};
  cr_assert_eq(traces_add(s3, 2, 4, 4000000, NULL), 0);
  struct agent_options o;
  options_for(&o, "d.pprof", "threads");
  char err[512];
  cr_assert_eq(write_now(&o, err, sizeof err), 0, "%s", err);
  size_t zlen;
  unsigned char *zipped = slurp_bytes(o.file, &zlen);
  static unsigned char raw[1 << 20], copy[1 << 20];
  size_t rawlen = gunzip(zipped, zlen, raw, sizeof raw);
  fg_profile *p = fg_profile_new();
  fg_read_error e;
  cr_assert_eq(fg_read_pprof(p, raw, rawlen, FG_MAIN, NULL, &e), 0, "not gzipped: read too: %s",
               e.msg);
  cr_expect_eq(fg_profile_total(p, FG_MAIN), 9);
  fg_profile_free(p);
  unsigned seed = 12345;
  int errors = 0, fine = 0;
  for (int i = 0; i < 4000; i++) {
    /* half of them damage the gzip file, half the protobuf inside */
    const unsigned char *good = i % 2 ? zipped : raw;
    size_t n = i % 2 ? zlen : rawlen;
    memcpy(copy, good, n);
    if (i % 3 == 0) {
      n = (size_t)rand_r(&seed) % n; /* cut short */
    } else {
      for (int k = 0; k < 1 + i % 4; k++) /* bits flipped */
        copy[(size_t)rand_r(&seed) % n] ^= (unsigned char)(1u << (rand_r(&seed) % 8));
    }
    p = fg_profile_new();
    int rc = fg_read_pprof(p, copy, n, FG_MAIN, NULL, &e);
    cr_expect(rc == 0 || rc == -EINVAL, "rc %d", rc);
    if (rc) {
      errors++;
      cr_expect(e.msg[0] != '\0', "an error says what is wrong");
    } else {
      fine++;
    }
    fg_profile_free(p);
  }
  cr_expect_gt(errors, 1000, "damage found: %d errors, %d read", errors, fine);
}

/* The program's name comes from JVMTI (sun.java.command) in modified UTF-8: the titles and the
 * report carry it as UTF-8 (U+1D49C, the surrogates D835 DC9C, becomes one 4-byte character). */
Test(output, the_program_name_is_utf8_in_every_title) {
  output_set_program("p.\xED\xA0\xB5\xED\xB2\x9CMain");
  struct agent_options o;
  char err[512];
  static const char *const files[] = {"p.txt", "p.svg", "p.html"};
  for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
    options_for(&o, files[i], NULL);
    cr_assert_eq(write_now(&o, err, sizeof err), 0, "%s", err);
    char *text = slurp(o.file);
    cr_expect(strstr(text, "p.\xF0\x9D\x92\x9CMain"), "%s: the program's name in UTF-8", files[i]);
    cr_expect(!strstr(text, "\xED\xA0\xB5"), "%s: no surrogate left", files[i]);
  }
}

/* ---- several events in one run ---- */

/* The same frames as an allocation's and a lock wait's stack beside the CPU ones: three stacks
 * apart. A file per event with %e, each as that event alone writes it; one pprof file with a
 * sample type per event, each type reading back its event's stacks only. */
Test(output, several_events_are_a_file_each_or_a_sample_type_each) {
  uint32_t root = intern_string("main", 4), a = intern_string("A.run", 5),
           cls = intern_string("byte[]_[a]", 10), lk = intern_string("java.lang.Object_[l]", 20);
  uint32_t sa[] = {root, a, cls}, sl[] = {root, a, lk}, sc[] = {root, a};
  cr_assert_eq(traces_add_kind(sa, 3, SAMPLER_EVENT_ALLOC, 2, 4096, NULL), 0);
  cr_assert_eq(traces_add_kind(sl, 3, SAMPLER_EVENT_LOCK, 1, 5000, NULL), 0);
  cr_assert_eq(traces_add_kind(sc, 2, SAMPLER_EVENT_ALLOC, 1, 100, NULL), 0);
  cr_assert_eq(traces_count(), 5, "main;A.run under cpu and under alloc: two stacks");
  struct agent_options o;
  options_for(&o, "p-%e.folded", "event=cpu,alloc,lock");
  char err[512], path[256];
  cr_assert_eq(write_now(&o, err, sizeof err), 0, "%s", err);
  snprintf(path, sizeof path, "%s/p-cpu.folded", dir);
  cr_expect_str_eq(slurp(path), "main;A.run 3\nmain;B c.run 2\n", "cpu: samples");
  snprintf(path, sizeof path, "%s/p-alloc.folded", dir);
  char *got = slurp(path);
  cr_expect_str_eq(got, "main;A.run 100\nmain;A.run;byte[]_[a] 4096\n", "alloc: bytes: %s", got);
  snprintf(path, sizeof path, "%s/p-lock.folded", dir);
  cr_expect_str_eq(slurp(path), "main;A.run;java.lang.Object_[l] 5000\n", "lock: ns blocked");
  options_for(&o, "p-%e.txt", "event=cpu,alloc,lock");
  cr_assert_eq(write_now(&o, err, sizeof err), 0, "%s", err);
  snprintf(path, sizeof path, "%s/p-alloc.txt", dir);
  cr_expect(strstr(slurp(path), "Total: 4196 bytes allocated (estimated) in 2 distinct stacks"),
            "%s", slurp(path));

  options_for(&o, "p.html", "event=cpu,alloc,lock");
  cr_assert_eq(write_now(&o, err, sizeof err), 0, "%s", err);
  const char *page = slurp(o.file), *at = strstr(page, "const FG_EVENTS = [");
  cr_assert(at, "one page of several events");
  static const char *const parts[] = {
      "{\"event\":\"cpu\",\"data\":{\"version\":1,\"title\":\"CPU profile: ",
      "\"countName\":\"samples\"",
      "\"total\":5,",
      "{\"event\":\"alloc\",\"data\":{\"version\":1,\"title\":\"Allocation profile: ",
      "\"countName\":\"bytes\"",
      "\"total\":4196,",
      "{\"event\":\"lock\",\"data\":{\"version\":1,\"title\":\"Lock (time blocked) profile: ",
      "\"countName\":\"ns\"",
      "\"total\":5000,",
      "];\nconst FG_DATA = FG_EVENTS["};
  for (size_t i = 0; i < sizeof parts / sizeof *parts; i++) { /* in this order */
    const char *next = strstr(at, parts[i]);
    cr_expect(next, "the page lacks %s after %.80s", parts[i], at);
    if (next) at = next;
  }
  cr_expect_eq(others_in_dir("p.html"), 6,
               "one page (beside the 6 files above), no temporary file");

  options_for(&o, "p-%e.pb.gz", "event=cpu,alloc,lock");
  cr_assert_eq(write_now(&o, err, sizeof err), 0, "%s", err);
  snprintf(path, sizeof path, "%s/p-cpu+alloc+lock.pb.gz", dir);
  size_t len;
  unsigned char *buf = slurp_bytes(path, &len);
  static const struct {
    const char *type, *folded;
  } want[] = {{"samples", "main;A.run 3\nmain;B c.run 2\n"},
              {"cpu", "main;A.run 3000000\nmain;B c.run 2000000\n"},
              {"alloc_objects", "main;A.run 1\nmain;A.run;byte[]_[a] 2\n"},
              {"alloc_space", "main;A.run 100\nmain;A.run;byte[]_[a] 4096\n"},
              {"contentions", "main;A.run;java.lang.Object_[l] 1\n"},
              {"delay", "main;A.run;java.lang.Object_[l] 5000\n"}};
  for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
    fg_profile *p = fg_profile_new();
    fg_read_error e;
    cr_assert_eq(fg_read_pprof(p, buf, len, FG_MAIN, want[i].type, &e), 0, "%s", e.msg);
    char *f = folded_of(p);
    cr_expect_str_eq(f, want[i].folded, "pprof %s", want[i].type);
    free(f);
    fg_profile_free(p);
  }
}
