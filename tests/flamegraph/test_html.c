/*
 * test_html.c — the HTML writer: the template's marker replaced by `const FG_DATA = {...};`
 * with the version-1 schema (exact JSON for small profiles, normal and differential),
 * escaping inside <script> (quotes, backslash, controls, '<' of "</script>", non-ASCII),
 * pruning recorded in "pruned", each name's kind as fg_kind_of gives it and the palette as
 * fg_kind.c's tables (the page derives neither), the time axis (exact, pruned frames, merged cells).
 */
#include "fg_test_util.h"

#include <errno.h>

/* The JSON between "const FG_DATA = " and the ';' that closes it, without the palette (the
 * same in every page: palette_is_the_c_table checks it), closed with '}' (caller frees). */
static char *data_of(const char *html) {
  const char *a = strstr(html, "const FG_DATA = ");
  cr_assert(a);
  a += strlen("const FG_DATA = ");
  const char *b = strstr(a, ",\n\"palette\":{");
  cr_assert(b);
  cr_assert(strstr(b, "]}};"));
  char *s = malloc((size_t)(b - a) + 2);
  cr_assert(s);
  memcpy(s, a, (size_t)(b - a));
  s[b - a] = '}';
  s[b - a + 1] = 0;
  return s;
}

Test(html, template_is_filled) {
  fg_profile *p = profile_of("a 1\n");
  char *html = render(OUT_HTML, p, NULL);
  const char *tpl = (const char *)fg_viewer_html;
  const char *mark = strstr(tpl, "/*@FG_DATA@*/");
  cr_assert(mark);
  size_t pre = (size_t)(mark - tpl);
  cr_expect(strncmp(html, tpl, pre) == 0);
  const char *rest = mark + strlen("/*@FG_DATA@*/");
  cr_expect_str_eq(html + strlen(html) - strlen(rest), rest);
  cr_expect_null(strstr(html, "/*@FG_DATA@*/"));
  cr_expect_eq(count_of(html, "const FG_DATA = "), 1);
  free(html);
  fg_profile_free(p);
}

Test(html, schema_v1_exact) {
  fg_profile *p = profile_of("main;zeta 2\nmain;alpha;x 3\nmain 1\n");
  fg_options o;
  fg_options_init(&o);
  o.subtitle = "sub";
  o.count_name = "ns";
  char *html = render(OUT_HTML, p, &o);
  char *json = data_of(html);
  cr_expect_str_eq(
      json, "{\"version\":1,\"title\":\"Flame Graph\",\"subtitle\":\"sub\",\"countName\":\"ns\","
            "\"diff\":false,\"total\":6,\n"
            "\"names\":[\"main\",\"alpha\",\"x\",\"zeta\"],\n"
            "\"nameKinds\":[0,0,0,0],\n"
            "\"stride\":4,\"nodes\":[-1,0,6,0,0,1,6,1,1,2,3,0,2,3,3,3,3,2,2,2],\n"
            "\"pruned\":{\"nodes\":0,\"samples\":0}}");
  free(json);
  free(html);
  fg_profile_free(p);
}

Test(html, schema_v1_differential) {
  fg_profile *p = diff_of("a;b 10\nold 5\n", "a;b 30\na 2\nnew 4\n");
  char *html = render(OUT_HTML, p, NULL);
  char *json = data_of(html);
  cr_expect_str_eq(
      json, "{\"version\":1,\"title\":\"Differential Flame Graph\",\"subtitle\":null,"
            "\"countName\":\"samples\",\"diff\":true,\"total\":36,\"totalBase\":15,\n"
            "\"names\":[\"a\",\"b\",\"new\",\"old\"],\n"
            "\"nameKinds\":[0,0,0,0],\n"
            "\"stride\":6,\"nodes\":[-1,0,36,0,15,0,0,1,32,2,10,0,1,2,30,30,10,10,2,1,4,4,0,0,"
            "3,1,0,0,5,5],\n"
            "\"pruned\":{\"nodes\":0,\"samples\":0}}");
  free(json);
  free(html);
  fg_profile_free(p);
}

Test(html, escaping_inside_script) {
  fg_profile *p = fg_profile_new();
  const char *fr[] = {"</script><b>&", "q\"u\\o\te\n", "\xc3\xa9\xe2\x82\xac", "bad\xff"};
  cr_assert_eq(fg_profile_add(p, fr, 4, 1), 0);
  fg_options o;
  fg_options_init(&o);
  o.title = "T</script>";
  char *html = render(OUT_HTML, p, &o);
  char *json = data_of(html);
  cr_expect(strstr(json, "\"title\":\"T\\u003c/script\\u003e\""));
  cr_expect(strstr(json, "\"\\u003c/script\\u003e\\u003cb\\u003e\\u0026\""));
  cr_expect(strstr(json, "\"q\\\"u\\\\o\\u0009e\\u000a\""));
  cr_expect(strstr(json, "\"\xc3\xa9\xe2\x82\xac\""));
  cr_expect(strstr(json, "\"bad\xef\xbf\xbd\""));
  cr_expect_null(strstr(json, "</"));
  free(json);
  free(html);
  fg_profile_free(p);
}

Test(html, pruning_is_recorded) {
  /* total 1000; prune below 1%: "small" (5) and its child go, "edge" (10) stays */
  fg_profile *p = profile_of("r;big 985\nr;small 2\nr;small;deeper 3\nr;edge 10\n");
  fg_options o;
  fg_options_init(&o);
  o.html_prune = 0.01;
  char *html = render(OUT_HTML, p, &o);
  char *json = data_of(html);
  cr_expect(strstr(json, "\"names\":[\"r\",\"big\",\"edge\"],"));
  cr_expect(strstr(json, "\"pruned\":{\"nodes\":2,\"samples\":5}}"));
  /* the kept totals still describe the whole profile */
  cr_expect(strstr(json, "\"nodes\":[-1,0,1000,0,0,1,1000,0,"));
  free(json);
  free(html);
  /* a frame that exists only in the base survives pruning when it is big there */
  fg_profile_free(p);
  p = diff_of("gone 50\nstay 50\n", "stay 1000\n");
  html = render(OUT_HTML, p, &o);
  json = data_of(html);
  cr_expect(strstr(json, "\"names\":[\"gone\",\"stay\"],"));
  free(json);
  free(html);
  fg_profile_free(p);
}

Test(html, bad_options) {
  fg_profile *p = profile_of("a 1\n");
  fg_options o;
  fg_options_init(&o);
  o.html_prune = 2;
  FILE *f = fopen("/dev/null", "w");
  cr_expect_eq(fg_write_html(f, p, &o), -EINVAL);
  fclose(f);
  fg_profile_free(p);
}

Test(html, node_budget_keeps_the_largest) {
  /* root + r + 100 leaves with counts 1..100: a budget of 12 nodes keeps r and the 10
   * largest leaves (91..100) at most, and never a small one while a larger one is out */
  char buf[4096];
  size_t len = 0;
  for (int i = 1; i <= 100; i++)
    len += (size_t)snprintf(buf + len, sizeof buf - len, "r;f%03d %d\n", i, i);
  fg_profile *p = profile_of(buf);
  fg_options o;
  fg_options_init(&o);
  o.html_prune = 0;
  o.html_max_nodes = 12;
  char *html = render(OUT_HTML, p, &o);
  char *json = data_of(html);
  int kept = 0, min_kept = 1000, max_out = 0;
  for (int i = 1; i <= 100; i++) {
    char name[16];
    snprintf(name, sizeof name, "\"f%03d\"", i);
    if (strstr(json, name)) {
      kept++;
      if (i < min_kept) min_kept = i;
    } else if (i > max_out) {
      max_out = i;
    }
  }
  cr_expect(kept >= 8 && kept <= 10, "kept %d", kept);
  cr_expect(max_out < min_kept, "a leaf of %d left out while one of %d is kept", max_out, min_kept);
  cr_expect(strstr(json, "\"pruned\":{\"nodes\":"));
  free(json);
  free(html);
  o.html_max_nodes = 0; /* no limit */
  html = render(OUT_HTML, p, &o);
  json = data_of(html);
  cr_expect(strstr(json, "\"pruned\":{\"nodes\":0,\"samples\":0}}"));
  free(json);
  free(html);
  fg_profile_free(p);
}

/* Every kind once: the page gets each name's kind from fg_kind_of, in the names' order. */
Test(html, each_name_carries_its_kind) {
  fg_profile *p = profile_of("[main tid=7];java/lang/Thread.run_[0];a/App.loop_[j];"
                             "a/App.step_[i];java/lang/Object.hashCode;JVM_IHashCode;"
                             "Runtime1::counter_overflow;[GC active];do_syscall_64_[k] 1\n");
  char *html = render(OUT_HTML, p, NULL);
  char *json = data_of(html);
  char want[256];
  snprintf(want, sizeof want, "\"nameKinds\":[%d,%d,%d,%d,%d,%d,%d,%d,%d],", FG_KIND_THREAD,
           FG_KIND_INTERPRETED, FG_KIND_JIT, FG_KIND_INLINED, FG_KIND_JAVA, FG_KIND_NATIVE,
           FG_KIND_CPP, FG_KIND_SYNTHETIC, FG_KIND_KERNEL);
  cr_expect(strstr(json, want), "want %s in %s", want, json);
  free(json);
  free(html);
  fg_profile_free(p);
}

/* The page's palette is fg_kinds and fg_legend, written out: one definition of the colours. */
Test(html, palette_is_the_c_table) {
  fg_profile *p = profile_of("a 1\n");
  char *html = render(OUT_HTML, p, NULL);
  const char *pal = strstr(html, "\"palette\":{\"kinds\":[");
  cr_assert(pal);
  char want[512];
  const char *at = pal;
  for (int k = 0; k < FG_KIND_COUNT; k++) {
    const fg_kind_info *ki = &fg_kinds[k];
    snprintf(want, sizeof want,
             "{\"id\":\"%s\",\"label\":\"%s\",\"suffix\":\"%s\",\"base\":[%d,%d,%d],"
             "\"spread\":[%d,%d,%d]}",
             ki->id, ki->label, ki->suffix, ki->base[0], ki->base[1], ki->base[2], ki->spread[0],
             ki->spread[1], ki->spread[2]);
    const char *got = strstr(at, want);
    cr_expect(got, "kind %d: want %s", k, want);
    if (got) at = got; /* in fg_kind order: kind k is "nameKinds" value k */
  }
  cr_expect(strstr(pal, "\"legend\":[\n{\"id\":\"jit\",\"label\":\"Java (JIT)\","));
  snprintf(want, sizeof want, "\"kinds\":[%d,%d]}", FG_KIND_JIT, FG_KIND_JAVA);
  cr_expect(strstr(pal, want), "the jit key: its own kind first (its swatch), then java");
  cr_expect_eq(count_of(pal, "{\"id\":"), FG_KIND_COUNT + (int)fg_legend_count);
  free(html);
  fg_profile_free(p);
}

/* The time member of a page (from ",\n\"time\":" to its closing brace; caller frees). */
static char *time_of(const char *html) {
  const char *a = strstr(html, ",\n\"time\":");
  cr_assert(a);
  const char *b = strstr(a, ",\n\"palette\":{");
  cr_assert(b);
  char *s = strndup(a + 2, (size_t)(b - a - 2));
  cr_assert(s);
  return s;
}

/* a;b 3 (entries in cells 0 and 1), a;c 1 (cell 1), a thread with a name to escape, a mark with
 * one too, and 3 marks not kept */
static fg_profile *timed(uint32_t *b_node, uint32_t *c_node) {
  fg_profile *p = fg_profile_new();
  const char *ab[] = {"a", "b"}, *ac[] = {"a", "c"};
  cr_assert_eq(fg_profile_add_capped_node(p, ab, 2, 3, 100, "cut", b_node), 0);
  cr_assert_eq(fg_profile_add_capped_node(p, ac, 2, 1, 100, "cut", c_node), 0);
  cr_assert_eq(fg_profile_time_init(p, 1700000000123456789, 40000000, 20000000), 0);
  cr_assert_eq(fg_profile_time_thread(p, 7, "main"), 0);
  cr_assert_eq(fg_profile_time_thread(p, 8, "w\"</script>"), 1);
  cr_assert_eq(fg_profile_time_add(p, 0, *b_node, 0, 2), 0);
  cr_assert_eq(fg_profile_time_add(p, 1, *c_node, 1, 1), 0);
  cr_assert_eq(fg_profile_time_add(p, 1, *b_node, 1, 1), 0);
  cr_assert_eq(fg_profile_time_mark(p, 5000000, 0, "dump <1>"), 0);
  fg_profile_time_marks_lost(p, 3);
  return p;
}

Test(html, time_axis_exact) {
  uint32_t b, c;
  fg_profile *p = timed(&b, &c);
  char *html = render(OUT_HTML, p, NULL);
  char *t = time_of(html);
  /* page nodes: all 0, a 1, b 2, c 3; stacks in first use: b, c */
  cr_expect_str_eq(t, "\"time\":{\"startMs\":1700000000123,\"durationNs\":40000000,"
                      "\"cellNs\":20000000,\"merged\":1,\n"
                      "\"threads\":[[7,\"main\"],[8,\"w\\\"\\u003c/script\\u003e\"]],\n"
                      "\"marks\":[[5000000,0,\"dump \\u003c1\\u003e\"]],\n\"marksLost\":3,\n"
                      "\"stacks\":[2,3],\n\"n\":3,\n\"packed\":\"AAAAAgEAAQEAAQEB\"}");
  free(t);
  free(html);
  fg_profile_free(p);
}

Test(html, time_axis_pruned_frames_go_to_their_kept_ancestor) {
  uint32_t b, c;
  fg_profile *p = timed(&b, &c);
  fg_options o;
  fg_options_init(&o);
  o.html_prune = 0.3; /* c: 1 of 4 */
  char *html = render(OUT_HTML, p, &o);
  char *t = time_of(html);
  cr_expect(strstr(t, "\"stacks\":[2,-2],")); /* c's weight under a (node 1), marked pruned */
  free(t);
  free(html);
  fg_profile_free(p);
}

Test(html, time_axis_merges_cells_past_its_limit) {
  uint32_t b, c;
  fg_profile *p = timed(&b, &c);
  fg_options o;
  fg_options_init(&o);
  o.html_max_time = 2;
  char *html = render(OUT_HTML, p, &o);
  char *t = time_of(html);
  /* cells of 5: b 3 and c 1 in cell 0, thread by thread */
  cr_expect(strstr(t, "\"cellNs\":100000000,\"merged\":5,"));
  /* (LEB128 in base64: cell delta 0, stack 0, thread 0, 2; 0, 0, 1, 1; 0, stack delta 1, 1, 1) */
  cr_expect(strstr(t, "\"n\":3,\n\"packed\":\"AAAAAgAAAQEAAQEB\"}"), "%s", t);
  free(t);
  free(html);
  fg_profile_free(p);
}

Test(html, no_time_axis_without_one) {
  fg_profile *p = profile_of("a 1\n");
  char *html = render(OUT_HTML, p, NULL);
  cr_expect_null(strstr(html, "\"time\":{"));
  free(html);
  fg_profile_free(p);
}

Test(html, time_axis_refuses_what_it_cannot_hold) {
  fg_profile *p = profile_of("a 1\n");
  cr_expect_eq(fg_profile_time_thread(p, 1, "x"), -EINVAL); /* no table yet */
  cr_expect_eq(fg_profile_time_init(p, 0, 0, 0), -EINVAL);  /* cell 0 */
  cr_assert_eq(fg_profile_time_init(p, 0, 0, 1), 0);
  cr_expect_eq(fg_profile_time_add(p, 0, 1, 0, 1), -EINVAL); /* no thread 0 */
  cr_assert_eq(fg_profile_time_thread(p, 1, "x"), 0);
  cr_expect_eq(fg_profile_time_add(p, 0, 0, 0, 1), -EINVAL); /* the root */
  cr_expect_eq(fg_profile_time_add(p, 0, 2, 0, 1), -EINVAL); /* no such frame */
  cr_expect_eq(fg_profile_time_add(p, 0, 1, 0, 1), 0);
  cr_expect_eq(fg_profile_time_mark(p, 0, 0, ""), -EINVAL); /* a mark without a name */
  fg_profile_free(p);
}
