/*
 * hotspot.c — reads field offsets and constants from libjvm's gHotSpotVM* tables (see
 * hotspot.h). The tables are arrays of entries whose layout the JVM states itself: each
 * gHotSpotVM...Offset symbol holds the offset of one member of an entry, ...ArrayStride the
 * entry size; a NULL type (or name) ends the array.
 */
#include "hotspot.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "platform.h"

struct table {
  const char *base; /* first entry */
  uint64_t stride;
};

static int read_u64(hotspot_sym_fn sym, void *ctx, const char *name, uint64_t *v) {
  const uint64_t *p = sym(name, ctx);
  if (!p) return -1;
  *v = *p;
  return 0;
}

static int read_table(hotspot_sym_fn sym, void *ctx, const char *array, const char *stride,
                      struct table *t) {
  const char *const *p = sym(array, ctx);
  if (!p || !*p || read_u64(sym, ctx, stride, &t->stride) != 0 || t->stride == 0) return -1;
  t->base = *p;
  return 0;
}

static const char *str_at(const char *entry, uint64_t off) {
  const char *s;
  memcpy(&s, entry + off, sizeof s);
  return s;
}

/* gHotSpotVMStructs and where an entry keeps its type name, field name, static flag, offset. */
struct structs {
  struct table t;
  uint64_t type, field, is_static, offset;
  uint64_t type_string; /* where an entry keeps its C type's name; UINT64_MAX: not stated */
};

static int read_structs(hotspot_sym_fn sym, void *ctx, struct structs *v) {
  if (read_u64(sym, ctx, "gHotSpotVMStructEntryTypeStringOffset", &v->type_string) != 0)
    v->type_string = UINT64_MAX;
  return read_table(sym, ctx, "gHotSpotVMStructs", "gHotSpotVMStructEntryArrayStride", &v->t) !=
                     0 ||
                 read_u64(sym, ctx, "gHotSpotVMStructEntryTypeNameOffset", &v->type) != 0 ||
                 read_u64(sym, ctx, "gHotSpotVMStructEntryFieldNameOffset", &v->field) != 0 ||
                 read_u64(sym, ctx, "gHotSpotVMStructEntryIsStaticOffset", &v->is_static) != 0 ||
                 read_u64(sym, ctx, "gHotSpotVMStructEntryOffsetOffset", &v->offset) != 0
             ? -1
             : 0;
}

/* gHotSpotVMTypes: where an entry keeps its type name and its superclass's name. Optional
 * (t.base NULL when the JVM has none): without it, fields are looked up in the named type only. */
struct types {
  struct table t;
  uint64_t type, super;
};

static void read_types(hotspot_sym_fn sym, void *ctx, struct types *v) {
  if (read_table(sym, ctx, "gHotSpotVMTypes", "gHotSpotVMTypeEntryArrayStride", &v->t) != 0 ||
      read_u64(sym, ctx, "gHotSpotVMTypeEntryTypeNameOffset", &v->type) != 0 ||
      read_u64(sym, ctx, "gHotSpotVMTypeEntrySuperclassNameOffset", &v->super) != 0)
    v->t.base = NULL;
}

/* The name of type's superclass, or NULL. */
static const char *super_of(const struct types *v, const char *type) {
  if (!v || !v->t.base) return NULL;
  for (const char *e = v->t.base;; e += v->t.stride) {
    const char *tname = str_at(e, v->type);
    if (!tname) return NULL;
    if (strcmp(tname, type) == 0) return str_at(e, v->super);
  }
}

/* Offset of a non-static field of `type`, declared by it or by one of its superclasses: the
 * tables name the class that declares a field, and fields move up (JDK 21 lists
 * JavaThread::_osthread, JDK 25 Thread::_osthread — at its place in a JavaThread all the same).
 * Up to 8 levels (a broken table's cycle ends). -1 when none has it. */
static long field_typed(const struct structs *v, const struct types *ty, const char *type,
                        const char *name, const char **c_type) {
  if (c_type) *c_type = NULL;
  for (int depth = 0; type && depth < 8; depth++, type = super_of(ty, type)) {
    for (const char *e = v->t.base;; e += v->t.stride) {
      const char *tname = str_at(e, v->type), *fname = str_at(e, v->field);
      if (!tname) break;
      int32_t is_static;
      memcpy(&is_static, e + v->is_static, sizeof is_static);
      if (fname && !is_static && strcmp(tname, type) == 0 && strcmp(fname, name) == 0) {
        uint64_t off;
        memcpy(&off, e + v->offset, sizeof off);
        if (c_type && v->type_string != UINT64_MAX) *c_type = str_at(e, v->type_string);
        return off <= 1u << 20 ? (long)off : -1; /* a field offset within a plausible object */
      }
    }
  }
  return -1;
}

static long field(const struct structs *v, const struct types *ty, const char *type,
                  const char *name) {
  return field_typed(v, ty, type, name, NULL);
}

static int int_constant(hotspot_sym_fn sym, void *ctx, const char *name, int *v) {
  struct table t;
  uint64_t nm, val;
  if (read_table(sym, ctx, "gHotSpotVMIntConstants", "gHotSpotVMIntConstantEntryArrayStride", &t) !=
          0 ||
      read_u64(sym, ctx, "gHotSpotVMIntConstantEntryNameOffset", &nm) != 0 ||
      read_u64(sym, ctx, "gHotSpotVMIntConstantEntryValueOffset", &val) != 0)
    return -1;
  for (const char *e = t.base;; e += t.stride) {
    const char *n = str_at(e, nm);
    if (!n) return -1;
    if (strcmp(n, name) == 0) {
      int32_t x;
      memcpy(&x, e + val, sizeof x);
      *v = x;
      return 0;
    }
  }
}

long hotspot_vm_field(hotspot_sym_fn sym, void *ctx, const char *type, const char *name) {
  struct structs vs;
  if (read_structs(sym, ctx, &vs) != 0) return -1;
  struct types ty;
  read_types(sym, ctx, &ty);
  return field(&vs, &ty, type, name);
}

void *hotspot_vm_static(hotspot_sym_fn sym, void *ctx, const char *type, const char *name) {
  struct structs vs;
  uint64_t addr_off;
  if (read_structs(sym, ctx, &vs) != 0 ||
      read_u64(sym, ctx, "gHotSpotVMStructEntryAddressOffset", &addr_off) != 0)
    return NULL;
  for (const char *e = vs.t.base;; e += vs.t.stride) {
    const char *tname = str_at(e, vs.type), *fname = str_at(e, vs.field);
    if (!tname) return NULL;
    int32_t is_static;
    memcpy(&is_static, e + vs.is_static, sizeof is_static);
    if (fname && is_static && strcmp(tname, type) == 0 && strcmp(fname, name) == 0) {
      void *a;
      memcpy(&a, e + addr_off, sizeof a);
      return a;
    }
  }
}

long hotspot_vm_type_size(hotspot_sym_fn sym, void *ctx, const char *type) {
  struct types ty;
  uint64_t size_off;
  read_types(sym, ctx, &ty);
  if (!ty.t.base || read_u64(sym, ctx, "gHotSpotVMTypeEntrySizeOffset", &size_off) != 0) return -1;
  for (const char *e = ty.t.base;; e += ty.t.stride) {
    const char *tname = str_at(e, ty.type);
    if (!tname) return -1;
    if (strcmp(tname, type) == 0) {
      uint64_t size;
      memcpy(&size, e + size_off, sizeof size);
      return size <= 1u << 20 ? (long)size : -1;
    }
  }
}

int hotspot_read_layout(hotspot_sym_fn sym, void *ctx, struct hotspot_layout *l, const char **why) {
  static const struct {
    const char *type, *name, *what;
    size_t at;
  } need[] = {
      {"JavaThread", "_anchor", "JavaThread::_anchor", offsetof(struct hotspot_layout, anchor)},
      {"JavaFrameAnchor", "_last_Java_sp", "JavaFrameAnchor::_last_Java_sp",
       offsetof(struct hotspot_layout, last_sp)},
      {"JavaFrameAnchor", "_last_Java_pc", "JavaFrameAnchor::_last_Java_pc",
       offsetof(struct hotspot_layout, last_pc)},
      {"JavaThread", "_thread_state", "JavaThread::_thread_state",
       offsetof(struct hotspot_layout, state)},
      {"JavaThread", "_stack_base", "JavaThread::_stack_base",
       offsetof(struct hotspot_layout, stack_base)},
      {"JavaThread", "_stack_size", "JavaThread::_stack_size",
       offsetof(struct hotspot_layout, stack_size)},
      {"JavaThread", "_osthread", "JavaThread::_osthread",
       offsetof(struct hotspot_layout, osthread)},
      {"OSThread", "_thread_id", "OSThread::_thread_id", offsetof(struct hotspot_layout, os_tid)},
  };
  memset(l, 0, sizeof *l);
  struct structs vs;
  if (read_structs(sym, ctx, &vs) != 0) {
    *why = "this JVM exports no readable gHotSpotVMStructs table (not HotSpot?)";
    return -ENOENT;
  }
  struct types ty;
  read_types(sym, ctx, &ty);
  for (size_t i = 0; i < sizeof need / sizeof need[0]; i++) {
    long v = field(&vs, &ty, need[i].type, need[i].name);
    if (v < 0) {
      *why = need[i].what;
      return -ENOENT;
    }
    memcpy((char *)l + need[i].at, &v, sizeof v);
  }
  if (int_constant(sym, ctx, "_thread_in_vm", &l->in_vm) != 0) {
    *why = "the constant _thread_in_vm";
    return -ENOENT;
  }
  if (int_constant(sym, ctx, "_thread_in_Java", &l->in_java) != 0) l->in_java = -1;
  if (int_constant(sym, ctx, "_thread_blocked", &l->blocked) != 0) l->blocked = -1;
  if (int_constant(sym, ctx, "_thread_in_vm_trans", &l->in_vm_trans) != 0) l->in_vm_trans = -1;
  l->last_fp = field(&vs, &ty, "JavaFrameAnchor", "_last_Java_fp");
  l->blob_code_begin = field(&vs, &ty, "CodeBlob", "_code_begin");
  l->blob_code_end = field(&vs, &ty, "CodeBlob", "_code_end");
  l->blob_frame_size = field(&vs, &ty, "CodeBlob", "_frame_size");
  l->blob_size = field(&vs, &ty, "CodeBlob", "_size");
  l->blob_header_size = field(&vs, &ty, "CodeBlob", "_header_size");
  l->blob_code_offset = field(&vs, &ty, "CodeBlob", "_code_offset");
  l->blob_data_offset = field(&vs, &ty, "CodeBlob", "_data_offset");
  /* an int on JDK 17 and 21, an int16_t on JDK 25: its width from the table, any other type
   * (or none stated) and it is not written */
  const char *c_type;
  l->blob_frame_complete = field_typed(&vs, &ty, "CodeBlob", "_frame_complete_offset", &c_type);
  l->blob_frame_complete_bytes = !c_type                          ? 0
                                 : strcmp(c_type, "int") == 0     ? 4
                                 : strcmp(c_type, "int16_t") == 0 ? 2
                                                                  : 0;
  if (!l->blob_frame_complete_bytes) l->blob_frame_complete = -1;
  l->nm_compile_id = field(&vs, &ty, "nmethod", "_compile_id");
  return 0;
}

/* The flag table's entries are read 64 at a time (the stride is capped so that they fit the
 * stack), and each one's name through the kernel in one system call for the 64 */
#define FLAG_BATCH 64
#define FLAG_STRIDE_MAX 256
#define FLAG_NAME_MAX 64
#define FLAGS_MAX 16384
/* _flags and _type are a short or an int (their width differs between JDKs); both are read by
 * their first byte, the low one on x86-64 and aarch64 Linux (little-endian): the origin is the
 * low 4 bits of _flags, and a type below 256 is 0 exactly when that byte is */
#define FLAG_ORIGIN_MASK 0xF /* JVMFlag::VALUE_ORIGIN_MASK (17, 21, 25); DEFAULT is 0 */
#define FLAG_TYPE_BOOL 0     /* JVMFlag::TYPE_bool, the first of FlagType (17, 21, 25) */

/* Where the flag table is and how an entry reads; -ENOENT with *why when not described. */
struct flag_table {
  uintptr_t base;
  size_t count;
  long stride, name, addr, flags, type; /* flags and type -1 when not described */
};

static int flag_table(hotspot_sym_fn sym, void *ctx, struct flag_table *t, const char **why) {
  void *flags = hotspot_vm_static(sym, ctx, "JVMFlag", "flags"),
       *num = hotspot_vm_static(sym, ctx, "JVMFlag", "numFlags");
  t->stride = hotspot_vm_type_size(sym, ctx, "JVMFlag");
  t->name = hotspot_vm_field(sym, ctx, "JVMFlag", "_name");
  t->addr = hotspot_vm_field(sym, ctx, "JVMFlag", "_addr");
  t->flags = hotspot_vm_field(sym, ctx, "JVMFlag", "_flags");
  t->type = hotspot_vm_field(sym, ctx, "JVMFlag", "_type");
  *why = !flags || !num   ? "not available: JVMFlag::flags, ::numFlags"
         : t->stride <= 0 ? "not available: sizeof(JVMFlag)"
         : t->name < 0    ? "not available: JVMFlag::_name"
         : t->addr < 0    ? "not available: JVMFlag::_addr"
         : t->stride > FLAG_STRIDE_MAX || t->name + 8 > t->stride || t->addr + 8 > t->stride ||
                 t->flags + 1 > t->stride || t->type + 1 > t->stride
             ? "JVMFlag's fields do not fit its size"
             : NULL;
  if (*why) return -ENOENT;
  if (plat_read_memory((uintptr_t)flags, &t->base, sizeof t->base) != 0 ||
      plat_read_memory((uintptr_t)num, &t->count, sizeof t->count) != 0 || !t->base ||
      t->count > FLAGS_MAX) {
    *why = "JVMFlag::flags or ::numFlags does not read as a table";
    return -EFAULT;
  }
  return 0;
}

/* The bool flag of entry e, found by its name: its value's address into *addr, and what
 * hotspot_flag_find answers for it. */
static int flag_entry(const struct flag_table *t, const unsigned char *e, uintptr_t *addr,
                      const char **why) {
  unsigned char value;
  *addr = hotspot_word_at(e, t->addr);
  if (t->type >= 0 && e[t->type] != FLAG_TYPE_BOOL) {
    *why = "the flag is not a bool";
    return -ENOENT;
  }
  if (!*addr || plat_read_memory(*addr, &value, 1) != 0 || value > 1) {
    *why = "the flag's value does not read as a bool";
    return -EFAULT;
  }
  if (value) return 1;
  if (t->flags >= 0 && (e[t->flags] & FLAG_ORIGIN_MASK) != 0) {
    *why = "turned off on the command line (or by the JVM): left off";
    return -EPERM;
  }
  return 0;
}

int hotspot_flag_find(hotspot_sym_fn sym, void *ctx, const char *name, uintptr_t *addr,
                      const char **why) {
  struct flag_table t;
  int rc = flag_table(sym, ctx, &t, why);
  size_t len = strlen(name) + 1; /* with its NUL: a longer name does not match */
  if (rc) return rc;
  if (len > FLAG_NAME_MAX) {
    *why = "the flag's name is too long";
    return -ENOENT;
  }
  unsigned char entries[FLAG_BATCH * FLAG_STRIDE_MAX], names[FLAG_BATCH * FLAG_NAME_MAX],
      ok[FLAG_BATCH];
  uintptr_t at[FLAG_BATCH];
  for (size_t first = 0; first < t.count; first += FLAG_BATCH) {
    int k = t.count - first < FLAG_BATCH ? (int)(t.count - first) : FLAG_BATCH;
    if (plat_read_memory(t.base + first * (size_t)t.stride, entries,
                         (size_t)k * (size_t)t.stride)) {
      *why = "the flag table does not read";
      return -EFAULT;
    }
    for (int i = 0; i < k; i++) at[i] = hotspot_word_at(entries + (size_t)i * t.stride, t.name);
    plat_read_memory_each(at, len, k, names, ok); /* a NULL name (the table's end) fails */
    for (int i = 0; i < k; i++)
      if (ok[i] && memcmp(names + (size_t)i * len, name, len) == 0)
        return flag_entry(&t, entries + (size_t)i * t.stride, addr, why);
  }
  *why = "no such flag in this JVM's table";
  return -ENOENT;
}

int hotspot_flag_set(uintptr_t addr, int on) {
  unsigned char value = on ? 1 : 0;
  return plat_write_memory(addr, &value, 1);
}

#define BLOB_SEARCH 1024 /* bytes before the code searched for the blob's header */

int hotspot_blob_find(const struct hotspot_layout *l, const void *code, size_t size,
                      uintptr_t *header) {
  *header = 0;
  /* JDK 17 and 21: the header holds its code's bounds as addresses; JDK 25: as offsets from
   * the header (code_begin = header + _code_offset, code_end = header + _data_offset; its
   * _header_size is 16 bits there and not needed) */
  int by_address = l->blob_code_begin >= 0 && l->blob_code_end >= 0 && l->blob_header_size >= 0;
  int by_offset = !by_address && l->blob_code_offset >= 0 && l->blob_data_offset >= 0;
  if ((!by_address && !by_offset) || l->blob_frame_size < 0 || l->blob_size < 0) return 0;
  const long offs[] = {by_address ? l->blob_code_begin : l->blob_code_offset,
                       by_address ? l->blob_code_end : l->blob_data_offset,
                       by_address ? l->blob_header_size : l->blob_size, l->blob_frame_size,
                       l->blob_size};
  long need = 0;
  for (size_t i = 0; i < sizeof offs / sizeof offs[0]; i++)
    if (offs[i] + 8 > need) need = offs[i] + 8;
  uintptr_t c = (uintptr_t)code;
  if (c < BLOB_SEARCH || need > BLOB_SEARCH || size > INT32_MAX) return 0;
  /* read the window through the kernel: a part that is not mapped fails the read instead of
   * faulting; then only the part in the code's own page is read (a blob at the start of a
   * mapping) */
  unsigned char buf[BLOB_SEARCH];
  size_t len = BLOB_SEARCH, in_page = (size_t)(c - 1) % (size_t)sysconf(_SC_PAGESIZE) + 1;
  for (int tries = 0;; tries++) {
    if (tries == 2 || len < (size_t)need) return 0;
    if (plat_read_memory(c - len, buf, len) == 0) break;
    if (in_page >= len) return 0;
    len = in_page;
  }
  /* the header: its code range is exactly this one, its header ends at or before the code and
   * the blob's size covers the code (other words of a header can repeat the code's bounds) */
  for (size_t back = ((size_t)need + 7) & ~(size_t)7; back <= len; back += 8) {
    const unsigned char *h = buf + len - back; /* h + need <= buf + len */
    int32_t total = hotspot_i32_at(h, l->blob_size);
    if (by_address) {
      int32_t header = hotspot_i32_at(h, l->blob_header_size);
      if (hotspot_word_at(h, l->blob_code_begin) != c ||
          hotspot_word_at(h, l->blob_code_end) != c + size || header <= 0 ||
          (size_t)header > back || total <= 0 || back + size > (size_t)total)
        continue;
    } else {
      int32_t code_off = hotspot_i32_at(h, l->blob_code_offset),
              data_off = hotspot_i32_at(h, l->blob_data_offset);
      if (code_off <= 0 || (size_t)code_off != back || data_off < code_off ||
          (size_t)(data_off - code_off) != size || total < data_off)
        continue;
    }
    int32_t frame = hotspot_i32_at(h, l->blob_frame_size);
    if (frame <= 0 || frame > 4096) return 0;
    *header = c - back;
    return frame;
  }
  return 0;
}

int hotspot_blob_frame_words(const struct hotspot_layout *l, const void *code, size_t size) {
  uintptr_t header;
  return hotspot_blob_find(l, code, size, &header);
}

int hotspot_blob_complete_from(const struct hotspot_layout *l, uintptr_t header, uintptr_t code,
                               size_t size, uintptr_t pc, int32_t ours) {
  int w = l->blob_frame_complete_bytes;
  if (l->blob_frame_complete < 0 || (w != 2 && w != 4) || !header) return -ENOTSUP;
  uintptr_t at = header + (uintptr_t)l->blob_frame_complete;
  if (at % (uintptr_t)w || pc <= code || pc - code >= size ||
      pc - code > (w == 2 ? INT16_MAX : INT32_MAX))
    return -EINVAL;
  int32_t want = (int32_t)(pc - code), now;
  unsigned char raw[4];
  if (plat_read_memory(at, raw, (size_t)w) != 0) return -EFAULT;
  if (w == 2) {
    int16_t v;
    memcpy(&v, raw, 2);
    now = v;
  } else {
    memcpy(&now, raw, 4);
  }
  if (now >= 0 && now <= want) return 0;       /* complete there already */
  if (now >= 0 && now != ours) return -EEXIST; /* HotSpot's own claim: left as it is */
  if (now < 0 && now != -1) return -EEXIST;    /* not frame_never_safe: not understood */
  /* writable? the same bytes written back through the kernel: a page that is not writable
   * (a JDK that maps its code cache W^X) fails here instead of faulting below */
  if (plat_write_memory(at, raw, (size_t)w) != 0) return -EFAULT;
  if (w == 2)
    __atomic_store_n((int16_t *)at, (int16_t)want, __ATOMIC_RELEASE);
  else
    __atomic_store_n((int32_t *)at, want, __ATOMIC_RELEASE);
  return 1;
}

int hotspot_find_env(struct hotspot_layout *l, const void *jni_env, uintptr_t java_thread, int tid,
                     const char **why) {
  uintptr_t env = (uintptr_t)jni_env;
  if (!java_thread || env < java_thread || env - java_thread > 1u << 20) {
    *why = "the JNIEnv does not lie inside the thread's JavaThread";
    return -EINVAL;
  }
  const char *thread = (const char *)java_thread;
  const char *os;
  memcpy(&os, thread + l->osthread, sizeof os);
  int32_t os_tid = 0;
  if (os) memcpy(&os_tid, os + l->os_tid, sizeof os_tid);
  if (!os || os_tid != tid) {
    *why = "the JavaThread's OSThread does not name the current thread";
    return -EINVAL;
  }
  l->env = (long)(env - java_thread);
  return 0;
}

int hotspot_state_runs(const struct hotspot_layout *l, int state) {
  if (state == l->in_java && state >= 0) return 1;
  if (state == l->blocked && state >= 0) return 0;
  return -1;
}

int hotspot_thread_ids(const struct hotspot_layout *l, uintptr_t java_thread, pid_t *tid,
                       void **jni_env) {
  if (!java_thread || !l->env) return -EINVAL;
  uintptr_t os = 0;
  int32_t os_tid = 0;
  int rc = plat_read_memory(java_thread + (uintptr_t)l->osthread, &os, sizeof os);
  if (!rc && !os) rc = -ESRCH; /* not started, or gone */
  if (!rc) rc = plat_read_memory(os + (uintptr_t)l->os_tid, &os_tid, sizeof os_tid);
  if (!rc && os_tid <= 0) rc = -ESRCH;
  if (rc) return rc;
  *tid = (pid_t)os_tid;
  *jni_env = (void *)(java_thread + (uintptr_t)l->env);
  return 0;
}
