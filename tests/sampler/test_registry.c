/* Unit tests of the thread registry: add, rename, remove, slot reuse, limits. */
#include <criterion/criterion.h>
#include <errno.h>

#include "registry.h"

Test(registry, add_rename_remove_reuse) {
  cr_assert_eq(registry_init(4), 0);
  cr_expect_null(registry_slot(0), "no chunk before the first thread");
  int a = registry_add(1001, "main");
  int b = registry_add(1002, "worker");
  cr_assert(a >= 0 && b >= 0 && a != b);
  cr_expect_eq(registry_live(), 2);
  cr_expect_eq(registry_limit(), 2);
  struct reg_slot *s = registry_slot(a);
  cr_expect_eq(s->tid, 1001);
  cr_expect_str_eq(s->name, "main");
  cr_expect_eq(atomic_load(&s->state), REG_LIVE);
  uint32_t gen = s->gen;

  cr_expect_eq(registry_add(1001, "renamed"), a, "same tid: same slot");
  cr_expect_str_eq(registry_slot(a)->name, "renamed");
  cr_expect_eq(registry_live(), 2);

  /* a request left open by the thread that leaves: the slot is not reused while it is open */
  atomic_store(&s->req, (5u << 3) | REQ_PENDING);
  registry_remove(1001);
  cr_expect_eq(atomic_load(&s->state), REG_FREE);
  cr_expect_eq(registry_live(), 1);
  registry_remove(1001); /* twice: no-op */
  registry_remove(4242); /* unknown: no-op */
  cr_expect_eq(registry_live(), 1);
  int c = registry_add(1003, "new");
  cr_expect_neq(c, a, "a slot with an open request is not handed to a new thread");
  cr_expect_eq(registry_limit(), 3);

  /* once the sampler has withdrawn it, the slot is reused */
  atomic_store(&s->req, (5u << 3) | REQ_IDLE);
  int d = registry_add(1004, "newer");
  cr_expect_eq(d, a, "a free slot is reused");
  cr_expect_eq(s->tid, 1004);
  cr_expect_neq(s->gen, gen, "reuse bumps the generation");
  cr_expect_eq(REQ_STATE(atomic_load(&s->req)), REQ_IDLE);
  cr_expect_eq(REQ_SEQ(atomic_load(&s->req)), 5u, "the sequence keeps counting");
  cr_expect_eq(registry_limit(), 3);
  cr_expect_null(registry_slot(-1));
  cr_expect_null(registry_slot(REG_MAX_CHUNKS * REG_CHUNK_SLOTS));
}

Test(registry, long_names_are_cut) {
  cr_assert_eq(registry_init(4), 0);
  char name[300];
  memset(name, 'x', sizeof name - 1);
  name[sizeof name - 1] = '\0';
  int i = registry_add(7, name);
  cr_assert_geq(i, 0);
  cr_expect_eq(strlen(registry_slot(i)->name), REG_NAME_MAX - 1u);
}

Test(registry, full) {
  cr_assert_eq(registry_init(1), 0);
  int max = REG_MAX_CHUNKS * REG_CHUNK_SLOTS;
  for (int i = 0; i < max; i++) cr_assert_eq(registry_add(10 + i, "t"), i);
  cr_expect_eq(registry_add(999999, "one too many"), -ENOSPC);
  registry_remove(10 + 77);
  cr_expect_eq(registry_add(999999, "fits again"), 77);
  for (int i = 0; i < max; i++) cr_assert_not_null(registry_slot(i)->frames);
  cr_expect_neq(registry_slot(0)->frames, registry_slot(1)->frames);
}
