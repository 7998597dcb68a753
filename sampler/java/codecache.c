/*
 * codecache.c — the set-up half of the code-cache reader (codecache.h): where each field the
 * lookup (codecache_find_sig.c) and the scopes (codecache_scopes_sig.c) read is, from the
 * gHotSpotVM* tables.
 */
#include "codecache.h"

#include <errno.h>
#include <stddef.h>

/* The fields of one JDK's set, looked up into *at; how many were found. */
struct wanted {
  const char *type, *name;
  long *at;
};
static size_t find_all(hotspot_sym_fn sym, void *ctx, const struct wanted *w, size_t n) {
  size_t found = 0;
  for (size_t i = 0; i < n; i++)
    found += (*w[i].at = hotspot_vm_field(sym, ctx, w[i].type, w[i].name)) >= 0;
  return found;
}

/* The scopes' fields (codecache_scopes): NULL when all are there, else what is missing. Where an
 * nmethod keeps its debug information differs: inside it on JDK 17 and 21; on JDK 25 the scopes
 * and PcDescs in its immutable data and the metadata in its mutable data, both outside the code
 * cache. */
static const char *scopes_init(hotspot_sym_fn sym, void *ctx, struct codecache_layout *l) {
  l->pcd_size = hotspot_vm_type_size(sym, ctx, "PcDesc");
  l->pcd_pc = hotspot_vm_field(sym, ctx, "PcDesc", "_pc_offset");
  l->pcd_scope = hotspot_vm_field(sym, ctx, "PcDesc", "_scope_decode_offset");
  l->nm_pcs_offset = hotspot_vm_field(sym, ctx, "nmethod", "_scopes_pcs_offset");
  if (l->pcd_size <= 0 || l->pcd_size > 64) return "not available: sizeof(PcDesc)";
  if (l->pcd_pc < 0 || l->pcd_pc + 4 > l->pcd_size) return "not available: PcDesc::_pc_offset";
  if (l->pcd_scope < 0 || l->pcd_scope + 4 > l->pcd_size)
    return "not available: PcDesc::_scope_decode_offset";
  if (l->nm_pcs_offset < 0) return "not available: nmethod::_scopes_pcs_offset";
  const struct wanted inside[] = {{"nmethod", "_dependencies_offset", &l->nm_deps_offset},
                                  {"nmethod", "_metadata_offset", &l->nm_metadata_offset},
                                  {"nmethod", "_scopes_data_begin", &l->nm_scopes_begin}},
                      apart[] = {{"nmethod", "_immutable_data", &l->nm_immutable},
                                 {"nmethod", "_immutable_data_size", &l->nm_immutable_size},
                                 {"nmethod", "_scopes_data_offset", &l->nm_scopes_offset},
                                 {"CodeBlob", "_mutable_data", &l->blob_mutable},
                                 {"CodeBlob", "_relocation_size", &l->blob_reloc_size},
                                 {"CodeBlob", "_mutable_data_size", &l->blob_mutable_size}};
  const size_t n_inside = sizeof inside / sizeof inside[0],
               n_apart = sizeof apart / sizeof apart[0];
  if (find_all(sym, ctx, inside, n_inside) == n_inside) {
    l->nm_immutable = l->nm_immutable_size = l->nm_scopes_offset = -1;
    l->blob_mutable = l->blob_reloc_size = l->blob_mutable_size = -1;
  } else if (find_all(sym, ctx, apart, n_apart) == n_apart) {
    l->nm_deps_offset = l->nm_metadata_offset = l->nm_scopes_begin = -1;
  } else {
    return "not available: nmethod::_scopes_data_begin/_metadata_offset/_dependencies_offset, "
           "or nmethod::_immutable_data/_immutable_data_size/_scopes_data_offset with "
           "CodeBlob::_mutable_data/_relocation_size/_mutable_data_size";
  }
  /* the stream's encoding is not in the tables: it changed with the release (UNSIGNED5, which
   * excludes the byte 0, taken from JDK 20 on; 17's and 21's are proven by jvm_codecache, 18-20
   * are not tried) */
  const int *major = hotspot_vm_static(sym, ctx, "Abstract_VM_Version", "_vm_major_version");
  if (!major || *major < 9) return "not available: Abstract_VM_Version::_vm_major_version";
  l->u5_excluded = *major >= 20;
  return NULL;
}

int codecache_init(hotspot_sym_fn sym, void *ctx, struct codecache_layout *l, const char **why) {
  static const struct {
    const char *type, *name, *what;
    size_t at;
  } need[] = {
#define F(t, n, member) \
  {t, n, "not available: " t "::" n, offsetof(struct codecache_layout, member)}
      F("GrowableArrayBase", "_len", ga_len),
      F("GrowableArray<int>", "_data", ga_data),
      F("CodeHeap", "_memory", heap_memory),
      F("CodeHeap", "_segmap", heap_segmap),
      F("CodeHeap", "_log2_segment_size", heap_log2),
      F("VirtualSpace", "_low_boundary", vs_low_boundary),
      F("VirtualSpace", "_low", vs_low),
      F("VirtualSpace", "_high", vs_high),
      F("CodeBlob", "_name", blob_name),
      F("CodeBlob", "_size", blob_size),
      F("nmethod", "_method", nm_method),
      F("nmethod", "_comp_level", nm_comp_level),
      F("Method", "_constMethod", method_const),
      F("ConstMethod", "_constants", const_constants),
      F("ConstMethod", "_method_idnum", const_idnum),
      F("ConstantPool", "_pool_holder", pool_holder),
      F("InstanceKlass", "_methods_jmethod_ids", klass_jmethod_ids),
#undef F
  };
  for (size_t i = 0; i < sizeof need / sizeof need[0]; i++) {
    long v = hotspot_vm_field(sym, ctx, need[i].type, need[i].name);
    if (v < 0) {
      *why = need[i].what;
      return -ENOENT;
    }
    *(long *)((char *)l + need[i].at) = v;
  }
  l->heaps = (uintptr_t)hotspot_vm_static(sym, ctx, "CodeCache", "_heaps");
  if (!l->heaps) {
    *why = "not available: CodeCache::_heaps";
    return -ENOENT;
  }
  long header = hotspot_vm_field(sym, ctx, "HeapBlock", "_header");
  long used = hotspot_vm_field(sym, ctx, "HeapBlock::Header", "_used");
  l->block_size = hotspot_vm_type_size(sym, ctx, "HeapBlock");
  if (header < 0 || used < 0 || l->block_size <= 0) {
    *why = header < 0 ? "not available: HeapBlock::_header"
           : used < 0 ? "not available: HeapBlock::Header::_used"
                      : "not available: sizeof(HeapBlock)";
    return -ENOENT;
  }
  l->block_used = header + used;
  /* the walk's (codecache_each_nmethod): a size_t or a uint32_t by release, _used right after */
  long length = hotspot_vm_field(sym, ctx, "HeapBlock::Header", "_length");
  l->block_length = length < 0 ? -1 : header + length;
  l->block_length_bytes = used - length == 4 ? 4 : 8;
  l->blob_code_begin = hotspot_vm_field(sym, ctx, "CodeBlob", "_code_begin");
  l->blob_code_end = hotspot_vm_field(sym, ctx, "CodeBlob", "_code_end");
  l->blob_code_offset = hotspot_vm_field(sym, ctx, "CodeBlob", "_code_offset");
  l->blob_data_offset = hotspot_vm_field(sym, ctx, "CodeBlob", "_data_offset");
  if (l->blob_code_begin >= 0 && l->blob_code_end >= 0) {
    l->blob_code_offset = l->blob_data_offset = -1;
  } else if (l->blob_code_offset >= 0 && l->blob_data_offset >= 0) {
    l->blob_code_begin = l->blob_code_end = -1;
  } else {
    *why = "not available: CodeBlob::_code_begin/_code_end or _code_offset/_data_offset";
    return -ENOENT;
  }
  /* an int in JDK 17/21; JDK 25 declares it CompLevel, a one-byte enum the types table sizes */
  long level = hotspot_vm_type_size(sym, ctx, "CompLevel");
  l->comp_level_bytes = level == 1 || level == 2 ? (int)level : 4;
  l->nm_compile_id = hotspot_vm_field(sym, ctx, "nmethod", "_compile_id"); /* optional */
  l->method_code = hotspot_vm_field(sym, ctx, "Method", "_code");          /* optional */
  l->scopes_why = scopes_init(sym, ctx, l);
  l->read = NULL; /* process_vm_readv until the caller gives the guard's read */
  l->mask = NULL;
  l->read_guarded = l->read_bound = 0;
  return 0;
}
