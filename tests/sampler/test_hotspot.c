/*
 * test_hotspot.c — reading HotSpot's self-description: field offsets and constants from
 * gHotSpotVM*-style tables (a fake JVM's, laid out with other strides and member offsets than
 * HotSpot's, so nothing in the reader may assume them), fields declared by a superclass (found
 * through the types table, as JDK 25 lists Thread::_osthread), a code blob's frame size found
 * before its code (with a decoy nearer the code and an unmapped page below; code bounds as
 * addresses, JDK 17/21, and as offsets, JDK 25), the JNIEnv offset check, and a bool flag
 * turned on in a flag table (JVMFlag's, members in another order, more entries than one batch
 * of the reader's, names and values on pages that cannot be read or written).
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "hotspot.h"

/* A struct-table entry whose members are in another order than HotSpot's. */
struct fake_field {
  uint64_t offset;
  int32_t pad;
  int32_t is_static;
  const char *field;
  const char *type;
  const char *type_string;
  void *address;
};

struct fake_int {
  int32_t value;
  const char *name;
};

/* A type-table entry, members in another order than HotSpot's. */
struct fake_type {
  const char *super;
  uint64_t size;
  const char *name;
};

static struct fake_field fields[32];
static struct fake_int ints[8];
static struct fake_type types[8];
static void *fields_ptr = fields, *ints_ptr = ints, *types_ptr = types;
static uint64_t t_stride = sizeof(struct fake_type), t_name = offsetof(struct fake_type, name),
                t_super = offsetof(struct fake_type, super);
static uint64_t f_stride = sizeof(struct fake_field), f_type = offsetof(struct fake_field, type),
                f_name = offsetof(struct fake_field, field),
                f_static = offsetof(struct fake_field, is_static),
                f_off = offsetof(struct fake_field, offset),
                f_tstr = offsetof(struct fake_field, type_string),
                i_stride = sizeof(struct fake_int), i_name = offsetof(struct fake_int, name),
                i_value = offsetof(struct fake_int, value),
                f_addr = offsetof(struct fake_field, address),
                t_size = offsetof(struct fake_type, size);
static int no_tables, no_types;

static void *fake_sym(const char *name, void *ctx) {
  (void)ctx;
  if (no_tables) return NULL;
  if (no_types && strncmp(name, "gHotSpotVMType", 14) == 0) return NULL;
  static const struct {
    const char *name;
    void *at;
  } syms[] = {
      {"gHotSpotVMStructs", &fields_ptr},
      {"gHotSpotVMStructEntryArrayStride", &f_stride},
      {"gHotSpotVMStructEntryTypeNameOffset", &f_type},
      {"gHotSpotVMStructEntryFieldNameOffset", &f_name},
      {"gHotSpotVMStructEntryIsStaticOffset", &f_static},
      {"gHotSpotVMStructEntryOffsetOffset", &f_off},
      {"gHotSpotVMStructEntryTypeStringOffset", &f_tstr},
      {"gHotSpotVMStructEntryAddressOffset", &f_addr},
      {"gHotSpotVMIntConstants", &ints_ptr},
      {"gHotSpotVMIntConstantEntryArrayStride", &i_stride},
      {"gHotSpotVMIntConstantEntryNameOffset", &i_name},
      {"gHotSpotVMIntConstantEntryValueOffset", &i_value},
      {"gHotSpotVMTypes", &types_ptr},
      {"gHotSpotVMTypeEntryArrayStride", &t_stride},
      {"gHotSpotVMTypeEntryTypeNameOffset", &t_name},
      {"gHotSpotVMTypeEntrySuperclassNameOffset", &t_super},
      {"gHotSpotVMTypeEntrySizeOffset", &t_size},
  };
  for (size_t i = 0; i < sizeof syms / sizeof syms[0]; i++)
    if (strcmp(syms[i].name, name) == 0) return syms[i].at;
  return NULL;
}

static int nfields;
static void add_field(const char *type, const char *field, uint64_t off, int is_static) {
  fields[nfields++] =
      (struct fake_field){.type = type, .field = field, .offset = off, .is_static = is_static};
}

static void add_typed(const char *type, const char *field, uint64_t off, const char *c_type) {
  add_field(type, field, off, 0);
  fields[nfields - 1].type_string = c_type;
}

static void full_table(void) {
  memset(fields, 0, sizeof fields);
  memset(ints, 0, sizeof ints);
  memset(types, 0, sizeof types);
  nfields = 0;
  no_tables = 0;
  no_types = 0;
  types[0] = (struct fake_type){.name = "ThreadShadow", .super = NULL};
  types[1] = (struct fake_type){.name = "JavaThread", .super = "Thread"};
  types[2] = (struct fake_type){.name = "Thread", .super = "ThreadShadow"};
  add_field("JavaThread", "_anchor", 1000, 1); /* a static of the same name: not the field */
  add_field("Thread", "_anchor", 1, 0);        /* another type's field of the same name */
  add_field("JavaThread", "_anchor", 656, 0);
  add_field("JavaFrameAnchor", "_last_Java_sp", 0, 0);
  add_field("JavaFrameAnchor", "_last_Java_pc", 8, 0);
  add_field("JavaFrameAnchor", "_last_Java_fp", 16, 0);
  add_field("JavaThread", "_thread_state", 824, 0);
  add_field("JavaThread", "_stack_base", 592, 0);
  add_field("JavaThread", "_stack_size", 600, 0);
  add_field("JavaThread", "_osthread", 560, 0);
  add_field("OSThread", "_thread_id", 208, 0);
  add_field("CodeBlob", "_size", 12, 0);
  add_field("CodeBlob", "_header_size", 16, 0);
  add_field("CodeBlob", "_frame_size", 28, 0);
  add_field("CodeBlob", "_code_begin", 32, 0);
  add_field("CodeBlob", "_code_end", 40, 0);
  add_typed("CodeBlob", "_frame_complete_offset", 20, "int");
  ints[0] = (struct fake_int){4, "_thread_in_native"};
  ints[1] = (struct fake_int){6, "_thread_in_vm"};
  ints[2] = (struct fake_int){8, "_thread_in_Java"};
  ints[3] = (struct fake_int){10, "_thread_blocked"};
}

static void drop_field(const char *type, const char *field) {
  for (int i = 0; i < nfields; i++)
    if (strcmp(fields[i].type, type) == 0 && strcmp(fields[i].field, field) == 0)
      fields[i].field = "gone";
}

Test(hotspot, layout_from_the_tables) {
  full_table();
  struct hotspot_layout l;
  const char *why = NULL;
  cr_assert_eq(hotspot_read_layout(fake_sym, NULL, &l, &why), 0, "%s", why ? why : "");
  cr_assert_eq(l.anchor, 656, "the non-static JavaThread::_anchor, not a static or another type's");
  const struct {
    const char *what;
    long got, want;
  } expect[] = {{"last_sp", l.last_sp, 0},
                {"last_pc", l.last_pc, 8},
                {"last_fp", l.last_fp, 16},
                {"state", l.state, 824},
                {"stack_base", l.stack_base, 592},
                {"stack_size", l.stack_size, 600},
                {"osthread", l.osthread, 560},
                {"os_tid", l.os_tid, 208},
                {"in_vm", l.in_vm, 6},
                {"in_java", l.in_java, 8},
                {"blocked", l.blocked, 10},
                {"blob_frame_size", l.blob_frame_size, 28},
                {"blob_code_begin", l.blob_code_begin, 32},
                {"blob_code_end", l.blob_code_end, 40}};
  for (size_t i = 0; i < sizeof expect / sizeof *expect; i++)
    cr_assert_eq(expect[i].got, expect[i].want, "%s: %ld, not %ld", expect[i].what, expect[i].got,
                 expect[i].want);
}

Test(hotspot, a_missing_field_is_named) {
  full_table();
  drop_field("JavaFrameAnchor", "_last_Java_pc");
  struct hotspot_layout l;
  const char *why = NULL;
  cr_assert_eq(hotspot_read_layout(fake_sym, NULL, &l, &why), -ENOENT);
  cr_assert_str_eq(why, "JavaFrameAnchor::_last_Java_pc");

  full_table();
  ints[1].name = "_thread_in_vm_trans";
  cr_assert_eq(hotspot_read_layout(fake_sym, NULL, &l, &why), -ENOENT);
  cr_assert_str_eq(why, "the constant _thread_in_vm");

  no_tables = 1;
  cr_assert_eq(hotspot_read_layout(fake_sym, NULL, &l, &why), -ENOENT);
  cr_assert(strstr(why, "gHotSpotVMStructs"), "%s", why);
}

Test(hotspot, optional_fields_may_be_missing) {
  full_table();
  drop_field("JavaFrameAnchor", "_last_Java_fp");
  drop_field("CodeBlob", "_frame_size");
  struct hotspot_layout l;
  const char *why = NULL;
  cr_assert_eq(hotspot_read_layout(fake_sym, NULL, &l, &why), 0);
  cr_assert_eq(l.last_fp, -1);
  cr_assert_eq(l.blob_frame_size, -1);
  cr_assert_eq(hotspot_blob_frame_words(&l, (void *)0x100000, 64), 0,
               "no frame size without the field");
}

/* The schedule takes a Java thread's state as its word on whether it runs (in Java code, or in
 * one of the VM's waits) and asks the kernel about every other state. */
Test(hotspot, which_thread_states_say_whether_it_runs) {
  full_table();
  struct hotspot_layout l;
  const char *why = NULL;
  cr_assert_eq(hotspot_read_layout(fake_sym, NULL, &l, &why), 0, "%s", why ? why : "");
  const struct {
    int state, runs;
  } cases[] = {{8, 1},   /* _thread_in_Java */
               {10, 0},  /* _thread_blocked */
               {4, -1},  /* _thread_in_native: running native code, or in a system call */
               {6, -1},  /* _thread_in_vm */
               {9, -1},  /* _thread_in_Java_trans */
               {11, -1}, /* _thread_blocked_trans */
               {0, -1},  /* _thread_uninitialized */
               {-1, -1}};
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
    cr_expect_eq(hotspot_state_runs(&l, cases[i].state), cases[i].runs, "state %d: %d, not %d",
                 cases[i].state, hotspot_state_runs(&l, cases[i].state), cases[i].runs);

  /* a JVM that does not describe the two states: the kernel is asked about every thread */
  ints[2].name = "_thread_in_Java_renamed";
  ints[3].name = "_thread_blocked_renamed";
  cr_assert_eq(hotspot_read_layout(fake_sym, NULL, &l, &why), 0, "the states are optional");
  cr_expect_eq(l.in_java, -1);
  cr_expect_eq(l.blocked, -1);
  for (int st = -1; st <= 12; st++)
    cr_expect_eq(hotspot_state_runs(&l, st), -1, "state %d with no states known", st);
}

Test(hotspot, a_field_of_a_superclass) {
  /* JDK 25: JavaThread::_osthread is listed as Thread::_osthread */
  full_table();
  drop_field("JavaThread", "_osthread");
  add_field("Thread", "_osthread", 1016, 0);
  add_field("ThreadShadow", "_stack_size", 3, 0); /* further up, but JavaThread's own comes first */
  struct hotspot_layout l;
  const char *why = NULL;
  cr_assert_eq(hotspot_read_layout(fake_sym, NULL, &l, &why), 0, "%s", why ? why : "");
  cr_assert_eq(l.osthread, 1016);
  cr_assert_eq(l.stack_size, 600, "the most derived declaration wins");
  cr_assert_eq(l.anchor, 656, "not Thread's field of the same name");
  drop_field("JavaThread", "_stack_base");
  add_field("ThreadShadow", "_stack_base", 24, 0);
  cr_assert_eq(hotspot_read_layout(fake_sym, NULL, &l, &why), 0, "%s", why ? why : "");
  cr_assert_eq(l.stack_base, 24, "two levels up");
  no_types = 1; /* without a types table only the named type is searched */
  cr_assert_eq(hotspot_read_layout(fake_sym, NULL, &l, &why), -ENOENT);
  cr_assert_str_eq(why, "JavaThread::_stack_base");
  no_types = 0;
  types[2].super = "Thread"; /* a cycle in a broken table ends */
  drop_field("ThreadShadow", "_stack_base");
  cr_assert_eq(hotspot_read_layout(fake_sym, NULL, &l, &why), -ENOENT);
}

/* A flag table entry, members in another order than HotSpot's (JDK 17's _flags and _type are
 * shorts: one of each width). */
struct fake_flag {
  int32_t type;
  void *addr;
  int16_t flags;
  const char *name;
};

#define NFLAGS 100 /* more than the reader reads at once */
static struct fake_flag flag_table[NFLAGS + 1];
static struct fake_flag *flags_ptr = flag_table;
static size_t num_flags = NFLAGS + 1; /* with the closing entry, as HotSpot counts it */
static _Bool bools[NFLAGS];

/* The tables with JVMFlag, and NFLAGS bool flags "Flag<i>" at their default, false. */
static void flag_tables(void) {
  static char names[NFLAGS][16];
  full_table();
  types[3] = (struct fake_type){.name = "JVMFlag", .size = sizeof(struct fake_flag)};
  add_field("JVMFlag", "_type", offsetof(struct fake_flag, type), 0);
  add_field("JVMFlag", "_name", offsetof(struct fake_flag, name), 0);
  add_field("JVMFlag", "_addr", offsetof(struct fake_flag, addr), 0);
  add_field("JVMFlag", "_flags", offsetof(struct fake_flag, flags), 0);
  fields[nfields++] = (struct fake_field){
      .type = "JVMFlag", .field = "flags", .is_static = 1, .address = &flags_ptr};
  fields[nfields++] = (struct fake_field){
      .type = "JVMFlag", .field = "numFlags", .is_static = 1, .address = &num_flags};
  memset(flag_table, 0, sizeof flag_table);
  for (int i = 0; i < NFLAGS; i++) {
    snprintf(names[i], sizeof names[i], "Flag%d", i);
    bools[i] = 0;
    flag_table[i] = (struct fake_flag){.type = 0, .addr = &bools[i], .flags = 0, .name = names[i]};
  }
}

/* What the sampler does with a flag it finds at its default: sets it. 1 (set), 0 (on already),
 * or hotspot_flag_find's error; -EFAULT when the value could not be written. */
static int flag_on(const char *name, const char **why) {
  uintptr_t addr = 0;
  int rc = hotspot_flag_find(fake_sym, NULL, name, &addr, why);
  if (rc != 0) return rc == 1 ? 0 : rc;
  if (hotspot_flag_set(addr, 1) != 0) {
    *why = "the flag's value is not writable";
    return -EFAULT;
  }
  return 1;
}

Test(hotspot, a_bool_flag_is_turned_on) {
  flag_tables();
  const char *why = NULL;
  flag_table[70].name = "DebugNonSafepoints"; /* in the second batch */
  flag_table[69].name = "DebugNonSafepointsToo";
  flag_table[68].name = "DebugNonSafepoint";
  cr_assert_eq(flag_on("DebugNonSafepoints", &why), 1, "%s", why ? why : "");
  cr_assert(bools[70], "the flag's value is true");
  cr_assert(!bools[69] && !bools[68], "names that only begin alike stay as they were");
  cr_assert_eq(flag_on("DebugNonSafepoints", &why), 0, "on already");
  uintptr_t at = 0;
  cr_assert_eq(hotspot_flag_find(fake_sym, NULL, "DebugNonSafepoints", &at, &why), 1);
  cr_assert_eq(hotspot_flag_set(at, 0), 0, "and put back");
  cr_assert(!bools[70]);
  bools[70] = 1;

  /* set on the command line (origin COMMAND_LINE, with a kind bit above the origin's 4) */
  bools[70] = 0;
  flag_table[70].flags = 1 | 1 << 4;
  cr_assert_eq(flag_on("DebugNonSafepoints", &why), -EPERM);
  cr_assert(strstr(why, "command line"), "%s", why);
  cr_assert(!bools[70], "left as the command line set it");
  flag_table[70].flags = 1 << 4; /* only a kind bit: at its default */
  cr_assert_eq(flag_on("DebugNonSafepoints", &why), 1);

  flag_table[70].type = 1; /* an int flag */
  cr_assert_eq(flag_on("DebugNonSafepoints", &why), -ENOENT);
  cr_assert_str_eq(why, "the flag is not a bool");
  cr_assert_eq(flag_on("NoSuchFlag", &why), -ENOENT);
  cr_assert(strstr(why, "no such flag"), "%s", why);

  flag_tables(); /* the first entry, and one past the table's end is not read */
  flag_table[0].name = "DebugNonSafepoints";
  flag_table[NFLAGS].name = "Past"; /* the closing entry */
  cr_assert_eq(flag_on("DebugNonSafepoints", &why), 1);
  cr_assert(bools[0]);
  num_flags = NFLAGS;
  flag_table[NFLAGS].name = "DebugNonSafepoints";
  flag_table[0].name = "Flag0";
  cr_assert_eq(flag_on("DebugNonSafepoints", &why), -ENOENT,
               "an entry past numFlags is not the table's");
  num_flags = NFLAGS + 1;
}

Test(hotspot, a_flag_table_that_cannot_be_read_does_not_fault) {
  long page = sysconf(_SC_PAGESIZE);
  char *m =
      mmap(NULL, (size_t)page * 2, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  cr_assert_neq(m, MAP_FAILED);
  flag_tables();
  const char *why = NULL;
  /* names on a page that cannot be read, before the flag and in its batch */
  strcpy(m + page - 8, "Flag");
  flag_table[3].name = m + page - 4; /* runs into the next page */
  flag_table[4].name = m + page;
  flag_table[5].name = NULL;
  flag_table[6].name = "DebugNonSafepoints";
  cr_assert_eq(mprotect(m + page, (size_t)page, PROT_NONE), 0);
  cr_assert_eq(flag_on("DebugNonSafepoints", &why), 1, "%s", why ? why : "");
  cr_assert(bools[6]);
  /* its value on a page that can be read, not written */
  bools[6] = 0;
  m[0] = 0;
  flag_table[6].addr = m;
  cr_assert_eq(mprotect(m, (size_t)page, PROT_READ), 0);
  cr_assert_eq(flag_on("DebugNonSafepoints", &why), -EFAULT);
  cr_assert(strstr(why, "writable"), "%s", why);
  flag_table[6].addr = m + page; /* nor read */
  cr_assert_eq(flag_on("DebugNonSafepoints", &why), -EFAULT);
  /* the table itself not readable */
  flags_ptr = (struct fake_flag *)(void *)(m + page);
  cr_assert_eq(flag_on("DebugNonSafepoints", &why), -EFAULT);
  flags_ptr = flag_table;
  /* not described */
  drop_field("JVMFlag", "_addr");
  cr_assert_eq(flag_on("DebugNonSafepoints", &why), -ENOENT);
  cr_assert_str_eq(why, "not available: JVMFlag::_addr");
  munmap(m, (size_t)page * 2);
}

/* A blob header at `h` for code [code, code + size). */
static void put_blob(unsigned char *h, uintptr_t code, size_t size, int32_t header, int32_t total,
                     int32_t frame) {
  memcpy(h + 12, &total, 4);
  memcpy(h + 16, &header, 4);
  memcpy(h + 28, &frame, 4);
  uintptr_t end = code + size;
  memcpy(h + 32, &code, 8);
  memcpy(h + 40, &end, 8);
}

Test(hotspot, blob_frame_size_is_found_before_the_code) {
  full_table();
  struct hotspot_layout l;
  const char *why = NULL;
  cr_assert_eq(hotspot_read_layout(fake_sym, NULL, &l, &why), 0);
  long page = sysconf(_SC_PAGESIZE);
  /* an unmapped page, then the blob at the start of the next: the search window below the
   * code reaches into the unmapped page and must shrink instead of faulting */
  unsigned char *m =
      mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  cr_assert_neq(m, MAP_FAILED);
  cr_assert_eq(mprotect(m, page, PROT_NONE), 0);
  unsigned char *blob = m + page;
  memset(blob, 0, page);
  uintptr_t code = (uintptr_t)blob + 112;
  put_blob(blob, code, 96, 104, 208, 2);
  /* nearer the code, words that repeat the code's bounds (as _content_begin/_data_end do) */
  memcpy(blob + 16 + 32, &code, 8);
  uintptr_t end = code + 96;
  memcpy(blob + 16 + 40, &end, 8);
  cr_assert_eq(hotspot_blob_frame_words(&l, (void *)code, 96), 2);
  cr_assert_eq(hotspot_blob_frame_words(&l, (void *)code, 95), 0, "another size: not this blob");
  cr_assert_eq(hotspot_blob_frame_words(&l, (void *)(code + 8), 88), 0, "no header for that code");
  put_blob(blob, code, 96, 104, 208, 100000);
  cr_assert_eq(hotspot_blob_frame_words(&l, (void *)code, 96), 0, "an implausible frame size");
  put_blob(blob, code, 96, 120, 208, 2);
  cr_assert_eq(hotspot_blob_frame_words(&l, (void *)code, 96), 0,
               "a header that would overlap the code");
  cr_assert_eq(hotspot_blob_frame_words(&l, (void *)(m + 64), 16), 0, "code in an unreadable page");
  munmap(m, 2 * page);
}

/* JDK 25: a blob header at `h` states its code as offsets from itself (JDK 25's layout: _size
 * 24, _code_offset 36, _data_offset 40, _frame_size 44, a 16-bit _header_size at 52). */
static void put_blob_offsets(unsigned char *h, int32_t code_off, int32_t size, int32_t total,
                             int32_t frame) {
  int32_t data_off = code_off + size;
  uint16_t header = 64;
  memcpy(h + 24, &total, 4);
  memcpy(h + 36, &code_off, 4);
  memcpy(h + 40, &data_off, 4);
  memcpy(h + 44, &frame, 4);
  memcpy(h + 52, &header, 2);
}

Test(hotspot, blob_frame_size_from_code_offsets) {
  full_table();
  drop_field("CodeBlob", "_code_begin");
  drop_field("CodeBlob", "_code_end");
  for (int i = 0; i < nfields; i++)
    if (strcmp(fields[i].type, "CodeBlob") == 0) fields[i].field = "gone";
  add_field("CodeBlob", "_size", 24, 0);
  add_field("CodeBlob", "_code_offset", 36, 0);
  add_field("CodeBlob", "_data_offset", 40, 0);
  add_field("CodeBlob", "_frame_size", 44, 0);
  add_field("CodeBlob", "_header_size", 52, 0);
  struct hotspot_layout l;
  const char *why = NULL;
  cr_assert_eq(hotspot_read_layout(fake_sym, NULL, &l, &why), 0);
  cr_assert_eq(l.blob_code_begin, -1);
  cr_assert_eq(l.blob_code_offset, 36);
  long page = sysconf(_SC_PAGESIZE);
  unsigned char *m =
      mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  cr_assert_neq(m, MAP_FAILED);
  cr_assert_eq(mprotect(m, page, PROT_NONE), 0);
  unsigned char *blob = m + page;
  memset(blob, 0, page);
  uintptr_t code = (uintptr_t)blob + 160;
  put_blob_offsets(blob, 160, 96, 256, 4);
  /* nearer the code, a decoy at the right distance for its _code_offset, but of another size */
  put_blob_offsets(blob + 64, 96, 200, 400, 9);
  cr_assert_eq(hotspot_blob_frame_words(&l, (void *)code, 96), 4);
  cr_assert_eq(hotspot_blob_frame_words(&l, (void *)code, 95), 0, "another size: not this blob");
  cr_assert_eq(hotspot_blob_frame_words(&l, (void *)(code + 8), 88), 0, "no header for that code");
  put_blob_offsets(blob, 160, 96, 200, 4);
  cr_assert_eq(hotspot_blob_frame_words(&l, (void *)code, 96), 0,
               "a blob size that does not cover the code");
  put_blob_offsets(blob, 160, 96, 256, 0);
  cr_assert_eq(hotspot_blob_frame_words(&l, (void *)code, 96), 0, "no frame");
  cr_assert_eq(hotspot_blob_frame_words(&l, (void *)(m + 64), 16), 0, "code in an unreadable page");
  munmap(m, 2 * page);
}

Test(hotspot, env_offset_is_checked_against_the_thread) {
  full_table();
  struct hotspot_layout l;
  const char *why = NULL;
  cr_assert_eq(hotspot_read_layout(fake_sym, NULL, &l, &why), 0);
  static unsigned char thread[2048], os[512];
  int32_t tid = 4242;
  memcpy(os + 208, &tid, 4);
  const unsigned char *osp = os;
  memcpy(thread + 560, &osp, sizeof osp);
  const void *env = thread + 1024;
  cr_assert_eq(hotspot_find_env(&l, env, (uintptr_t)thread, 4242, &why), 0, "%s", why);
  cr_assert_eq(l.env, 1024);
  cr_assert_eq(hotspot_find_env(&l, env, (uintptr_t)thread, 4243, &why), -EINVAL);
  cr_assert(strstr(why, "OSThread"), "%s", why);
  cr_assert_eq(hotspot_find_env(&l, thread, (uintptr_t)(thread + 8), 4242, &why), -EINVAL);
  cr_assert(strstr(why, "JNIEnv"), "%s", why);
  cr_assert_eq(hotspot_find_env(&l, env, 0, 4242, &why), -EINVAL, "no JavaThread");
}

/* Another thread's tid and JNIEnv from its JavaThread address (threads found at start or
 * attach): read through checked reads, so an unmapped or ended thread is an error, not a
 * fault. */
Test(hotspot, another_threads_ids_from_its_java_thread) {
  full_table();
  struct hotspot_layout l;
  const char *why = NULL;
  cr_assert_eq(hotspot_read_layout(fake_sym, NULL, &l, &why), 0);
  pid_t tid = 0;
  void *env = NULL;
  cr_assert_eq(hotspot_thread_ids(&l, 0x1000, &tid, &env), -EINVAL, "no env offset known yet");
  static unsigned char self[2048], self_os[512], other[2048], other_os[512], unstarted[2048];
  int32_t self_tid = 4242, other_tid = 5151;
  const unsigned char *p = self_os;
  memcpy(self_os + 208, &self_tid, 4);
  memcpy(self + 560, &p, sizeof p);
  cr_assert_eq(hotspot_find_env(&l, self + 1024, (uintptr_t)self, 4242, &why), 0, "%s", why);
  p = other_os;
  memcpy(other_os + 208, &other_tid, 4);
  memcpy(other + 560, &p, sizeof p);
  cr_assert_eq(hotspot_thread_ids(&l, (uintptr_t)other, &tid, &env), 0);
  cr_assert_eq(tid, 5151);
  cr_assert_eq(env, (void *)(other + 1024));
  cr_assert_eq(hotspot_thread_ids(&l, (uintptr_t)unstarted, &tid, &env), -ESRCH, "no OSThread");
  long page = sysconf(_SC_PAGESIZE);
  unsigned char *gone = mmap(NULL, (size_t)page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  cr_assert_neq(gone, MAP_FAILED);
  cr_assert_eq(hotspot_thread_ids(&l, (uintptr_t)gone, &tid, &env), -EFAULT,
               "unreadable JavaThread");
  munmap(gone, (size_t)page);
}

/* The frame-complete offset: written over frame_never_safe at the return address's offset, in
 * the width the table states (int on 17/21, int16_t on 25), never over HotSpot's own claim,
 * lowered only from our own, refused where the page cannot be written. */
Test(hotspot, a_stub_frame_is_made_complete_from_a_return_address) {
  full_table();
  struct hotspot_layout l;
  const char *why = NULL;
  cr_assert_eq(hotspot_read_layout(fake_sym, NULL, &l, &why), 0);
  cr_assert_eq(l.blob_frame_complete, 20);
  cr_assert_eq(l.blob_frame_complete_bytes, 4);
  long page = sysconf(_SC_PAGESIZE);
  unsigned char *m =
      mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  cr_assert_neq(m, MAP_FAILED);
  memset(m, 0xab, (size_t)page);
  uintptr_t header = (uintptr_t)m, code = header + 112;
  put_blob(m, code, 96, 104, 208, 2);
  int32_t never = -1, v;
  memcpy(m + 20, &never, 4);
  uintptr_t h = 0;
  cr_assert_eq(hotspot_blob_find(&l, (void *)code, 96, &h), 2);
  cr_assert_eq(h, header, "the header's address");
  unsigned char before[8], after[8];
  memcpy(before, m + 16, 4);
  memcpy(before + 4, m + 24, 4);
  cr_assert_eq(hotspot_blob_complete_from(&l, header, code, 96, code + 40, -1), 1);
  memcpy(&v, m + 20, 4);
  cr_assert_eq(v, 40, "complete from the return address on: %d", v);
  memcpy(after, m + 16, 4);
  memcpy(after + 4, m + 24, 4);
  cr_assert_eq(memcmp(before, after, 8), 0, "the neighbours untouched");
  cr_assert_eq(hotspot_blob_complete_from(&l, header, code, 96, code + 60, -1), 0,
               "complete there already");
  cr_assert_eq(hotspot_blob_complete_from(&l, header, code, 96, code + 24, -1), -EEXIST,
               "a later offset not ours: left alone");
  cr_assert_eq(hotspot_blob_complete_from(&l, header, code, 96, code + 24, 40), 1,
               "our own, lowered to an earlier return address");
  memcpy(&v, m + 20, 4);
  cr_assert_eq(v, 24);
  cr_assert_eq(hotspot_blob_complete_from(&l, header, code, 96, code + 96, -1), -EINVAL,
               "not inside the code");
  cr_assert_eq(hotspot_blob_complete_from(&l, header, code, 96, code, -1), -EINVAL);
  memcpy(m + 20, &never, 4);
  cr_assert_eq(mprotect(m, (size_t)page, PROT_READ), 0);
  cr_assert_eq(hotspot_blob_complete_from(&l, header, code, 96, code + 40, -1), -EFAULT,
               "a page that cannot be written: refused, not faulted");
  memcpy(&v, m + 20, 4);
  cr_assert_eq(v, -1);
  cr_assert_eq(mprotect(m, (size_t)page, PROT_READ | PROT_WRITE), 0);

  /* JDK 25: a 16-bit field */
  full_table();
  for (int i = 0; i < nfields; i++)
    if (strcmp(fields[i].field, "_frame_complete_offset") == 0) fields[i].type_string = "int16_t";
  cr_assert_eq(hotspot_read_layout(fake_sym, NULL, &l, &why), 0);
  cr_assert_eq(l.blob_frame_complete_bytes, 2);
  int16_t never16 = -1, v16;
  memset(m + 18, 0xab, 8);
  memcpy(m + 20, &never16, 2);
  cr_assert_eq(hotspot_blob_complete_from(&l, header, code, 96, code + 40, -1), 1);
  memcpy(&v16, m + 20, 2);
  cr_assert_eq(v16, 40);
  cr_assert_eq(m[22], 0xab, "two bytes written, not four");

  /* a width not understood, or none stated: never written */
  full_table();
  for (int i = 0; i < nfields; i++)
    if (strcmp(fields[i].field, "_frame_complete_offset") == 0) fields[i].type_string = "short";
  cr_assert_eq(hotspot_read_layout(fake_sym, NULL, &l, &why), 0);
  cr_assert_eq(l.blob_frame_complete, -1);
  cr_assert_eq(hotspot_blob_complete_from(&l, header, code, 96, code + 40, -1), -ENOTSUP);
  munmap(m, (size_t)page);
}
