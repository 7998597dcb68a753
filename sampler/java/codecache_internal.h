/*
 * codecache_internal.h — what the code-cache reader's files share (codecache.h is the reader's
 * interface): the checked read of JVM memory, the code heaps, a CodeBlob's header and a
 * Method*'s jmethodID. Not for use outside sampler/java/codecache*.
 */
#ifndef SAMPLER_CODECACHE_INTERNAL_H
#define SAMPLER_CODECACHE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "codecache.h"

/* The layout one call of the reader reads through on the calling thread: l itself when it is
 * bound already (codecache_bind, codecache_bind_to: no copy, no system call); else *l copied
 * into *own with how it reads — guarded loads (read_guarded, the thread's id and signal mask:
 * two system calls) when l->read is set, else process_vm_readv — and own returned.
 * Signal-safe, any thread. */
const struct codecache_layout *codecache_reader(const struct codecache_layout *l,
                                                struct codecache_layout *own);

/* len bytes at addr into buf, as l->read_guarded says (codecache_reader): a plain copy by
 * l->read, or (not guarded, or the guard table full, or the guard taken out meanwhile)
 * process_vm_readv on this process. 0, or -EFAULT when any of them is not readable (or addr is
 * 0). errno kept. Signal-safe, any thread. */
int codecache_peek(const struct codecache_layout *l, uintptr_t addr, void *buf, size_t len);

/* The jmethodID of Method* m: its holder's cache slot for its idnum; NULL when none was made
 * yet or a read failed. Signal-safe, any thread. */
void *codecache_method_id(const struct codecache_layout *l, uintptr_t m);

/* The code heaps' addresses (CodeCache::_heaps) into heaps: how many (1..CODECACHE_HEAPS), or
 * -EFAULT. Signal-safe, any thread. */
int codecache_heaps(const struct codecache_layout *l, uintptr_t heaps[CODECACHE_HEAPS]);

/* A code heap's committed memory [low, high), its segment map and segment size (1 << log2). */
struct codecache_heap {
  uintptr_t low, high, map;
  int log2;
};

/* The code heap at `heap` into *hp: 0, or -EFAULT (a read failed, or no plausible heap).
 * Signal-safe, any thread. */
int codecache_heap_at(const struct codecache_layout *l, uintptr_t heap, struct codecache_heap *hp);

/* The CodeBlob at blob into *b (for an nmethod: method, level, jmethodID), checked as a blob:
 * its code inside it and the address `inside` within it. 0, or -EFAULT. Signal-safe, any
 * thread. */
int codecache_blob_at(const struct codecache_layout *l, uintptr_t blob, uintptr_t inside,
                      struct codecache_blob *b);

#endif
