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
 * For a PC in an nmethod, codecache_scopes gives the inline chain there from the nmethod's own
 * debug information (codecache_scopes_sig.c): its PcDesc table (pc offset → decode offset) and
 * its scopes data, a compressed stream of ScopeDescs (sender's decode offset, method index into
 * the nmethod's metadata, bci) — what CompiledMethodLoad's inline records are made from.
 *
 * codecache_each_nmethod (codecache_walk.c) visits every live nmethod: each code heap's blocks in
 * order, found through the segment map and the blocks' headers.
 *
 * The sampler reads the nmethods that exist at a run's start with it (codemap_add_cache), and
 * stubwalk reads blobs by pc; the reader is proven against CompiledMethodLoad by the test agent
 * tests/integration/jni/codecheck.c (jvm_codecache). A JVM whose tables lack a field gets
 * codecache_init's "not available: <field>" (the scopes' own fields: scopes_why).
 */
#ifndef SAMPLER_CODECACHE_H
#define SAMPLER_CODECACHE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "hotspot.h"

#define CODECACHE_HEAPS \
  8 /* code heaps looked at (HotSpot has 1 or 3: non-nmethods, profiled, not) */

/* A read that cannot fault: len bytes at src into dst on thread tid with signal mask `mask`;
 * 0, -EFAULT (not readable), or -ENOSYS/-ENOSPC (not done: the caller reads otherwise). As
 * guard_read (signal/guard.h). Signal-safe. */
typedef int (*codecache_read_fn)(void *dst, const void *src, size_t len, pid_t tid, uint64_t mask);

/* Where the fields are, from the tables (codecache_init). */
struct codecache_layout {
  uintptr_t heaps;                          /* &CodeCache::_heaps (a GrowableArray<CodeHeap*>*) */
  long ga_len, ga_data;                     /* GrowableArrayBase::_len, GrowableArray<int>::_data */
  long heap_memory, heap_segmap, heap_log2; /* CodeHeap::_memory, _segmap, _log2_segment_size */
  long vs_low_boundary, vs_low, vs_high;    /* VirtualSpace:: */
  long block_size, block_used; /* sizeof(HeapBlock); HeapBlock::_header + Header::_used */
  long block_length;           /* HeapBlock::_header + Header::_length (in segments) */
  int block_length_bytes;      /* its width: 8 (size_t) or 4 (uint32_t), from its neighbour */
  long blob_name, blob_size;   /* CodeBlob::_name, _size */
  /* the code's bounds: as addresses (_code_begin, _code_end: JDK 17, 21) or as offsets from the
   * blob (_code_offset, _data_offset: JDK 25); the other pair -1 */
  long blob_code_begin, blob_code_end, blob_code_offset, blob_data_offset;
  long nm_method, nm_comp_level; /* nmethod:: (or its superclass CompiledMethod, JDK 17/21) */
  long nm_compile_id;            /* nmethod::_compile_id (an int), -1 when not described */
  long method_code;              /* Method::_code (its current nmethod), -1 when not described */
  int comp_level_bytes;          /* sizeof the _comp_level field: 4 (int) or CompLevel's */
  long method_const, const_constants, const_idnum; /* Method::_constMethod, ConstMethod:: */
  long pool_holder, klass_jmethod_ids;             /* ConstantPool::_pool_holder, InstanceKlass:: */
  /* The scopes (codecache_scopes); scopes_why is NULL when this JVM describes them all, else a
   * constant "not available: <field>" and codecache_scopes answers -ENOTSUP. */
  const char *scopes_why;
  long pcd_size, pcd_pc, pcd_scope; /* sizeof(PcDesc), PcDesc::_pc_offset, _scope_decode_offset */
  int u5_excluded; /* the stream's encoding: 1 UNSIGNED5 (21, 25), 0 JDK 17's CompressedStream */
  /* nmethod::_scopes_pcs_offset: from the nmethod (17, 21), from its immutable data (25) */
  long nm_pcs_offset;
  /* JDK 17, 21 (else -1): nmethod::_dependencies_offset (the PcDescs' end), _metadata_offset,
   * CompiledMethod::_scopes_data_begin (an address) */
  long nm_deps_offset, nm_metadata_offset, nm_scopes_begin;
  /* JDK 25 (else -1): nmethod::_immutable_data (an address: dependencies ... scopes data, PcDescs
   * to its end), _immutable_data_size, _scopes_data_offset; CodeBlob::_mutable_data (an address:
   * relocations, then the metadata), _relocation_size, _mutable_data_size */
  long nm_immutable, nm_immutable_size, nm_scopes_offset;
  long blob_mutable, blob_reloc_size, blob_mutable_size;
  /* How the reads are made. codecache_init sets read and mask NULL: every read a
   * process_vm_readv system call. The caller that installed the fault guard sets them to
   * guard_read and guard_mask_now (signal/guard.h, a folder above this one): every read a plain
   * copy under a guard, -ENOSYS from read (the guard not installed) or -ENOSPC (its table full)
   * falling back to the system call. */
  codecache_read_fn read;
  uint64_t (*mask)(void);
  /* Set by each entry point on its own copy of the layout (codecache_reader): the calling
   * thread's id and signal mask for read, read_guarded 0 when read is NULL; or once by
   * codecache_bind (read_bound), for many calls. */
  int read_guarded, read_bound;
  pid_t read_tid;
  uint64_t read_mask;
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
 * "not available: <field>". The scopes' fields are optional: without one, 0 all the same and
 * l->scopes_why names it. Does not read the code cache (callable from Agent_OnLoad, before
 * HotSpot made it). Not signal-safe (searches the tables). */
int codecache_init(hotspot_sym_fn sym, void *ctx, struct codecache_layout *l, const char **why);

/* *l bound into *own for the calling thread at its signal mask now: the guard's thread id and
 * mask (two system calls, ~2-4 µs on this host) asked once here instead of at every call of the
 * reader. Use own only on this thread while it runs with this mask — not from a signal handler
 * that interrupts it, nor after the thread changed its mask: a fault under another mask is not
 * the guard's, it goes on to the JVM (bind again there). Without l->read, own reads by
 * process_vm_readv as l does. Signal-safe, any thread. */
void codecache_bind(const struct codecache_layout *l, struct codecache_layout *own);

/* As codecache_bind, for a caller that knows the thread and the mask already: the signal
 * handler, whose sample runs under a guard of the interrupted thread's id and the handler's
 * mask (each read a guard nested in that one, guard.h). No system call: signal-safe, any
 * thread; own only on thread tid while it runs with `mask`. */
void codecache_bind_to(const struct codecache_layout *l, struct codecache_layout *own, pid_t tid,
                       uint64_t mask);

/* The code blob that contains pc. 0 with *b filled; -ENOENT when pc is in none of the code
 * heaps, or in a free block, or between blobs; -EFAULT when a read of JVM memory failed or
 * what it read is inconsistent (a blob being freed meanwhile, say). No address can make it
 * fault: with l->read set (guard_read) every read is a plain copy under the fault guard, whose
 * faults come back as -EFAULT; without it (or the guard not installed, or its table full) the
 * read goes through the kernel (process_vm_readv), which fails instead. With l->read, two
 * system calls per call (the thread's id and signal mask, for the guard; none for a layout from
 * codecache_bind), none per read. It takes no lock and allocates
 * nothing: signal-safe, any thread (a handler may call it). A blob freed while it
 * runs is not detected beyond those checks: the caller knows whether its PC is live. */
int codecache_find(const struct codecache_layout *l, uintptr_t pc, struct codecache_blob *b);

/* The compile id of the nmethod b (codecache_find's answer, is_nmethod set): HotSpot numbers
 * every compilation once per JVM, so a blob at the same address with the same id is the same
 * compilation. The id (> 0), or -1 when the tables lack the field or the read failed. Reads as
 * codecache_find; signal-safe, any thread. */
int codecache_compile_id(const struct codecache_layout *l, const struct codecache_blob *b);

/* The nmethod the method with jmethodID `id` runs now (Method::_code: set when HotSpot installs
 * a compilation as the method's entry, cleared when it is made not entrant; an OSR compilation is
 * not there), as the blob's address: codecache_find takes it as a pc. 0 when it has none, the
 * id's method is gone (unloaded: the id points at NULL), the tables lack the field, or a read
 * failed. Reads as codecache_find; signal-safe, any thread. */
uintptr_t codecache_method_code(const struct codecache_layout *l, void *id);

/* The segment-map walk on bytes already read: map[0, n) holds the bytes of segments
 * [base, base + n); from segment *idx (in that range) to the first segment of its block —
 * HotSpot marks a block's first segment 0, each other one with a distance back to an earlier
 * segment of the same block (1..0xFE), a free segment 0xFF. Returns that index; -ENOENT for a
 * free segment; -EAGAIN with *idx set to where the walk stands when it leaves the bytes read
 * (below base: the caller reads earlier bytes and calls again); -EFAULT for a hop before
 * segment 0 (not a segment map). Pure; signal-safe. */
long codecache_segmap_start(const unsigned char *map, long n, long base, long *idx);

/* One frame of an inline chain. */
struct codecache_frame {
  uintptr_t method; /* the Method* */
  void *jmethod_id; /* its jmethodID, NULL when none was made yet */
  int32_t bci;      /* -1 (HotSpot's InvocationEntryBci) for the method's entry */
};

/* The inline chain at pc in the nmethod b (codecache_find's answer, is_nmethod set), innermost
 * first, into out[0, max): the nmethod's PcDesc whose pc offset is the first >= pc's (HotSpot's
 * PcDescContainer::find_pc_desc, approximate: a call's return address hits its own PcDesc; an
 * interrupted pc gets the debug information of the next one recorded — pass pc + 1 for the frame
 * at the top, as AsyncGetCallTrace does, so that a pc at a PcDesc's offset, which has run that
 * instruction already, gets the next) and its ScopeDesc with its senders. A PcDesc without a scope
 * gets one frame, the nmethod's method at bci -1 (HotSpot's sentinel scope). Returns the number of
 * frames (>= 1); -ENOSPC when the chain has more than max (out holds the innermost max); -ENOENT
 * when no PcDesc is at or after pc (the table's closing sentinel left out, as HotSpot's search
 * leaves it); -EINVAL when b is no nmethod or pc not in its code, or max < 1; -ENOTSUP when the
 * JVM's tables lack the scopes (l->scopes_why); -EFAULT when a read failed or what it read is not
 * debug information: a decode offset outside the scopes data, a stream that runs off it, a method
 * index outside the metadata, a sender not before its scope (HotSpot writes a caller's scope
 * before its callee's, and a shared one is an earlier copy: each step goes down, so the chain
 * ends). Signal-safe, any thread, as codecache_find. */
int codecache_scopes(const struct codecache_layout *l, const struct codecache_blob *b, uintptr_t pc,
                     struct codecache_frame *out, int max);

/* Called for each nmethod codecache_each_nmethod finds: 0 goes on, a negative -errno ends the
 * walk. */
typedef int (*codecache_nmethod_fn)(const struct codecache_blob *b, void *ctx);

/* Every nmethod in the code cache's used blocks, in each heap's address order, to fn: the segment
 * map says where blocks begin (0) and which segments are free (0xFF), each block's header its
 * length and whether it is used. Returns the number of nmethods visited, fn's negative value when
 * it ended the walk, -ENOTSUP when the tables lack HeapBlock::Header::_length, -EFAULT when the
 * heap list or a heap cannot be read. What the JIT changes meanwhile may be seen or not; a block
 * that does not read as one is stepped over (each segment counted in *skipped when not NULL),
 * never followed. Reads as codecache_find; bounded by each heap's segment count. Not for a signal
 * handler (its stack: a 4 KB window of the map); any thread. */
int codecache_each_nmethod(const struct codecache_layout *l, codecache_nmethod_fn fn, void *ctx,
                           long *skipped);

/* The frames codecache_each_scope reads a chain into: HotSpot's inlining stops far below by
 * default (MaxInlineLevel 15 on 17, 21 and 25). */
#define CODECACHE_CHAIN 64

/* Called for each PcDesc codecache_each_scope visits: its pc and chain (innermost first, n
 * frames); 0 goes on, a negative -errno ends the walk. */
typedef int (*codecache_scope_fn)(uintptr_t pc, const struct codecache_frame *chain, int n,
                                  void *ctx);

/* Every PcDesc of the nmethod b that has a scope, in pc order, with its inline chain (as
 * codecache_scopes reads it) to fn — what CompiledMethodLoad's inline records hold, record for
 * record: the frame kinds of an nmethod without its event. Returns the number visited, fn's
 * negative value, -ENOTSUP (the scopes are not described), -EINVAL (not an nmethod), -ENOSPC (a
 * chain of more than CODECACHE_CHAIN frames), -EFAULT (a read failed, pc offsets that do not
 * grow or leave the code, a chain codecache_scopes would refuse). Reads as codecache_find;
 * bounded by the table's size. Signal-safe itself (fn need not be); any thread. */
int codecache_each_scope(const struct codecache_layout *l, const struct codecache_blob *b,
                         codecache_scope_fn fn, void *ctx);

/* One unsigned int of a scopes stream: the bytes buf[*pos, n) decoded as HotSpot writes them —
 * 1 to 5 bytes, each "high" byte (>= excluded + L, L = 256 - 64 - excluded) adding 6 bits of
 * payload, the fifth taken whole; excluded 1 for UNSIGNED5 (JDK 21, 25: no byte is 0, each
 * stores value + 1), 0 for the CompressedStream before it (L = 192). 0 with *v set and *pos
 * past it; -EFAULT when it runs past n or meets an excluded byte. Pure; signal-safe. */
int codecache_stream_uint(const unsigned char *buf, long n, long *pos, int excluded, uint32_t *v);

/* A ScopeDesc's head from the bytes at its decode offset, buf[0, n): the sender's decode offset
 * (0: none, the outermost scope), the method's index into the nmethod's metadata (1-based) and
 * the bci (stored + 1). 0, or -EFAULT as codecache_stream_uint. Pure; signal-safe. */
int codecache_scope_head(const unsigned char *buf, long n, int excluded, uint32_t *sender,
                         uint32_t *method_index, int32_t *bci);

#endif
