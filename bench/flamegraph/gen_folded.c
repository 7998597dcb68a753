/*
 * gen_folded.c — input generator for the flame graph benchmark: N distinct folded stacks
 * (depth uniform in [min, max]) over M distinct frame names, deterministic for a seed.
 *
 * Shape: stacks are random walks over a fixed random call graph (each name has a few
 * callees, the first ones likelier), starting from one of a few thread roots, so prefixes are
 * shared near the root and diverge deeper, as in real profiles. Names look like JVM frames
 * (`org/bench/p12/C0345.method7_[j]`, with all kind suffixes, some native and kernel
 * names). Counts are log-uniform in [1, ~1100]. Output order is random (not sorted), the
 * harder case for a reader. Duplicates are rejected with a 64-bit hash set.
 *
 * Usage: gen_folded [-n STACKS] [-m NAMES] [-d MIN-MAX] [-s SEED] > out.folded
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t g_state;

static uint64_t rnd(void) {
  uint64_t z = (g_state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

static double unit(void) { return (double)(rnd() >> 11) / 9007199254740992.0; }

static uint64_t mix(uint64_t a, uint64_t b) {
  uint64_t z = a * 0x9E3779B97F4A7C15ull ^ (b + 0x632BE59BD9B4E019ull);
  z = (z ^ (z >> 29)) * 0xBF58476D1CE4E5B9ull;
  return z ^ (z >> 32);
}

int main(int argc, char **argv) {
  long nstacks = 100000, nnames = 50000, dmin = 5, dmax = 80;
  unsigned long long seed = 42;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "-n"))
      nstacks = atol(argv[i + 1]);
    else if (!strcmp(argv[i], "-m"))
      nnames = atol(argv[i + 1]);
    else if (!strcmp(argv[i], "-s"))
      seed = strtoull(argv[i + 1], NULL, 10);
    else if (!strcmp(argv[i], "-d")) {
      if (sscanf(argv[i + 1], "%ld-%ld", &dmin, &dmax) != 2) return 2;
    } else {
      fprintf(stderr, "usage: gen_folded [-n STACKS] [-m NAMES] [-d MIN-MAX] [-s SEED]\n");
      return 2;
    }
  }
  if (nstacks < 1 || nnames < 8 || dmin < 1 || dmax < dmin || dmax > 10000) return 2;
  g_state = seed;

  /* names */
  char **names = malloc((size_t)nnames * sizeof *names);
  static const char *const kinds[] = {"_[j]", "_[j]", "_[j]", "_[j]", "_[j]",
                                      "_[i]", "_[i]", "_[0]", "",     "_[k]"};
  for (long i = 0; i < nnames; i++) {
    char buf[128];
    int k = (int)(rnd() % 10);
    if (k == 8)
      snprintf(buf, sizeof buf, "native_helper_%ld_%s", i, (rnd() & 1) ? "copy" : "update");
    else if (k == 9)
      snprintf(buf, sizeof buf, "sys_call_%ld_[k]", i);
    else
      snprintf(buf, sizeof buf, "org/bench/p%02ld/C%04ld.method%ld%s", i % 97, (i / 7) % 10000,
               i % 13, kinds[k]);
    names[i] = strdup(buf);
  }

  /* distinct-stack set */
  size_t cap = 1;
  while (cap < (size_t)nstacks * 2) cap <<= 1;
  uint64_t *seen = calloc(cap, sizeof *seen);
  long *frames = malloc((size_t)(dmax + 1) * sizeof *frames);
  static char out[1 << 16];
  setvbuf(stdout, out, _IOFBF, sizeof out);
  long written = 0, tries = 0;
  while (written < nstacks) {
    if (++tries > nstacks * 50) {
      fprintf(stderr, "gen_folded: cannot find enough distinct stacks\n");
      return 1;
    }
    long depth = dmin + (long)(rnd() % (uint64_t)(dmax - dmin + 1));
    long cur = (long)(rnd() % 8); /* thread roots: names 0..7 */
    uint64_t h = 1469598103934665603ull;
    for (long d = 0; d < depth; d++) {
      frames[d] = cur;
      h = mix(h, (uint64_t)cur);
      /* callee: index k geometric (first callees likelier), up to 12 per caller */
      int k = 0;
      while (k < 11 && (rnd() & 3) != 0) k++;
      cur = 8 + (long)(mix((uint64_t)cur, (uint64_t)k) % (uint64_t)(nnames - 8));
    }
    if (!h) h = 1;
    size_t slot = h & (cap - 1);
    int dup = 0;
    while (seen[slot]) {
      if (seen[slot] == h) {
        dup = 1;
        break;
      }
      slot = (slot + 1) & (cap - 1);
    }
    if (dup) continue;
    seen[slot] = h;
    for (long d = 0; d < depth; d++) {
      if (d) putchar(';');
      fputs(names[frames[d]], stdout);
    }
    printf(" %llu\n", (unsigned long long)exp(unit() * 7.0));
    written++;
  }
  return 0;
}
