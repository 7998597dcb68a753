/*
 * Tests of the unwind tables' cache (sampler/native/cfi_cache.c) and of what objects.c does with
 * it: tables compiled once are read back byte for byte the same; a damaged, foreign or
 * truncated file is refused and the table compiled again; every index cfi_find follows is
 * checked (cfi_adopt); the directory must be this user's and nobody else's to write.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cfi.h"
#include "cfi_cache.h"
#include "objects.h"

static char dir[64];

static void make_dir(void) {
  snprintf(dir, sizeof dir, "/tmp/cfi-cache-test-XXXXXX");
  cr_assert_not_null(mkdtemp(dir));
  cr_assert_eq(chmod(dir, 0700), 0);
}

/* Calls fn on every file of dir; returns how many. */
static int each_file(void (*fn)(const char *path)) {
  DIR *d = opendir(dir);
  cr_assert_not_null(d);
  int n = 0;
  for (struct dirent *e; (e = readdir(d));) {
    if (e->d_name[0] == '.') continue;
    char path[sizeof dir + sizeof e->d_name + 1];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    if (fn) fn(path);
    n++;
  }
  closedir(d);
  return n;
}

static void remove_file(const char *path) { unlink(path); }

static void remove_dir(void) {
  each_file(remove_file);
  rmdir(dir);
}

__attribute__((noinline)) int cached_function(int x) { return x * 5 + 2; }

/* A copy of the unwind table of this test's own code, from the published objects. */
static struct cfi_table *own_table(void) {
  unsigned t = objects_enter();
  const struct object *o = objects_find((uintptr_t)cached_function);
  cr_assert_not_null(o, "the test's own code is a loaded object");
  cr_assert_not_null(o->cfi, "with an unwind table");
  cr_assert_gt(o->build_id_len, 0, "the test is linked with a build-id");
  size_t bytes = cfi_bytes(o->cfi);
  struct cfi_table *copy = cfi_alloc(o->cfi->n, o->cfi->nbuckets, o->cfi->nrules);
  cr_assert_not_null(copy);
  memcpy(copy->rules, o->cfi->rules, bytes - sizeof *copy);
  copy->first = o->cfi->first;
  copy->ra_column = o->cfi->ra_column;
  copy->general = o->cfi->general;
  objects_exit(t);
  return copy;
}

static void expect_same(const struct cfi_table *a, const struct cfi_table *b) {
  cr_assert_eq(a->n, b->n);
  cr_assert_eq(a->nbuckets, b->nbuckets);
  cr_assert_eq(a->nrules, b->nrules);
  cr_expect_eq(a->first, b->first);
  cr_expect_eq(a->ra_column, b->ra_column);
  cr_expect_eq(a->general, b->general);
  cr_expect_eq(memcmp(a->rules, b->rules, cfi_bytes(a) - sizeof *a), 0, "the same rows and rules");
}

Test(cfi_cache, tables_compiled_once_are_read_back_the_same) {
  make_dir();
  cr_assert_eq(cfi_cache_open(dir, NULL, 0), 0);
  struct cfi_cache_stats a, b, c;
  cfi_cache_stats(&a);
  cr_assert_eq(objects_init(1), 0);
  struct cfi_table *compiled = own_table();
  cfi_cache_stats(&b);
  int files = each_file(NULL);
  cr_expect_gt(b.written - a.written, 0, "the compiled tables are written");
  cr_expect_eq((uint64_t)files, b.written - a.written, "a file per table");
  objects_fini();

  cr_assert_eq(objects_init(1), 0);
  struct cfi_table *read = own_table();
  cfi_cache_stats(&c);
  cr_expect_eq(c.read - b.read, b.written - a.written, "every table read back");
  cr_expect_eq(c.written, b.written, "none compiled again");
  cr_expect_eq(c.refused, a.refused);
  expect_same(compiled, read);
  objects_fini();
  free(compiled), free(read);
  remove_dir();
}

static long flip_at; /* the byte flip_byte changes: from the file's start, or (< 0) its end */

static void flip_byte(const char *path) {
  int fd = open(path, O_RDWR);
  cr_assert_geq(fd, 0);
  off_t at = flip_at >= 0 ? flip_at : lseek(fd, 0, SEEK_END) + flip_at;
  unsigned char ch;
  cr_assert_eq(pread(fd, &ch, 1, at), 1);
  ch ^= 0x40;
  cr_assert_eq(pwrite(fd, &ch, 1, at), 1);
  close(fd);
}

static void cut_short(const char *path) {
  struct stat st;
  cr_assert_eq(stat(path, &st), 0);
  cr_assert_eq(truncate(path, st.st_size - 4), 0);
}

/* A file changed after it was written: refused, the table compiled again and the file
 * rewritten, so the next start reads it. */
static void damaged_files_are_refused(void (*damage)(const char *)) {
  make_dir();
  cr_assert_eq(cfi_cache_open(dir, NULL, 0), 0);
  cr_assert_eq(objects_init(1), 0);
  struct cfi_table *compiled = own_table();
  objects_fini();
  int files = each_file(damage);
  struct cfi_cache_stats a, b, c;
  cfi_cache_stats(&a);
  cr_assert_eq(objects_init(1), 0);
  struct cfi_table *again = own_table();
  objects_fini();
  cfi_cache_stats(&b);
  cr_expect_eq(b.read, a.read, "no damaged file read");
  cr_expect_eq(b.refused - a.refused, (uint64_t)files, "every damaged file refused");
  cr_expect_eq(b.written - a.written, (uint64_t)files, "and written again");
  expect_same(compiled, again);
  cr_assert_eq(objects_init(1), 0);
  objects_fini();
  cfi_cache_stats(&c);
  cr_expect_eq(c.read - b.read, (uint64_t)files, "the rewritten files are read");
  free(compiled), free(again);
  remove_dir();
}

Test(cfi_cache, a_file_with_a_changed_byte_is_refused) {
  flip_at = -1; /* the last bucket: the checksum */
  damaged_files_are_refused(flip_byte);
}

Test(cfi_cache, a_file_with_a_changed_header_is_refused) {
  flip_at = 20; /* the object's build-id: another object's table */
  damaged_files_are_refused(flip_byte);
}

Test(cfi_cache, a_file_cut_short_is_refused) { damaged_files_are_refused(cut_short); }

Test(cfi_cache, a_file_of_another_agent_build_or_object_is_refused) {
  make_dir();
  cr_assert_eq(cfi_cache_open(dir, NULL, 0), 0);
  cr_assert_eq(objects_init(1), 0);
  struct cfi_table *t = own_table();
  objects_fini();
  const unsigned char id[] = {1, 2, 3, 4}, agent[] = {5, 6, 7, 8}, other[] = {5, 6, 7, 9};
  struct cfi_cache_key k = {.id = id,
                            .id_len = sizeof id,
                            .agent = agent,
                            .agent_len = sizeof agent,
                            .text_off = 0x1000,
                            .text_size = 0x20000,
                            .hdr_off = 0x30000,
                            .entries = 77};
  cr_assert_eq(cfi_cache_store(&k, t), 0);
  struct cfi_cache_stats a, b;
  cfi_cache_stats(&a);
  struct cfi_cache_key k2 = k;
  k2.agent = other;
  cr_expect_null(cfi_cache_load(&k2), "another build of the agent compiles again");
  k2 = k;
  k2.text_size++;
  cr_expect_null(cfi_cache_load(&k2), "another object with this build-id");
  k2 = k;
  k2.entries--;
  cr_expect_null(cfi_cache_load(&k2), "other FDEs");
  cfi_cache_stats(&b);
  cr_expect_eq(b.refused - a.refused, 3);
  struct cfi_table *back = cfi_cache_load(&k);
  cr_assert_not_null(back, "the key it was written with reads it");
  expect_same(t, back);
  /* no cache: nothing read, nothing counted */
  cr_assert_eq(cfi_cache_open(NULL, NULL, 0), 0);
  cr_expect_null(cfi_cache_load(&k));
  cr_expect_eq(cfi_cache_store(&k, t), -ENOENT);
  free(t), free(back);
  remove_dir();
}

/* Every corruption that would send cfi_find outside the table, or to row -1, is refused. */
Test(cfi_cache, a_table_whose_indexes_lead_outside_is_not_adopted) {
  cr_assert_eq(objects_init(1), 0);
  struct cfi_table *t = own_table();
  objects_fini();
  cr_assert_gt(t->n, 3);
  size_t bytes = cfi_bytes(t);
  struct cfi_table *c = malloc(bytes);
  cr_assert_not_null(c);
  const uint32_t mask = (1u << CFI_RULE_BITS) - 1;
#define FRESH()                                  \
  do {                                           \
    memcpy(c, t, bytes);                         \
    c->row = (uint32_t *)(c->rules + c->nrules); \
    c->bucket = c->row + c->n;                   \
  } while (0)
  FRESH();
  cr_expect_eq(cfi_adopt(c), 0, "the table as compiled");
  uint32_t *row = (uint32_t *)c->row, *bucket = (uint32_t *)c->bucket;
  FRESH();
  row[c->n / 2] = (row[c->n / 2] & ~mask) | (uint32_t)c->nrules;
  cr_expect_eq(cfi_adopt(c), -1, "a rule past the rules");
  FRESH();
  bucket[c->nbuckets - 1] = (uint32_t)c->n + 1;
  cr_expect_eq(cfi_adopt(c), -1, "the last bucket past the rows");
  FRESH();
  bucket[c->nbuckets - 2] = (uint32_t)c->n + 5;
  cr_expect_eq(cfi_adopt(c), -1, "a bucket past the next");
  FRESH();
  c->first++;
  cr_expect_eq(cfi_adopt(c), -1, "the first row not at `first`");
  FRESH();
  size_t b = 0; /* a bucket of two rows or more */
  while (b + 1 < c->nbuckets && bucket[b + 1] - bucket[b] < 2) b++;
  cr_assert_lt(b + 1, c->nbuckets);
  uint32_t swap = row[bucket[b]];
  row[bucket[b]] = row[bucket[b] + 1], row[bucket[b] + 1] = swap;
  cr_expect_eq(cfi_adopt(c), -1, "rows out of order");
  FRESH();
  c->ra_column = -1;
  cr_expect_eq(cfi_adopt(c), -1, "a register that is none");
#undef FRESH
  free(c), free(t);
}

Test(cfi_cache, the_directory_is_made_and_must_be_this_users_alone) {
  make_dir();
  char path[128], why[512];
  snprintf(path, sizeof path, "%s/a/b", dir);
  cr_expect_eq(cfi_cache_open(path, why, sizeof why), 0, "made when missing: %s", why);
  struct stat st;
  cr_assert_eq(stat(path, &st), 0);
  cr_expect_eq(st.st_mode & 0777, 0700);
  char got[128];
  cfi_cache_dir(got, sizeof got);
  cr_expect_str_eq(got, path);
  cr_assert_eq(chmod(path, 0777), 0);
  cr_expect_eq(cfi_cache_open(path, why, sizeof why), -EPERM);
  cr_expect(strstr(why, "others can write it") != NULL, "%s", why);
  cfi_cache_dir(got, sizeof got);
  cr_expect_str_eq(got, "", "a refused directory: no cache");
  cr_assert_eq(chmod(path, 0700), 0);
  snprintf(path, sizeof path, "%s/file", dir);
  int fd = open(path, O_CREAT | O_WRONLY, 0600);
  cr_assert_geq(fd, 0);
  close(fd);
  cr_expect_eq(cfi_cache_open(path, why, sizeof why), -ENOTDIR);
  cr_expect(strstr(why, "not a directory") != NULL, "%s", why);
  snprintf(path, sizeof path, "%s/file/below", dir);
  cr_expect_lt(cfi_cache_open(path, why, sizeof why), 0);
  cr_expect(strstr(why, "cannot make it") != NULL, "%s", why);
  snprintf(path, sizeof path, "%s/a/b", dir);
  rmdir(path);
  snprintf(path, sizeof path, "%s/a", dir);
  rmdir(path);
  remove_dir();
}
