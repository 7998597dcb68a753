/*
 * objects.h — the loaded objects (the executable, libjvm.so, libc, JNI libraries...) as the
 * native stack walk needs them: each one's executable range, the segments it maps (every word
 * the walk reads must lie in one of them or on the thread's stack), and its unwind table
 * (.eh_frame_hdr's binary-search table). Read with dl_iterate_phdr on the sampler thread —
 * never in the signal handler, which must not take the loader's lock — and published as an
 * immutable snapshot that objects_find() reads lock-free (epoch.h). objects_refresh() notices
 * dlopen/dlclose from the loader's own counters and publishes a new snapshot.
 *
 * This is the process's one list of loaded objects: symbols.c names native PCs from it
 * (objects_sync, objects_each) and reads no list of its own. Each object carries what naming
 * needs too — the loader's name, the mapped image's extent, the GNU build-id read from its
 * notes in memory — so that the two never disagree about what is loaded where.
 */
#ifndef SAMPLER_OBJECTS_H
#define SAMPLER_OBJECTS_H

#include <stddef.h>
#include <stdint.h>

#define OBJECTS_MAX_SEGMENTS 8
#define OBJECTS_BUILD_ID_MAX 64

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
  /* for naming (symbols.c), off the signal path */
  const char *name;     /* the loader's (dlpi_name): a path, or "" (the program, the vDSO) */
  uintptr_t map_base;   /* the lowest mapped address, page-aligned: dladdr's dli_fbase */
  size_t map_size;      /* from map_base to the end of the last segment, page-rounded */
  uint8_t program;      /* the main program (the loader's first object) */
  uint8_t vdso;         /* the kernel's vDSO (its image is in memory only) */
  uint8_t build_id_len; /* 0: the image carries no GNU build-id note */
  unsigned char build_id[OBJECTS_BUILD_ID_MAX];
};

/* Reads the loaded objects and publishes them, with their unwind tables when `tables`; without,
 * walks go through libunwind until objects_refresh() has compiled them (the agent's start does
 * not wait for the tables: ~17 ms here for a JVM's objects). Returns 0 or -ENOMEM. Not
 * signal-safe (takes the loader's lock through dl_iterate_phdr); call on the sampler thread or
 * at start. */
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

/* Brings the list up to date with the loader's (its load/unload counters: a cheap
 * dl_iterate_phdr that stops at the first object when nothing changed), without compiling the
 * unwind tables of new objects: those are left for objects_refresh() on the sampler thread
 * (walks go through libunwind meanwhile). For readers of the list off the signal path
 * (symbols.c): *generation is then the current snapshot's (objects_generation; 0: none).
 * Returns 1 when a new snapshot was published, 0 when nothing changed, -ENOMEM (the previous
 * snapshot stays). Thread-safe; not signal-safe. */
int objects_sync(uint64_t *generation);

/* Calls fn(ctx, o) for every object of the current snapshot, in address order, under the
 * writer's lock (no snapshot is published or freed meanwhile: fn may take its time, and must
 * not call back into this module). Stops at fn's first nonzero answer and returns it, else 0;
 * *generation is the snapshot's (objects_generation). o and its name are valid during the
 * call only. Thread-safe; not signal-safe. */
int objects_each(uint64_t *generation, int (*fn)(void *ctx, const struct object *o), void *ctx);

/* This agent's own GNU build-id (the object holding this code, as the last snapshot found it)
 * into out (OBJECTS_BUILD_ID_MAX bytes); returns its length, 0 when none is known (no snapshot
 * yet, or an agent built without one). What the disk cache keys its entries by (diskcache.h).
 * Thread-safe; not signal-safe. */
size_t objects_agent_id(unsigned char *out);

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
