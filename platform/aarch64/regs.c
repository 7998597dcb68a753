/*
 * platform/aarch64/regs.c — the aarch64 register backend (see platform.h). SIGNAL-SAFE: every
 * function here runs in the sampling signal handler; no allocation, no locks, no libc calls.
 */
#include <errno.h>
#include <stdint.h>
#include <ucontext.h>

#include "mix.h"
#include "platform.h"

const char *plat_arch_name(void) { return "aarch64"; }

uint64_t plat_regs_checksum(const ucontext_t *uc) {
  const mcontext_t *m = &uc->uc_mcontext;
  uint64_t h = PLAT_MIX_SEED;
  h = plat_mix(h, m->pc);
  h = plat_mix(h, m->sp);
  for (int i = 0; i < 31; i++) h = plat_mix(h, m->regs[i]); /* x29 = fp, x30 = lr */
  return plat_mix(h, m->pstate);
}

uintptr_t plat_uc_pc(const ucontext_t *uc) { return (uintptr_t)uc->uc_mcontext.pc; }
uintptr_t plat_uc_sp(const ucontext_t *uc) { return (uintptr_t)uc->uc_mcontext.sp; }
uintptr_t plat_uc_fp(const ucontext_t *uc) { return (uintptr_t)uc->uc_mcontext.regs[29]; }

uintptr_t plat_uc_leaf_return(const ucontext_t *uc, uintptr_t *caller_sp) {
  *caller_sp = plat_uc_sp(uc); /* bl leaves sp alone and the return address in lr */
  return (uintptr_t)uc->uc_mcontext.regs[30];
}

void plat_uc_set_frame(ucontext_t *uc, uintptr_t pc, uintptr_t sp, uintptr_t fp) {
  uc->uc_mcontext.pc = pc;
  uc->uc_mcontext.sp = sp;
  uc->uc_mcontext.regs[29] = fp;
}

/*
 * aarch64 enters the kernel with `svc #0` (d4000001), the call's number in x8. A blocked call
 * that will be restarted has pc rewound by 4 onto the svc and x0 restored; one that will not
 * has pc after the svc and x0 = -EINTR. The instruction word is read only when it lies in the
 * page pc is in.
 */
int plat_uc_in_syscall(const ucontext_t *uc) {
  uintptr_t pc = plat_uc_pc(uc);
  int64_t x0 = (int64_t)uc->uc_mcontext.regs[0];
  uint64_t x8 = uc->uc_mcontext.regs[8];
  if (!pc || (pc & 3)) return 0;
  const uintptr_t page = 4096;
  if (*(const uint32_t *)pc == 0xd4000001u && x8 < 1024) return 1;
  if ((pc & (page - 1)) >= 4 && *(const uint32_t *)(pc - 4) == 0xd4000001u &&
      (x0 == -EINTR || (x0 <= -512 && x0 >= -516)))
    return 1;
  return 0;
}
