/* readcost: what the sampler thread pays, at a JVM's start, to read a loaded object's unwind
 * tables and symbols — without a JVM.
 *
 * It loads libjvm.so (dlopen, nothing run in it) and times, ROUNDS times, each in a fresh state:
 * objects_init(1), which compiles the unwind tables of every loaded object (cfi.c), and the
 * first symbols_name of a pc in libjvm.so, which reads its ~48,000 function symbols
 * (symbols.c). Prints one line a round, in ms, with the memory the symbols hold; the first round of a process pays the cold
 * caches. Run builds alternately to compare them.
 *
 * With a third argument, the disk cache in that directory (diskcache.h): a first round that
 * finds it empty makes and writes the tables and the symbols, the next rounds read them.
 *
 * Usage: readcost [ROUNDS] [PATH-TO-libjvm.so] [CACHE-DIR] (default 5, the JDK the build
 * found, no cache). */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "native/diskcache.h"
#include "native/objects.h"
#include "native/symbols.h"

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int main(int argc, char **argv) {
  int rounds = argc > 1 ? atoi(argv[1]) : 5;
  const char *path = argc > 2 ? argv[2] : READCOST_LIBJVM;
  void *jvm = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  void *fn = jvm ? dlsym(jvm, "JNI_CreateJavaVM") : NULL;
  if (!fn) {
    fprintf(stderr, "readcost: cannot load %s: %s\n", path, dlerror());
    return 1;
  }
  char why[512];
  if (argc > 3 && diskcache_open(argv[3], why, sizeof why)) {
    fprintf(stderr, "readcost: cache: %s\n", why);
    return 1;
  }
  for (int r = 0; r < rounds; r++) {
    struct diskcache_stats c0, c1, s0, s1;
    diskcache_stats(DISKCACHE_CFI, &c0);
    diskcache_stats(DISKCACHE_SYMBOLS, &s0);
    uint64_t t0 = now_ns();
    if (objects_init(1)) return 1;
    uint64_t t1 = now_ns();
    diskcache_stats(DISKCACHE_CFI, &c1);
    objects_fini();
    char name[256];
    uint64_t t2 = now_ns();
    symbols_name((uintptr_t)fn + 1, name, sizeof name);
    uint64_t t3 = now_ns();
    struct symbols_stats st;
    symbols_stats(&st);
    diskcache_stats(DISKCACHE_SYMBOLS, &s1);
    symbols_fini();
    printf("round %d: unwind tables %.2f ms (%llu read from the cache, %llu written), libjvm.so's "
           "symbols %.2f ms (%llu symbols, %llu bytes held, %s; %llu read from the cache, %llu "
           "written)\n",
           r + 1, (double)(t1 - t0) / 1e6, (unsigned long long)(c1.read - c0.read),
           (unsigned long long)(c1.written - c0.written), (double)(t3 - t2) / 1e6,
           (unsigned long long)st.symbols, (unsigned long long)st.bytes, name,
           (unsigned long long)(s1.read - s0.read), (unsigned long long)(s1.written - s0.written));
  }
  return 0;
}
