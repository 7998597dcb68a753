/* Unit tests of the thread registry: add, rename, remove, slot reuse, limits. */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include "registry.h"
#include "sample.h"
#include "sample_walk.h"

static int add(pid_t tid, const char *name) {
  struct sampler_target t = {.tid = tid, .name = name};
  return registry_add(&t);
}

Test(registry, add_rename_remove_reuse) {
  cr_assert_eq(registry_init(4), 0);
  cr_expect_null(registry_slot(0), "no chunk before the first thread");
  int a = add(1001, "main");
  int b = add(1002, "worker");
  cr_assert(a >= 0 && b >= 0 && a != b);
  cr_expect_eq(registry_live(), 2);
  cr_expect_eq(registry_limit(), 2);
  struct thread_slot *s = registry_slot(a);
  cr_expect_eq(s->tid, 1001);
  cr_expect_str_eq(s->name, "main");
  cr_expect_eq(atomic_load(&s->state), SLOT_LIVE);
  uint32_t gen = s->gen;

  cr_expect_eq(add(1001, "renamed"), a, "same tid: same slot");
  cr_expect_str_eq(registry_slot(a)->name, "renamed");
  cr_expect_eq(registry_live(), 2);

  /* a request left open by the thread that leaves: the slot is not reused while it is open */
  atomic_store(&s->handshake, handshake_word(5, SAMPLE_PENDING));
  registry_remove(1001, 0);
  cr_expect_eq(atomic_load(&s->state), SLOT_FREE);
  cr_expect_eq(registry_live(), 1);
  registry_remove(1001, 0); /* twice: no-op */
  registry_remove(4242, 0); /* unknown: no-op */
  cr_expect_eq(registry_live(), 1);
  int c = add(1003, "new");
  cr_expect_neq(c, a, "a slot with an open request is not handed to a new thread");
  cr_expect_eq(registry_limit(), 3);

  /* an answer not yet collected keeps the slot too: it is the leaving thread's */
  atomic_store(&s->handshake, handshake_word(5, SAMPLE_DONE));
  int c2 = add(1005, "newest");
  cr_expect_neq(c2, a, "a slot with an uncollected answer is not handed to a new thread");
  registry_remove(1005, 0);

  /* once the sampler has withdrawn or collected it, the slot is reused */
  atomic_store(&s->handshake, handshake_word(5, SAMPLE_IDLE));
  int d = add(1004, "newer");
  cr_expect_eq(d, a, "a free slot is reused");
  cr_expect_eq(s->tid, 1004);
  cr_expect_neq(s->gen, gen, "reuse bumps the generation");
  cr_expect_eq(handshake_state(atomic_load(&s->handshake)), SAMPLE_IDLE);
  cr_expect_eq(handshake_seq(atomic_load(&s->handshake)), 5u, "the sequence keeps counting");
  cr_expect_eq(registry_limit(), 4, "slots a, b, c and c2's were ever used");
  cr_expect_null(registry_slot(-1));
  cr_expect_null(registry_slot(REG_MAX_CHUNKS * REG_CHUNK_SLOTS));
}

Test(registry, the_registration_is_kept_and_updated) {
  cr_assert_eq(registry_init(4), 0);
  JNIEnv *env = (JNIEnv *)0x1234;
  struct sampler_target t = {
      .tid = 77, .name = "found at start", .env = env, .stack_lo = 0x1000, .stack_hi = 0x9000};
  int i = registry_add(&t);
  cr_assert_geq(i, 0);
  struct thread_slot *s = registry_slot(i);
  cr_expect_eq(s->env, env);
  cr_expect_eq(s->stack_lo, 0x1000u);
  cr_expect_eq(s->stack_hi, 0x9000u);
  struct sampler_target again = {.tid = 77, .name = "its ThreadStart"};
  cr_expect_eq(registry_add(&again), i);
  cr_expect_str_eq(s->name, "its ThreadStart");
  cr_expect_eq(s->env, env, "an update without an env keeps the known one");
  cr_expect_eq(s->stack_hi, 0x9000u, "and the known stack");
  registry_remove(77, 0);
  struct sampler_target other = {.tid = 78, .name = "new owner"};
  cr_expect_eq(registry_add(&other), i, "the free slot is reused");
  cr_expect_null(s->env, "a new owner does not inherit the old one's env");
  cr_expect_eq(s->stack_hi, 0u);
}

/* registry_identity's copy is kept while the registration stays as it was, and read again when
 * it changed: a rename, a Java id learnt, the slot given to another thread. */
Test(registry, an_identity_is_kept_until_its_registration_changes) {
  cr_assert_eq(registry_init(4), 0);
  struct sampler_target t = {.tid = 501, .name = "kernel name"};
  int i = registry_add(&t);
  cr_assert_geq(i, 0);
  struct registry_ident me = {.slot = -1};
  cr_assert_eq(registry_identity(501, &me), 0);
  cr_expect_eq(me.slot, i);
  cr_expect_str_eq(me.name, "kernel name");
  cr_expect_eq(me.len, strlen("kernel name"));
  cr_expect_eq(me.java_id, 0);

  /* unchanged: the copy is used as it is (a scribble on it shows it was not read again) */
  me.name[0] = '#';
  cr_assert_eq(registry_identity(501, &me), 0);
  cr_expect_eq(me.name[0], '#', "an unchanged registration is not copied again");

  /* its ThreadStart: a name and a Java id */
  struct sampler_target start = {.tid = 501, .name = "worker-1", .java_id = 42};
  cr_assert_eq(registry_add(&start), i);
  cr_assert_eq(registry_identity(501, &me), 0);
  cr_expect_str_eq(me.name, "worker-1");
  cr_expect_eq(me.java_id, 42);

  /* the same name again, a Java id learnt: read again too */
  struct sampler_target id_only = {.tid = 501, .name = "worker-1", .java_id = 43};
  cr_assert_eq(registry_add(&id_only), i);
  cr_assert_eq(registry_identity(501, &me), 0);
  cr_expect_eq(me.java_id, 43);

  /* the thread gone, its slot another's: not this thread's identity any more */
  registry_remove(501, 0);
  cr_expect_eq(registry_identity(501, &me), -ESRCH, "a thread that left is not found");
  struct sampler_target other = {.tid = 502, .name = "other"};
  cr_assert_eq(registry_add(&other), i, "the free slot is reused");
  struct registry_ident stale = {.slot = i, .info_seq = 0};
  cr_expect_eq(registry_identity(501, &stale), -ESRCH, "another thread's slot is not ours");
  struct registry_ident theirs = {.slot = -1};
  cr_assert_eq(registry_identity(502, &theirs), 0);
  cr_expect_str_eq(theirs.name, "other");
  cr_expect_eq(theirs.java_id, 0, "the new owner does not inherit the Java id");
}

Test(registry, long_names_are_cut) {
  cr_assert_eq(registry_init(4), 0);
  char name[300];
  memset(name, 'x', sizeof name - 1);
  name[sizeof name - 1] = '\0';
  int i = add(7, name);
  cr_assert_geq(i, 0);
  cr_expect_eq(strlen(registry_slot(i)->name), REG_NAME_MAX - 1u);
}

/* Thread names enter here: from JVMTI in modified UTF-8, from the kernel's comm cut at 15 bytes
 * inside a character; kept as UTF-8 cut between characters. */
Test(registry, names_become_utf8_cut_between_characters) {
  cr_assert_eq(registry_init(4), 0);
  char e70[141] = "";
  for (int k = 0; k < 70; k++) strcat(e70, "\xC3\xA9"); /* "é" x 70: 140 bytes */
  int i = add(7, e70);
  cr_assert_geq(i, 0);
  cr_expect_eq(strlen(registry_slot(i)->name), 126u, "63 whole characters, not 63 and a half");
  cr_expect_eq(memcmp(registry_slot(i)->name, e70, 126), 0);
  i = add(8, "w\xED\xA0\xBD\xED\xBA\x80"); /* "w" + U+1F680 as JVMTI writes it */
  cr_expect_str_eq(registry_slot(i)->name, "w\xF0\x9F\x9A\x80");
  i = add(9, "\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9\xC3"); /* a comm */
  cr_expect_str_eq(registry_slot(i)->name,
                   "\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9\xEF\xBF\xBD",
                   "the half character cut by the kernel is a U+FFFD");
}

Test(registry, full) {
  cr_assert_eq(registry_init(1), 0);
  int max = REG_MAX_CHUNKS * REG_CHUNK_SLOTS;
  for (int i = 0; i < max; i++) cr_assert_eq(add(10 + i, "t"), i);
  cr_expect_eq(add(999999, "one too many"), -ENOSPC);
  registry_remove(10 + 77, 0);
  cr_expect_eq(add(999999, "fits again"), 77);
  for (int i = 0; i < max; i++) cr_assert_not_null(registry_slot(i)->record->walk->frames);
  cr_expect_neq(registry_slot(0)->record->walk->frames, registry_slot(1)->record->walk->frames);
  cr_expect_neq(registry_slot(0)->record, registry_slot(1)->record);
}

/* A deep stack limit allows fewer threads at once: the frame buffers stay within
 * REG_FRAME_BYTES_MAX of address space. */
Test(registry, a_deep_depth_allows_fewer_threads) {
  cr_assert_eq(registry_init(8192), 0);
  int max = registry_max_slots();
  cr_expect_eq(max, 2560, "512 MiB / (8192 x 24 bytes), in whole chunks of 256");
  for (int i = 0; i < max; i++) cr_assert_eq(add(10 + i, "t"), i);
  cr_expect_eq(add(999999, "one too many"), -ENOSPC);
  size_t bytes = (size_t)max * 8192 * (sizeof(asgct_frame) + sizeof(uintptr_t));
  cr_expect_leq(bytes, REG_FRAME_BYTES_MAX);
}
