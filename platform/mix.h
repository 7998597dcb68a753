/*
 * mix.h — logic shared by every architecture backend (platform/<arch>/regs.c): the mixing step
 * of the register checksum (every input bit reaches every output bit, so one changed register
 * changes the result, and equal register sets give equal results) and the return values a
 * system call interrupted by a signal leaves behind. Signal-safe (pure arithmetic).
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

/* 1 if `ret`, the return register of a thread sitting just after its system call instruction,
 * says the call was cut short by a signal: -EINTR (what user space normally sees), or one of
 * the kernel's internal restart codes -ERESTARTSYS (-512), -ERESTARTNOINTR (-513),
 * -ERESTARTNOHAND (-514), -ERESTART_RESTARTBLOCK (-516), which a handler should not see but a
 * kernel might show. */
static inline int plat_interrupted_ret(int64_t ret) {
  return ret == -4 || ret == -512 || ret == -513 || ret == -514 || ret == -516;
}

#endif
