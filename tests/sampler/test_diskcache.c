/*
 * Tests of the disk cache (sampler/native/diskcache.c) and of what objects.c and symbols.c keep
 * in it: tables compiled once are read back byte for byte the same, symbols name every pc as
 * they did; a damaged, foreign or truncated file is refused and the entry made again; every
 * index cfi_find follows is checked (cfi_adopt), and every name offset and address order of a
 * symbols entry; the directory must be this user's and nobody else's to write.
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
#include "diskcache.h"
#include "objects.h"
#include "symbols.h"

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

Test(diskcache, tables_compiled_once_are_read_back_the_same) {
  make_dir();
  cr_assert_eq(diskcache_open(dir, NULL, 0), 0);
  struct diskcache_stats a, b, c;
  diskcache_stats(DISKCACHE_CFI, &a);
  cr_assert_eq(objects_init(1), 0);
  struct cfi_table *compiled = own_table();
  diskcache_stats(DISKCACHE_CFI, &b);
  int files = each_file(NULL);
  cr_expect_gt(b.written - a.written, 0, "the compiled tables are written");
  cr_expect_eq((uint64_t)files, b.written - a.written, "a file per table");
  objects_fini();

  cr_assert_eq(objects_init(1), 0);
  struct cfi_table *read = own_table();
  diskcache_stats(DISKCACHE_CFI, &c);
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
  cr_assert_eq(diskcache_open(dir, NULL, 0), 0);
  cr_assert_eq(objects_init(1), 0);
  struct cfi_table *compiled = own_table();
  objects_fini();
  int files = each_file(damage);
  struct diskcache_stats a, b, c;
  diskcache_stats(DISKCACHE_CFI, &a);
  cr_assert_eq(objects_init(1), 0);
  struct cfi_table *again = own_table();
  objects_fini();
  diskcache_stats(DISKCACHE_CFI, &b);
  cr_expect_eq(b.read, a.read, "no damaged file read");
  cr_expect_eq(b.refused - a.refused, (uint64_t)files, "every damaged file refused");
  cr_expect_eq(b.written - a.written, (uint64_t)files, "and written again");
  expect_same(compiled, again);
  cr_assert_eq(objects_init(1), 0);
  objects_fini();
  diskcache_stats(DISKCACHE_CFI, &c);
  cr_expect_eq(c.read - b.read, (uint64_t)files, "the rewritten files are read");
  free(compiled), free(again);
  remove_dir();
}

Test(diskcache, a_file_with_a_changed_byte_is_refused) {
  flip_at = -1; /* the last bucket: the checksum */
  damaged_files_are_refused(flip_byte);
}

Test(diskcache, a_file_with_a_changed_header_is_refused) {
  flip_at = 20; /* the object's build-id: another object's table */
  damaged_files_are_refused(flip_byte);
}

Test(diskcache, a_file_cut_short_is_refused) { damaged_files_are_refused(cut_short); }

/* The generic entry: two parts, read back into the memory room gives. */
struct two {
  char a[24], b[40];
};

static int room_two(void *ctx, const void *pre, size_t rest, struct iovec out[2]) {
  (void)pre;
  struct two *t = ctx;
  if (rest != sizeof t->a + sizeof t->b) return 0;
  out[0] = (struct iovec){t->a, sizeof t->a};
  out[1] = (struct iovec){t->b, sizeof t->b};
  return 2;
}

Test(diskcache, an_entry_of_another_agent_build_or_object_is_refused) {
  make_dir();
  cr_assert_eq(diskcache_open(dir, NULL, 0), 0);
  const unsigned char id[] = {1, 2, 3, 4}, agent[] = {5, 6, 7, 8}, other[] = {5, 6, 7, 9};
  struct diskcache_key k = {
      .id = id, .id_len = sizeof id, .agent = agent, .agent_len = sizeof agent, .k = {7, 8, 9}};
  uint64_t pre = 42;
  struct two put = {"the first part", "the second part, in two places on load"}, got;
  struct iovec parts[3] = {{&pre, sizeof pre}, {put.a, sizeof put.a}, {put.b, sizeof put.b}};
  cr_assert_eq(diskcache_store(DISKCACHE_SYMBOLS, &k, parts, 3), 0);
  struct diskcache_stats a, b;
  diskcache_stats(DISKCACHE_SYMBOLS, &a);
  struct diskcache_key k2 = k;
  k2.agent = other;
  uint64_t pre2 = 0;
  cr_expect_eq(diskcache_load(DISKCACHE_SYMBOLS, &k2, &pre2, sizeof pre2, room_two, &got), -EINVAL,
               "another build of the agent makes it again");
  k2 = k;
  k2.k[1]++;
  cr_expect_eq(diskcache_load(DISKCACHE_SYMBOLS, &k2, &pre2, sizeof pre2, room_two, &got), -EINVAL,
               "another object with this build-id");
  cr_expect_eq(diskcache_load(DISKCACHE_SYMBOLS, &k, &pre2, 4, room_two, &got), -EINVAL,
               "another layout of its first part");
  cr_expect_eq(diskcache_load(DISKCACHE_CFI, &k, &pre2, sizeof pre2, room_two, &got), -ENOENT,
               "another kind: another file");
  diskcache_stats(DISKCACHE_SYMBOLS, &b);
  cr_expect_eq(b.refused - a.refused, 3);
  memset(&got, 0, sizeof got);
  cr_assert_eq(diskcache_load(DISKCACHE_SYMBOLS, &k, &pre2, sizeof pre2, room_two, &got), 0,
               "the key it was written with reads it");
  cr_expect_eq(pre2, 42);
  cr_expect_eq(memcmp(&got, &put, sizeof got), 0);
  /* no cache: nothing read, nothing counted */
  cr_assert_eq(diskcache_open(NULL, NULL, 0), 0);
  cr_expect_eq(diskcache_load(DISKCACHE_SYMBOLS, &k, &pre2, sizeof pre2, room_two, &got), -ENOENT);
  cr_expect_eq(diskcache_store(DISKCACHE_SYMBOLS, &k, parts, 3), -ENOENT);
  remove_dir();
}

/* ---- symbols ---- */

enum { STEP = 97 }; /* every 97th byte of the code */

/* The names of every STEP-th byte of this test's own code, one string each (NUL-separated). */
static char *name_own_code(size_t *count) {
  unsigned t = objects_enter();
  const struct object *o = objects_find((uintptr_t)cached_function);
  cr_assert_not_null(o);
  uintptr_t lo = o->text_start, hi = o->text_end;
  objects_exit(t);
  size_t n = (hi - lo) / STEP + 1, cap = n * 64, used = 0;
  char *all = malloc(cap);
  cr_assert_not_null(all);
  for (uintptr_t pc = lo; pc < hi; pc += STEP) {
    char buf[512];
    symbols_name(pc, buf, sizeof buf);
    size_t len = strlen(buf) + 1;
    if (used + len > cap) cr_assert_not_null(all = realloc(all, cap *= 2));
    memcpy(all + used, buf, len);
    used += len;
  }
  *count = used;
  return all;
}

static void expect_same_names(const char *a, size_t na, const char *b, size_t nb) {
  cr_assert_eq(na, nb, "the same names, as long");
  cr_expect_eq(memcmp(a, b, na), 0, "every pc named the same");
}

Test(diskcache, symbols_read_back_name_every_pc_the_same) {
  make_dir();
  cr_assert_eq(diskcache_open(dir, NULL, 0), 0);
  cr_assert_eq(objects_init(0), 0);
  struct diskcache_stats a, b, c;
  diskcache_stats(DISKCACHE_SYMBOLS, &a);
  size_t n1, n2;
  char *from_file = name_own_code(&n1);
  diskcache_stats(DISKCACHE_SYMBOLS, &b);
  cr_expect_eq(b.written - a.written, 1, "this test's symbols written");
  cr_expect_eq(b.read, a.read);
  symbols_fini();
  char *from_cache = name_own_code(&n2);
  diskcache_stats(DISKCACHE_SYMBOLS, &c);
  cr_expect_eq(c.read - b.read, 1, "and read back");
  cr_expect_eq(c.written, b.written);
  expect_same_names(from_file, n1, from_cache, n2);
  symbols_fini();
  objects_fini();
  free(from_file), free(from_cache);
  remove_dir();
}

/* A symbols entry made by hand for this test's own object, its checksum right. */
static void forge_symbols(const uint64_t *addr, const uint64_t *name_off, size_t n,
                          const char *names, size_t names_bytes) {
  unsigned t = objects_enter();
  const struct object *o = objects_find((uintptr_t)cached_function);
  cr_assert_not_null(o);
  unsigned char id[OBJECTS_BUILD_ID_MAX], agent[OBJECTS_BUILD_ID_MAX];
  size_t id_len = o->build_id_len, map_size = o->map_size;
  memcpy(id, o->build_id, id_len);
  objects_exit(t);
  size_t agent_len = objects_agent_id(agent);
  cr_assert_gt(agent_len, 0);
  struct rec { /* symbols.c's struct sym, the name an offset */
    uintptr_t addr, end, maxend, name;
  } recs[8];
  cr_assert_leq(n, 8);
  for (size_t i = 0; i < n; i++) recs[i] = (struct rec){addr[i], addr[i] + 16, 0, name_off[i]};
  uint64_t pre[2] = {n, names_bytes};
  struct iovec parts[3] = {
      {pre, sizeof pre}, {recs, n * sizeof recs[0]}, {(void *)names, names_bytes}};
  struct diskcache_key k = {
      .id = id, .id_len = id_len, .agent = agent, .agent_len = agent_len, .k = {1, map_size}};
  cr_assert_eq(diskcache_store(DISKCACHE_SYMBOLS, &k, parts, 3), 0);
}

/* A forged entry with an index that leads outside is refused, and the names are read from the
 * file as before. */
static void a_forged_entry_is_refused(const uint64_t *addr, const uint64_t *off, size_t n,
                                      const char *names, size_t names_bytes) {
  make_dir();
  cr_assert_eq(diskcache_open(dir, NULL, 0), 0);
  cr_assert_eq(objects_init(0), 0);
  size_t n1, n2;
  char *from_file = name_own_code(&n1);
  symbols_fini();
  forge_symbols(addr, off, n, names, names_bytes);
  struct diskcache_stats a, b;
  diskcache_stats(DISKCACHE_SYMBOLS, &a);
  char *again = name_own_code(&n2);
  diskcache_stats(DISKCACHE_SYMBOLS, &b);
  cr_expect_eq(b.refused - a.refused, 1, "the forged entry refused");
  cr_expect_eq(b.read, a.read);
  cr_expect_eq(b.written - a.written, 1, "and written again from the file");
  expect_same_names(from_file, n1, again, n2);
  symbols_fini();
  objects_fini();
  free(from_file), free(again);
  remove_dir();
}

Test(diskcache, a_symbols_entry_with_a_name_outside_its_names_is_refused) {
  const uint64_t addr[] = {0x1000, 0x2000}, off[] = {0, 9};
  a_forged_entry_is_refused(addr, off, 2, "a\0bb\0ccc", 9); /* 9: past the last byte */
}

Test(diskcache, a_symbols_entry_whose_names_do_not_end_is_refused) {
  const uint64_t addr[] = {0x1000, 0x2000}, off[] = {0, 2};
  a_forged_entry_is_refused(addr, off, 2, "a\0bb", 4); /* no NUL after "bb" */
}

Test(diskcache, a_symbols_entry_out_of_order_is_refused) {
  const uint64_t addr[] = {0x2000, 0x1000}, off[] = {0, 2};
  a_forged_entry_is_refused(addr, off, 2, "a\0bb", 5);
}

Test(diskcache, a_forged_symbols_entry_in_order_is_taken) { /* the check of the checks */
  make_dir();
  cr_assert_eq(diskcache_open(dir, NULL, 0), 0);
  cr_assert_eq(objects_init(0), 0);
  const uint64_t addr[] = {0x1000, 0x2000}, off[] = {0, 2};
  forge_symbols(addr, off, 2, "a\0bb", 5);
  struct diskcache_stats a, b;
  diskcache_stats(DISKCACHE_SYMBOLS, &a);
  char buf[128];
  symbols_name((uintptr_t)cached_function, buf, sizeof buf);
  diskcache_stats(DISKCACHE_SYMBOLS, &b);
  cr_expect_eq(b.read - a.read, 1, "taken");
  cr_expect(strstr(buf, "cached_function") == NULL, "named from the forged entry: %s", buf);
  symbols_fini();
  objects_fini();
  remove_dir();
}

/* Every corruption that would send cfi_find outside the table, or to row -1, is refused. */
Test(diskcache, a_table_whose_indexes_lead_outside_is_not_adopted) {
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

Test(diskcache, the_directory_is_made_and_must_be_this_users_alone) {
  make_dir();
  char path[128], why[512];
  snprintf(path, sizeof path, "%s/a/b", dir);
  cr_expect_eq(diskcache_open(path, why, sizeof why), 0, "made when missing: %s", why);
  struct stat st;
  cr_assert_eq(stat(path, &st), 0);
  cr_expect_eq(st.st_mode & 0777, 0700);
  char got[128];
  diskcache_dir(got, sizeof got);
  cr_expect_str_eq(got, path);
  cr_assert_eq(chmod(path, 0777), 0);
  cr_expect_eq(diskcache_open(path, why, sizeof why), -EPERM);
  cr_expect(strstr(why, "others can write it") != NULL, "%s", why);
  diskcache_dir(got, sizeof got);
  cr_expect_str_eq(got, "", "a refused directory: no cache");
  cr_assert_eq(chmod(path, 0700), 0);
  snprintf(path, sizeof path, "%s/file", dir);
  int fd = open(path, O_CREAT | O_WRONLY, 0600);
  cr_assert_geq(fd, 0);
  close(fd);
  cr_expect_eq(diskcache_open(path, why, sizeof why), -ENOTDIR);
  cr_expect(strstr(why, "not a directory") != NULL, "%s", why);
  snprintf(path, sizeof path, "%s/file/below", dir);
  cr_expect_lt(diskcache_open(path, why, sizeof why), 0);
  cr_expect(strstr(why, "cannot make it") != NULL, "%s", why);
  snprintf(path, sizeof path, "%s/a/b", dir);
  rmdir(path);
  snprintf(path, sizeof path, "%s/a", dir);
  rmdir(path);
  remove_dir();
}
