/*
 * native/native_walk_sig.c — SIGNAL PATH: the native stack walk (see native.h). First through the
 * unwind tables compiled off the signal path (cfi.h): two binary searches and two stack reads a
 * frame. When a frame needs more than those tables say, the whole stack is walked again with
 * libunwind's "remote" interface, pointed at this process: libunwind calls back for everything
 * it needs —
 * the unwind table of a pc (the loaded-objects snapshot: no dl_iterate_phdr, no loader lock),
 * each word of memory (checked: on the thread's stack or in a mapped segment of a loaded
 * object; anything else ends the walk instead of faulting), each register of the first frame
 * (the ucontext). Caching is off: libunwind's caches take locks or thread-local storage.
 * What libunwind (1.6) still does on this path: each step takes one object from its own pool
 * (mempool_alloc, for the frame's CIE information; more for DW_CFA_remember_state) and gives it
 * back before the step ends. The pool takes a mutex with every signal blocked (sigprocmask
 * around it), so the holder is never interrupted by a handler on its own thread — a handler
 * can only wait for another thread's few instructions — and an empty pool grows by mmap (a
 * system call, not malloc). A fault that cuts a libunwind walk leaves its object behind:
 * native_walk_cut() counts such cuts, and after NATIVE_CUT_LIMIT of them libunwind is no
 * longer used (the compiled tables still are), which bounds what is left behind.
 */
#include "native.h"

#include <errno.h>
#include <libunwind.h>
#include <stdatomic.h>

#include "cfi.h"
#include "objects.h"
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
  const struct object *obj;   /* the object of the last pc looked up (callers are often in
                                 the same one: libjvm) */
};

unw_addr_space_t native_space; /* created by native_init (native.c) */

/* Walks a fault cut (the handler says so: native_walk_cut). */
static _Atomic uint64_t cut_walks;

void native_walk_cut(void) { atomic_fetch_add_explicit(&cut_walks, 1, memory_order_relaxed); }

uint64_t native_walks_cut(void) { return atomic_load_explicit(&cut_walks, memory_order_relaxed); }

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

_Static_assert(NATIVE_MEMO_SLOTS == 64, "the memo's slot is the top 6 bits of a hash");

/* The loaded object whose code holds pc, or NULL; the last one found is tried first. */
static const struct object *object_of(struct walk *w, uintptr_t pc) {
  if (w->obj && pc >= w->obj->text_start && pc < w->obj->text_end) return w->obj;
  const struct object *o = objects_find(pc);
  if (o) w->obj = o;
  return o;
}

/* 1 when the walk ends at pc (no caller, or a pc in no loaded object: the JVM's code or
 * unknown, told apart later), with *end said. */
static int ends_at(struct walk *w, uintptr_t pc, struct native_end *end) {
  if (!pc) {
    end->stop = NATIVE_STOP_END;
    return 1;
  }
  if (object_of(w, pc)) return 0;
  end->stop = NATIVE_STOP_UNKNOWN;
  end->pc = pc;
  return 1;
}

/* The stack's bounds for the walk's reads: [sp, stack_hi), or the page of sp when the thread's
 * stack is unknown. */
static void stack_bounds(struct walk *w, uintptr_t sp, uintptr_t stack_lo, uintptr_t stack_hi) {
  w->stack_lo = stack_lo > sp || !stack_lo ? sp : stack_lo;
  w->stack_hi = !stack_hi || stack_hi <= sp ? (sp | 4095) + 1 : stack_hi;
}

/* The walk through libunwind, from the interrupted context: every frame's unwind information
 * found, parsed and run afresh (see native.h). */
int native_walk_general(const ucontext_t *uc, uintptr_t stack_lo, uintptr_t stack_hi,
                        uintptr_t *pcs, int max, struct native_end *end) {
  uintptr_t sp = plat_uc_sp(uc), pc = plat_uc_pc(uc);
  struct walk w = {.uc = uc};
  *end = (struct native_end){.general = 1};
  if (!native_space) {
    end->stop = NATIVE_STOP_OFF;
    return 0;
  }
  stack_bounds(&w, sp, stack_lo, stack_hi);
  int n = 0;
  if (ends_at(&w, pc, end)) return 0;
  unw_cursor_t cursor;
  if (unw_init_remote(&cursor, native_space, &w) != 0) {
    end->stop = NATIVE_STOP_ERROR;
    return 0;
  }
  for (;;) {
    if (n == max) {
      end->stop = NATIVE_STOP_DEPTH;
      return n;
    }
    pcs[n++] = pc;
    int rc = unw_step(&cursor);
    if (rc <= 0) {
      end->stop = rc == 0      ? NATIVE_STOP_END
                  : w.bad_read ? NATIVE_STOP_BAD_READ
                  : w.no_info  ? NATIVE_STOP_NO_INFO
                               : NATIVE_STOP_ERROR;
      return n;
    }
    unw_word_t next;
    if (unw_get_reg(&cursor, UNW_REG_IP, &next) != 0) {
      end->stop = NATIVE_STOP_ERROR;
      return n;
    }
    pc = (uintptr_t)next;
    if (ends_at(&w, pc, end)) {
      unw_word_t rsp, rfp;
      if (end->pc && unw_get_reg(&cursor, UNW_REG_SP, &rsp) == 0 &&
          unw_get_reg(&cursor, plat_dwarf_fp, &rfp) == 0) {
        end->sp = (uintptr_t)rsp;
        end->fp = (uintptr_t)rfp;
      }
      return n;
    }
  }
}

/* One word of the thread's stack at a, or 0 when a is not on it. */
static int stack_word(const struct walk *w, uintptr_t a, uintptr_t *val) {
  if (a < w->stack_lo || a + sizeof *val > w->stack_hi || a + sizeof *val < a) return 0;
  *val = *(const volatile uintptr_t *)a;
  return 1;
}

/* The walk through the compiled unwind tables (cfi.h). Returns the number of frames with how
 * it ended in *end, or -1 when a frame needs libunwind (no table or row for its pc, a row that
 * says "general", a saved value that is not where the row says): the caller then walks the
 * whole stack with libunwind, so both walks give the same frames. */
static int fast_walk(const ucontext_t *uc, struct walk *w, uintptr_t *pcs, int max,
                     struct native_memo *memo, struct native_end *end) {
  uintptr_t pc = plat_uc_pc(uc), sp = plat_uc_sp(uc), fp;
  if (plat_uc_dwarf_reg(uc, plat_dwarf_fp, &fp) != 0) return -1;
  for (int n = 0;;) {
    if (n == max) {
      end->stop = NATIVE_STOP_DEPTH;
      return n;
    }
    pcs[n++] = pc;
    const struct object *o = object_of(w, pc);
    if (!o || !o->cfi) return -1;
    /* a caller's pc is a return address: the call is the instruction before it */
    uintptr_t at = n > 1 ? pc - 1 : pc;
    size_t slot = (size_t)((at * 0x9e3779b97f4a7c15ull) >> 58); /* of NATIVE_MEMO_SLOTS */
    const struct cfi_rule *row;
    if (memo && memo->f[slot].pc == at) {
      row = &memo->f[slot].rule;
    } else {
      row = cfi_find(o->cfi, at - o->text_start);
      if (!row) return -1;
      if (memo) { /* the pc last: a fault in between leaves the slot empty, not wrong */
        memo->f[slot].pc = 0;
        memo->f[slot].rule = *row;
        memo->f[slot].pc = at;
      }
    }
    enum cfi_cfa kind = cfi_rule_cfa(row);
    if (kind != CFI_CFA_SP && kind != CFI_CFA_FP) return -1;
    uintptr_t cfa = (kind == CFI_CFA_SP ? sp : fp) + (uintptr_t)(intptr_t)cfi_rule_cfa_offset(row);
    if (cfa < sp) return -1; /* the stack grows down: a caller's frame is above */
    uintptr_t ra;
    if (row->ra == CFI_UNDEFINED) {
      end->stop = NATIVE_STOP_END; /* the thread's first frame */
      return n;
    }
    if (row->ra == CFI_SAME) { /* still in its register: only in the interrupted frame */
      if (n > 1 || plat_uc_dwarf_reg(uc, o->cfi->ra_column, &ra) != 0) return -1;
    } else if (!stack_word(w, cfa + (uintptr_t)(intptr_t)row->ra, &ra)) {
      return -1;
    }
    if (row->fp == CFI_UNDEFINED)
      fp = 0;
    else if (row->fp != CFI_SAME && !stack_word(w, cfa + (uintptr_t)(intptr_t)row->fp, &fp))
      return -1;
    sp = cfa;
    pc = ra;
    if (ends_at(w, pc, end)) {
      end->sp = sp;
      end->fp = fp;
      return n;
    }
  }
}

int native_walk(const ucontext_t *uc, uintptr_t stack_lo, uintptr_t stack_hi, uintptr_t *pcs,
                int max, struct native_memo *memo, struct native_end *end) {
  *end = (struct native_end){0};
  if (!native_space) {
    end->stop = NATIVE_STOP_OFF;
    return 0;
  }
  struct walk w = {.uc = uc};
  if (ends_at(&w, plat_uc_pc(uc), end)) return 0;
  stack_bounds(&w, plat_uc_sp(uc), stack_lo, stack_hi);
  /* The frames' reads depend on each other (a frame's rule on its caller's return address);
   * in a thread whose caches are cold each would wait for memory in turn. Fetching the memo and
   * the stack's first lines ahead lets those waits overlap. Prefetches do not fault. */
  if (memo)
    for (size_t i = 0; i < sizeof memo->f; i += 64) __builtin_prefetch((const char *)memo->f + i);
  uintptr_t sp = plat_uc_sp(uc);
  for (uintptr_t a = sp & ~(uintptr_t)63; a < w.stack_hi && a < sp + 2048; a += 64)
    __builtin_prefetch((const void *)a);
  uint64_t generation = objects_generation();
  if (memo && memo->generation != generation) { /* objects came or went: rules may differ */
    for (int k = 0; k < NATIVE_MEMO_SLOTS; k++) memo->f[k].pc = 0;
    memo->generation = generation;
  }
  int n = fast_walk(uc, &w, pcs, max, memo, end);
  if (n >= 0) return n;
  if (native_walks_cut() >= NATIVE_CUT_LIMIT) { /* libunwind no more: see the top */
    *end = (struct native_end){.stop = NATIVE_STOP_NO_INFO};
    return 0;
  }
  return native_walk_general(uc, stack_lo, stack_hi, pcs, max, end);
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
