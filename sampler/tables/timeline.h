/*
 * timeline.h — when each capture was taken: the profile's time axis, kept beside the stack
 * table. Each capture's weights go into a cell of time for its (stack, thread): cells of 20 ms
 * at first. The cells of one moment are merged (one entry per stack and thread a cell), so the
 * memory follows the distinct stacks a thread shows per cell, not the captures.
 *
 * Bounded: when the entries would pass the limit (timeline_set_limit; TIMELINE_MAX_BYTES by
 * default), the cells coarsen — 20 ms become 100 ms, then 1 s, 10 s, 1 min, 10 min, 1 h — and
 * what fell into one coarser cell is merged: no capture is ever dropped, only its time is kept
 * less finely (timeline_info says how often that happened). Past the coarsest step the entries
 * grow with the distinct stacks and threads of each hour.
 *
 * Threads are kept by OS tid and name (one entry per distinct pair: a renamed thread, or a tid
 * the kernel gave again to another thread, is another).
 *
 * Stored packed: 16 bytes an entry (stack and thread ids of 24 bits, captures of 16, units and
 * CPU ns of 32 — an entry that would pass one of them is followed by another for the same stack
 * and thread), and 16 bytes at each cell that has entries (its number), in one block in time
 * order. Readers get them unpacked (timeline_read).
 *
 * Only the sampler thread adds; readers copy under the same lock as the stack table
 * (traces_lock): no lock of its own. Never from a signal handler (it allocates).
 */
#ifndef SAMPLER_TIMELINE_H
#define SAMPLER_TIMELINE_H

#include <stddef.h>
#include <stdint.h>

#define TIMELINE_MAX_BYTES (32u << 20)
#define TIMELINE_FIRST_CELL_NS 20000000ull /* 20 ms */
#define TIMELINE_NO_STACK UINT32_MAX       /* a capture the stack table did not keep */
#define TIMELINE_MAX_STACK 0xFFFFFDu       /* stack ids it keeps: 0 .. this (24 bits) */
#define TIMELINE_MAX_THREADS 0xFFFFFFu     /* distinct threads it keeps (24 bits) */
#define TIMELINE_SLOT_BYTES 16             /* an entry, or a cell's start, in the block */

/* One cell's weights for one stack and thread (unpacked: timeline_read). The same stack and
 * thread may have more than one entry in a cell: when the weights passed what one packed entry
 * holds. */
struct timeline_entry {
  uint32_t cell;    /* cells of cell_ns since the start */
  uint32_t stack;   /* the stack table's id (traces_add), or TIMELINE_NO_STACK */
  uint32_t thread;  /* index into the threads (timeline_thread) */
  uint32_t samples; /* captures */
  uint64_t units;   /* cost units */
  uint64_t cpu_ns;  /* CPU time */
};

struct timeline_thread {
  int32_t tid;
  int64_t java_id;  /* java.lang.Thread's id, 0 when not known */
  const char *name; /* UTF-8, NUL-terminated; owned by the timeline */
};

struct timeline_info {
  uint64_t start_ns;     /* plat_mono_ns() at the start (timeline_clear) */
  int64_t start_wall_ns; /* the wall clock then, ns since the epoch */
  uint64_t cell_ns;      /* the cells' length now */
  uint32_t coarsenings;  /* times the cells were made coarser */
  size_t entries, threads;
  size_t
      slot_bytes; /* the entries and cell starts in use (at most the limit while cells coarsen) */
  size_t bytes;   /* what the timeline holds allocated */
};

/* Starts an empty timeline at mono_ns (wall_ns: the wall clock then). Returns 0 or -ENOMEM.
 * Frees what an earlier one held. */
int timeline_clear(uint64_t mono_ns, int64_t wall_ns);

/* The memory limit of the entries and cell starts, in bytes (the threads come on top: one per distinct thread
 * sampled). Tests set small ones. */
void timeline_set_limit(size_t bytes);

/* The index of the thread (tid, name: UTF-8, at most len bytes used), added if new with its
 * Java id (0: none known; a known one is kept). Returns it, -ENOMEM, or -ENOSPC (already
 * TIMELINE_MAX_THREADS threads). */
int64_t timeline_thread(int32_t tid, int64_t java_id, const char *name, size_t len);

/* Adds a capture's weights at mono_ns for stack and thread (timeline_thread's index). A time
 * in a cell before the last one added counts in that last cell (the entries stay in time order;
 * the captures one round records were taken less than a round apart), one before the start in
 * the first. Returns 0, or -ENOMEM (then the capture's time is lost, not its weights: the
 * stack table has them; counted by the caller). */
/* stack: at most TIMELINE_MAX_STACK, or TIMELINE_NO_STACK (-EINVAL otherwise). */
int timeline_add(uint64_t mono_ns, uint32_t stack, uint32_t thread, uint64_t units,
                 uint64_t cpu_ns);

void timeline_get_info(struct timeline_info *out);

/* Unpacks the entries into out (room for timeline_info's `entries`), in time order (cell
 * ascending). */
void timeline_read(struct timeline_entry *out);

/* The threads; valid until the next call that changes the timeline. */
const struct timeline_thread *timeline_threads(size_t *n);

/* Frees everything (timeline_clear starts again). */
void timeline_free(void);

#endif
