/*
 * test_symbols.c — names for native PCs (symbols.h) against objects whose right answer is known:
 * the test library built here (symlib/: with its symbol tables, stripped, with separate debug
 * files found by build-id and by .gnu_debuglink), unloading and reloading it, libc, the test
 * executable itself (also built as a non-PIE ET_EXEC executable), and a table of demangled
 * names. Criterion runs every test in a process of its own, so each starts with a fresh module.
 *
 * SYMBOLS_BENCH=1 prints what reading a symbol table (libc, libstdc++, libjvm) and a warm
 * lookup cost.
 */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "symbols.h"
#include "symlib.h"

#define LIB(name) SYMLIB_DIR "/" name

struct lib {
  void *handle;
  struct symlib_table t;
  uintptr_t base; /* dladdr's dli_fbase */
};

static struct lib lib_open(const char *path) {
  struct lib l = {.handle = dlopen(path, RTLD_NOW | RTLD_LOCAL)};
  cr_assert_not_null(l.handle, "dlopen %s: %s", path, dlerror());
  symlib_get_table_fn get = (symlib_get_table_fn)dlsym(l.handle, "symlib_get_table");
  cr_assert_not_null(get);
  get(&l.t);
  Dl_info info;
  cr_assert(dladdr((void *)l.t.get_table, &info));
  l.base = (uintptr_t)info.dli_fbase;
  return l;
}

/* symbols_name(pc) must be `want` with return code rc. */
static void expect_name(uintptr_t pc, const char *want, int rc, const char *what) {
  char buf[256];
  int got = symbols_name(pc, buf, sizeof buf);
  cr_expect_eq(got, rc, "%s: rc %d, want %d (name \"%s\")", what, got, rc, buf);
  cr_expect_str_eq(buf, want, "%s: \"%s\", want \"%s\"", what, buf, want);
}

static void expect_fallback(const struct lib *l, const char *base, uintptr_t pc, const char *what) {
  char want[128];
  snprintf(want, sizeof want, "[%s+0x%" PRIxPTR "]", base, pc - l->base);
  expect_name(pc, want, 0, what);
}

/* ---- the test library with its symbols ---- */

Test(symbols, functions_of_a_library_are_named) {
  struct lib l = lib_open(LIB("libsymlib.so"));
  struct {
    uintptr_t pc;
    const char *name;
  } cases[] = {
      {l.t.leaf, "symlib_leaf"},
      {l.t.leaf + 10, "symlib_leaf"},
      {l.t.middle, "symlib_middle"},
      {l.t.middle + 10, "symlib_middle"},
      {l.t.java_time_nanos, "os::javaTimeNanos"},
      {l.t.java_time_nanos + 10, "os::javaTimeNanos"},
      {l.t.alias + 10, "symlib_alias"},
      {l.t.get_table, "symlib_get_table"},
      {l.t.get_table + 10, "symlib_get_table"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    char what[64];
    snprintf(what, sizeof what, "case %zu", i);
    expect_name(cases[i].pc, cases[i].name, 0, what);
  }
}

Test(symbols, a_size0_symbol_covers_the_code_after_it) {
  struct lib l = lib_open(LIB("libsymlib.so"));
  expect_name(l.t.nosize, "symlib_nosize", 0, "at its start");
  expect_name(l.t.nosize + 20, "symlib_nosize", 0, "20 bytes in");
}

Test(symbols, code_no_symbol_covers_is_named_by_object_and_offset) {
  struct lib l = lib_open(LIB("libsymlib.so"));
  expect_fallback(&l, "libsymlib.so", l.t.gap, "gap start");
  expect_fallback(&l, "libsymlib.so", l.t.gap + 63, "gap end");
  struct symbols_stats st;
  symbols_stats(&st);
  cr_expect_eq(st.miss_symbol, 2);
  cr_expect_eq(st.debug_files, 0, "the library has its own .symtab: no debug file looked for");
}

/* ---- stripped, and its debug files ---- */

Test(symbols, a_stripped_library_falls_back_to_offsets) {
  struct lib l = lib_open(LIB("libsymlib-stripped.so"));
  expect_fallback(&l, "libsymlib-stripped.so", l.t.leaf, "leaf");
  expect_fallback(&l, "libsymlib-stripped.so", l.t.leaf + 10, "leaf+10");
  expect_fallback(&l, "libsymlib-stripped.so", l.t.middle, "middle");
  expect_fallback(&l, "libsymlib-stripped.so", l.t.java_time_nanos, "javaTimeNanos");
  expect_fallback(&l, "libsymlib-stripped.so", l.t.nosize + 20, "nosize+20");
  expect_fallback(&l, "libsymlib-stripped.so", l.t.gap, "gap");
  expect_name(l.t.get_table, "symlib_get_table", 0, "the exported function, from .dynsym");
}

/* The build-id of the loaded object that contains pc, in hex. */
struct find_id {
  uintptr_t pc;
  char hex[2 * 64 + 1];
};

static int find_id_cb(struct dl_phdr_info *info, size_t size, void *arg) {
  (void)size;
  struct find_id *f = arg;
  int mine = 0;
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
    if (ph->p_type == PT_LOAD && f->pc >= lo && f->pc < lo + ph->p_memsz) mine = 1;
  }
  if (!mine) return 0;
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type != PT_NOTE) continue;
    const unsigned char *p = (const unsigned char *)(info->dlpi_addr + ph->p_vaddr);
    size_t off = 0, align = ph->p_align == 8 ? 8 : 4;
    while (off + sizeof(ElfW(Nhdr)) <= ph->p_memsz) {
      ElfW(Nhdr) nh;
      memcpy(&nh, p + off, sizeof nh);
      size_t desc = off + sizeof nh + ((nh.n_namesz + align - 1) & ~(align - 1));
      if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
          memcmp(p + off + sizeof nh, "GNU", 4) == 0) {
        for (size_t k = 0; k < nh.n_descsz && k < 64; k++)
          sprintf(f->hex + 2 * k, "%02x", p[desc + k]);
        return 1;
      }
      off = desc + ((nh.n_descsz + align - 1) & ~(align - 1));
    }
  }
  return 1;
}

static char tmp_root[64];

static void rm_tmp_root(void) {
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp_root);
  cr_expect_eq(system(cmd), 0);
}

static void make_tmp_root(void) {
  strcpy(tmp_root, "/tmp/test_symbols.XXXXXX");
  cr_assert_not_null(mkdtemp(tmp_root));
}

Test(symbols, a_stripped_library_is_named_from_its_debug_file_by_build_id, .fini = rm_tmp_root) {
  struct lib l = lib_open(LIB("libsymlib-stripped.so"));
  struct find_id f = {.pc = l.t.leaf};
  dl_iterate_phdr(find_id_cb, &f);
  cr_assert(strlen(f.hex) >= 4, "libsymlib-stripped.so has a build-id");
  make_tmp_root();
  char dir[256], file[512];
  snprintf(dir, sizeof dir, "%s/.build-id/%.2s", tmp_root, f.hex);
  snprintf(file, sizeof file, "%s/%s.debug", dir, f.hex + 2);
  char mk[300];
  snprintf(mk, sizeof mk, "mkdir -p '%s'", dir);
  cr_assert_eq(system(mk), 0);
  cr_assert_eq(symlink(LIB("symlib.debug"), file), 0);
  cr_assert_eq(symbols_set_debug_root(tmp_root), 0);

  expect_name(l.t.leaf + 10, "symlib_leaf", 0, "leaf");
  expect_name(l.t.java_time_nanos, "os::javaTimeNanos", 0, "javaTimeNanos");
  expect_name(l.t.nosize + 20, "symlib_nosize", 0, "nosize");
  expect_fallback(&l, "libsymlib-stripped.so", l.t.gap, "gap");
  struct symbols_stats st;
  symbols_stats(&st);
  cr_expect_eq(st.debug_files, 1);
}

Test(symbols, a_debug_file_of_another_build_is_not_used, .fini = rm_tmp_root) {
  /* At the path libsymlib-stripped.so's build-id names: a file with another build-id (the test
   * executable, whose .symtab would name the library's addresses wrongly). */
  struct lib l = lib_open(LIB("libsymlib-stripped.so"));
  struct find_id f = {.pc = l.t.leaf};
  dl_iterate_phdr(find_id_cb, &f);
  cr_assert(strlen(f.hex) >= 4, "libsymlib-stripped.so has a build-id");
  make_tmp_root();
  char dir[256], file[512], exe[512], mk[300];
  snprintf(dir, sizeof dir, "%s/.build-id/%.2s", tmp_root, f.hex);
  snprintf(file, sizeof file, "%s/%s.debug", dir, f.hex + 2);
  snprintf(mk, sizeof mk, "mkdir -p '%s'", dir);
  cr_assert_eq(system(mk), 0);
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  cr_assert_gt(n, 0);
  exe[n] = '\0';
  cr_assert_eq(symlink(exe, file), 0);
  cr_assert_eq(symbols_set_debug_root(tmp_root), 0);
  expect_fallback(&l, "libsymlib-stripped.so", l.t.leaf, "leaf");
  struct symbols_stats st;
  symbols_stats(&st);
  cr_expect_eq(st.debug_files, 0);
}

Test(symbols, a_stripped_library_is_named_from_its_debug_file_by_debuglink) {
  struct lib l = lib_open(LIB("libsymlib-dbglink.so"));
  expect_name(l.t.leaf, "symlib_leaf", 0, "leaf");
  expect_name(l.t.middle + 10, "symlib_middle", 0, "middle");
  expect_name(l.t.java_time_nanos, "os::javaTimeNanos", 0, "javaTimeNanos");
  struct symbols_stats st;
  symbols_stats(&st);
  cr_expect_eq(st.debug_files, 1);
}

static void copy_file(const char *from, const char *to) {
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "cp '%s' '%s'", from, to);
  cr_assert_eq(system(cmd), 0, "%s", cmd);
}

Test(symbols, a_debuglink_with_the_wrong_crc_is_not_used, .fini = rm_tmp_root) {
  /* The library without build-id beside a debug file of the right name but other contents. */
  make_tmp_root();
  char so[256], dbgdir[256], dbg[300];
  snprintf(so, sizeof so, "%s/libsymlib-dbglink.so", tmp_root);
  snprintf(dbgdir, sizeof dbgdir, "%s/.debug", tmp_root);
  snprintf(dbg, sizeof dbg, "%s/libsymlib-dbglink.debug", dbgdir);
  copy_file(LIB("libsymlib-dbglink.so"), so);
  cr_assert_eq(mkdir(dbgdir, 0700), 0);
  copy_file(LIB("symlib.debug"), dbg);
  struct lib l = lib_open(so);
  expect_fallback(&l, "libsymlib-dbglink.so", l.t.leaf, "leaf");
  struct symbols_stats st;
  symbols_stats(&st);
  cr_expect_eq(st.debug_files, 0);
}

/* ---- unloading ---- */

Test(symbols, an_unloaded_library_is_dropped_by_refresh) {
  struct lib l = lib_open(LIB("libsymlib.so"));
  expect_name(l.t.leaf, "symlib_leaf", 0, "loaded");
  struct symbols_stats before, after;
  symbols_stats(&before);
  cr_assert_eq(dlclose(l.handle), 0);
  Dl_info info;
  cr_assert_eq(dladdr((void *)l.t.leaf, &info), 0, "libsymlib.so is still mapped after dlclose");
  cr_assert_eq(symbols_refresh(), 0);
  symbols_stats(&after);
  cr_expect_eq(after.objects, before.objects - 1);
  cr_expect_lt(after.symbols, before.symbols, "the library's symbols are freed");
  cr_expect_lt(after.bytes, before.bytes);
  cr_expect_eq(after.refreshes, before.refreshes + 1);
  expect_name(l.t.leaf, "[unknown native]", -ENOENT, "unloaded");
  cr_assert_eq(symbols_refresh(), 0);
  symbols_stats(&after);
  cr_expect_eq(after.refreshes, before.refreshes + 1, "nothing changed: no rebuild");
}

Test(symbols, no_stale_name_for_another_library_at_the_same_address) {
  /* No lookup between the dlclose and the next dlopen: the module sees both changes at once. */
  struct lib l = lib_open(LIB("libsymlib.so"));
  expect_name(l.t.leaf, "symlib_leaf", 0, "loaded");
  cr_assert_eq(dlclose(l.handle), 0);
  /* Another library of the same layout: the loader puts it in the hole the first one left. */
  struct lib s = lib_open(LIB("libsymlib-stripped.so"));
  cr_assert_eq(s.base, l.base,
               "the stripped library loaded at %#" PRIxPTR ", not %#" PRIxPTR
               ": the case this test is about did not happen",
               s.base, l.base);
  expect_fallback(&s, "libsymlib-stripped.so", l.t.leaf, "same address, other library");
  cr_assert_eq(dlclose(s.handle), 0);
  expect_name(l.t.leaf, "[unknown native]", -ENOENT, "both unloaded");
}

/* ---- libc, the executable, no object ---- */

Test(symbols, libc_functions_are_named) {
  uintptr_t pc = (uintptr_t)dlsym(RTLD_DEFAULT, "getpid");
  cr_assert(pc);
  char buf[256];
  for (int off = 0; off <= 2; off += 2) {
    cr_expect_eq(symbols_name(pc + (uintptr_t)off, buf, sizeof buf), 0);
    cr_expect(strcmp(buf, "getpid") == 0 || strcmp(buf, "__getpid") == 0, "getpid+%d: \"%s\"", off,
              buf);
  }
}

/* Static and not inlined: only the executable's .symtab names it. */
__attribute__((noinline)) static int test_symbols_own_function(int n) {
  volatile int s = 0;
  for (int i = 0; i < n; i++) s += i;
  return s;
}

Test(symbols, the_executables_own_functions_are_named) {
  cr_assert_eq(test_symbols_own_function(3), 3);
  expect_name((uintptr_t)test_symbols_own_function, "test_symbols_own_function", 0,
              "static function");
  expect_name((uintptr_t)test_symbols_own_function + 4, "test_symbols_own_function", 0,
              "static function+4");
}

/* The vDSO has no file: its symbols are read from its image in memory. Every address its
 * .dynsym covers (dladdr1 gives the symbol and its size) is named, by that symbol or an alias
 * ("clock_gettime" for "__vdso_clock_gettime"). */
Test(symbols, the_vdso_is_named_from_memory) {
  uintptr_t base = (uintptr_t)getauxval(AT_SYSINFO_EHDR);
  if (!base) cr_skip_test("no vDSO");
  const ElfW(Ehdr) *eh = (const ElfW(Ehdr) *)base;
  const ElfW(Phdr) *ph = (const ElfW(Phdr) *)(base + eh->e_phoff);
  uintptr_t bias = 0, lo = 0, hi = 0;
  for (int i = 0; i < eh->e_phnum; i++)
    if (ph[i].p_type == PT_LOAD) bias = base - (ph[i].p_vaddr & ~(uintptr_t)4095);
  for (int i = 0; i < eh->e_phnum; i++)
    if (ph[i].p_type == PT_LOAD && (ph[i].p_flags & PF_X))
      lo = bias + ph[i].p_vaddr, hi = lo + ph[i].p_memsz;
  cr_assert_lt(lo, hi);
  int named = 0;
  for (uintptr_t pc = lo; pc < hi; pc += 4) {
    Dl_info info;
    const ElfW(Sym) *sym = NULL;
    if (!dladdr1((void *)pc, &info, (void **)&sym, RTLD_DL_SYMENT) || !sym || !info.dli_sname ||
        pc >= (uintptr_t)info.dli_saddr + sym->st_size || ELF64_ST_TYPE(sym->st_info) != STT_FUNC)
      continue;
    char buf[256];
    cr_assert_eq(symbols_name(pc, buf, sizeof buf), 0);
    cr_assert(buf[0] && (strstr(info.dli_sname, buf) || strstr(buf, info.dli_sname)),
              "%#" PRIxPTR ": \"%s\", dladdr says %s", pc, buf, info.dli_sname);
    named++;
  }
  cr_expect_gt(named, 0, "no vDSO function found by dladdr1");
  cr_log_info("%d vDSO addresses named", named);
}

Test(symbols, addresses_in_no_object_are_unknown) {
  int on_stack = 0;
  void *on_heap = malloc(16);
  uintptr_t pcs[] = {0, 16, (uintptr_t)&on_stack, (uintptr_t)on_heap, UINTPTR_MAX};
  for (size_t i = 0; i < sizeof pcs / sizeof *pcs; i++)
    expect_name(pcs[i], "[unknown native]", -ENOENT, "no object");
  free(on_heap);
  struct symbols_stats st;
  symbols_stats(&st);
  cr_expect_eq(st.lookups, 5);
  cr_expect_eq(st.miss_object, 5);
}

Test(symbols, a_name_that_does_not_fit_is_cut) {
  struct lib l = lib_open(LIB("libsymlib.so"));
  char buf[8];
  cr_expect_eq(symbols_name(l.t.java_time_nanos, buf, sizeof buf), -ENOSPC);
  cr_expect_str_eq(buf, "os::jav");
  cr_expect_eq(symbols_name(l.t.leaf, buf, 0), -EINVAL);
  cr_expect_eq(symbols_name(l.t.leaf, NULL, 8), -EINVAL);
}

Test(symbols, stats_count_what_was_read) {
  struct lib l = lib_open(LIB("libsymlib.so"));
  expect_name(l.t.leaf, "symlib_leaf", 0, "leaf");
  expect_name(l.t.middle, "symlib_middle", 0, "middle");
  struct symbols_stats st;
  symbols_stats(&st);
  cr_expect_eq(st.lookups, 2);
  cr_expect_eq(st.objects_read, 1, "only the library's table was read");
  cr_expect_geq(st.symbols, 5);
  cr_expect_gt(st.objects, 3);
  cr_expect_gt(st.bytes, 0);
  cr_expect_eq(st.read_failed, 0);
  symbols_fini();
  symbols_stats(&st);
  cr_expect_eq(st.objects, 0);
  cr_expect_eq(st.bytes, 0);
  expect_name(l.t.leaf, "symlib_leaf", 0, "after fini");
}

/* ---- threads ---- */

struct worker {
  const struct lib *l;
  int bad;
};

static void *name_many(void *arg) {
  struct worker *w = arg;
  char buf[64];
  for (int i = 0; i < 2000; i++) {
    uintptr_t pc = i % 2 ? w->l->t.leaf + (uintptr_t)(i % 7) : w->l->t.java_time_nanos;
    const char *want = i % 2 ? "symlib_leaf" : "os::javaTimeNanos";
    if (symbols_name(pc, buf, sizeof buf) != 0 || strcmp(buf, want) != 0) w->bad++;
  }
  return NULL;
}

Test(symbols, concurrent_lookups) {
  struct lib l = lib_open(LIB("libsymlib.so"));
  pthread_t th[4];
  struct worker w[4];
  for (int i = 0; i < 4; i++) {
    w[i] = (struct worker){&l, 0};
    cr_assert_eq(pthread_create(&th[i], NULL, name_many, &w[i]), 0);
  }
  for (int i = 0; i < 4; i++) {
    pthread_join(th[i], NULL);
    cr_expect_eq(w[i].bad, 0, "thread %d", i);
  }
}

/* ---- demangling ---- */

Test(symbols, demangled_names_read_like_flame_graphs_show_them) {
  struct {
    const char *raw, *want;
  } cases[] = {
      {"_ZN2os13javaTimeNanosEv", "os::javaTimeNanos"},
      {"_ZN20G1ParScanThreadState10trim_queueEv", "G1ParScanThreadState::trim_queue"},
      {"_ZNK6Method4nameEv", "Method::name"},           /* "() const" */
      {"_Z3maxIiET_S0_S0_", "max<int>"},                /* "int max<int>(int, int)" */
      {"_Z4makeIiESt6vectorIT_SaIS1_EEv", "make<int>"}, /* return type with spaces */
      {"_ZN5ArrayIiE3getEi", "Array<int>::get"},        /* template arguments kept */
      {"_ZN3FooclEv", "Foo::operator()"},
      {"_ZNSt8functionIFviEEclEi", "std::function<void (int)>::operator()"},
      {"_ZN3FooltERKS_", "Foo::operator<"},
      {"_ZN3FoolsEi", "Foo::operator<<"},
      {"_ZltI3FooEbRKT_S3_", "operator< <Foo>"}, /* "bool operator< <Foo>(...)" */
      {"_ZlsI3FooERSoS1_RKT_", "operator<< <Foo>"},
      {"_ZN3FoocviEv", "Foo::operator int"},
      {"_ZN12_GLOBAL__N_13fooEv", "(anonymous namespace)::foo"},
      {"_ZN2os13javaTimeNanosEv.cold", "os::javaTimeNanos"}, /* "() [clone .cold]" */
      {"_ZZ4mainENKUlvE_clEv", "main::{lambda()#1}::operator()"},
      {"_ZThn8_N3Foo3barEv", "non-virtual thunk to Foo::bar"},
      {"_ZN7Foo_barB5cxx11Ev", "Foo_bar[abi:cxx11]"},
      {"deflate", "deflate"},
      {"inflate_fast", "inflate_fast"},
      {"_Zfoo", "_Zfoo"}, /* not a valid mangled name */
      {"_Z", "_Z"},
      {"", ""},
      {"a;b\nc\x7f", "a:b?c?"},                   /* flame graph separators */
      {"f\xFF\xC3", "f\xEF\xBF\xBD\xEF\xBF\xBD"}, /* not UTF-8: U+FFFD, nothing dropped */
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    char buf[256];
    cr_expect_eq(symbols_demangle(cases[i].raw, buf, sizeof buf), 0, "case %zu", i);
    cr_expect_str_eq(buf, cases[i].want, "case %zu: %s -> \"%s\", want \"%s\"", i, cases[i].raw,
                     buf, cases[i].want);
  }
  struct symbols_stats st;
  symbols_stats(&st);
  cr_expect_eq(st.demangler, 1, "__cxa_demangle found");
}

Test(symbols, demangled_names_are_cut_on_character_boundaries) {
  char buf[5];
  cr_expect_eq(symbols_demangle("deflate", buf, sizeof buf), -ENOSPC);
  cr_expect_str_eq(buf, "defl");
  cr_expect_eq(symbols_demangle("abc\xc3\xa9", buf, sizeof buf), -ENOSPC);
  cr_expect_str_eq(buf, "abc", "not half of the 2-byte character");
  cr_expect_eq(symbols_demangle("ab\xc3\xa9", buf, sizeof buf), 0);
  cr_expect_str_eq(buf, "ab\xc3\xa9");
  cr_expect_eq(symbols_demangle("x", buf, 0), -EINVAL);
  cr_expect_eq(symbols_demangle(NULL, buf, sizeof buf), -EINVAL);
}

Test(symbols, debug_root_must_be_absolute) {
  cr_expect_eq(symbols_set_debug_root("relative/dir"), -EINVAL);
  cr_expect_eq(symbols_set_debug_root(NULL), -EINVAL);
  cr_expect_eq(symbols_set_debug_root("/usr/lib/debug/"), 0);
}

/* ---- costs (SYMBOLS_BENCH=1) ---- */

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The first lookup in the object that holds pc (list rebuilt, table read), best of 5. */
static void bench_cold(const char *what, uintptr_t pc) {
  char buf[256];
  uint64_t best = UINT64_MAX, best_read = 0;
  struct symbols_stats st;
  for (int r = 0; r < 5; r++) {
    symbols_fini();
    symbols_refresh();
    uint64_t t0 = now_ns();
    int rc = symbols_name(pc, buf, sizeof buf);
    uint64_t dt = now_ns() - t0;
    cr_assert_eq(rc, 0, "%s: %s", what, buf);
    symbols_stats(&st);
    if (dt < best) best = dt, best_read = st.read_ns;
  }
  printf("cold  %-10s %8.2f ms (reading %.2f ms)  %7" PRIu64
         " symbols, %6.2f MB, debug files %" PRIu64 "  e.g. %s\n",
         what, best / 1e6, best_read / 1e6, st.symbols, st.bytes / 1048576.0, st.debug_files, buf);
}

Test(symbols_bench, costs, .timeout = 120) {
  if (!getenv("SYMBOLS_BENCH")) cr_skip_test("SYMBOLS_BENCH not set");
  void *cxx = dlopen("libstdc++.so.6", RTLD_NOW);
  void *jvm = dlopen(SYMBOLS_LIBJVM, RTLD_LAZY);
  cr_assert_not_null(cxx);
  uintptr_t libc_pc = (uintptr_t)dlsym(RTLD_DEFAULT, "getpid");
  uintptr_t cxx_pc = (uintptr_t)dlsym(cxx, "_ZNSt6localeC1Ev");
  uintptr_t jvm_pc = jvm ? (uintptr_t)dlsym(jvm, "JNI_CreateJavaVM") : 0;
  bench_cold("libc", libc_pc);
  bench_cold("libstdc++", cxx_pc);
  if (jvm_pc)
    bench_cold("libjvm", jvm_pc);
  else
    printf("libjvm: %s\n", dlerror());

  uintptr_t pcs[] = {libc_pc, cxx_pc + 8, jvm_pc ? jvm_pc + 16 : libc_pc + 2,
                     (uintptr_t)test_symbols_own_function};
  char buf[256];
  for (size_t i = 0; i < 4; i++) symbols_name(pcs[i], buf, sizeof buf);
  enum { N = 1000000 };
  uint64_t t0 = now_ns();
  for (int i = 0; i < N; i++) symbols_name(pcs[i & 3], buf, sizeof buf);
  uint64_t dt = now_ns() - t0;
  printf("warm  symbols_name %.1f ns/call (4 pcs in 4 objects, %d calls)\n", (double)dt / N, N);
  t0 = now_ns();
  for (int i = 0; i < N; i++) symbols_refresh();
  printf("idle  symbols_refresh %.1f ns/call\n", (double)(now_ns() - t0) / N);
  struct symbols_stats st;
  symbols_stats(&st);
  printf("held  %" PRIu64 " objects, %" PRIu64 " read, %" PRIu64 " symbols, %.2f MB\n", st.objects,
         st.objects_read, st.symbols, st.bytes / 1048576.0);
}
