/*
 * graph_cap.c — what a flame graph costs the agent's writer at the stack table's limits, with
 * and without the frame limit (agent/output.c draws SVG and HTML through
 * fg_profile_add_capped). Builds N stacks of D frames (the first three shared, the rest drawn
 * from 4,096 names: nearly every frame a node of its own, the worst case for a tree), writes the
 * format to /dev/null and prints the peak RSS after building and after writing.
 *
 * Usage: graph_cap STACKS DEPTH svg|html|folded MAX_FRAMES   (MAX_FRAMES 0: no limit)
 *   graph_cap 1048576 32 html 0          the table's limits, the whole graph
 *   graph_cap 1048576 32 html 2097152    the same with the agent's limit
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "flamegraph.h"

static long peak_mb(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss / 1024;
}

int main(int argc, char **argv) {
  if (argc != 5) {
    fprintf(stderr, "usage: graph_cap STACKS DEPTH svg|html|folded MAX_FRAMES\n");
    return 2;
  }
  size_t nstacks = strtoul(argv[1], NULL, 0), depth = strtoul(argv[2], NULL, 0);
  size_t cap = strtoul(argv[4], NULL, 0);
  const char *fmt = argv[3];
  if (depth < 1 || depth > 64) {
    fprintf(stderr, "DEPTH: 1 to 64\n");
    return 2;
  }
  static char names[4096][16];
  for (int i = 0; i < 4096; i++) snprintf(names[i], sizeof names[i], "f%d", i);
  fg_profile *p = fg_profile_new();
  const char *frames[64];
  uint64_t x = 88172645463325252ull, cut = 0;
  for (size_t s = 0; s < nstacks; s++) {
    for (size_t d = 0; d < depth; d++) {
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      frames[d] = names[d < 3 ? d : x % 4096];
    }
    int rc = cap ? fg_profile_add_capped(p, frames, depth, 1 + x % 5, cap, "[cut]")
                 : fg_profile_add(p, frames, depth, 1 + x % 5);
    if (rc < 0) {
      fprintf(stderr, "add: %s\n", strerror(-rc));
      return 1;
    }
    cut += rc == 1;
  }
  printf("built: %zu frames, %llu stacks cut, peak RSS %ld MB\n", fg_profile_nodes(p),
         (unsigned long long)cut, peak_mb());
  FILE *out = fopen("/dev/null", "w");
  fg_options o;
  fg_options_init(&o);
  int rc = !strcmp(fmt, "html")  ? fg_write_html(out, p, &o)
           : !strcmp(fmt, "svg") ? fg_write_svg(out, p, &o)
                                 : fg_write_folded(out, p);
  fclose(out);
  printf("written (%s): rc %d, peak RSS %ld MB\n", fmt, rc, peak_mb());
  fg_profile_free(p);
  return rc != 0;
}
