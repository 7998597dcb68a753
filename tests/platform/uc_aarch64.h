/* How the platform tests set registers of an aarch64 ucontext: 0 pc, 1 sp, 2 pstate, 3.. x0-x30. */
#include <sys/ucontext.h>
#define ARCH_NAME "aarch64"
#define NREGS 34
#define REG_PC 0
#define REG_SP 1
#define REG_FP (3 + 29)
#define REG_RET 3                       /* x0 */
#define REG_NR (3 + 8)                  /* x8 */
#define SYSCALL_INSN "\x01\x00\x00\xd4" /* svc #0, little-endian */
#define SYSCALL_LEN 4
static void set_reg(ucontext_t *uc, int i, uint64_t v) {
  if (i == 0)
    uc->uc_mcontext.pc = v;
  else if (i == 1)
    uc->uc_mcontext.sp = v;
  else if (i == 2)
    uc->uc_mcontext.pstate = v;
  else
    uc->uc_mcontext.regs[i - 3] = v;
}
#define RESTART_SYSCALL_NR 128 /* __NR_restart_syscall */
/* DWARF register numbers -> set_reg indexes (plat_uc_dwarf_reg): x0-x30, sp, pc */
static const int dwarf_regs[][2] = {
    {0, 3},   {1, 4},   {2, 5},   {3, 6},   {4, 7},   {5, 8},   {6, 9},   {7, 10},  {8, 11},
    {9, 12},  {10, 13}, {11, 14}, {12, 15}, {13, 16}, {14, 17}, {15, 18}, {16, 19}, {17, 20},
    {18, 21}, {19, 22}, {20, 23}, {21, 24}, {22, 25}, {23, 26}, {24, 27}, {25, 28}, {26, 29},
    {27, 30}, {28, 31}, {29, 32}, {30, 33}, {31, 1},  {32, 0}};
#define DWARF_INVALID 33
