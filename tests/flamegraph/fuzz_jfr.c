/*
 * fuzz_jfr.c — libFuzzer target for the JFR reader (clang -fsanitize=fuzzer,address): the input
 * is read as a recording three times: with the defaults, with the time axis (the page's heat
 * map) alone, and with threads, lines, kinds, the time axis and a time range; an error must come with a message, and what reads successfully is written as folded,
 * SVG and HTML. The seed (fuzz_seeds_jfr/fixture.jfr) is tests/agent/jfr_fixture's recording:
 * threads, three stacks, every frame type, the four kinds of event. run_fuzz.sh's -timeout and
 * -rss_limit_mb turn a reader without bounds into a failure.
 */
#include "fg_internal.h"
#include "fg_jfr.h"
#include "fuzz_util.h"

#include <stdlib.h>

static FILE *g_null;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!g_null) g_null = fopen("/dev/null", "w");
  for (int pass = 0; pass < 3; pass++) {
    fg_profile *p = fg_profile_new();
    if (!p) return 0;
    fg_jfr_options o;
    fg_jfr_options_init(&o);
    o.time = pass > 0;
    if (pass == 2) {
      o.threads = o.lines = o.ann = 1;
      o.has_from = o.has_to = 1;
      o.from_ns = 1000;
      o.to_ns = -1000;
    }
    fg_read_error err = {0};
    if (fg_read_jfr(p, data, size, FG_MAIN, &o, &err) != 0) {
      if (err.msg[0] == '\0') abort();
      fg_profile_free(p);
      continue;
    }
    fuzz_render(g_null, p, size);
    if (fg_write_folded(g_null, p) != 0) abort();
    fg_profile_free(p);
  }
  return 0;
}
