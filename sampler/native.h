/*
 * native.h — the native stack walk: from the interrupted context, through the C/C++ frames
 * (libjvm, libc, JNI libraries), up to the first frame in code the JVM generated (Java: the
 * part AsyncGetCallTrace walks) or the thread's first frame. DWARF CFI (.eh_frame) through
 * libunwind, with every lookup answered by this project: unwind tables from the loaded-objects
 * table (objects.h, prepared off the signal path — the handler never takes the loader's lock),
 * every word read checked against the thread's stack or a mapped segment of a loaded object,
 * registers from the ucontext, no caching (no locks, no thread-local state), bounded depth.
 */
#ifndef SAMPLER_NATIVE_H
#define SAMPLER_NATIVE_H

#include <stddef.h>
#include <stdint.h>
#include <ucontext.h>

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

/* Walks from uc: pcs[0] is the interrupted pc, pcs[i > 0] return addresses (callers), at most
 * max; stack_lo/stack_hi bound the reads on the stack ([sp, stack_hi) when stack_lo is 0 or
 * below sp). Returns the number of frames and the reason it stopped in *stop. SIGNAL-SAFE:
 * allocates nothing, takes no lock; the caller has entered the objects table (objects_enter). */
int native_walk(const ucontext_t *uc, uintptr_t stack_lo, uintptr_t stack_hi, uintptr_t *pcs,
                int max, int *stop);

/* The name of a stop reason, e.g. "[native: no unwind info]". */
const char *native_stop_name(int stop);

#endif
