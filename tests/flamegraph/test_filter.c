/*
 * test_filter.c — -I / -X (fg_filter.c): which stacks a pattern keeps or drops (a frame
 * anywhere in the stack, a stack that ends inside another, the kind suffix part of the name),
 * several patterns (any of them), both columns of a diff, and the profile left as it was.
 */
#include "fg_filter.h"
#include "fg_internal.h"
#include "fg_test_util.h"

#include <criterion/criterion.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>

static const char k_profile[] = "main;work;hash_[j] 5\n"
                                "main;work 2\n"
                                "main;idle;park 3\n"
                                "gc;work 1\n";

/* The folded text of p filtered by the patterns (NULL-terminated lists). */
static char *filtered(const fg_profile *p, const char *const *inc, const char *const *exc) {
  regex_t re[2][8];
  size_t n[2] = {0, 0};
  const char *const *lists[2] = {inc, exc};
  for (int k = 0; k < 2; k++)
    for (; lists[k] && lists[k][n[k]]; n[k]++)
      cr_assert_eq(regcomp(&re[k][n[k]], lists[k][n[k]], REG_EXTENDED | REG_NOSUB), 0);
  fg_profile *f = fg_profile_filtered(p, re[0], n[0], re[1], n[1]);
  cr_assert(f);
  char *s = render(OUT_FOLDED, f, NULL);
  fg_profile_free(f);
  for (int k = 0; k < 2; k++)
    for (size_t i = 0; i < n[k]; i++) regfree(&re[k][i]);
  return s;
}

Test(filter, include_keeps_stacks_with_a_matching_frame_anywhere) {
  fg_profile *p = profile_of(k_profile);
  const char *inc[] = {"^work$", NULL};
  char *s = filtered(p, inc, NULL);
  cr_assert_str_eq(s, "gc;work 1\nmain;work 2\nmain;work;hash_[j] 5\n");
  free(s);
  const char *suffix[] = {"_\\[j\\]$", NULL}; /* the kind suffix is part of the name */
  s = filtered(p, suffix, NULL);
  cr_assert_str_eq(s, "main;work;hash_[j] 5\n");
  free(s);
  cr_assert_eq(fg_profile_total(p, FG_MAIN), 11, "the input is left as it was");
  fg_profile_free(p);
}

Test(filter, exclude_drops_and_wins_over_include) {
  fg_profile *p = profile_of(k_profile);
  const char *exc[] = {"park", "^gc$", NULL};
  char *s = filtered(p, NULL, exc);
  cr_assert_str_eq(s, "main;work 2\nmain;work;hash_[j] 5\n");
  free(s);
  const char *inc[] = {"work", "idle", NULL}, *exc2[] = {"hash", NULL};
  s = filtered(p, inc, exc2);
  cr_assert_str_eq(s, "gc;work 1\nmain;idle;park 3\nmain;work 2\n");
  free(s);
  const char *none[] = {"nothing", NULL};
  s = filtered(p, none, NULL);
  cr_assert_str_eq(s, "");
  free(s);
  fg_profile_free(p);
}

Test(filter, a_diff_keeps_both_columns) {
  fg_profile *p = diff_of("main;work 4\nmain;idle 6\n", "main;work 7\nmain;idle 1\n");
  const char *inc[] = {"work", NULL};
  char *s = filtered(p, inc, NULL);
  cr_assert_str_eq(s, "main;work 4 7\n");
  free(s);
  const char *exc[] = {"main", NULL};
  fg_profile *f = NULL;
  regex_t re;
  cr_assert_eq(regcomp(&re, exc[0], REG_EXTENDED | REG_NOSUB), 0);
  f = fg_profile_filtered(p, NULL, 0, &re, 1);
  cr_assert(f);
  cr_assert(fg_profile_is_diff(f), "still a diff with nothing left");
  fg_profile_free(f);
  regfree(&re);
  fg_profile_free(p);
}
