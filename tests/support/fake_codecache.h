/*
 * fake_codecache.h — a code cache of one nmethod for the tests, laid out in memory as HotSpot
 * lays its own out and described by a codecache_layout (codecache.h) as codecache_init would
 * describe a JVM's (JDK 17's shape, at offsets of its own): the code heap list, one heap whose
 * segment map marks one used block, the nmethod's CodeBlob header, its Method → ConstMethod →
 * ConstantPool → holder → jmethodID cache, its metadata, and a PcDesc table whose one scope
 * covers the code. The code is real: a loop that runs until a flag is set, so that a thread can
 * be sampled inside "compiled Java code" that no code map has heard of.
 */
#ifndef SAMPLER_FAKE_CODECACHE_H
#define SAMPLER_FAKE_CODECACHE_H

#include <jni.h>
#include <stdint.h>

#include "codecache.h"

struct fake_codecache {
  struct codecache_layout layout; /* read by process_vm_readv: set read and mask for the guard */
  unsigned char *memory;          /* the heap's memory (mapped read, write, execute) */
  uintptr_t code_begin, code_end; /* the nmethod's code */
  jmethodID method;               /* its method's jmethodID */
  void
      *id_slot; /* a jmethodID as HotSpot's are (it points to the Method*: codecache_method_code) */
  int32_t bci;  /* the bci its one scope gives every pc of the loop */
};

/* Builds it: the nmethod of `method`, its scope at `bci`. 0, or -errno (the memory could not be
 * mapped, or this architecture has no loop to put in it). */
int fake_codecache_make(struct fake_codecache *f, jmethodID method, int32_t bci);

/* Makes the nmethod another compilation at the same address: compile id `compile_id` (the first
 * is 1), its scope at `bci` (-1..190). */
void fake_codecache_recompile(struct fake_codecache *f, int32_t compile_id, int32_t bci);

/* Runs the nmethod's code on the calling thread: returns once *stop is not 0. */
void fake_codecache_run(const struct fake_codecache *f, volatile unsigned char *stop);

/* Unmaps it. */
void fake_codecache_free(struct fake_codecache *f);

#endif
