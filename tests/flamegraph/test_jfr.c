/*
 * test_jfr.c — the JFR reader (fg_jfr.c): on the recording tests/agent/jfr_fixture writes (its
 * threads, stacks, kinds, lines, times and CPU weights, as the fixture's comment lists them; with
 * MANY samples, several checkpoint events), with its options (--from/--to, --value cpu), and on
 * hostile files: every prefix of the fixture (truncated), every byte of it replaced, an event
 * of size 0 or past its chunk, and recordings built here from metadata of our own — fields in
 * another order than our writer's (read by the metadata), a type that holds itself, a string
 * pool entry that refers to itself, a stack trace that is not in the pools, a deep stack named
 * by many threads (the work budget).
 */
#include "fg_internal.h"
#include "fg_jfr.h"
#include "fg_test_util.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- the fixture's recording ---- */

typedef struct file {
  unsigned char *b;
  size_t n;
} file;

/* jfr_fixture's recording (with `many` more samples when > 0), read into memory. */
static file fixture(long many) {
  char dir[] = "/tmp/test_jfr_XXXXXX", path[64], cmd[256];
  cr_assert(mkdtemp(dir));
  snprintf(path, sizeof path, "%s/f.jfr", dir);
  if (many)
    snprintf(cmd, sizeof cmd, "'%s' '%s' %ld", JFR_FIXTURE, path, many);
  else
    snprintf(cmd, sizeof cmd, "'%s' '%s'", JFR_FIXTURE, path);
  cr_assert_eq(system(cmd), 0, "%s failed", cmd);
  FILE *f = fopen(path, "rb");
  cr_assert(f);
  file out = {0};
  cr_assert_eq(fseek(f, 0, SEEK_END), 0);
  out.n = (size_t)ftell(f);
  rewind(f);
  out.b = malloc(out.n);
  cr_assert(out.b);
  cr_assert_eq(fread(out.b, 1, out.n, f), out.n);
  fclose(f);
  unlink(path);
  rmdir(dir);
  return out;
}

/* Reads data with o (or the defaults) into a new profile, *out (the caller frees it); returns
 * fg_read_jfr's code. */
static int read_jfr(const void *data, size_t n, const fg_jfr_options *o, fg_read_error *err,
                    fg_profile **out) {
  fg_jfr_options d;
  fg_jfr_options_init(&d);
  fg_profile *p = fg_profile_new();
  cr_assert(p);
  memset(err, 0, sizeof *err);
  *out = p;
  return fg_read_jfr(p, data, n, FG_MAIN, o ? o : &d, err);
}

/* The folded text of reading data with o (or the defaults); asserts the read returned 0. */
static char *folded_of(const void *data, size_t n, const fg_jfr_options *o) {
  fg_read_error err;
  fg_profile *p;
  int rc = read_jfr(data, n, o, &err, &p);
  cr_assert_eq(rc, 0, "fg_read_jfr: %d %s", rc, err.msg);
  char *s = render(OUT_FOLDED, p, NULL);
  fg_profile_free(p);
  return s;
}

/* Reading data fails with -EINVAL and a message holding `what`. */
static void refused(const void *data, size_t n, const fg_jfr_options *o, const char *what) {
  fg_read_error err;
  fg_profile *p;
  int rc = read_jfr(data, n, o, &err, &p);
  fg_profile_free(p);
  cr_assert_eq(rc, -EINVAL, "rc %d (%s), want -EINVAL with '%s'", rc, err.msg, what);
  cr_assert(strstr(err.msg, what), "message '%s' lacks '%s'", err.msg, what);
}

Test(jfr, reads_the_fixtures_samples_root_first) {
  file f = fixture(0);
  char *s = folded_of(f.b, f.n, NULL);
  /* main, worker, main sleeping, reborn: four jdk.ExecutionSamples of one stack; the native
   * method sample and the CPU sample are other events */
  cr_assert_str_eq(s, "com/example/Main.main;com/example/Hot.run\xf0\x9f\x98\x80;"
                      "com/example/Hot.inner 4\n");
  free(s);
  free(f.b);
}

Test(jfr, names_threads_lines_and_kinds_as_the_agent_does) {
  file f = fixture(0);
  fg_jfr_options o;
  fg_jfr_options_init(&o);
  o.threads = o.lines = o.ann = 1;
  char *s = folded_of(f.b, f.n, &o);
  const char *stack = "com/example/Main.main:7_[0];com/example/Hot.run\xf0\x9f\x98\x80:40_[j];"
                      "com/example/Hot.inner:12_[i]";
  char want[1024];
  /* a reused tid is another thread; the newline in a name cannot stay in a folded line */
  snprintf(want, sizeof want,
           "[main tid=4242];%s 2\n[reborn tid=4242];%s 1\n[worker \"odd\" name tid=4243];%s 1\n",
           stack, stack, stack);
  cr_assert_str_eq(s, want);
  free(s);
  free(f.b);
}

Test(jfr, value_cpu_takes_the_cpu_samples_weight) {
  file f = fixture(0);
  fg_jfr_options o;
  fg_jfr_options_init(&o);
  o.value = "cpu";
  o.threads = 1;
  char *s = folded_of(f.b, f.n, &o);
  cr_assert_str_eq(s, "[GC Thread#0 tid=4250];G1ParTask::work 2500000\n");
  free(s);
  o.value = "bytes";
  refused(f.b, f.n, &o, "--value 'bytes'");
  free(f.b);
}

/* --value alloc: jdk.ObjectAllocationSample's weight in bytes, by thread, stack and class, the
 * class (internal form in the file) the leaf in Java form with the allocated-class kind. */
Test(jfr, value_alloc_takes_the_allocations_weight_and_class) {
  file f = fixture(0);
  fg_jfr_options o;
  fg_jfr_options_init(&o);
  o.value = "alloc";
  o.threads = 1;
  char *s = folded_of(f.b, f.n, &o);
  const char *stack = "com/example/Main.main;com/example/Hot.run\xf0\x9f\x98\x80;"
                      "com/example/Hot.inner";
  char want[1024];
  snprintf(want, sizeof want,
           "[main tid=4242];%s;byte[]_[a] 524288\n"
           "[worker \"odd\" name tid=4243];%s;java.lang.String_[a] 1000\n",
           stack, stack);
  cr_assert_str_eq(s, want);
  free(s);
  free(f.b);
}

/* --value monitor and park: jdk.JavaMonitorEnter's and jdk.ThreadPark's durations in ns, by
 * thread, stack and class, the class the leaf with the lock-class kind — a park without a class
 * (a null reference) under [park without blocker]. */
Test(jfr, value_monitor_and_park_take_the_waits_durations_and_classes) {
  file f = fixture(0);
  fg_jfr_options o;
  fg_jfr_options_init(&o);
  o.threads = 1;
  const char *stack = "com/example/Main.main;com/example/Hot.run\xf0\x9f\x98\x80;"
                      "com/example/Hot.inner";
  char want[1024];
  o.value = "monitor";
  char *s = folded_of(f.b, f.n, &o);
  snprintf(want, sizeof want, "[main tid=4242];%s;java.lang.Object_[l] 1500000\n", stack);
  cr_expect_str_eq(s, want);
  free(s);
  o.value = "park";
  s = folded_of(f.b, f.n, &o);
  snprintf(want, sizeof want, "[worker \"odd\" name tid=4243];%s;[park without blocker] 250000\n",
           stack);
  cr_expect_str_eq(s, want);
  free(s);
  free(f.b);
}

Test(jfr, from_and_to_cut_the_events_start_times) {
  file f = fixture(0);
  fg_jfr_options o;
  fg_jfr_options_init(&o);
  /* samples at 1001, 2002, 5005 and 5505 us; the recording is 2.5 s long */
  const struct {
    int has_from, has_to;
    int64_t from, to;
    const char *want;
  } cases[] = {
      {1, 1, 2000000, 5100000, "2\n"}, /* 2002, 5005 */
      {1, 0, 5005000, 0, "2\n"},       /* from is inclusive: 5005, 5505 */
      {0, 1, 0, 5005000, "2\n"},       /* to is not: 1001, 2002 */
      {1, 0, -2497000000, 0, "2\n"},   /* 2.5 s - 2.497 s = 3000 us on: 5005, 5505 */
      {0, 1, 0, -2498998000, "1\n"},   /* before 2.5 s - 2.498998 s = 1002 us: 1001 */
      {1, 1, 6000000, 7000000, ""},    /* none */
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    o.has_from = cases[i].has_from;
    o.has_to = cases[i].has_to;
    o.from_ns = cases[i].from;
    o.to_ns = cases[i].to;
    char *s = folded_of(f.b, f.n, &o);
    const char *count = strrchr(s, ' ');
    cr_assert_str_eq(count ? count + 1 : s, cases[i].want, "case %zu: %s", i, s);
    free(s);
  }
  free(f.b);
}

Test(jfr, follows_many_checkpoints_and_several_chunks) {
  file f = fixture(20000); /* 20000 stacks of 64-byte names: several 1 MiB checkpoint events */
  fg_profile *p;
  fg_read_error err;
  cr_assert_eq(read_jfr(f.b, f.n, NULL, &err, &p), 0, "%s", err.msg);
  cr_assert_eq(fg_profile_total(p, FG_MAIN), 20004);
  fg_profile_free(p);
  /* two chunks back to back (what `jfr assemble` makes): both read */
  unsigned char *two = malloc(2 * f.n);
  cr_assert(two);
  memcpy(two, f.b, f.n);
  memcpy(two + f.n, f.b, f.n);
  cr_assert_eq(read_jfr(two, 2 * f.n, NULL, &err, &p), 0, "%s", err.msg);
  cr_assert_eq(fg_profile_total(p, FG_MAIN), 40008);
  fg_profile_free(p);
  free(two);
  free(f.b);
}

/* Every way of naming: threads, lines, kinds. */
static const fg_jfr_options k_all = {.threads = 1, .lines = 1, .ann = 1};

Test(jfr, every_truncation_is_an_error) {
  file f = fixture(0);
  /* cut as it is (the header's size says more), and with the header's size made to agree (the
   * metadata, the chunk's last event, is cut then) */
  for (int agree = 0; agree < 2; agree++)
    for (size_t n = 0; n < f.n; n++) {
      unsigned char *cut = malloc(n ? n : 1); /* its own block: ASan sees a read past it */
      cr_assert(cut);
      memcpy(cut, f.b, n);
      if (agree && n >= 16)
        for (int i = 0; i < 8; i++) cut[8 + i] = (unsigned char)((uint64_t)n >> (56 - 8 * i));
      fg_profile *p;
      fg_read_error err;
      int rc = read_jfr(cut, n, &k_all, &err, &p);
      cr_assert_eq(rc, -EINVAL, "%zu of %zu bytes (sizes agree: %d): rc %d", n, f.n, agree, rc);
      cr_assert(err.msg[0]);
      fg_profile_free(p);
      free(cut);
    }
  refused(f.b, 60, NULL, "shorter than its 68-byte header");
  refused(f.b, f.n - 1, NULL, "cut short");
  free(f.b);
}

Test(jfr, any_byte_replaced_reads_or_is_an_error) {
  file f = fixture(0);
  static const unsigned char bytes[] = {0x00, 0x01, 0x7f, 0x80, 0xff};
  for (size_t i = 0; i < f.n; i++)
    for (size_t k = 0; k < sizeof bytes; k++) {
      unsigned char *b = malloc(f.n);
      cr_assert(b);
      memcpy(b, f.b, f.n);
      b[i] = bytes[k];
      fg_profile *p;
      fg_read_error err;
      int rc = read_jfr(b, f.n, &k_all, &err, &p);
      cr_assert(rc == 0 || rc == -EINVAL, "byte %zu = %#x: rc %d", i, bytes[k], rc);
      cr_assert(rc == 0 || err.msg[0], "byte %zu: an error without a message", i);
      fg_profile_free(p);
      free(b);
    }
  free(f.b);
}

/* ---- recordings built here ---- */

typedef struct jb {
  unsigned char b[1 << 20];
  size_t n;
} jb;

static void put(jb *j, const void *s, size_t n) {
  cr_assert(j->n + n <= sizeof j->b);
  memcpy(j->b + j->n, s, n);
  j->n += n;
}

static void var(jb *j, uint64_t v) {
  unsigned char c[10];
  put(j, c, leb128(v, c));
}

static void str(jb *j, const char *s) {
  unsigned char enc = 3;
  put(j, &enc, 1);
  var(j, strlen(s));
  put(j, s, strlen(s));
}

static void u8(jb *j, unsigned v) {
  unsigned char c = (unsigned char)v;
  put(j, &c, 1);
}

/* An event with body b: its size as a 4-byte varint (as the JDK pads them), then b. */
static void event(jb *out, const jb *b) {
  uint32_t n = (uint32_t)b->n + 4;
  unsigned char s[4] = {(unsigned char)(0x80 | (n & 0x7f)), (unsigned char)(0x80 | (n >> 7 & 0x7f)),
                        (unsigned char)(0x80 | (n >> 14 & 0x7f)), (unsigned char)(n >> 21 & 0x7f)};
  put(out, s, 4);
  put(out, b->b, b->n);
}

/* The metadata as text: "class ID NAME" lines, each followed by "field NAME TYPE [cp] [array]"
 * lines. Strings are interned into the event's table as the tree is written. */
typedef struct meta_b {
  const char *strings[256];
  size_t n;
  jb tree;
} meta_b;

static void m_str(meta_b *m, const char *s) {
  size_t i = 0;
  while (i < m->n && strcmp(m->strings[i], s) != 0) i++;
  if (i == m->n) {
    cr_assert(m->n < 256);
    m->strings[m->n++] = s;
  }
  var(&m->tree, i);
}

static void metadata_event(jb *out, const char *const *lines, size_t nlines) {
  static meta_b m;
  memset(&m, 0, sizeof m);
  static char words[64][4][64];
  size_t nclass = 0;
  for (size_t i = 0; i < nlines; i++) nclass += strncmp(lines[i], "class ", 6) == 0;
  m_str(&m, "root");
  var(&m.tree, 0);
  var(&m.tree, 1);
  m_str(&m, "metadata");
  var(&m.tree, 0);
  var(&m.tree, nclass);
  for (size_t i = 0; i < nlines;) {
    char(*w)[64] = words[i];
    int nw = sscanf(lines[i], "%63s %63s %63s %63s", w[0], w[1], w[2], w[3]);
    cr_assert(nw >= 3 && !strcmp(w[0], "class"), "%s", lines[i]);
    size_t nf = 0;
    while (i + 1 + nf < nlines && strncmp(lines[i + 1 + nf], "field ", 6) == 0) nf++;
    m_str(&m, "class");
    var(&m.tree, 2);
    m_str(&m, "id");
    m_str(&m, w[1]);
    m_str(&m, "name");
    m_str(&m, w[2]);
    var(&m.tree, nf);
    for (size_t k = 0; k < nf; k++) {
      char(*fw)[64] = words[i + 1 + k];
      char extra[2][64] = {"", ""};
      int fn = sscanf(lines[i + 1 + k], "%63s %63s %63s %63s %63s", fw[0], fw[1], fw[2], extra[0],
                      extra[1]);
      cr_assert(fn >= 3);
      int cp = !strcmp(extra[0], "cp") || !strcmp(extra[1], "cp");
      int array = !strcmp(extra[0], "array") || !strcmp(extra[1], "array");
      m_str(&m, "field");
      var(&m.tree, 2 + cp + array);
      m_str(&m, "name");
      m_str(&m, fw[1]);
      m_str(&m, "class");
      m_str(&m, fw[2]);
      if (cp) {
        m_str(&m, "constantPool");
        m_str(&m, "true");
      }
      if (array) {
        m_str(&m, "dimension");
        m_str(&m, "1");
      }
      var(&m.tree, 0);
    }
    i += 1 + nf;
  }
  static jb body;
  body.n = 0;
  var(&body, 0); /* type: metadata */
  var(&body, 0);
  var(&body, 0);
  var(&body, 1);
  var(&body, m.n);
  for (size_t i = 0; i < m.n; i++) str(&body, m.strings[i]);
  put(&body, m.tree.b, m.tree.n);
  event(out, &body);
}

static void be64(unsigned char *p, uint64_t v) {
  for (int i = 7; i >= 0; i--, v >>= 8) p[i] = (unsigned char)v;
}

/* A chunk: the header, events (already encoded), the metadata; ticks are ns from 0. */
static void chunk(jb *out, const jb *events, const char *const *meta, size_t nmeta) {
  out->n = 0;
  unsigned char h[68] = {'F', 'L', 'R', 0, 0, 2, 0, 1};
  put(out, h, sizeof h);
  put(out, events->b, events->n);
  size_t meta_at = out->n;
  metadata_event(out, meta, nmeta);
  be64(out->b + 8, out->n);
  be64(out->b + 24, meta_at);
  be64(out->b + 32, 1795780800000000000ull);
  be64(out->b + 40, 1000000000);
  be64(out->b + 56, 1000000000);
}

/* Types with the fields in another order than our writer's, and one field it never writes. */
static const char *const k_meta[] = {
    "class 20 long",
    "class 21 int",
    "class 22 java.lang.String",
    "class 23 boolean",
    "class 100 jdk.ExecutionSample",
    "field stackTrace 101 cp",
    "field weird 21",
    "field startTime 20",
    "field sampledThread 105 cp",
    "class 101 jdk.types.StackTrace",
    "field frames 102 array",
    "field truncated 23",
    "class 102 jdk.types.StackFrame",
    "field type 106 cp",
    "field lineNumber 21",
    "field method 103 cp",
    "class 103 jdk.types.Method",
    "field name 107 cp",
    "field type 104 cp",
    "class 104 java.lang.Class",
    "field name 107 cp",
    "class 105 java.lang.Thread",
    "field osThreadId 20",
    "field osName 22",
    "class 106 jdk.types.FrameType",
    "field description 22",
    "class 107 jdk.types.Symbol",
    "field string 22",
    "class 108 x.Loop",
    "field self 108",
};

/* The start of a checkpoint event of npools pools (type, start, duration, delta, flush). */
static void checkpoint(jb *b, uint64_t npools) {
  var(b, 1);
  var(b, 0), var(b, 0), var(b, 0), u8(b, 0);
  var(b, npools);
}

/* A sample event at t ns: stack and thread keys. */
static void sample(jb *ev, uint64_t t, uint64_t stack, uint64_t thread) {
  static jb b;
  b.n = 0;
  var(&b, 100);
  var(&b, stack);
  var(&b, 7); /* weird */
  var(&b, t);
  var(&b, thread);
  event(ev, &b);
}

/* The pools of a one-stack recording: main_cls.main (JIT) calling hot_cls.run (inlined, line
 * 5). */
static void pools_named(jb *ev, const char *main_cls, const char *hot_cls) {
  static jb b;
  b.n = 0;
  checkpoint(&b, 6);
  var(&b, 107);
  var(&b, 4);
  const char *sym[] = {main_cls, "main", hot_cls, "run"};
  for (int i = 0; i < 4; i++) {
    var(&b, (uint64_t)i + 1);
    str(&b, sym[i]);
  }
  var(&b, 104);
  var(&b, 2);
  var(&b, 1), var(&b, 1);
  var(&b, 2), var(&b, 3);
  var(&b, 103);
  var(&b, 2);
  var(&b, 1), var(&b, 2), var(&b, 1); /* key, name, type */
  var(&b, 2), var(&b, 4), var(&b, 2);
  var(&b, 106);
  var(&b, 2);
  var(&b, 1), str(&b, "JIT compiled");
  var(&b, 2), str(&b, "Inlined");
  var(&b, 105);
  var(&b, 1);
  var(&b, 9), var(&b, 4242), str(&b, "w");
  var(&b, 101);
  var(&b, 1);
  var(&b, 3); /* key */
  var(&b, 2); /* frames, leaf first: type, line, method */
  var(&b, 2), var(&b, 5), var(&b, 2);
  var(&b, 1), var(&b, 0), var(&b, 1);
  u8(&b, 0); /* truncated */
  event(ev, &b);
}

/* Main.main (JIT) calling Hot.run (inlined, line 5). */
static void pools(jb *ev) { pools_named(ev, "Main", "Hot"); }

/* A chunk of nsamples samples of stack (a key) in thread 9, 100 ns apart, then pools(). */
static void one_stack_chunk(jb *out, uint64_t stack, int nsamples) {
  static jb ev;
  ev.n = 0;
  for (int i = 0; i < nsamples; i++) sample(&ev, 100 + (uint64_t)i * 100, stack, 9);
  pools(&ev);
  chunk(out, &ev, k_meta, sizeof k_meta / sizeof *k_meta);
}

Test(jfr, reads_types_by_their_metadata_not_by_a_layout) {
  static jb out;
  one_stack_chunk(&out, 3, 2);
  fg_jfr_options o;
  fg_jfr_options_init(&o);
  o.threads = o.lines = o.ann = 1;
  char *s = folded_of(out.b, out.n, &o);
  cr_assert_str_eq(s, "[w tid=4242];Main.main_[j];Hot.run:5_[i] 2\n");
  free(s);
}

/* The JDK's recordings can name a thread that no checkpoint of the chunk describes (one seen
 * in a suite run on a busy machine, the JDK's JFR of a 3 s program): its events are kept, under
 * an unknown thread, not the file refused. */
Test(jfr, a_thread_not_in_the_pools_is_an_unknown_thread) {
  static jb ev, out;
  ev.n = out.n = 0;
  sample(&ev, 100, 3, 9);
  sample(&ev, 200, 3, 7); /* thread 7: not in pools() */
  pools(&ev);
  chunk(&out, &ev, k_meta, sizeof k_meta / sizeof *k_meta);
  char *s = folded_of(out.b, out.n, &k_all);
  cr_assert_str_eq(s, "[unknown thread];Main.main_[j];Hot.run:5_[i] 1\n"
                      "[w tid=4242];Main.main_[j];Hot.run:5_[i] 1\n");
  free(s);
}

/* The JDK's recorder names a hidden class in its Java form with its address (21, 25), on 17
 * with '+', the address and its mirror's hash: a JDK 17 recording of a suite run had a sample in
 * "java.util.regex.CharPredicates$$Lambda$17+0x800000025/674483268". Read as the agent names
 * one: internal form, the address and hash dropped; other names as they are. */
Test(jfr, a_hidden_class_is_named_as_the_agent_names_it) {
  static const char *const names[][3] = {
      {"java.util.regex.CharPredicates$$Lambda$17+0x800000025/674483268",
       "p.Foo$$Lambda/0x00000000820656f0",
       "[w tid=4242];java/util/regex/CharPredicates$$Lambda$17.main;p/Foo$$Lambda.run 1\n"},
      {"p/v2/Main0x12", "p/Hot+0xzz/12", "[w tid=4242];p/v2/Main0x12.main;p/Hot+0xzz/12.run 1\n"},
      {"/0x12", "p/Hot/0x", "[w tid=4242];/0x12.main;p/Hot/0x.run 1\n"},
  };
  for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
    static jb ev, out;
    ev.n = out.n = 0;
    sample(&ev, 100, 3, 9);
    pools_named(&ev, names[i][0], names[i][1]);
    chunk(&out, &ev, k_meta, sizeof k_meta / sizeof *k_meta);
    fg_jfr_options o;
    fg_jfr_options_init(&o);
    o.threads = 1;
    char *s = folded_of(out.b, out.n, &o);
    cr_assert_str_eq(s, names[i][2]);
    free(s);
  }
}

Test(jfr, a_stack_not_in_the_pools_is_an_error) {
  static jb out;
  one_stack_chunk(&out, 4, 1);
  refused(out.b, out.n, NULL, "stack trace 4 is not in the chunk's constant pools");
}

Test(jfr, a_type_that_holds_itself_is_an_error) {
  static jb ev, out, b;
  ev.n = b.n = 0;
  checkpoint(&b, 1);
  var(&b, 108); /* x.Loop: its field self is an x.Loop, inline, taking no bytes */
  var(&b, 1);
  var(&b, 1);
  event(&ev, &b);
  chunk(&out, &ev, k_meta, sizeof k_meta / sizeof *k_meta);
  refused(out.b, out.n, NULL, "values of 'x.Loop' nest deeper than 32");
}

Test(jfr, a_pooled_string_that_refers_to_itself_is_an_error) {
  static jb ev, out;
  ev.n = 0;
  sample(&ev, 100, 3, 9);
  pools(&ev);
  static jb b;
  b.n = 0;
  checkpoint(&b, 2);
  var(&b, 22); /* the string pool: 5 is "see string 5" */
  var(&b, 1);
  var(&b, 5), u8(&b, 2), var(&b, 5);
  var(&b, 105); /* thread 10 is named by string 5 */
  var(&b, 1);
  var(&b, 10), var(&b, 1), u8(&b, 2), var(&b, 5);
  event(&ev, &b);
  sample(&ev, 300, 3, 10);
  chunk(&out, &ev, k_meta, sizeof k_meta / sizeof *k_meta);
  fg_jfr_options o;
  fg_jfr_options_init(&o);
  o.threads = 1;
  refused(out.b, out.n, &o, "a pooled string that is not a string");
}

Test(jfr, an_event_of_a_bad_size_is_an_error) {
  static jb out;
  one_stack_chunk(&out, 3, 1);
  static unsigned char b[sizeof out.b];
  memcpy(b, out.b, out.n);
  b[68] = 0x80, b[69] = 0x80, b[70] = 0x80, b[71] = 0x00; /* the first event: size 0 */
  refused(b, out.n, NULL, "offset 68: an event of size 0");
  b[71] = 0x7f; /* size 2^28 - 1, past the chunk */
  refused(b, out.n, NULL, "offset 68: an event of size 266338304");
}

Test(jfr, a_deep_stack_in_many_threads_stops_at_the_work_budget) {
  enum { FRAMES = 10000, THREADS = 2000 };
  static jb ev, out, b;
  ev.n = b.n = 0;
  for (int t = 0; t < THREADS; t++) sample(&ev, 100, 30, 100 + (uint64_t)t);
  checkpoint(&b, 2); /* stack 30 of 10,000 Main.main frames, 2,000 threads */
  var(&b, 101);
  var(&b, 1);
  var(&b, 30);
  var(&b, FRAMES);
  for (int i = 0; i < FRAMES; i++) var(&b, 1), var(&b, 1), var(&b, 1);
  u8(&b, 0);
  var(&b, 105);
  var(&b, THREADS);
  for (int t = 0; t < THREADS; t++) var(&b, 100 + (uint64_t)t), var(&b, (uint64_t)t), str(&b, "t");
  event(&ev, &b);
  pools(&ev); /* the symbols, classes, methods and frame types */
  chunk(&out, &ev, k_meta, sizeof k_meta / sizeof *k_meta);
  fg_jfr_options o;
  fg_jfr_options_init(&o);
  /* one stack named once: 10,000 frames of about 40 steps */
  char *s = folded_of(out.b, out.n, &o);
  cr_assert(strstr(s, " 2000\n"), "%.80s", s);
  free(s);
  /* each thread its own: 2,000 x 10,000 frames, past 64 M + 256 a byte of ~70 KB */
  o.threads = 1;
  refused(out.b, out.n, &o, "more than its work budget");
}
