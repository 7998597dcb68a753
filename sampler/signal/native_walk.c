/*
 * signal/native_walk.c — SIGNAL PATH: the native stack walk (see native.h). libunwind's
 * "remote" interface, pointed at this process: libunwind calls back for everything it needs —
 * the unwind table of a pc (the loaded-objects snapshot: no dl_iterate_phdr, no loader lock),
 * each word of memory (checked: on the thread's stack or in a mapped segment of a loaded
 * object; anything else ends the walk instead of faulting), each register of the first frame
 * (the ucontext). Caching is off: libunwind's caches take locks or thread-local storage.
 */
#include "../native.h"

#include <errno.h>
#include <libunwind.h>

#include "../codemap.h"
#include "../objects.h"
#include "platform.h"

/* libunwind exports the search of a binary-search unwind table (.eh_frame_hdr) for the
 * "remote" interface it serves; its public header does not declare it. */
extern int UNW_OBJ(dwarf_search_unwind_table)(unw_addr_space_t as, unw_word_t ip,
                                              unw_dyn_info_t *di, unw_proc_info_t *pi,
                                              int need_unwind_info, void *arg);

struct walk {
  const ucontext_t *uc;
  uintptr_t stack_lo, stack_hi;
  int bad_read;               /* a read outside the stack and the objects was refused */
  struct object_segment last; /* the segment of the last read from an object */
  int no_info;                /* a pc had no unwind information */
};

unw_addr_space_t native_space; /* created by native_init (native.c) */

static int find_proc_info(unw_addr_space_t as, unw_word_t ip, unw_proc_info_t *pi,
                          int need_unwind_info, void *arg) {
  struct walk *w = arg;
  const struct object *o = objects_find((uintptr_t)ip);
  if (!o || !o->table) {
    w->no_info = 1;
    return -UNW_ENOINFO;
  }
  unw_dyn_info_t di = {0};
  di.start_ip = o->text_start;
  di.end_ip = o->text_end;
  di.format = UNW_INFO_FORMAT_REMOTE_TABLE;
  di.u.rti.segbase = o->eh_frame_hdr;
  di.u.rti.table_data = o->table;
  di.u.rti.table_len = o->table_entries * 8 / sizeof(unw_word_t); /* entries of two int32 */
  int rc = UNW_OBJ(dwarf_search_unwind_table)(as, ip, &di, pi, need_unwind_info, arg);
  if (rc == -UNW_ENOINFO) w->no_info = 1;
  return rc;
}

static void put_unwind_info(unw_addr_space_t as, unw_proc_info_t *pi, void *arg) {
  (void)as, (void)pi, (void)arg; /* table-format info is released by libunwind itself */
}

static int get_dyn_info_list_addr(unw_addr_space_t as, unw_word_t *addr, void *arg) {
  (void)as, (void)addr, (void)arg;
  return -UNW_ENOINFO; /* no dynamically registered unwind info */
}

static int access_mem(unw_addr_space_t as, unw_word_t addr, unw_word_t *val, int write, void *arg) {
  (void)as;
  struct walk *w = arg;
  if (write) return -UNW_EREADONLYREG;
  uintptr_t a = (uintptr_t)addr;
  int ok = (a >= w->stack_lo && a + sizeof *val <= w->stack_hi && a + sizeof *val > a) ||
           objects_readable(a, sizeof *val, &w->last);
  if (!ok) {
    w->bad_read = 1;
    return -UNW_EINVAL;
  }
  *val = *(const volatile unw_word_t *)a;
  return 0;
}

static int access_reg(unw_addr_space_t as, unw_regnum_t reg, unw_word_t *val, int write,
                      void *arg) {
  (void)as;
  const struct walk *w = arg;
  uintptr_t v;
  if (write || plat_uc_dwarf_reg(w->uc, (int)reg, &v) != 0) return -UNW_EBADREG;
  *val = v;
  return 0;
}

static int access_fpreg(unw_addr_space_t as, unw_regnum_t reg, unw_fpreg_t *val, int write,
                        void *arg) {
  (void)as, (void)reg, (void)val, (void)write, (void)arg;
  return -UNW_EBADREG;
}

static int resume(unw_addr_space_t as, unw_cursor_t *c, void *arg) {
  (void)as, (void)c, (void)arg;
  return -UNW_EINVAL;
}

static int get_proc_name(unw_addr_space_t as, unw_word_t addr, char *buf, size_t len,
                         unw_word_t *off, void *arg) {
  (void)as, (void)addr, (void)buf, (void)len, (void)off, (void)arg;
  return -UNW_ENOINFO; /* names are found off the signal path (symbols.h) */
}

/* 1 when pc is in code the JVM generated (the interpreter, stubs, compiled methods). */
static int in_jvm_code(uintptr_t pc) {
  struct codemap_hit hit;
  return codemap_lookup(pc, &hit);
}

int native_walk(const ucontext_t *uc, uintptr_t stack_lo, uintptr_t stack_hi, uintptr_t *pcs,
                int max, int *stop) {
  uintptr_t sp = plat_uc_sp(uc), pc = plat_uc_pc(uc);
  struct walk w = {
      .uc = uc, .stack_lo = stack_lo > sp || !stack_lo ? sp : stack_lo, .stack_hi = stack_hi};
  if (!native_space) {
    *stop = NATIVE_STOP_OFF;
    return 0;
  }
  if (!stack_hi || stack_hi <= sp) w.stack_hi = (sp | 4095) + 1; /* unknown: the page of sp */
  int n = 0;
  if (in_jvm_code(pc)) {
    *stop = NATIVE_STOP_JAVA;
    return 0;
  }
  unw_cursor_t cursor;
  if (unw_init_remote(&cursor, native_space, &w) != 0) {
    *stop = NATIVE_STOP_ERROR;
    return 0;
  }
  for (;;) {
    if (n == max) {
      *stop = NATIVE_STOP_DEPTH;
      return n;
    }
    pcs[n++] = pc;
    int rc = unw_step(&cursor);
    if (rc <= 0) {
      *stop = rc == 0      ? NATIVE_STOP_END
              : w.bad_read ? NATIVE_STOP_BAD_READ
              : w.no_info  ? NATIVE_STOP_NO_INFO
                           : NATIVE_STOP_ERROR;
      return n;
    }
    unw_word_t next;
    if (unw_get_reg(&cursor, UNW_REG_IP, &next) != 0) {
      *stop = NATIVE_STOP_ERROR;
      return n;
    }
    pc = (uintptr_t)next;
    if (!pc) {
      *stop = NATIVE_STOP_END;
      return n;
    }
    if (in_jvm_code(pc)) {
      *stop = NATIVE_STOP_JAVA;
      return n;
    }
    if (!objects_find(pc)) {
      *stop = NATIVE_STOP_UNKNOWN;
      return n;
    }
  }
}

const unw_accessors_t native_accessors = {find_proc_info, put_unwind_info, get_dyn_info_list_addr,
                                          access_mem,     access_reg,      access_fpreg,
                                          resume,         get_proc_name};

const char *native_stop_name(int stop) {
  static const char *const names[NATIVE_STOPS] = {"[native: to Java]",
                                                  "[native: thread start]",
                                                  "[native: unknown pc]",
                                                  "[native: no unwind info]",
                                                  "[native: unreadable frame]",
                                                  "[native: too deep]",
                                                  "[native: unwinder error]",
                                                  "[native: off]",
                                                  "[native: fault]"};
  return stop >= 0 && stop < NATIVE_STOPS ? names[stop] : "[native: ?]";
}
