/*
 * test_objects.c — the list of loaded objects (sampler/native/objects.h) as its readers off the
 * signal path see it (objects_sync, objects_each: symbols.c names PCs from it): every object
 * with executable code, its name, image and build-id as the loader and the file say, a new
 * generation when a library is loaded or unloaded and none when nothing changed. The native
 * walk's side of the same list (objects_find, the unwind tables) is test_native's. Criterion
 * runs every test in a process of its own, so each starts with a fresh module.
 */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <stdint.h>
#include <string.h>
#include <sys/auxv.h>

#include "objects.h"
#include "symlib.h"

#define LIB(name) SYMLIB_DIR "/" name

/* What the test looks for in the list. */
struct find {
  const char *suffix; /* of the object's name; NULL: look at the program and the vDSO */
  uintptr_t pc;       /* a pc of it */
  int found, programs, vdsos, count;
  struct object o; /* the one found (its name is not kept) */
};

static int look(void *ctx, const struct object *o) {
  struct find *f = ctx;
  f->count++;
  f->programs += o->program;
  f->vdsos += o->vdso;
  size_t n = strlen(o->name), m = f->suffix ? strlen(f->suffix) : 0;
  if (f->suffix && n >= m && strcmp(o->name + n - m, f->suffix) == 0) {
    f->found++;
    f->o = *o;
  }
  return 0;
}

static uint64_t list(struct find *f) {
  uint64_t generation = 0;
  cr_assert_eq(objects_each(&generation, look, f), 0);
  return generation;
}

Test(objects, a_loaded_library_is_listed_with_its_name_image_and_build_id) {
  uint64_t g0;
  cr_assert_geq(objects_sync(&g0), 0);
  cr_assert_gt(g0, 0, "a first snapshot");
  void *h = dlopen(LIB("libsymlib.so"), RTLD_NOW | RTLD_LOCAL);
  cr_assert_not_null(h, "%s", dlerror());
  symlib_get_table_fn get = (symlib_get_table_fn)dlsym(h, "symlib_get_table");
  struct symlib_table t;
  get(&t);
  uint64_t g1;
  cr_expect_eq(objects_sync(&g1), 1, "the load is noticed");
  cr_expect_gt(g1, g0);
  struct find f = {.suffix = "/libsymlib.so"};
  cr_expect_eq(list(&f), g1);
  cr_assert_eq(f.found, 1);
  cr_expect_eq(f.programs, 1, "one program");
  cr_expect_eq(f.vdsos, getauxval(AT_SYSINFO_EHDR) ? 1 : 0, "the vDSO when the kernel maps one");
  Dl_info info;
  cr_assert(dladdr((void *)t.leaf, &info));
  cr_expect_eq(f.o.map_base, (uintptr_t)info.dli_fbase, "the image starts where dladdr says");
  cr_expect(f.o.text_start <= t.leaf && t.leaf < f.o.text_end);
  cr_expect(f.o.map_base + f.o.map_size >= f.o.text_end);
  cr_expect_eq(f.o.program, 0);
  /* the build-id the linker wrote (symlib/CMakeLists.txt: --build-id), from the note */
  struct link_map *lm;
  cr_assert_eq(dlinfo(h, RTLD_DI_LINKMAP, &lm), 0);
  cr_expect_eq(f.o.base, (uintptr_t)lm->l_addr);
  cr_expect_eq(f.o.build_id_len, 20, "a SHA-1 build-id (got %d bytes)", f.o.build_id_len);
  uint64_t g2;
  cr_expect_eq(objects_sync(&g2), 0, "nothing changed: no new snapshot");
  cr_expect_eq(g2, g1);
  cr_assert_eq(dlclose(h), 0);
  cr_expect_eq(objects_sync(&g2), 1, "the unload is noticed");
  cr_expect_gt(g2, g1);
  struct find gone = {.suffix = "/libsymlib.so"};
  list(&gone);
  cr_expect_eq(gone.found, 0, "an unloaded library is not listed");
  cr_expect_eq(gone.count, f.count - 1);
}

static int stop_at_second(void *ctx, const struct object *o) {
  (void)o;
  return ++*(int *)ctx == 2 ? -42 : 0;
}

Test(objects, each_stops_at_the_first_refusal) {
  uint64_t g;
  cr_assert_geq(objects_sync(&g), 0);
  int calls = 0;
  cr_expect_eq(objects_each(&g, stop_at_second, &calls), -42);
  cr_expect_eq(calls, 2);
}
