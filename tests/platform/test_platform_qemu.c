/*
 * The platform backend's tests for aarch64, cross-compiled and run under qemu-aarch64
 * (Criterion's arm64 package cannot be installed beside the amd64 one). Same cases as the
 * host (platform_cases.inc); prints "N passed, N failed" and exits non-zero on a failure.
 */
#include <stdint.h>
#include <stdio.h>

#include "uc_aarch64.h"

static int failures, current_failed;
#define EXPECT(cond, ...)                               \
  do {                                                  \
    if (!(cond)) {                                      \
      fprintf(stderr, "  %s:%d: ", __FILE__, __LINE__); \
      fprintf(stderr, __VA_ARGS__);                     \
      fprintf(stderr, "\n");                            \
      current_failed = 1;                               \
    }                                                   \
  } while (0)

typedef void (*case_fn)(void);
static struct {
  case_fn f;
  const char *label;
} cases[32];
static int ncases;
#define CASE(name)                                            \
  static void name(void);                                     \
  __attribute__((constructor)) static void reg_##name(void) { \
    cases[ncases].f = name;                                   \
    cases[ncases++].label = #name;                            \
  }                                                           \
  static void name(void)

#include "platform_cases.inc"

int main(void) {
  int passed = 0;
  for (int i = 0; i < ncases; i++) {
    current_failed = 0;
    cases[i].f();
    printf("%s %s\n", current_failed ? "FAIL" : "ok  ", cases[i].label);
    if (current_failed)
      failures++;
    else
      passed++;
  }
  printf("aarch64: %d passed, %d failed\n", passed, failures);
  return failures ? 1 : 0;
}
