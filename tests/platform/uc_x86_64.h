/* How the platform tests set registers of an x86-64 ucontext. */
#include <sys/ucontext.h>
#define ARCH_NAME "x86_64"
static const int gregs_list[] = {REG_RIP, REG_RSP, REG_RBP, REG_RAX, REG_RBX, REG_RCX,
                                 REG_RDX, REG_RSI, REG_RDI, REG_R8,  REG_R9,  REG_R10,
                                 REG_R11, REG_R12, REG_R13, REG_R14, REG_R15, REG_EFL};
#define NREGS ((int)(sizeof gregs_list / sizeof *gregs_list))
/* indexes into gregs_list */
#define REG_PC 0
#define REG_SP 1
#define REG_FP 2
#define REG_RET 3 /* rax: return value */
#define REG_NR 3  /* rax: syscall number on restart */
#define SYSCALL_INSN "\x0f\x05"
#define SYSCALL_LEN 2
static void set_reg(ucontext_t *uc, int i, uint64_t v) {
  uc->uc_mcontext.gregs[gregs_list[i]] = (greg_t)v;
}
#define RESTART_SYSCALL_NR 219 /* __NR_restart_syscall */
/* DWARF register numbers -> indexes into gregs_list (plat_uc_dwarf_reg) */
static const int dwarf_regs[][2] = {{0, 3},   {1, 6},   {2, 5},   {3, 4},   {4, 7},   {5, 8},
                                    {6, 2},   {7, 1},   {8, 9},   {9, 10},  {10, 11}, {11, 12},
                                    {12, 13}, {13, 14}, {14, 15}, {15, 16}, {16, 0}};
#define DWARF_INVALID 17
