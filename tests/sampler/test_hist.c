/* Unit tests of the histograms (tables/hist.c) the costs' quantiles come from. */
#include <criterion/criterion.h>
#include <stdint.h>

#include "hist.h"

Test(stats, histogram_quantiles) {
  static struct hist h;
  cr_expect_eq(hist_quantile(&h, 0.5), 0u);
  for (uint64_t v = 1; v <= 1000; v++) hist_add(&h, v * 1000); /* 1us .. 1ms */
  uint64_t med = hist_quantile(&h, 0.5), p99 = hist_quantile(&h, 0.99);
  cr_expect(med >= 500000 && med <= 500000 * 1.125 + 1, "median %lu", (unsigned long)med);
  cr_expect(p99 >= 990000 && p99 <= 1000000, "p99 %lu", (unsigned long)p99);
  cr_expect_eq(hist_quantile(&h, 1.0), 1000000u);
  static struct hist one;
  hist_add(&one, 7);
  cr_expect_eq(hist_quantile(&one, 0.5), 7u);
}
