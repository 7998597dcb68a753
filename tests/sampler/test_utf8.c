/* Unit tests of utf8_name: modified UTF-8 and stray bytes in, UTF-8 names out (utf8.h). */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include "flamegraph.h"
#include "utf8.h"

#define FFFD "\xEF\xBF\xBD"
/* 𝒜 U+1D49C (UTF-16 D835 DC9C) and 🚀 U+1F680 (D83D DE80): modified UTF-8 and UTF-8 */
#define A_MOD "\xED\xA0\xB5\xED\xB2\x9C"
#define A_UTF8 "\xF0\x9D\x92\x9C"
#define ROCKET_MOD "\xED\xA0\xBD\xED\xBA\x80"
#define ROCKET_UTF8 "\xF0\x9F\x9A\x80"

static const struct {
  const char *in, *want;
  size_t n; /* 0: strlen(in) */
} cases[] = {
    /* kept as they are */
    {"java/lang/String.hashCode", "java/lang/String.hashCode", 0},
    {"caf\xC3\xA9", "caf\xC3\xA9", 0},                           /* é, 2 bytes */
    {"\xE2\x82\xAC\xE4\xB8\xAD", "\xE2\x82\xAC\xE4\xB8\xAD", 0}, /* € 中, 3 bytes */
    {"\xEF\xBF\xBF", "\xEF\xBF\xBF", 0},                         /* U+FFFF, the BMP's last */
    {"w" ROCKET_UTF8, "w" ROCKET_UTF8, 0},                       /* UTF-8 (the kernel's comm) */
    {"\xF4\x8F\xBF\xBF", "\xF4\x8F\xBF\xBF", 0},                 /* U+10FFFF */
    /* modified UTF-8 */
    {"w" ROCKET_MOD, "w" ROCKET_UTF8, 0},
    {"p/C." A_MOD, "p/C." A_UTF8, 0},
    {A_MOD A_MOD, A_UTF8 A_UTF8, 0},
    {"\xED\xA0\x80\xED\xB0\x80", "\xF0\x90\x80\x80", 0}, /* D800 DC00: U+10000 */
    {"\xED\xAF\xBF\xED\xBF\xBF", "\xF4\x8F\xBF\xBF", 0}, /* DBFF DFFF: U+10FFFF */
    {"a\xC0\x80z", "a?z", 0},                            /* U+0000 */
    /* lone surrogates */
    {"\xED\xA0\xBD", FFFD, 0},
    {"\xED\xBA\x80x", FFFD "x", 0},
    {"\xED\xA0\xBDx", FFFD "x", 0},
    {"\xED\xA0\xBD" ROCKET_MOD, FFFD ROCKET_UTF8, 0},      /* high, then a pair */
    {"\xED\xBA\x80\xED\xA0\xBD", FFFD FFFD, 0},            /* low before high */
    {"\xED\xA0\xBD\xF0\x9F\x9A\x80", FFFD ROCKET_UTF8, 0}, /* high, then UTF-8 */
    /* ill-formed: one U+FFFD a maximal ill-formed part */
    {"\xFF", FFFD, 0},
    {"a\x80z", "a" FFFD "z", 0},
    {"\xC3", FFFD, 0},
    {"\xE2\x82", FFFD, 0},
    {"\xE2\x82z", FFFD "z", 0},
    {"\xF0\x9F\x9A", FFFD, 0},
    {"\xC0\xAF", FFFD FFFD, 0},          /* overlong '/' */
    {"\xC1\xBF", FFFD FFFD, 0},          /* overlong */
    {"\xE0\x80\xAF", FFFD FFFD FFFD, 0}, /* overlong */
    {"\xF0\x80\x80\xAF", FFFD FFFD FFFD FFFD, 0},
    {"\xF4\x90\x80\x80", FFFD FFFD FFFD FFFD, 0}, /* past U+10FFFF */
    {"\xF5\x80", FFFD FFFD, 0},
    {"\xC3\xA9\xA9", "\xC3\xA9" FFFD, 0},
    /* what breaks a format */
    {"a;b", "a:b", 0},
    {"line\nbreak\r", "line?break?", 0},
    {"tab\there\x7f", "tab?here?", 0},
    {"nel\xC2\x85", "nel?", 0}, /* C1 control U+0085 */
    {"\xC2\xA0nbsp", "\xC2\xA0nbsp", 0},
    {"a\0b", "a?b", 3}, /* a NUL inside the bytes given */
    {"", "", 0},
};

Test(utf8, the_table) {
  char out[64];
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    size_t n = cases[i].n ? cases[i].n : strlen(cases[i].in);
    int rc = utf8_name(cases[i].in, n, out, sizeof out);
    cr_expect_eq(rc, (int)strlen(cases[i].want), "case %zu: rc %d", i, rc);
    cr_expect_str_eq(out, cases[i].want, "case %zu", i);
    /* what comes out goes through again unchanged (names are cleaned at more than one door) */
    char again[64];
    cr_expect_eq(utf8_name(out, strlen(out), again, sizeof again), (int)strlen(out));
    cr_expect_str_eq(again, out, "case %zu: not a fixed point", i);
  }
}

/* Every character of this name, one at a time: 1, 2, 3 and 4 bytes of UTF-8 out. */
static const char *const chars_in[] = {"a", "\xC3\xA9", A_MOD, "\xE2\x82\xAC", ROCKET_UTF8, "z"};
static const char *const chars_out[] = {"a", "\xC3\xA9", A_UTF8, "\xE2\x82\xAC", ROCKET_UTF8, "z"};
#define NCHARS (sizeof chars_in / sizeof *chars_in)

Test(utf8, a_name_too_long_is_cut_between_characters_at_every_length) {
  char in[64] = "", full[64] = "";
  for (size_t c = 0; c < NCHARS; c++) strcat(in, chars_in[c]), strcat(full, chars_out[c]);
  for (size_t len = 1; len <= strlen(full) + 1; len++) {
    char out[64];
    memset(out, 'X', sizeof out);
    int rc = utf8_name(in, strlen(in), out, len);
    /* the longest run of whole characters that fits in len - 1 bytes */
    char want[64] = "";
    for (size_t c = 0; c < NCHARS && strlen(want) + strlen(chars_out[c]) <= len - 1; c++)
      strcat(want, chars_out[c]);
    cr_expect_str_eq(out, want, "len %zu", len);
    cr_expect_eq(rc, len > strlen(full) ? (int)strlen(full) : -ENOSPC, "len %zu: rc %d", len, rc);
    cr_expect_eq(out[len], 'X', "len %zu: wrote past the buffer", len);
  }
}

Test(utf8, input_cut_inside_a_character_ends_in_a_replacement_not_in_half_a_character) {
  for (size_t c = 0; c < NCHARS; c++) {
    size_t k = strlen(chars_in[c]);
    for (size_t cut = 1; cut < k; cut++) { /* "x" and the first `cut` bytes of the character */
      char in[16] = "x", out[32];
      strncat(in, chars_in[c], cut);
      int rc = utf8_name(in, strlen(in), out, sizeof out);
      cr_expect_gt(rc, 0);
      /* a pair cut after its first half leaves a lone surrogate, then a cut second half */
      const char *want = k == 6 && cut > 3 ? "x" FFFD FFFD : "x" FFFD;
      cr_expect_str_eq(out, want, "char %zu cut at byte %zu", c, cut);
    }
  }
}

Test(utf8, a_thread_name_of_seventy_e_acute_keeps_whole_characters_in_127_bytes) {
  char in[141] = "", out[128];
  for (int i = 0; i < 70; i++) strcat(in, "\xC3\xA9");
  cr_expect_eq(utf8_name(in, strlen(in), out, sizeof out), -ENOSPC);
  cr_expect_eq(strlen(out), 126, "63 characters of 2 bytes");
  cr_expect_eq(utf8_name(out, strlen(out), in, sizeof in), 126, "valid UTF-8");
}

Test(utf8, no_buffer) {
  char out[1] = {'X'};
  cr_expect_eq(utf8_name("a", 1, NULL, 4), -EINVAL);
  cr_expect_eq(utf8_name("a", 1, out, 0), -EINVAL);
  cr_expect_eq(out[0], 'X');
  cr_expect_eq(utf8_name("a", 1, out, 1), -ENOSPC);
  cr_expect_eq(out[0], '\0');
}

/* Whatever bytes come in — biased to the ones that matter: controls, ';', continuation bytes,
 * the leads of overlong, surrogate and out-of-range forms — the name that comes out is one the
 * flamegraph tool's folded reader takes (it rejects invalid UTF-8, NUL and empty frames) and
 * goes through again unchanged. */
Test(utf8, any_bytes_make_a_name_the_folded_reader_takes) {
  static const unsigned char pick[] = {0x00, 0x09, 0x0A, 0x0D, 0x1F, ' ',  ';',  'a',  '9',  0x7F,
                                       0x80, 0x85, 0x9F, 0xA0, 0xBF, 0xC0, 0xC1, 0xC2, 0xC3, 0xDF,
                                       0xE0, 0xE2, 0xED, 0xEF, 0xF0, 0xF4, 0xF5, 0xFF};
  unsigned seed = 12345;
  fg_profile *p = fg_profile_new(); /* one for every round: a new one a round took ASan 56 s */
  cr_assert_not_null(p);
  for (int round = 0; round < 20000; round++) {
    unsigned char in[16];
    size_t n = 1 + (size_t)(rand_r(&seed) % sizeof in);
    for (size_t i = 0; i < n; i++)
      in[i] = rand_r(&seed) % 2 ? pick[rand_r(&seed) % sizeof pick] : (unsigned char)rand_r(&seed);
    char name[64], again[64], line[80];
    int len = utf8_name((const char *)in, n, name, sizeof name);
    cr_assert_gt(len, 0, "round %d: %zu bytes in, %d out", round, n, len);
    cr_assert_eq(utf8_name(name, (size_t)len, again, sizeof again), len);
    cr_assert_str_eq(again, name, "round %d: not a fixed point", round);
    int k = snprintf(line, sizeof line, "root;%s;leaf 1\n", name);
    fg_read_error err;
    int rc = fg_read_buffer(p, line, (size_t)k, FG_MAIN, &err);
    cr_expect_eq(rc, 0, "round %d: the reader refused \"%s\": %s", round, name, err.msg);
    if (rc) break;
  }
  fg_profile_free(p);
}
