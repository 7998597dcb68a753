/* Unit tests of the interner (tables/intern.c): ids for names, kept across growth, agreed by
 * threads interning at once, cleaned for the outputs, and its limits. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "intern.h"
#include "traces.h"

Test(intern, dedupes_and_survives_growth) {
  cr_assert_eq(traces_init(), 0);
  uint32_t a = intern_string("java/lang/String.hashCode", 25);
  uint32_t b = intern_string("java/lang/String.hashCodeXX", 25); /* same 25 bytes */
  cr_expect_eq(a, b);
  cr_expect_str_eq(intern_name(a), "java/lang/String.hashCode");
  char buf[32];
  uint32_t ids[20000];
  for (int i = 0; i < 20000; i++) {
    int n = snprintf(buf, sizeof buf, "m%d", i);
    ids[i] = intern_string(buf, (size_t)n);
  }
  for (int i = 0; i < 20000; i++) {
    snprintf(buf, sizeof buf, "m%d", i);
    cr_assert_str_eq(intern_name(ids[i]), buf);
    cr_assert_eq(intern_string(buf, strlen(buf)), ids[i]);
  }
  cr_expect_eq(intern_count(), 20001u);
  cr_expect_str_eq(intern_name(999999), "[bad frame id]");
}

/* The interner is shared by the sampler thread (frames) and JVMTI callbacks (stub names):
 * threads interning the same names at once get the same ids, and every id reads back its
 * name without a lock while others intern. */
static uint32_t ids_of[2][5000];

static void *intern_many(void *arg) {
  int who = (int)(intptr_t)arg;
  char buf[32];
  for (int i = 0; i < 5000; i++) {
    int k = who ? 4999 - i : i; /* the two threads meet in the middle */
    int n = snprintf(buf, sizeof buf, "stub%d", k);
    ids_of[who][k] = intern_string(buf, (size_t)n);
    if (strcmp(intern_name(ids_of[who][k]), buf) != 0) return (void *)1;
  }
  return NULL;
}

Test(intern, concurrent_interning_agrees_and_reads_without_a_lock) {
  pthread_t a, b;
  void *ra, *rb;
  pthread_create(&a, NULL, intern_many, (void *)0);
  pthread_create(&b, NULL, intern_many, (void *)1);
  pthread_join(a, &ra);
  pthread_join(b, &rb);
  cr_expect_null(ra);
  cr_expect_null(rb);
  for (int k = 0; k < 5000; k++) cr_assert_eq(ids_of[0][k], ids_of[1][k], "stub%d has one id", k);
  cr_expect_eq(intern_count(), 5000u);
  cr_expect_str_eq(intern_name(5000), "[bad frame id]");
}

/* Names reach the folded file as interned: a ';' would split a frame, a newline end the line,
 * and a leaf "x 12" read as a count; the interner cleans them, and names that clean alike are
 * one. */
Test(intern, names_are_cleaned_for_the_outputs) {
  struct {
    const char *raw, *clean;
  } cases[] = {
      {"a;b", "a:b"},
      {"line\nbreak\r", "line?break?"},
      {"tab\there", "tab?here"},
      {"pool 12", "pool_12"},
      {"12", "12"},
      {"x  7", "x _7"},
      {"version 1.2", "version 1.2"},
      {"[main tid=42]", "[main tid=42]"},
      {"operator new(unsigned long)", "operator new(unsigned long)"},
      {"p/C.\xED\xA0\xB5\xED\xB2\x9C", "p/C.\xF0\x9D\x92\x9C"}, /* modified UTF-8 */
      {"[w\xF0\x9F\x9A\x80 tid=1]", "[w\xF0\x9F\x9A\x80 tid=1]"},
      {"bad\xFF\xC3 7", "bad\xEF\xBF\xBD\xEF\xBF\xBD_7"}, /* not UTF-8 */
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    uint32_t id = intern_string(cases[i].raw, strlen(cases[i].raw));
    cr_expect_str_eq(intern_name(id), cases[i].clean, "%s", cases[i].raw);
  }
  cr_expect_eq(intern_string("a;b", 3), intern_string("a:b", 3), "names that clean alike are one");
}

Test(intern, the_name_table_stops_at_its_limits_and_counts) {
  uint32_t old = intern_string("kept.before", 11);
  cr_assert_neq(old, INTERN_NO_ID);
  size_t n = intern_count();
  intern_set_limits(n + 1, 1u << 20);
  cr_expect_neq(intern_string("one.more", 8), INTERN_NO_ID);
  cr_expect_eq(intern_string("one.too.many", 12), INTERN_NO_ID, "past the name limit");
  cr_expect_eq(intern_string("kept.before", 11), old, "names kept are still found");
  intern_set_limits(1000, 0); /* no more bytes */
  cr_expect_eq(intern_string("x", 1), INTERN_NO_ID, "past the byte limit");
  cr_expect_eq(intern_refused(), 2u);
}
