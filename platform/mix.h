/*
 * mix.h — the mixing step of the register checksum, shared by every architecture backend:
 * every input bit reaches every output bit, so one changed register changes the result, and
 * equal register sets give equal results. Signal-safe (pure arithmetic).
 */
#ifndef SAMPLER_PLATFORM_MIX_H
#define SAMPLER_PLATFORM_MIX_H

#include <stdint.h>

#define PLAT_MIX_SEED 0x243f6a8885a308d3ULL

static inline uint64_t plat_mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  h *= 0xff51afd7ed558ccdULL;
  return h ^ (h >> 32);
}

#endif
