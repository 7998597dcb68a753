/*
 * dltarget.c — the library the dlopen storm (nativework.c) loads, calls and unloads in a loop:
 * dltarget_work spends ~50 us so that samples land in it while it is loaded.
 */
#include <stdint.h>
#include <time.h>

__attribute__((visibility("default"), noinline)) uint64_t dltarget_work(uint64_t x) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  uint64_t end = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec + 50000;
  for (;;) {
    for (int i = 0; i < 1000; i++) x = (x ^ (x >> 31)) * 0x9e3779b97f4a7c15ull + (uint64_t)i;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    if ((uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec >= end) return x;
  }
}
