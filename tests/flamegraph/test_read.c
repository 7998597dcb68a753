/*
 * test_read.c — the folded reader: every malformed case with its exact error text and line,
 * every decided tolerance (CRLF, blank lines, trailing blanks, spaces in names, kind
 * suffixes, zero counts, no final LF), and the fd reader across chunk boundaries.
 */
#include "fg_internal.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static char *folded_of(const fg_profile *p) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  cr_assert(f);
  cr_assert_eq(fg_write_folded(f, p), 0);
  fclose(f);
  return buf;
}

typedef struct bad_case {
  const char *input;
  unsigned long line;
  const char *msg;
} bad_case;

static const bad_case k_bad[] = {
    {"a;b 1\na;b\n", 2,
     "missing sample count at the end of the line (expected 'frame;frame;... COUNT', got 'a;b')"},
    {"a;b c\n", 1, "missing sample count at the end of the line (last word 'c' is not a number)"},
    {"a;b 1.5\n", 1, "fractional count '1.5' (counts are whole numbers of samples)"},
    {"a;b 3.\n", 1, "fractional count '3.' (counts are whole numbers of samples)"},
    {"a;b -4\n", 1, "negative count '-4' (counts are whole numbers of samples, >= 0)"},
    {"a;b -0.5\n", 1, "negative count '-0.5' (counts are whole numbers of samples, >= 0)"},
    {"a;b 12abc\n", 1, "invalid count '12abc' (expected a whole number after the last space)"},
    {"a;b 1e3\n", 1, "invalid count '1e3' (expected a whole number after the last space)"},
    {"a;b +3\n", 1, "missing sample count at the end of the line (last word '+3' is not a number)"},
    {"a;b 99999999999999999999\n", 1,
     "count '99999999999999999999' is too large (at most 9223372036854775807)"},
    {"a;b 9223372036854775807\nc 1\n", 2, "the sample total exceeds 9223372036854775807"},
    {"\n\na;;b 1\n", 3, "empty frame name (frame 2; check for ';;' or a ';' at either end)"},
    {";a 1\n", 1, "empty frame name (frame 1; check for ';;' or a ';' at either end)"},
    {"a; 1\n", 1, "empty frame name (frame 2; check for ';;' or a ';' at either end)"},
    {" 7\n", 1, "no frames before the count"},
    {"7\n", 1, "no frames before the count"},
    {"a;\xff"
     "b 1\n",
     1, "invalid UTF-8 (byte 0xff at column 3)"},
    {"ok 1\nx\xc3(y 2\n", 2, "invalid UTF-8 (byte 0xc3 at column 2)"},
    {"\xed\xa0\x80 1\n", 1, "invalid UTF-8 (byte 0xed at column 1)"}, /* surrogate */
    {"\xc0\xaf 1\n", 1, "invalid UTF-8 (byte 0xc0 at column 1)"},     /* overlong */
    {"a;b\xe2\x82 1\n", 1, "invalid UTF-8 (byte 0xe2 at column 4)"},  /* truncated */
};

Test(read, malformed_lines_report_line_and_reason) {
  for (size_t i = 0; i < sizeof k_bad / sizeof k_bad[0]; i++) {
    fg_profile *p = fg_profile_new();
    fg_read_error err;
    int rc = fg_read_buffer(p, k_bad[i].input, strlen(k_bad[i].input), FG_MAIN, &err);
    cr_expect_eq(rc, -EINVAL, "case %zu: rc %d", i, rc);
    cr_expect_eq(err.line, k_bad[i].line, "case %zu: line %lu", i, err.line);
    cr_expect_str_eq(err.msg, k_bad[i].msg, "case %zu", i);
    fg_profile_free(p);
  }
}

Test(read, nul_byte_is_an_error) {
  static const char in[] = "a;b 1\na\0b 2\n";
  fg_profile *p = fg_profile_new();
  fg_read_error err;
  cr_assert_eq(fg_read_buffer(p, in, sizeof in - 1, FG_MAIN, &err), -EINVAL);
  cr_expect_eq(err.line, 2);
  cr_expect_str_eq(err.msg, "NUL byte at column 2");
  fg_profile_free(p);
}

typedef struct good_case {
  const char *input;
  const char *folded; /* what the profile holds afterwards */
} good_case;

static const good_case k_good[] = {
    /* CRLF, blank and whitespace-only lines, no final LF */
    {"a;b 1\r\n\r\n   \n\t\na;c 2", "a;b 1\na;c 2\n"},
    /* trailing blanks after the count are ignored */
    {"a;b 3 \t\n", "a;b 3\n"},
    /* spaces inside frame names: the count is after the LAST space */
    {"main;Foo bar(int x);baz 4\n", "main;Foo bar(int x);baz 4\n"},
    /* leading spaces belong to the first frame's name */
    {"  a 1\n", "  a 1\n"},
    /* kind suffixes are part of the name */
    {"java/X.y_[j];z_[i];q_[0];k_[k] 5\n", "java/X.y_[j];z_[i];q_[0];k_[k] 5\n"},
    /* the same stack twice is merged; unsorted input comes out sorted */
    {"b 1\na;x 2\nb 3\na 1\n", "a 1\na;x 2\nb 4\n"},
    /* zero counts are accepted and contribute nothing */
    {"a 0\nb 2\n", "b 2\n"},
    /* leading zeros */
    {"a 007\n", "a 7\n"},
    /* UTF-8 names */
    {"\xc3\xa9t\xc3\xa9;\xe2\x82\xac;\xf0\x9f\x94\xa5 2\n",
     "\xc3\xa9t\xc3\xa9;\xe2\x82\xac;\xf0\x9f\x94\xa5 2\n"},
    /* only blank lines: an empty profile */
    {"\n\r\n", ""},
};

Test(read, tolerated_forms) {
  for (size_t i = 0; i < sizeof k_good / sizeof k_good[0]; i++) {
    fg_profile *p = fg_profile_new();
    fg_read_error err = {0};
    int rc = fg_read_buffer(p, k_good[i].input, strlen(k_good[i].input), FG_MAIN, &err);
    cr_expect_eq(rc, 0, "case %zu: %s", i, err.msg);
    char *out = folded_of(p);
    cr_expect_str_eq(out, k_good[i].folded, "case %zu", i);
    free(out);
    fg_profile_free(p);
  }
}

Test(read, differential_two_count_lines) {
  fg_profile *p = fg_profile_new();
  const char *in = "a;b 10 30\nnew 0 4\nold 5 0\nplain 2\n";
  fg_read_error err = {0};
  cr_assert_eq(fg_read_buffer(p, in, strlen(in), FG_MAIN, &err), 0, "%s", err.msg);
  cr_expect_eq(fg_profile_is_diff(p), 1);
  cr_expect_eq(fg_profile_total(p, FG_BASE), 15);
  cr_expect_eq(fg_profile_total(p, FG_MAIN), 36);
  char *out = folded_of(p);
  cr_expect_str_eq(out, "a;b 10 30\nnew 0 4\nold 5 0\nplain 0 2\n");
  free(out);
  /* as one side of a two-input diff it is an error */
  fg_profile *q = fg_profile_new();
  cr_expect_eq(fg_read_buffer(q, in, strlen(in), FG_BASE, &err), -EINVAL);
  cr_expect_eq(err.line, 1);
  cr_expect_str_eq(err.msg, "a differential line (two counts) cannot be one side of a diff");
  /* the base count is checked like any count */
  cr_expect_eq(fg_read_buffer(q, "x 99999999999999999999 1\n", 25, FG_MAIN, &err), -EINVAL);
  cr_expect_str_eq(err.msg,
                   "count '99999999999999999999' is too large (at most 9223372036854775807)");
  fg_profile_free(q);
  fg_profile_free(p);
}

Test(read, counts_and_totals) {
  fg_profile *p = fg_profile_new();
  const char *in = "a;b 5\na;c 7\nd 9223372036854775795\n";
  cr_assert_eq(fg_read_buffer(p, in, strlen(in), FG_MAIN, NULL), 0);
  cr_expect_eq(fg_profile_total(p, FG_MAIN), 9223372036854775807ull);
  cr_expect_eq(fg_profile_total(p, FG_BASE), 0);
  cr_expect_eq(fg_profile_is_diff(p), 0);
  fg_profile_free(p);
}

/* Writes `data` into a pipe from a child process and reads it with fg_read_fd. */
static int read_via_pipe(fg_profile *p, const char *data, size_t len, fg_read_error *err) {
  int fds[2];
  cr_assert_eq(pipe(fds), 0);
  pid_t pid = fork();
  cr_assert(pid >= 0);
  if (pid == 0) {
    close(fds[0]);
    size_t off = 0;
    while (off < len) {
      size_t chunk = len - off < 65536 ? len - off : 65536;
      ssize_t w = write(fds[1], data + off, chunk);
      if (w <= 0) _exit(1);
      off += (size_t)w;
    }
    _exit(0);
  }
  close(fds[1]);
  int rc = fg_read_fd(p, fds[0], FG_MAIN, err);
  close(fds[0]);
  int status;
  waitpid(pid, &status, 0);
  return rc;
}

Test(read, fd_reader_crosses_chunks_and_counts_lines) {
  /* ~10 MB: lines cross the 4 MB chunk boundary; one line longer than a chunk */
  size_t n = 200000, cap = 16u << 20, len = 0;
  char *buf = malloc(cap);
  for (size_t i = 0; i < n; i++)
    len += (size_t)snprintf(buf + len, cap - len, "root;frame%zu;leaf with space %zu 1\n", i % 97,
                            i % 13);
  /* a line of 5 MB */
  len += (size_t)snprintf(buf + len, cap - len, "root;");
  memset(buf + len, 'x', 5u << 20);
  len += 5u << 20;
  len += (size_t)snprintf(buf + len, cap - len, " 2\nroot;bad 1.5\n");
  fg_profile *p = fg_profile_new();
  fg_read_error err;
  int rc = read_via_pipe(p, buf, len, &err);
  cr_expect_eq(rc, -EINVAL);
  cr_expect_eq(err.line, n + 2);
  cr_expect_str_eq(err.msg, "fractional count '1.5' (counts are whole numbers of samples)");
  cr_expect_eq(fg_profile_total(p, FG_MAIN), n + 2);
  fg_profile_free(p);

  /* the same without the bad line reads completely, same as the buffer reader */
  len -= strlen("root;bad 1.5\n");
  p = fg_profile_new();
  cr_expect_eq(read_via_pipe(p, buf, len, &err), 0);
  fg_profile *q = fg_profile_new();
  cr_expect_eq(fg_read_buffer(q, buf, len, FG_MAIN, &err), 0);
  char *a = folded_of(p), *b = folded_of(q);
  cr_expect(strcmp(a, b) == 0);
  cr_expect_eq(fg_profile_total(p, FG_MAIN), n + 2);
  free(a);
  free(b);
  fg_profile_free(p);
  fg_profile_free(q);
  free(buf);
}

Test(read, bad_arguments) {
  fg_profile *p = fg_profile_new();
  fg_read_error err;
  cr_expect_eq(fg_read_buffer(p, "a 1\n", 4, 7, &err), -EINVAL);
  cr_expect_str_eq(err.msg, "invalid arguments");
  cr_expect_eq(fg_read_buffer(NULL, "a 1\n", 4, FG_MAIN, &err), -EINVAL);
  cr_expect_eq(fg_read_fd(p, -1, FG_MAIN, &err), -EBADF);
  cr_expect_str_eq(err.msg, "read error: Bad file descriptor");
  fg_profile_free(p);
}

/* A temporary file holding `data` (unlinked; the caller closes the fd). */
static int temp_file(const char *data, size_t len) {
  char path[] = "/tmp/fg_test_XXXXXX";
  int fd = mkstemp(path);
  cr_assert(fd >= 0);
  unlink(path);
  size_t off = 0;
  while (off < len) {
    ssize_t w = write(fd, data + off, len - off);
    cr_assert(w > 0);
    off += (size_t)w;
  }
  lseek(fd, 0, SEEK_SET);
  return fd;
}

Test(read, mapped_file_windows) {
  /* ~3 MB in 64 KB windows: lines cross every window end; one line is 300 KB long */
  size_t cap = 8u << 20, len = 0;
  char *buf = malloc(cap);
  for (size_t i = 0; i < 60000; i++) {
    len += (size_t)snprintf(buf + len, cap - len, "root;f%zu;g %zu\r\n", i % 331, i % 7 + 1);
    if (i == 30000) {
      len += (size_t)snprintf(buf + len, cap - len, "root;");
      memset(buf + len, 'y', 300000);
      len += 300000;
      len += (size_t)snprintf(buf + len, cap - len, " 5\n");
    }
  }
  len += (size_t)snprintf(buf + len, cap - len, "last;line 9"); /* no final LF */
  fg_profile *a = fg_profile_new(), *b = fg_profile_new();
  fg_read_error err = {0};
  cr_assert_eq(fg_read_buffer(a, buf, len, FG_MAIN, &err), 0, "%s", err.msg);
  int fd = temp_file(buf, len);
  cr_assert_eq(fg_read_fd_window(b, fd, FG_MAIN, &err, 65536), 0, "%s", err.msg);
  close(fd);
  char *fa = folded_of(a), *fb = folded_of(b);
  cr_expect(strcmp(fa, fb) == 0);
  cr_expect_eq(fg_profile_total(b, FG_MAIN), fg_profile_total(a, FG_MAIN));
  free(fa);
  free(fb);
  fg_profile_free(a);
  fg_profile_free(b);

  /* an error late in the file reports its line */
  len += (size_t)snprintf(buf + len, cap - len, "\nbad;line -3\n");
  fd = temp_file(buf, len);
  fg_profile *c = fg_profile_new();
  cr_expect_eq(fg_read_fd_window(c, fd, FG_MAIN, &err, 65536), -EINVAL);
  cr_expect_eq(err.line, 60003);
  cr_expect_str_eq(err.msg, "negative count '-3' (counts are whole numbers of samples, >= 0)");
  fg_profile_free(c);
  /* a file not at its start is read from where it is (not mapped) */
  lseek(fd, (off_t)(len - strlen("bad;line -3\n")), SEEK_SET);
  c = fg_profile_new();
  cr_expect_eq(fg_read_fd(c, fd, FG_MAIN, &err), -EINVAL);
  cr_expect_eq(err.line, 1);
  fg_profile_free(c);
  close(fd);
  free(buf);
}
