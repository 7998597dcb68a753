/*
 * mix.h — logic shared by every architecture backend (platform/<arch>/regs.c): the mixing step
 * of the register checksum (every input bit reaches every output bit, so one changed register
 * changes the result, and equal register sets give equal results) and the return values a
 * system call interrupted by a signal leaves behind. Signal-safe (pure arithmetic).
 */
#ifndef SAMPLER_PLATFORM_MIX_H
#define SAMPLER_PLATFORM_MIX_H

#include <stdint.h>

/* The checksum keeps 4 independent lanes, fed four registers at a time, so the CPU works on
 * four dependency chains at once; then it folds them. Every step is a bijection of the lane for
 * a fixed input and of the input for a fixed lane (xor; multiply by an odd constant;
 * xor-shift), and the fold is a bijection of each lane for fixed others: so a set differing in
 * exactly one register ALWAYS gives a different checksum, not just with high probability. */
typedef struct {
  uint64_t a, b, c, d;
} plat_mix_state;

static inline void plat_mix_init(plat_mix_state *s) {
  s->a = 0x243f6a8885a308d3ULL;
  s->b = 0x13198a2e03707344ULL;
  s->c = 0xa4093822299f31d0ULL;
  s->d = 0x082efa98ec4e6c89ULL;
}

static inline uint64_t plat_mix_step(uint64_t lane, uint64_t v) {
  uint64_t h = (lane ^ v) * 0x9e3779b97f4a7c15ULL;
  return h ^ (h >> 29);
}

/* Four registers, one into each lane (pad a short group with zeros). */
static inline void plat_mix4(plat_mix_state *s, uint64_t v0, uint64_t v1, uint64_t v2,
                             uint64_t v3) {
  s->a = plat_mix_step(s->a, v0);
  s->b = plat_mix_step(s->b, v1);
  s->c = plat_mix_step(s->c, v2);
  s->d = plat_mix_step(s->d, v3);
}

/* Finalizer (murmur3's fmix64 shape, a bijection): spreads every bit over the result. */
static inline uint64_t plat_mix_fold1(uint64_t h) {
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdULL;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ULL;
  return h ^ (h >> 33);
}

/* The checksum of everything mixed in. */
static inline uint64_t plat_mix_result(const plat_mix_state *s) {
  uint64_t h = plat_mix_fold1(s->a);
  h = plat_mix_fold1(h ^ s->b);
  h = plat_mix_fold1(h ^ s->c);
  return plat_mix_fold1(h ^ s->d);
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
