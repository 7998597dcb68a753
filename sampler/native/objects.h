/*
 * objects.h — the loaded objects (the executable, libjvm.so, libc, JNI libraries...) as the
 * native stack walk needs them: each one's executable range, the segments it maps (every word
 * the walk reads must lie in one of them or on the thread's stack), and its unwind table
 * (.eh_frame_hdr's binary-search table). Read with dl_iterate_phdr on the sampler thread —
 * never in the signal handler, which must not take the loader's lock — and published as an
 * immutable snapshot that objects_find() reads lock-free (epoch.h). objects_refresh() notices
 * dlopen/dlclose from the loader's own counters and publishes a new snapshot.
 */
#ifndef SAMPLER_OBJECTS_H
#define SAMPLER_OBJECTS_H

#include <stddef.h>
#include <stdint.h>

#define OBJECTS_MAX_SEGMENTS 8

struct cfi_table;

struct object_segment {
  uintptr_t start, end; /* [start, end), page-aligned as mapped */
};

/* One loaded object; a copy in the snapshot, valid while the reader is inside it. */
struct object {
  uintptr_t text_start, text_end; /* the executable segments' hull */
  uintptr_t base;                 /* load bias (dlpi_addr) */
  uintptr_t eh_frame_hdr;         /* .eh_frame_hdr's address, 0 when it has none usable */
  uintptr_t table;                /* its binary-search table: pairs of int32 (pc, fde) */
  size_t table_entries;           /* number of pairs */
  const struct cfi_table *cfi;    /* the unwind table compiled for the fast walk (cfi.h), or
                                     NULL; shared by the snapshots that hold this object */
  uint64_t name_hash;             /* of the loader's name: with the ranges, the object's identity */
  int nsegments;
  struct object_segment segments[OBJECTS_MAX_SEGMENTS];
};

/* Reads the loaded objects and publishes them, with their unwind tables when `tables`; without,
 * walks go through libunwind until objects_refresh() has compiled them (the agent's start does
 * not wait for libjvm.so's: ~13 ms here). Returns 0 or -ENOMEM. Not signal-safe (takes the
 * loader's lock through dl_iterate_phdr); call on the sampler thread or at start. */
int objects_init(int tables);

/* Frees the snapshot and the unwind tables: the table is empty again (objects_find finds
 * nothing; the next objects_init, _sync or _refresh reads the objects anew). For a set-up that
 * failed (sampler_init), or tests; waits for readers inside (epoch.h). Not signal-safe. */
void objects_fini(void);

/* Publishes a new snapshot when the loader's counts of loads and unloads changed since the last
 * one (a cheap dl_iterate_phdr that stops at the first object otherwise), or when objects_init
 * left the tables for later: with every object's unwind table. Returns 1 when a new snapshot
 * was published, 0 when nothing changed, -ENOMEM. Not signal-safe. */
int objects_refresh(void);

/* Reader side (objects_lookup_sig.c). A walk enters once, looks up as often as it needs,
 * and leaves; the snapshot it sees is not freed meanwhile. All three are SIGNAL-SAFE. */
unsigned objects_enter(void);
void objects_exit(unsigned token);

/* The snapshot's generation (grows with every snapshot; 0: none): what is known of the objects
 * by pc holds while it stays the same. Call between enter and exit. */
uint64_t objects_generation(void);

/* The object whose executable range contains pc, or NULL. Call between enter and exit. */
const struct object *objects_find(uintptr_t pc);

/* 1 when [addr, addr + len) lies inside one mapped segment of a loaded object, and that segment
 * in *hit (a walk's reads come in runs from one segment: pass the previous hit, or a zeroed one,
 * and it is checked first). Call between enter and exit. */
int objects_readable(uintptr_t addr, size_t len, struct object_segment *hit);

#endif
