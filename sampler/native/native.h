/*
 * native.h — the native stack walk: from the interrupted context, through the C/C++ frames
 * (libjvm, libc, JNI libraries), up to the first frame in code the JVM generated (Java: the
 * part AsyncGetCallTrace walks) or the thread's first frame. DWARF CFI (.eh_frame): compiled
 * into tables off the signal path (cfi.h) and followed frame by frame; where a frame needs
 * more (a DWARF expression, a signal frame...), the stack is walked by
 * libunwind, with every lookup answered by this project: unwind tables from the loaded-objects
 * table (objects.h, prepared off the signal path — the handler never takes the loader's lock),
 * every word read checked against the thread's stack or a mapped segment of a loaded object,
 * registers from the ucontext, no caching (no thread-local state), bounded depth. libunwind's
 * own object pool is still used, with a mutex taken with all signals blocked (native_walk_sig.c
 * says exactly what holds).
 */
#ifndef SAMPLER_NATIVE_H
#define SAMPLER_NATIVE_H

#include <stddef.h>
#include <stdint.h>
#include <ucontext.h>

#include "cfi.h"

/* Why a walk ended. */
enum native_stop {
  NATIVE_STOP_JAVA = 0,     /* at code the JVM generated: Java frames follow (or a stub) */
  NATIVE_STOP_END = 1,      /* the thread's first frame (libunwind: no caller) */
  NATIVE_STOP_UNKNOWN = 2,  /* a pc in no loaded object and not the JVM's code */
  NATIVE_STOP_NO_INFO = 3,  /* a pc in an object without unwind information for it */
  NATIVE_STOP_BAD_READ = 4, /* the unwinder needed memory outside the stack and the objects */
  NATIVE_STOP_DEPTH = 5,    /* `max` frames */
  NATIVE_STOP_ERROR = 6,    /* libunwind failed otherwise */
  NATIVE_STOP_OFF = 7,      /* not walked: native frames are off or not set up */
  NATIVE_STOP_FAULT = 8,    /* a fault during the walk (contained: guard.h) */
  NATIVE_STOPS = 9
};

/* Creates the unwinder's address space (allocates). Returns 0, -ENOMEM. Not signal-safe: call at
 * set-up, after objects_init(). */
int native_init(void);

/* Destroys the unwinder's address space: for a set-up that failed (sampler_init), before any
 * walk could start. Not signal-safe. */
void native_fini(void);

/* The rules a thread's walks looked up lately, by pc (direct-mapped). A thread's stacks repeat
 * (a GC worker's dozen frames from clone to its task, under a leaf that changes), and a walk in
 * a thread whose own work keeps the caches cold pays two misses for every look-up in the
 * unwind tables; a hit here costs one at most. Kept by the handler in the thread's own record;
 * valid for one objects snapshot (objects_generation). */
#define NATIVE_MEMO_SLOTS 64
struct native_memo {
  uint64_t generation;
  struct {
    uintptr_t pc; /* where the rule was looked up (a return address less 1); 0: none */
    struct cfi_rule rule;
  } f[NATIVE_MEMO_SLOTS];
};

/* How a walk ended. */
struct native_end {
  int stop;         /* enum native_stop; a pc in no loaded object is NATIVE_STOP_UNKNOWN until
                   native_end_resolve() */
  int general;      /* 1: libunwind walked it (a frame the compiled tables could not follow) */
  uintptr_t pc;     /* the pc in no loaded object where the walk stopped, else 0 */
  uintptr_t sp, fp; /* with pc: the stack and frame pointers of the frame pc is in, as the walk
                       restored them (the caller's, after the native frames), 0 unknown */
};

/* Walks from uc: pcs[0] is the interrupted pc, pcs[i > 0] return addresses (callers), at most
 * max; stack_lo/stack_hi bound the reads on the stack ([sp, stack_hi) when stack_lo is 0 or
 * above sp; the page of sp when stack_hi is unknown). Returns the number of frames, and how it
 * ended in *end. Whether a pc in no loaded object is the JVM's code is left to
 * native_end_resolve(): the code map's look-up costs as much as a short walk. memo: the
 * thread's (read and updated), or NULL. SIGNAL-SAFE: no malloc; when it falls back to
 * libunwind, libunwind's pool lock (held only with all signals blocked) and perhaps an mmap
 * (native_walk_sig.c); the caller has entered the objects table (objects_enter). */
int native_walk(const ucontext_t *uc, uintptr_t stack_lo, uintptr_t stack_hi, uintptr_t *pcs,
                int max, struct native_memo *memo, struct native_end *end);

/* The same walk by libunwind alone, every frame (what native_walk falls back to; tests compare
 * the two). SIGNAL-SAFE, under the same conditions. */
int native_walk_general(const ucontext_t *uc, uintptr_t stack_lo, uintptr_t stack_hi,
                        uintptr_t *pcs, int max, struct native_end *end);

/* Walks a fault may cut before libunwind is no longer used: each cut may leave one libunwind
 * pool object behind (the CIE information of the step it cut). */
#define NATIVE_CUT_LIMIT 256

/* Counts a walk a fault cut (the handler calls it when it contains a fault in native_walk).
 * SIGNAL-SAFE. */
void native_walk_cut(void);

/* Walks cut so far. SIGNAL-SAFE. */
uint64_t native_walks_cut(void);

/* Turns NATIVE_STOP_UNKNOWN into NATIVE_STOP_JAVA when end->pc is in the code map (code the JVM
 * generated: Java frames follow). Signal-safe, but meant for the sampler thread. */
void native_end_resolve(struct native_end *end);

/* The name of a stop reason, e.g. "[native: no unwind info]". */
const char *native_stop_name(int stop);

#endif
