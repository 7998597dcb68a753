/*
 * Tests of the counter table (agent/counters.c): docs/how-it-works.md's table of the stats is
 * the code's, row for row; keys are unique and are what the JSON and the text report carry.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "counters.h"

/* The next line of *p (its '\n' replaced by '\0'), NULL at the end. */
static char *next_line(char **p) {
  if (!*p || !**p) return NULL;
  char *line = *p, *nl = strchr(line, '\n');
  if (nl) {
    *nl = '\0';
    *p = nl + 1;
  } else {
    *p = line + strlen(line);
  }
  return line;
}

/* Copies the docs' table to out, a line each: from its header `| key | unit | meaning |` under
 * "## The stats, key by key" to the last line starting with '|'. */
static void docs_table(FILE *docs, FILE *out) {
  char *line = NULL;
  size_t cap = 0;
  int state = 0; /* 0: before the section, 1: in it before the table, 2: in the table */
  for (ssize_t n; state < 3 && (n = getline(&line, &cap, docs)) > 0;) {
    if (line[n - 1] == '\n') line[n - 1] = '\0';
    if (state == 0 && strcmp(line, "## The stats, key by key") == 0)
      state = 1;
    else if (state == 1 && strncmp(line, "## ", 3) == 0)
      break;
    else if (state == 1 && strcmp(line, "| key | unit | meaning |") == 0)
      state = 2;
    else if (state == 2 && line[0] != '|')
      state = 3;
    if (state == 2) fprintf(out, "%s\n", line);
  }
  free(line);
  cr_assert(state >= 2,
            "%s: no table `| key | unit | meaning |` under \"## The stats, key by key\"",
            SAMPLER_HOW_IT_WORKS);
}

Test(counters, the_docs_table_is_the_code_table) {
  FILE *docs = fopen(SAMPLER_HOW_IT_WORKS, "r");
  cr_assert(docs, "%s: %s", SAMPLER_HOW_IT_WORKS, strerror(errno));
  char *have = NULL, *want = NULL;
  size_t hl = 0, wl = 0;
  FILE *h = open_memstream(&have, &hl), *w = open_memstream(&want, &wl);
  docs_table(docs, h);
  fclose(docs);
  cr_assert_eq(counters_markdown_table(w), 0);
  fclose(h);
  fclose(w);
  /* row by row, so that a failure names the first row that differs */
  char *hp = have, *wp = want, *hr, *wr;
  size_t row = 0;
  do {
    hr = next_line(&hp);
    wr = next_line(&wp);
    row++;
    cr_assert(hr && wr ? strcmp(hr, wr) == 0 : hr == wr,
              "%s, the stats table's row %zu reads\n  %s\nthe code's table (agent/counters.c) "
              "has\n  %s",
              SAMPLER_HOW_IT_WORKS, row, hr ? hr : "(nothing)", wr ? wr : "(nothing)");
  } while (hr && wr);
  free(have);
  free(want);
}

Test(counters, keys_are_unique_and_plain) {
  size_t n = 0;
  for (; counter_name(n); n++) {
    const char *k = counter_name(n);
    cr_expect(strspn(k, "abcdefghijklmnopqrstuvwxyz0123456789_") == strlen(k), "key %s", k);
    for (size_t j = 0; j < n; j++) cr_expect(strcmp(k, counter_name(j)) != 0, "%s twice", k);
  }
  cr_expect_gt(n, 50);
}

/* The stats file stays JSON (UTF-8) whatever bytes the profile's path holds: quotes, a
 * backslash and a newline escaped, a character outside the BMP kept, bytes that form no
 * character written as U+FFFD. */
#define R "\xEF\xBF\xBD" /* U+FFFD */
Test(counters, the_json_carries_any_path) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  cr_assert_not_null(f);
  struct agent_options o;
  struct sampler_report r;
  memset(&o, 0, sizeof o);
  memset(&r, 0, sizeof r);
  cr_assert_eq(
      counters_json(f, &o, "/tmp/a\"b\\c\nd\xF0\x9F\x9A\x80\xFF\xC3(\xED\xA0\x80.html", &r), 0);
  fclose(f);
  cr_expect(strstr(buf, "\"/tmp/a\\\"b\\\\c\\u000ad\xF0\x9F\x9A\x80" R R "(" R R R ".html\"") !=
                NULL,
            "%s", buf);
  free(buf);
}
