/*
 * platform/aarch64/regs.c — the aarch64 register backend (see platform.h). SIGNAL-SAFE: every
 * function here runs in the sampling signal handler; no allocation, no locks, no libc calls.
 */
#include <stdint.h>
#include <ucontext.h>

#include "mix.h"
#include "platform.h"

const char *plat_arch_name(void) { return "aarch64"; }

uint64_t plat_regs_checksum(const ucontext_t *uc) {
  const mcontext_t *m = &uc->uc_mcontext;
  const unsigned long long *x = m->regs; /* x0..x30; x29 = fp, x30 = lr */
  plat_mix_state s;
  plat_mix_init(&s);
  for (int i = 0; i < 28; i += 4) plat_mix4(&s, x[i], x[i + 1], x[i + 2], x[i + 3]);
  plat_mix4(&s, x[28], x[29], x[30], m->sp);
  plat_mix4(&s, m->pc, m->pstate, 0, 0);
  return plat_mix_result(&s);
}

const int plat_dwarf_pc = 32, plat_dwarf_sp = 31, plat_dwarf_fp = 29;

int plat_uc_dwarf_reg(const ucontext_t *uc, int regno, uintptr_t *val) {
  /* DWARF order of the AArch64 ELF ABI: x0-x30, sp, then (libunwind's) pc */
  if (regno >= 0 && regno <= 30)
    *val = (uintptr_t)uc->uc_mcontext.regs[regno];
  else if (regno == 31)
    *val = (uintptr_t)uc->uc_mcontext.sp;
  else if (regno == 32)
    *val = (uintptr_t)uc->uc_mcontext.pc;
  else
    return -22; /* -EINVAL */
  return 0;
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
 * aarch64 enters the kernel with `svc #0` (d4000001), the call's number in x8 (which the kernel
 * leaves alone). A blocked call that will be restarted has pc rewound by 4 onto the svc and x0
 * restored to its first argument (or x8 = __NR_restart_syscall, 128, for the restart_block
 * case); one that will not has pc after the svc and x0 = -EINTR (or an -ERESTART* code:
 * plat_interrupted_ret). Instructions are 4-aligned, so the word at pc always lies in pc's page;
 * the word before it is read only when pc is not at a page's start. A misaligned pc is
 * answered 0 without reading.
 * Limits: a thread stopped on an svc about to enter the kernel counts as blocked (x8 is a
 * syscall number there too), and so does one just after an svc that legitimately returned
 * -EINTR. Only `svc #0` is recognised (what Linux system calls use); running code is
 * misread only at or just after such an svc, with x8 < 1024 or x0 one of the codes above.
 */
int plat_uc_in_syscall(const ucontext_t *uc) {
  uintptr_t pc = plat_uc_pc(uc);
  int64_t x0 = (int64_t)uc->uc_mcontext.regs[0];
  uint64_t x8 = uc->uc_mcontext.regs[8];
  if (!pc || (pc & 3)) return 0;
  const uintptr_t page = 4096; /* the smallest page size: also safe with 16K/64K pages */
  if (*(const uint32_t *)pc == 0xd4000001u && x8 < 1024) return 1;
  if ((pc & (page - 1)) >= 4 && *(const uint32_t *)(pc - 4) == 0xd4000001u &&
      plat_interrupted_ret(x0))
    return 1;
  return 0;
}
