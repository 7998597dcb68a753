/*
 * test_svg.c — the SVG writer: classic structure (one <g> per frame, title
 * "name (N samples, P%)"), layout (widths add up, offsets, inverted), min-width pruning in px
 * and %, escaping of < > & quotes and non-ASCII, frame kinds and the java palette, diff
 * titles and colours, determinism.
 */
#include "fg_test_util.h"

#include <errno.h>

/* The <g> of the frame whose title starts with `title` (NULL when absent). */
static const char *frame_g(const char *svg, const char *title) {
  char key[512];
  snprintf(key, sizeof key, "<g><title>%s (", title);
  return strstr(svg, key);
}

/* Attribute `attr` of the first <rect> after `at`, as a double. */
static double rect_attr(const char *at, const char *attr) {
  cr_assert(at);
  const char *r = strstr(at, "<rect ");
  char key[32];
  snprintf(key, sizeof key, " %s=\"", attr);
  const char *v = strstr(r, key);
  cr_assert(v);
  return strtod(v + strlen(key), NULL);
}

Test(svg, classic_structure_and_titles) {
  fg_profile *p = profile_of("main;work 1234\nmain;idle 766\n");
  fg_options o;
  fg_options_init(&o);
  o.title = "My <Graph>";
  o.subtitle = "run 1";
  o.count_name = "ticks";
  char *svg = render(OUT_SVG, p, &o);
  cr_expect(strncmp(svg, "<?xml version=\"1.0\" standalone=\"no\"?>\n<svg ", 43) == 0);
  cr_expect_eq(count_of(svg, "<g><title>"), 4);
  cr_expect(strstr(svg, "<g><title>all (2,000 ticks, 100%)</title>"));
  cr_expect(strstr(svg, "<g><title>work (1,234 ticks, 61.7%)</title>"));
  cr_expect(strstr(svg, "<g><title>idle (766 ticks, 38.3%)</title>"));
  cr_expect(strstr(svg, ">My &lt;Graph&gt;</text>"));
  cr_expect(strstr(svg, "<text id=\"subtitle\""));
  cr_expect(strstr(svg, "</svg>\n"));
  /* no external resources: no href, no http(s) except the SVG namespace */
  cr_expect_eq(count_of(svg, "href"), 0);
  cr_expect_eq(count_of(svg, "http"), 1);
  cr_expect(strstr(svg, "xmlns=\"http://www.w3.org/2000/svg\""));
  free(svg);
  fg_profile_free(p);
}

Test(svg, widths_add_up) {
  fg_profile *p = profile_of("m;a 1\nm;b 3\nm;b;c 2\nm 2\n");
  fg_options o;
  fg_options_init(&o);
  o.width = 820; /* 800 px for 8 samples: 100 px per sample */
  char *svg = render(OUT_SVG, p, &o);
  struct {
    const char *name;
    double x, w;
  } want[] = {
      {"all", 10, 800}, {"m", 10, 800}, {"a", 10, 100}, {"b", 110, 500}, {"c", 110, 200},
  };
  for (size_t i = 0; i < 5; i++) {
    const char *g = frame_g(svg, want[i].name);
    cr_assert(g, "%s", want[i].name);
    cr_expect_float_eq(rect_attr(g, "x"), want[i].x, 1e-9, "%s", want[i].name);
    cr_expect_float_eq(rect_attr(g, "width"), want[i].w, 1e-9, "%s", want[i].name);
  }
  /* flame: the root at the bottom, children above */
  double yroot = rect_attr(frame_g(svg, "all"), "y"), ym = rect_attr(frame_g(svg, "m"), "y");
  cr_expect_float_eq(ym, yroot - 16, 1e-9);
  free(svg);
  o.inverted = 1;
  o.frame_height = 20;
  svg = render(OUT_SVG, p, &o);
  yroot = rect_attr(frame_g(svg, "all"), "y");
  ym = rect_attr(frame_g(svg, "m"), "y");
  cr_expect_float_eq(yroot, 36, 1e-9);
  cr_expect_float_eq(ym, 56, 1e-9);
  cr_expect_float_eq(rect_attr(frame_g(svg, "m"), "height"), 19, 1e-9);
  cr_expect(strstr(svg, "inverted: true"));
  free(svg);
  fg_profile_free(p);
}

Test(svg, min_width_prunes_subtrees) {
  /* 1000 px for 1000 samples */
  fg_profile *p = profile_of("r;big 990\nr;small 5\nr;small;deeper 3\nr;tiny 2\n");
  fg_options o;
  fg_options_init(&o);
  o.width = 1020;
  o.min_width = 4; /* px: small (8 px) stays, deeper (3 px) and tiny (2 px) go */
  char *svg = render(OUT_SVG, p, &o);
  cr_expect(frame_g(svg, "big"));
  cr_expect(frame_g(svg, "small"));
  cr_expect_null(frame_g(svg, "deeper"));
  cr_expect_null(frame_g(svg, "tiny"));
  free(svg);
  o.min_width = 0.5;
  o.min_width_pct = 1; /* 0.5% = 5 samples: small stays (8), deeper (3) goes */
  svg = render(OUT_SVG, p, &o);
  cr_expect(frame_g(svg, "small"));
  cr_expect_null(frame_g(svg, "deeper"));
  cr_expect_null(frame_g(svg, "tiny"));
  free(svg);
  o.min_width = 0;
  o.min_width_pct = 0;
  svg = render(OUT_SVG, p, &o);
  cr_expect(frame_g(svg, "deeper"));
  cr_expect(frame_g(svg, "tiny"));
  free(svg);
  /* the image height follows the deepest drawn frame */
  o.min_width = 100;
  svg = render(OUT_SVG, p, &o);
  cr_expect(strstr(svg, "height=\"118\"")); /* 36 top + 3 levels * 16 + 34 bottom */
  free(svg);
  fg_profile_free(p);
}

Test(svg, escaping) {
  fg_profile *p = fg_profile_new();
  const char *fr[] = {"<a&b>\"q\"'s", "\xc3\xa9t\xc3\xa9 \xe2\x82\xac", "bad\xff\001end"};
  cr_assert_eq(fg_profile_add(p, fr, 3, 1), 0);
  fg_options o;
  fg_options_init(&o);
  o.width = 3000;
  char *svg = render(OUT_SVG, p, &o);
  cr_expect(strstr(svg, "<title>&lt;a&amp;b&gt;&quot;q&quot;&#39;s (1 samples, 100%)</title>"));
  cr_expect(strstr(svg, ">&lt;a&amp;b&gt;&quot;q&quot;&#39;s</text>"));
  cr_expect(strstr(svg, "<title>\xc3\xa9t\xc3\xa9 \xe2\x82\xac (1 samples"));
  /* invalid UTF-8 and control bytes (possible through the API) become U+FFFD */
  cr_expect(strstr(svg, "<title>bad\xef\xbf\xbd\xef\xbf\xbd"
                        "end (1 samples"));
  cr_expect_null(strstr(svg, "\xff"));
  cr_expect_null(strstr(svg, "<a&"));
  free(svg);
  fg_profile_free(p);
}

Test(svg, labels_truncate_and_hide_suffix) {
  fg_profile *p = profile_of("java/lang/Thread.run_[j];short_[k] 1\n");
  fg_options o;
  fg_options_init(&o);
  o.width = 120; /* 100 px: fits 13 characters */
  char *svg = render(OUT_SVG, p, &o);
  cr_expect(strstr(svg, "<title>java/lang/Thread.run_[j] (1 samples, 100%)</title>"));
  cr_expect(strstr(svg, ">java/lang/T..</text>"));
  cr_expect(strstr(svg, ">short</text>"));
  free(svg);
  fg_profile_free(p);
}

typedef struct kind_case {
  const char *name;
  fg_kind kind;
  size_t display;
} kind_case;

Test(svg, frame_kinds) {
  static const kind_case k[] = {
      {"java/lang/String.hashCode_[j]", FG_KIND_JIT, 25},
      {"Foo.bar_[i]", FG_KIND_INLINED, 7},
      {"Foo.bar_[0]", FG_KIND_INTERPRETED, 7},
      {"do_syscall_64_[k]", FG_KIND_KERNEL, 13},
      {"java/lang/String.hashCode", FG_KIND_JAVA, 25},
      {"com.example.Main.run", FG_KIND_JAVA, 20},
      {"[unknown Java]", FG_KIND_SYNTHETIC, 14},
      {"[main tid=123]", FG_KIND_THREAD, 14},
      {"[pool-1 worker tid=7]", FG_KIND_THREAD, 21},
      {"[tid=7]", FG_KIND_SYNTHETIC, 7},
      {"[main tid=]", FG_KIND_SYNTHETIC, 11},
      {"[GC active]", FG_KIND_SYNTHETIC, 11},
      {"memcpy", FG_KIND_NATIVE, 6},
      {"std::vector<int>::push_back", FG_KIND_CPP, 27},
      {"_ZN10JavaThread3runEv", FG_KIND_CPP, 21},
      {"_Z", FG_KIND_NATIVE, 2},
      {"/usr/lib/libc.so.6", FG_KIND_NATIVE, 18},
      {"libjvm.so.1", FG_KIND_NATIVE, 11},
      {"Interpreter", FG_KIND_NATIVE, 11},
      {"x_[z]", FG_KIND_NATIVE, 5},
  };
  for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
    size_t disp;
    cr_expect_eq(fg_kind_of(k[i].name, strlen(k[i].name), &disp), k[i].kind, "%s", k[i].name);
    cr_expect_eq(disp, k[i].display, "%s", k[i].name);
  }
}

static void fill_of(const char *g, int rgb[3]) {
  cr_assert(g);
  const char *f = strstr(g, "fill=\"rgb(");
  cr_assert(f);
  cr_assert_eq(sscanf(f, "fill=\"rgb(%d,%d,%d)", &rgb[0], &rgb[1], &rgb[2]), 3);
}

/* The java palette: each kind's colour lies in its range (base .. base + spread, the numbers
 * in fg_kind.c, which the page also gets), and the legend lists the kinds drawn, in order,
 * with the middle of each range. */
typedef struct kind_range {
  const char *frame, *key;
  int base[3], spread[3];
} kind_range;

Test(svg, java_palette_by_kind) {
  fg_profile *p = profile_of("[main tid=1];a/B.c_[0];a/B.d_[j];a/B.e_[i];a/B.n;JVM::run;write;"
                             "sys_write_[k];[GC active] 1\n");
  fg_options o;
  fg_options_init(&o);
  cr_assert_eq(fg_palette_parse("JAVA", &o.palette), 0);
  char *svg = render(OUT_SVG, p, &o);
  static const kind_range k[] = {
      {"a/B.d_[j]", "jit", {80, 215, 80}, {30, 30, 30}},           /* green */
      {"a/B.n", "jit", {80, 215, 80}, {30, 30, 30}},               /* plain Java: green too */
      {"a/B.e_[i]", "inlined", {80, 200, 200}, {30, 30, 30}},      /* aqua */
      {"a/B.c_[0]", "interpreted", {190, 225, 120}, {20, 20, 20}}, /* pale lime */
      {"JVM::run", "cpp", {205, 190, 50}, {30, 30, 10}},           /* yellow */
      {"write", "native", {225, 90, 90}, {30, 40, 40}},            /* red */
      {"sys_write_[k]", "kernel", {225, 125, 0}, {30, 30, 0}},     /* orange */
      {"[GC active]", "pseudo", {175, 150, 225}, {20, 20, 20}},    /* lavender */
      {"[main tid=1]", "thread", {170, 178, 190}, {20, 20, 20}},   /* grey-blue */
  };
  const char *prev = strstr(svg, "<g id=\"legend\">");
  cr_assert(prev);
  cr_expect(prev < strstr(svg, "<g id=\"frames\">"));
  for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
    int c[3];
    fill_of(frame_g(svg, k[i].frame), c);
    for (int j = 0; j < 3; j++)
      cr_expect(c[j] >= k[i].base[j] && c[j] <= k[i].base[j] + k[i].spread[j], "%s: %d,%d,%d",
                k[i].frame, c[0], c[1], c[2]);
    if (i > 0 && strcmp(k[i].key, k[i - 1].key) == 0) continue;
    char key[64], mid[64];
    snprintf(key, sizeof key, "<g class=\"key\" data-kind=\"%s\">", k[i].key);
    const char *at = strstr(svg, key);
    cr_assert(at, "legend key %s", k[i].key);
    cr_expect(at > prev, "legend order at %s", k[i].key);
    prev = at;
    snprintf(mid, sizeof mid, "fill=\"rgb(%d,%d,%d)\"", k[i].base[0] + k[i].spread[0] / 2,
             k[i].base[1] + k[i].spread[1] / 2, k[i].base[2] + k[i].spread[2] / 2);
    cr_expect(strstr(at, mid) && strstr(at, mid) < strstr(at, "</g>"), "legend colour of %s",
              k[i].key);
  }
  cr_expect(strstr(svg, ">Java (JIT)</text>"));
  free(svg);
  fg_profile_free(p);

  /* only the kinds drawn; without kind suffixes green is simply "Java" */
  p = profile_of("com.example.Main.run;memcpy 1\n");
  svg = render(OUT_SVG, p, &o);
  cr_expect_eq(count_of(svg, "<g class=\"key\""), 2);
  cr_expect(strstr(svg, "data-kind=\"jit\""));
  cr_expect(strstr(svg, "data-kind=\"native\""));
  cr_expect(strstr(svg, ">Java</text>"));
  free(svg);
  /* other palettes have no legend; the legend row moves the frames down by 24 px */
  o.palette = FG_PAL_HOT;
  o.inverted = 1;
  svg = render(OUT_SVG, p, &o);
  cr_expect_null(strstr(svg, "id=\"legend\""));
  cr_expect_float_eq(rect_attr(frame_g(svg, "all"), "y"), 36, 1e-9);
  free(svg);
  o.palette = FG_PAL_JAVA;
  svg = render(OUT_SVG, p, &o);
  cr_expect_float_eq(rect_attr(frame_g(svg, "all"), "y"), 60, 1e-9);
  free(svg);
  fg_profile_free(p);
  fg_palette pal;
  cr_expect_eq(fg_palette_parse("nope", &pal), -EINVAL);
  for (int i = 0; i < FG_PAL_COUNT; i++) {
    cr_expect_eq(fg_palette_parse(fg_palette_name((fg_palette)i), &pal), 0);
    cr_expect_eq(pal, (fg_palette)i);
  }
}

Test(svg, deterministic_and_hash_colours) {
  fg_profile *p = profile_of("a;same 1\nb;same 1\nc 1\n");
  fg_options o;
  fg_options_init(&o);
  char *s1 = render(OUT_SVG, p, &o), *s2 = render(OUT_SVG, p, &o);
  cr_expect_str_eq(s1, s2);
  free(s1);
  free(s2);
  o.hash = 1;
  s1 = render(OUT_SVG, p, &o);
  const char *first = frame_g(s1, "same");
  const char *second = strstr(first + 1, "<g><title>same (");
  cr_assert(second);
  int c1[3], c2[3];
  fill_of(first, c1);
  fill_of(second, c2);
  cr_expect(memcmp(c1, c2, sizeof c1) == 0);
  free(s1);
  fg_profile_free(p);
}

Test(svg, reverse_option) {
  fg_profile *p = profile_of("main;a;lock 3\nmain;b;lock 2\n");
  fg_options o;
  fg_options_init(&o);
  o.reverse = 1;
  char *svg = render(OUT_SVG, p, &o);
  cr_expect(strstr(svg, "<title>lock (5 samples, 100%)"));
  cr_expect_eq(count_of(svg, "<title>main ("), 2);
  free(svg);
  fg_profile_free(p);
}

Test(svg, differential) {
  fg_profile *p = diff_of("a;b 10\na;c 30\nold 10\n", "a;b 30\na;c 30\nnew 40\n");
  fg_options o;
  fg_options_init(&o);
  char *svg = render(OUT_SVG, p, &o);
  cr_expect(strstr(svg, ">Differential Flame Graph</text>"));
  /* b: 30% now, 20% before: +10 percentage points */
  cr_expect(strstr(svg, "<title>b (30 samples, 30%; base 10, 20%; +10 pp)</title>"));
  cr_expect(strstr(svg, "<title>a (60 samples, 60%; base 40, 80%; -20 pp)</title>"));
  cr_expect(strstr(svg, "<title>new (40 samples, 40%; base 0, 0%; +40 pp)</title>"));
  cr_expect_null(frame_g(svg, "old")); /* no width in the new profile */
  int c[3];
  fill_of(frame_g(svg, "new"), c); /* the largest growth: full red */
  cr_expect(c[0] == 255 && c[1] == 25 && c[2] == 25);
  fill_of(frame_g(svg, "a"), c); /* shrank: blue */
  cr_expect(c[2] == 255 && c[0] < 255);
  free(svg);
  o.diff_absolute = 1;
  svg = render(OUT_SVG, p, &o);
  cr_expect(strstr(svg, "<title>b (30 samples, 30%; base 10, 20%; +20)</title>"));
  free(svg);
  fg_profile_free(p);
}

Test(svg, empty_profile_and_bad_options) {
  fg_profile *p = fg_profile_new();
  char *svg = render(OUT_SVG, p, NULL);
  cr_expect_eq(count_of(svg, "<g><title>"), 0);
  cr_expect(strstr(svg, "</svg>"));
  free(svg);
  fg_options o;
  fg_options_init(&o);
  o.width = 5;
  FILE *f = fopen("/dev/null", "w");
  cr_expect_eq(fg_write_svg(f, p, &o), -EINVAL);
  fclose(f);
  fg_profile_free(p);
}
