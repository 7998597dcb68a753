/*
 * stubwalk_internal.h — the table of stubs stubwalk.c decided, shared with its signal-safe
 * reader (stubwalk_sig.c). Entries are written under stubwalk.c's mutex and published by n
 * (release); readers without the mutex see whole entries; `ours` changes later, atomically.
 */
#ifndef SAMPLER_STUBWALK_INTERNAL_H
#define SAMPLER_STUBWALK_INTERNAL_H

#include <stdatomic.h>
#include <stdint.h>

#define STUBWALK_MAX 128 /* stubs decided; allocation paths use a handful */

struct stubwalk_table {
  _Atomic int n;
  struct {
    uintptr_t begin, end; /* the stub's code */
    uintptr_t header;     /* its blob, 0: not to be changed */
    int frame_words;      /* its frame's size */
    _Atomic int32_t ours; /* the offset we wrote, -1: none */
  } seen[STUBWALK_MAX];
};

extern struct stubwalk_table stubwalk_table;

/* The entry whose code holds pc, or -1. Lock-free; ASYNC-SIGNAL-SAFE. */
int stubwalk_entry_at(uintptr_t pc);

#endif
