/*
 * fuzz_pprof.c — libFuzzer target for the pprof reader (clang -fsanitize=fuzzer,address):
 * the input is read as a profile (gzipped or plain); an error must come with a message, and
 * what reads successfully is written as folded, SVG and HTML. The seeds (fuzz_seeds_pprof/):
 * an ordinary profile, an empty one, and two of test_bombs.py's bombs made small enough for
 * -max_len (a stack of 70,000 frames, 3 MiB of gzipped zeros); run_fuzz.sh's -timeout and
 * -rss_limit_mb turn a reader without bounds into a failure. Not a seed: samples expanding to
 * the budget (64 MiB of frames, 2 s of CPU under ASan), which would take the short run's time
 * and near its per-input timeout on a busy machine; test_bombs.py and test_pprof.c have it.
 */
#include "fg_internal.h"
#include "fg_pprof.h"
#include "fuzz_util.h"

#include <stdlib.h>

static FILE *g_null;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!g_null) g_null = fopen("/dev/null", "w");
  fg_profile *p = fg_profile_new();
  if (!p) return 0;
  fg_read_error err = {0};
  if (fg_read_pprof(p, data, size, FG_MAIN, NULL, &err) != 0) {
    if (err.msg[0] == '\0') abort();
    fg_profile_free(p);
    return 0;
  }
  fuzz_render(g_null, p, size);
  if (fg_write_folded(g_null, p) != 0) abort();
  fg_profile_free(p);
  return 0;
}
