/*
 * symlib.c — a shared library for test_symbols (built several ways by CMakeLists.txt here):
 * functions whose names and addresses the test knows, one of them under a C++ mangled name,
 * a function symbol of size 0, and code that no symbol covers.
 *
 * Everything but symlib_get_table is hidden: it is in .symtab (as a local symbol) but not in
 * .dynsym, so the stripped copies of the library name none of it. Each function is longer than
 * the 10 bytes past its start that the test also names.
 */
#include "symlib.h"

#define HIDDEN __attribute__((visibility("hidden"), noinline))

static volatile int sink;

HIDDEN int symlib_leaf(int n) {
  int s = 0;
  for (int i = 0; i < n; i++) s += sink * i;
  return s;
}

HIDDEN int symlib_middle(int n) { return symlib_leaf(n) * sink + symlib_leaf(n + 1); }

/* C++'s os::javaTimeNanos(): an assembler name gives a C function the mangled symbol. */
HIDDEN long symlib_java_time_nanos(void) __asm__("_ZN2os13javaTimeNanosEv");
HIDDEN long symlib_java_time_nanos(void) {
  long t = 0;
  for (int i = 0; i < 16; i++) t = t * 31 + sink;
  return t;
}

/* One function, two names at the same address: the module names it by the one without leading
 * underscores, as libc's getpid (weak) over __getpid (global). */
HIDDEN int __symlib_alias_target(int n) { return symlib_leaf(n) + symlib_leaf(2 * n) * sink; }
extern int symlib_alias(int n)
    __attribute__((weak, alias("__symlib_alias_target"), visibility("hidden")));

/* At the start of a section of its own, 64 bytes no symbol covers (an assembler-local label
 * leaves no symbol; its address reaches C through symlib_gap_start), then symlib_nosize: a
 * function symbol without a size, over 32 bytes. The bytes are never run. */
__asm__(".pushsection .text.symlib_asm,\"ax\"\n"
        ".balign 16\n"
        ".Lsymlib_gap:\n"
        ".fill 64, 1, 0\n"
        ".hidden symlib_nosize\n"
        ".globl symlib_nosize\n"
        ".type symlib_nosize, STT_FUNC\n"
        "symlib_nosize:\n"
        ".fill 32, 1, 0\n"
        ".popsection\n"
        ".pushsection .data.rel.ro.symlib_asm,\"aw\"\n"
        ".balign 8\n"
        ".hidden symlib_gap_start\n"
        ".globl symlib_gap_start\n"
        "symlib_gap_start:\n"
        ".quad .Lsymlib_gap\n"
        ".popsection\n");

extern const char symlib_nosize[] __attribute__((visibility("hidden")));
extern const uintptr_t symlib_gap_start __attribute__((visibility("hidden")));

__attribute__((visibility("default"))) void symlib_get_table(struct symlib_table *t) {
  t->leaf = (uintptr_t)symlib_leaf;
  t->middle = (uintptr_t)symlib_middle;
  t->java_time_nanos = (uintptr_t)symlib_java_time_nanos;
  t->alias = (uintptr_t)symlib_alias;
  t->nosize = (uintptr_t)symlib_nosize;
  t->gap = symlib_gap_start;
  t->get_table = (uintptr_t)symlib_get_table;
}
