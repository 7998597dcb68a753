/*
 * platform/x86_64/regs.c — the x86-64 register backend (see platform.h). SIGNAL-SAFE: every
 * function here runs in the sampling signal handler; no allocation, no locks, no libc calls.
 */
#include <stdint.h>
#include <ucontext.h>

#include "mix.h"
#include "platform.h"

const char *plat_arch_name(void) { return "x86_64"; }

uint64_t plat_regs_checksum(const ucontext_t *uc) {
  const greg_t *g = uc->uc_mcontext.gregs;
#define R(x) ((uint64_t)g[REG_##x])
  plat_mix_state s;
  plat_mix_init(&s);
  plat_mix4(&s, R(RIP), R(RSP), R(RBP), R(RAX));
  plat_mix4(&s, R(RBX), R(RCX), R(RDX), R(RSI));
  plat_mix4(&s, R(RDI), R(R8), R(R9), R(R10));
  plat_mix4(&s, R(R11), R(R12), R(R13), R(R14));
  plat_mix4(&s, R(R15), R(EFL), 0, 0);
#undef R
  return plat_mix_result(&s);
}

const int plat_dwarf_pc = 16, plat_dwarf_sp = 7, plat_dwarf_fp = 6;

int plat_uc_dwarf_reg(const ucontext_t *uc, int regno, uintptr_t *val) {
  /* DWARF order of the System V x86-64 ABI: rax rdx rcx rbx rsi rdi rbp rsp r8-r15 rip */
  static const int greg[17] = {REG_RAX, REG_RDX, REG_RCX, REG_RBX, REG_RSI, REG_RDI,
                               REG_RBP, REG_RSP, REG_R8,  REG_R9,  REG_R10, REG_R11,
                               REG_R12, REG_R13, REG_R14, REG_R15, REG_RIP};
  if (regno < 0 || regno >= 17) return -22; /* -EINVAL, without errno.h's macros in a backend */
  *val = (uintptr_t)uc->uc_mcontext.gregs[greg[regno]];
  return 0;
}

uintptr_t plat_uc_pc(const ucontext_t *uc) { return (uintptr_t)uc->uc_mcontext.gregs[REG_RIP]; }
uintptr_t plat_uc_sp(const ucontext_t *uc) { return (uintptr_t)uc->uc_mcontext.gregs[REG_RSP]; }
uintptr_t plat_uc_fp(const ucontext_t *uc) { return (uintptr_t)uc->uc_mcontext.gregs[REG_RBP]; }

uintptr_t plat_uc_leaf_return(const ucontext_t *uc, uintptr_t *caller_sp) {
  uintptr_t sp = plat_uc_sp(uc);
  *caller_sp = sp + sizeof(uintptr_t);
  return *(const uintptr_t *)sp; /* pushed by the call */
}

void plat_uc_set_frame(ucontext_t *uc, uintptr_t pc, uintptr_t sp, uintptr_t fp) {
  uc->uc_mcontext.gregs[REG_RIP] = (greg_t)pc;
  uc->uc_mcontext.gregs[REG_RSP] = (greg_t)sp;
  uc->uc_mcontext.gregs[REG_RBP] = (greg_t)fp;
}

/*
 * A thread blocked in a system call is interrupted by the signal in one of two ways:
 *  - the call will be restarted: the kernel rewound rip by 2 onto the `syscall` instruction
 *    (0f 05) and put the call's number back in rax (SA_RESTART, or the restart_block case
 *    where rax = __NR_restart_syscall = 219);
 *  - it will not: rip is just after `syscall` and rax holds -EINTR (the kernel turns its
 *    internal -ERESTART* codes into that before a handler runs; they are accepted too, in
 *    case a kernel shows them: plat_interrupted_ret).
 * A thread that was running user code has no `syscall` at rip or just before it, or has a
 * different rax. Limits: a thread interrupted right after a syscall that legitimately
 * returned -EINTR, or sitting exactly on a `syscall` instruction with its number in rax
 * (about to enter), is taken as blocked; both are rare and were in a syscall anyway.
 * The restart case accepts any rax in 0..1023 (syscall numbers are below 460 today).
 * A `syscall` split across a page boundary (0f the last byte of one page, 05 the first of the
 * next) is not recognised: instruction bytes are read only from the page rip is in (at a
 * page's last byte the check at rip is skipped, at its first two bytes the check at rip-2).
 * Code reached by a jump into the middle of an instruction, or data bytes 0f 05 just before
 * rip, can fool it; both need rax to hold one of the values above as well.
 */
int plat_uc_in_syscall(const ucontext_t *uc) {
  uintptr_t pc = plat_uc_pc(uc);
  int64_t rax = (int64_t)uc->uc_mcontext.gregs[REG_RAX];
  if (!pc) return 0;
  const uintptr_t page = 4096; /* the smallest page size: also safe with 16K/64K pages */
  /* at `syscall`, about to be restarted: rax is a syscall number */
  if ((pc & (page - 1)) <= page - 2) {
    const uint8_t *p = (const uint8_t *)pc;
    if (p[0] == 0x0f && p[1] == 0x05 && rax >= 0 && rax < 1024) return 1;
  }
  /* just after `syscall`, interrupted: rax is -EINTR or an -ERESTART* code */
  if ((pc & (page - 1)) >= 2) {
    const uint8_t *p = (const uint8_t *)(pc - 2);
    if (p[0] == 0x0f && p[1] == 0x05 && plat_interrupted_ret(rax)) return 1;
  }
  return 0;
}
