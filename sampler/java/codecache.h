/*
 * codecache.h — finds a compiled method from a PC in HotSpot's code cache itself, on demand,
 * instead of from the JVMTI events HotSpot posts for every compilation (issue #33: the events
 * cost JIT-heavy runs their Service Thread's work per nmethod whether or not a sample ever lands
 * there). Everything is located through the JVM's self-description (the gHotSpotVM* tables,
 * hotspot.h), never fixed offsets: CodeCache::_heaps → each CodeHeap's reserved memory, its
 * segment map and segment size, walked back as HotSpot's CodeHeap::find_start does to the
 * HeapBlock that holds the PC → the CodeBlob after it → for an nmethod its Method*, compile
 * level and jmethodID (Method → ConstMethod's idnum and constant pool → the pool holder's
 * InstanceKlass::_methods_jmethod_ids cache).
 *
 * Not wired into the sampler yet: the reader is proven against CompiledMethodLoad by the test
 * agent tests/integration/jni/codecheck.c (jvm_codecache). A JVM whose tables lack a field gets
 * codecache_init's "not available: <field>".
 */
#ifndef SAMPLER_CODECACHE_H
#define SAMPLER_CODECACHE_H

#include <stdint.h>

#include "hotspot.h"

#define CODECACHE_HEAPS \
  8 /* code heaps looked at (HotSpot has 1 or 3: non-nmethods, profiled, not) */

/* Where the fields are, from the tables (codecache_init). */
struct codecache_layout {
  uintptr_t heaps;                          /* &CodeCache::_heaps (a GrowableArray<CodeHeap*>*) */
  long ga_len, ga_data;                     /* GrowableArrayBase::_len, GrowableArray<int>::_data */
  long heap_memory, heap_segmap, heap_log2; /* CodeHeap::_memory, _segmap, _log2_segment_size */
  long vs_low_boundary, vs_low, vs_high;    /* VirtualSpace:: */
  long block_size, block_used; /* sizeof(HeapBlock); HeapBlock::_header + Header::_used */
  long blob_name, blob_size;   /* CodeBlob::_name, _size */
  /* the code's bounds: as addresses (_code_begin, _code_end: JDK 17, 21) or as offsets from the
   * blob (_code_offset, _data_offset: JDK 25); the other pair -1 */
  long blob_code_begin, blob_code_end, blob_code_offset, blob_data_offset;
  long nm_method, nm_comp_level; /* nmethod:: (or its superclass CompiledMethod, JDK 17/21) */
  int comp_level_bytes;          /* sizeof the _comp_level field: 4 (int) or CompLevel's */
  long method_const, const_constants, const_idnum; /* Method::_constMethod, ConstMethod:: */
  long pool_holder, klass_jmethod_ids;             /* ConstantPool::_pool_holder, InstanceKlass:: */
};

/* What one PC is in. */
struct codecache_blob {
  uintptr_t blob;                 /* the CodeBlob's address */
  uintptr_t code_begin, code_end; /* its code: [code_begin, code_end) */
  int is_nmethod;                 /* a compiled Java method (or a native method's wrapper) */
  int comp_level;                 /* nmethods: 1-3 C1, 4 C2, 0 a native wrapper; -1 others */
  uintptr_t method;               /* nmethods: the Method*; 0 otherwise */
  void *jmethod_id;               /* nmethods: its jmethodID, NULL when none was made yet */
};

/* Fills *l from the tables `sym` finds. 0, or -ENOENT with *why set to a constant text
 * "not available: <field>". Does not read the code cache (callable from Agent_OnLoad, before
 * HotSpot made it). Not signal-safe (searches the tables). */
int codecache_init(hotspot_sym_fn sym, void *ctx, struct codecache_layout *l, const char **why);

/* The code blob that contains pc. 0 with *b filled; -ENOENT when pc is in none of the code
 * heaps, or in a free block, or between blobs; -EFAULT when a read of JVM memory failed or
 * what it read is inconsistent (a blob being freed meanwhile, say). Every read goes through
 * the kernel (process_vm_readv), so no address can make it fault; it takes no lock and
 * allocates nothing: signal-safe, any thread (a handler may call it). A blob freed while it
 * runs is not detected beyond those checks: the caller knows whether its PC is live. */
int codecache_find(const struct codecache_layout *l, uintptr_t pc, struct codecache_blob *b);

/* The segment-map walk on bytes already read: map[0, n) holds the bytes of segments
 * [base, base + n); from segment *idx (in that range) to the first segment of its block —
 * HotSpot marks a block's first segment 0, each other one with a distance back to an earlier
 * segment of the same block (1..0xFE), a free segment 0xFF. Returns that index; -ENOENT for a
 * free segment; -EAGAIN with *idx set to where the walk stands when it leaves the bytes read
 * (below base: the caller reads earlier bytes and calls again); -EFAULT for a hop before
 * segment 0 (not a segment map). Pure; signal-safe. */
long codecache_segmap_start(const unsigned char *map, long n, long base, long *idx);

#endif
