/*
 * test_tree.c — the merge into a tree (fg_profile_add, the (parent, name) table), the sorted
 * view (children by name, totals, subtree sizes, left offsets that add up), reversal, the
 * differential arithmetic and the deterministic folded writer.
 */
#include "fg_test_util.h"

#include <errno.h>

Test(tree, add_merges_identical_prefixes) {
  fg_profile *p = fg_profile_new();
  const char *s1[] = {"main", "work", "hash"};
  const char *s2[] = {"main", "work"};
  const char *s3[] = {"main", "idle"};
  cr_assert_eq(fg_profile_add(p, s1, 3, 5), 0);
  cr_assert_eq(fg_profile_add(p, s2, 2, 2), 0);
  cr_assert_eq(fg_profile_add(p, s1, 3, 1), 0);
  cr_assert_eq(fg_profile_add(p, s3, 2, 4), 0);
  cr_expect_eq(p->nnodes, 5); /* root, main, work, hash, idle */
  cr_expect_eq(p->nnames, 4);
  cr_expect_eq(fg_profile_total(p, FG_MAIN), 12);
  char *out = render(OUT_FOLDED, p, NULL);
  cr_expect_str_eq(out, "main;idle 4\nmain;work 2\nmain;work;hash 6\n");
  free(out);
  fg_profile_free(p);
}

Test(tree, add_rejects_bad_input) {
  fg_profile *p = fg_profile_new();
  const char *empty[] = {"a", ""};
  const char *nul[] = {"a", NULL};
  cr_expect_eq(fg_profile_add(p, empty, 2, 1), -EINVAL);
  cr_expect_eq(fg_profile_add(p, nul, 2, 1), -EINVAL);
  cr_expect_eq(fg_profile_add(p, empty, 0, 1), -EINVAL);
  cr_expect_eq(fg_profile_add(NULL, empty, 1, 1), -EINVAL);
  size_t lens[] = {1};
  cr_expect_eq(fg_profile_add_n(p, empty, lens, 1, 1, 2), -EINVAL);
  cr_expect_eq(fg_profile_total(p, FG_MAIN), 0);
  fg_profile_free(p);
}

Test(tree, add_n_takes_unterminated_names) {
  fg_profile *p = fg_profile_new();
  const char *buf = "alphabeta";
  const char *frames[] = {buf, buf + 5};
  size_t lens[] = {5, 4};
  cr_assert_eq(fg_profile_add_n(p, frames, lens, 2, 3, FG_MAIN), 0);
  char *out = render(OUT_FOLDED, p, NULL);
  cr_expect_str_eq(out, "alpha;beta 3\n");
  free(out);
  fg_profile_free(p);
}

Test(tree, many_children_and_names_grow_the_tables) {
  fg_profile *p = fg_profile_new();
  char name[32], name2[32];
  for (int i = 0; i < 50000; i++) {
    snprintf(name, sizeof name, "f%d", i % 7000);
    snprintf(name2, sizeof name2, "g%d", i);
    const char *fr[] = {"root", name, name2};
    cr_assert_eq(fg_profile_add(p, fr, 3, 1), 0);
  }
  cr_expect_eq(p->nnames, 1 + 7000 + 50000);
  cr_expect_eq(p->nnodes, 1 + 1 + 7000 + 50000);
  fg_tree t;
  cr_assert_eq(fg_tree_build(&t, p), 0);
  cr_expect_eq(t.total[0], 50000);
  cr_expect_eq(t.max_depth, 3);
  fg_tree_free(&t);
  fg_profile_free(p);
}

typedef struct seen {
  uint32_t node[16], depth[16];
  uint64_t left[16];
  int n;
} seen;

static int record(const fg_tree *t, uint32_t node, uint32_t depth, uint64_t left, void *ctx) {
  (void)t;
  seen *s = ctx;
  s->node[s->n] = node;
  s->depth[s->n] = depth;
  s->left[s->n] = left;
  s->n++;
  return 1;
}

static const char *name_of(const fg_profile *p, uint32_t node) {
  return node ? p->names[p->nodes[node].name].s : "all";
}

Test(tree, view_is_preorder_sorted_by_name_with_offsets) {
  /* inserted out of order; bytewise order puts "B" before "a" */
  fg_profile *p = profile_of("m;zeta 2\nm;alpha;x 3\nm 1\nm;B 4\nm;alpha 1\n");
  fg_tree t;
  cr_assert_eq(fg_tree_build(&t, p), 0);
  seen s = {0};
  cr_assert_eq(fg_tree_walk(&t, record, &s), 0);
  const char *names[] = {"all", "m", "B", "alpha", "x", "zeta"};
  const uint32_t depth[] = {0, 1, 2, 2, 3, 2};
  const uint64_t left[] = {0, 0, 0, 4, 4, 8};
  const uint64_t total[] = {11, 11, 4, 4, 3, 2};
  cr_assert_eq(s.n, 6);
  for (int i = 0; i < 6; i++) {
    cr_expect_str_eq(name_of(p, s.node[i]), names[i], "node %d", i);
    cr_expect_eq(s.depth[i], depth[i], "node %d", i);
    cr_expect_eq(s.left[i], left[i], "node %d", i);
    cr_expect_eq(t.total[s.node[i]], total[i], "node %d", i);
  }
  /* widths add up: a node's total = its self + its children's totals */
  for (uint32_t n = 0; n < p->nnodes; n++) {
    uint64_t sum = fg_self(p, n, FG_MAIN);
    for (uint32_t k = t.child_start[n]; k < t.child_start[n + 1]; k++)
      sum += t.total[t.child_list[k]];
    cr_expect_eq(sum, t.total[n]);
  }
  fg_tree_free(&t);
  fg_profile_free(p);
}

static int stop_at_two(const fg_tree *t, uint32_t node, uint32_t depth, uint64_t left, void *ctx) {
  (void)t, (void)node, (void)left;
  int *n = ctx;
  if (++*n == 2) return -42;
  return depth == 0 ? 1 : 0;
}

Test(tree, walk_can_stop_and_skip) {
  fg_profile *p = profile_of("a;b 1\nc;d 1\n");
  fg_tree t;
  cr_assert_eq(fg_tree_build(&t, p), 0);
  int n = 0;
  cr_expect_eq(fg_tree_walk(&t, stop_at_two, &n), -42);
  cr_expect_eq(n, 2);
  fg_tree_free(&t);
  fg_profile_free(p);
}

Test(tree, reversed_merges_at_the_leaves) {
  fg_profile *p = profile_of("main;a;lock 3\nmain;b;lock 2\nmain;b 1\n");
  fg_profile *r = fg_profile_reversed(p);
  cr_assert(r);
  char *out = render(OUT_FOLDED, r, NULL);
  cr_expect_str_eq(out, "b;main 1\nlock;a;main 3\nlock;b;main 2\n");
  free(out);
  cr_expect_eq(fg_profile_total(r, FG_MAIN), 6);
  fg_profile_free(r);
  fg_profile_free(p);
}

Test(tree, diff_arithmetic) {
  /* base (first input) and main (second input) merged into one tree */
  fg_profile *p = diff_of("a;b 10\na;c 30\nold 10\n", "a;b 30\na;c 30\nnew 40\n");
  cr_expect_eq(fg_profile_is_diff(p), 1);
  cr_expect_eq(fg_profile_total(p, FG_BASE), 50);
  cr_expect_eq(fg_profile_total(p, FG_MAIN), 100);
  fg_tree t;
  cr_assert_eq(fg_tree_build(&t, p), 0);
  /* per node: main total, base total */
  struct {
    const char *name;
    uint64_t m, b;
  } want[] = {
      {"a", 60, 40}, {"b", 30, 10}, {"c", 30, 30}, {"new", 40, 0}, {"old", 0, 10},
  };
  for (size_t i = 0; i < 5; i++) {
    int found = 0;
    for (uint32_t n = 1; n < p->nnodes; n++)
      if (strcmp(name_of(p, n), want[i].name) == 0) {
        found = 1;
        cr_expect_eq(t.total[n], want[i].m, "%s", want[i].name);
        cr_expect_eq(fg_tree_base(&t, n), want[i].b, "%s", want[i].name);
      }
    cr_expect(found, "%s", want[i].name);
  }
  fg_tree_free(&t);
  /* folded output of a diff: `stack base main` */
  char *out = render(OUT_FOLDED, p, NULL);
  cr_expect_str_eq(out, "a;b 10 30\na;c 30 30\nnew 0 40\nold 10 0\n");
  free(out);
  /* reversal keeps both columns */
  fg_profile *r = fg_profile_reversed(p);
  out = render(OUT_FOLDED, r, NULL);
  cr_expect_str_eq(out, "b;a 10 30\nc;a 30 30\nnew 0 40\nold 10 0\n");
  free(out);
  fg_profile_free(r);
  fg_profile_free(p);
}

Test(tree, folded_output_is_deterministic) {
  fg_profile *a = profile_of("x;y 1\nb 2\na;q 3\nx 4\n");
  fg_profile *b = profile_of("x 4\na;q 3\nb 2\nx;y 1\n");
  char *oa = render(OUT_FOLDED, a, NULL), *ob = render(OUT_FOLDED, b, NULL);
  cr_expect_str_eq(oa, ob);
  cr_expect_str_eq(oa, "a;q 3\nb 2\nx 4\nx;y 1\n");
  /* and reads back to the same */
  fg_profile *c = profile_of(oa);
  char *oc = render(OUT_FOLDED, c, NULL);
  cr_expect_str_eq(oc, oa);
  free(oa);
  free(ob);
  free(oc);
  fg_profile_free(a);
  fg_profile_free(b);
  fg_profile_free(c);
}

Test(tree, trim_then_add_rebuilds_the_tables) {
  fg_profile *p = profile_of("a;b 1\na;c 2\n");
  fg_profile_trim(p);
  cr_expect_null(p->child_table);
  cr_expect_null(p->name_table);
  char *before = render(OUT_FOLDED, p, NULL);
  cr_expect_str_eq(before, "a;b 1\na;c 2\n");
  free(before);
  const char *fr[] = {"a", "b"};
  cr_assert_eq(fg_profile_add(p, fr, 2, 4), 0); /* merges into the existing node */
  const char *fr2[] = {"a", "d"};
  cr_assert_eq(fg_profile_add(p, fr2, 2, 1), 0);
  cr_expect_eq(p->nnodes, 5);
  char *after = render(OUT_FOLDED, p, NULL);
  cr_expect_str_eq(after, "a;b 5\na;c 2\na;d 1\n");
  free(after);
  /* reserve on a live profile keeps every node findable */
  cr_assert_eq(fg_profile_reserve(p, 100000), 0);
  cr_assert_eq(fg_profile_add(p, fr, 2, 1), 0);
  cr_expect_eq(p->nnodes, 5);
  fg_profile_free(p);
}

/* A capped profile: stacks that fit are added whole; one that does not is counted under a cut
 * frame at the longest part of it already there (one new frame each while the reserve, a
 * sixteenth of the limit, lasts), then under the root's cut frame; every count is kept. */
Test(tree, capped_add_keeps_the_limit_and_every_count) {
  fg_profile *p = fg_profile_new();
  const char *cut = "[cut]";
  static const char *s1[] = {"a", "b", "c", "d"}, *s2[] = {"a", "b", "x", "y"},
                    *s3[] = {"p", "q", "r", "s", "t", "u", "v", "w", "z"},
                    *s4[] = {"a", "b", "c", "e"}, *s5[] = {"a", "b", "x", "m"},
                    *s6[] = {"a", "b", "c", "g"};
  cr_expect_eq(fg_profile_add_capped(p, s1, 4, 10, 16, cut), 0);
  cr_expect_eq(fg_profile_add_capped(p, s2, 4, 5, 16, cut), 0);
  cr_expect_eq(fg_profile_add_capped(p, s3, 9, 4, 16, cut), 0, "exactly at the limit: whole");
  cr_expect_eq(fg_profile_nodes(p), 16);
  cr_expect_eq(fg_profile_add_capped(p, s4, 4, 3, 16, cut), 1, "past it: cut under a;b;c");
  cr_expect_eq(fg_profile_add_capped(p, s5, 4, 2, 16, cut), 1, "reserve used: the root's");
  cr_expect_eq(fg_profile_add_capped(p, s6, 4, 1, 16, cut), 1, "a cut frame that is there");
  cr_expect_eq(fg_profile_nodes(p), 18);
  cr_expect_eq(fg_profile_total(p, FG_MAIN), 25);
  char *out = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&out, &len);
  cr_assert_eq(fg_write_folded(f, p), 0);
  fclose(f);
  cr_expect_str_eq(out, "[cut] 2\na;b;c;[cut] 4\na;b;c;d 10\na;b;x;y 5\np;q;r;s;t;u;v;w;z 4\n");
  free(out);
  cr_expect_eq(fg_profile_add_capped(p, s1, 4, 1, 16, ""), -EINVAL, "a cut frame needs a name");
  fg_profile_free(p);
}

Test(tree, add_capped_node_says_where_the_count_went) {
  fg_profile *p = fg_profile_new();
  const char *ab[] = {"a", "b"}, *ab2[] = {"a", "b"}, *acd[] = {"a", "c", "d"};
  uint32_t n1 = 0, n2 = 0, n3 = 0;
  cr_assert_eq(fg_profile_add_capped_node(p, ab, 2, 1, 4, "cut", &n1), 0);
  cr_assert_eq(fg_profile_add_capped_node(p, ab2, 2, 1, 4, "cut", &n2), 0);
  cr_expect_eq(n1, n2); /* equal stacks: one frame */
  cr_expect_eq(n1, 2);
  cr_assert_eq(fg_profile_add_capped_node(p, acd, 3, 5, 4, "cut", &n3), 1); /* no room: cut */
  cr_expect_eq(p->nodes[n3].name, fg_intern(p, "cut", 3));
  cr_expect_eq(p->nodes[n3].parent, 1); /* under a, the part the profile holds */
  cr_expect_eq(p->nodes[n3].self, 5);
  fg_profile_free(p);
}
