/*
 * symlib.h — what test_symbols needs of its test library (symlib.c): the addresses of the
 * library's own functions and of code no symbol covers, handed out by the one exported function.
 */
#ifndef SYMLIB_H
#define SYMLIB_H

#include <stdint.h>

struct symlib_table {
  uintptr_t leaf;            /* symlib_leaf */
  uintptr_t middle;          /* symlib_middle */
  uintptr_t java_time_nanos; /* _ZN2os13javaTimeNanosEv: os::javaTimeNanos() */
  uintptr_t alias;           /* symlib_alias, a weak alias of __symlib_alias_target */
  uintptr_t nosize;          /* symlib_nosize: a function symbol of size 0, 32 bytes of code */
  uintptr_t gap;             /* 64 bytes of code in .text that no symbol covers */
  uintptr_t get_table;       /* symlib_get_table itself: exported, in .dynsym */
};

/* Fills *t. The only exported symbol (found with dlsym). */
void symlib_get_table(struct symlib_table *t);
typedef void (*symlib_get_table_fn)(struct symlib_table *t);

#endif
