/* The platform backend's tests on the host, with Criterion (cases: platform_cases.inc). */
#include <criterion/criterion.h>
#include <stdint.h>

#if defined(__x86_64__)
#include "uc_x86_64.h"
#elif defined(__aarch64__)
#include "uc_aarch64.h"
#endif

#define CASE(name) Test(platform, name)
#define EXPECT(cond, ...) cr_expect(cond, __VA_ARGS__)
#include "platform_cases.inc"
