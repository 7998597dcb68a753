/* Unit tests of the name conversion: JVM signatures -> profile frame names. */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include "names.h"

Test(names, classes) {
  static const struct {
    const char *sig, *want;
  } cases[] = {
      {"Ljava/lang/String;", "java/lang/String"},
      {"LMain;", "Main"},
      {"I", "int"},
      {"[I", "int[]"},
      {"[[J", "long[][]"},
      {"[Ljava/lang/Object;", "java/lang/Object[]"},
      {"Lcom/x/Main$Inner;", "com/x/Main$Inner"},
      {"Lcom/x/Main$$Lambda$14.0x0000000800c03000;", "com/x/Main$$Lambda$14"},
      {"Ljava/lang/invoke/LambdaForm$MH.0x0000000800c0c400;", "java/lang/invoke/LambdaForm$MH"},
      {"Lcom/x/v1.0xyz/A;", "com/x/v1.0xyz/A"}, /* only a hex address at the end is cut */
      {"Lcom/x/A.0x1f/B;", "com/x/A.0x1f/B"},
  };
  char buf[256];
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    cr_assert_geq(names_class(cases[i].sig, buf, sizeof buf), 0, "%s", cases[i].sig);
    cr_expect_str_eq(buf, cases[i].want, "%s", cases[i].sig);
  }
}

Test(names, frame) {
  char buf[256];
  cr_assert_eq(names_frame("Ljava/lang/String;", "hashCode", buf, sizeof buf), 0);
  cr_expect_str_eq(buf, "java/lang/String.hashCode");
  cr_assert_eq(names_frame("[B", "clone", buf, sizeof buf), 0);
  cr_expect_str_eq(buf, "byte[].clone");
  cr_assert_eq(names_frame("LA;", "<init>", buf, sizeof buf), 0);
  cr_expect_str_eq(buf, "A.<init>");
}

Test(names, truncation_is_reported_and_terminated) {
  char buf[8];
  cr_expect_eq(names_class("Ljava/lang/String;", buf, sizeof buf), -ENOSPC);
  cr_expect_eq(strlen(buf), 7u);
  cr_expect_str_eq(buf, "java/la");
  char b2[20];
  cr_expect_eq(names_frame("Ljava/lang/String;", "hashCode", b2, sizeof b2), -ENOSPC);
  cr_expect_eq(strlen(b2), 19u);
  char b3[4];
  cr_expect_eq(names_class("[[[[I", b3, sizeof b3), -ENOSPC);
  cr_expect_eq(strlen(b3), 3u);
}

/* JVMTI gives names in modified UTF-8: 𝒜 (U+1D49C) as the surrogates D835 DC9C, 3 bytes each. */
Test(names, modified_utf8_becomes_utf8_and_is_cut_between_characters) {
  static const struct {
    const char *sig, *method;
    size_t len;
    int rc;
    const char *want;
  } cases[] = {
      {"LScenarios;", "\xED\xA0\xB5\xED\xB2\x9C", 64, 0, "Scenarios.\xF0\x9D\x92\x9C"},
      {"L\xED\xA0\xB5\xED\xB2\x9C;", "busy", 64, 0, "\xF0\x9D\x92\x9C.busy"},
      {"[Lp/\xC0\x80;", "m", 64, 0, "p/?[].m"}, /* U+0000 (C0 80) */
      /* "A." + 𝒜 is 6 bytes: in 6 (5 and the NUL) only "A." fits whole */
      {"LA;", "\xED\xA0\xB5\xED\xB2\x9C", 6, -ENOSPC, "A."},
      {"LA;", "\xC3\xA9\xC3\xA9", 6, -ENOSPC, "A.\xC3\xA9"}, /* not half of the second é */
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    char buf[64];
    cr_expect_eq(names_frame(cases[i].sig, cases[i].method, buf, cases[i].len), cases[i].rc,
                 "case %zu", i);
    cr_expect_str_eq(buf, cases[i].want, "case %zu", i);
  }
}

Test(names, line_of_a_bytecode_index) {
  /* unsorted on purpose: javac emits tables in source order, not bci order, for loops */
  jvmtiLineNumberEntry t[] = {{0, 10}, {12, 14}, {5, 11}, {30, 20}};
  static const struct {
    jint bci, line;
  } cases[] = {{0, 10}, {4, 10}, {5, 11}, {11, 11}, {12, 14}, {29, 14}, {30, 20}, {1000, 20}};
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
    cr_expect_eq(names_line(t, 4, cases[i].bci), cases[i].line, "bci %d", (int)cases[i].bci);
  cr_expect_eq(names_line(t, 0, 3), 0, "no table: no line");
  jvmtiLineNumberEntry late[] = {{8, 3}};
  cr_expect_eq(names_line(late, 1, 2), 0, "before the first entry: no line");
}
