/*
 * codecache.c — the set-up half of the code-cache reader (codecache.h): where each field the
 * lookup (codecache_find_sig.c) reads is, from the gHotSpotVM* tables.
 */
#include "codecache.h"

#include <errno.h>
#include <stddef.h>

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
  return 0;
}
