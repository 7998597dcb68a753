/*
 * jfr_profile.h — the profile as a JFR recording (`format=jfr`), as the JDK's `jfr` tool, JDK
 * Mission Control and IntelliJ read it: the snapshot's time axis made into events through the
 * recording writer of jfr.h.
 */
#ifndef SAMPLER_JFR_PROFILE_H
#define SAMPLER_JFR_PROFILE_H
#include <stdint.h>
#include <stdio.h>

#include "sampler.h"

struct jfr_profile_info {
  int wall;                   /* event=wall: a sample's thread state comes from its state leaf */
  const char *interval;       /* the sampling interval ("1ms"), or NULL */
  const char *hasrun;         /* how running threads were told apart, or NULL */
  const char *program;        /* the program's name, or NULL */
  uint64_t alloc_bytes;       /* event=alloc: the mean sampling interval in bytes; 0 otherwise */
  int lock;                   /* event=lock: jdk.JavaMonitorEnter and jdk.ThreadPark events */
  const char *lock_threshold; /* its lock= ("10us") */
  int clock; /* with alloc_bytes or lock: cpu (or wall) samples beside them, each stack's events
                those of its kind (struct sampler_stack) */
  int kinds; /* the Java frames carry how they ran (ann=on): one without a kind is a native
                method; without kinds every Java frame is written "JIT compiled" (JFR has no
                "unknown") */
};

/* Writes snapshot s to f (seekable, at its start) as one JFR chunk:
 * - one jdk.ExecutionSample per sample (the profile's cost units, so that the recording holds
 *   as many as the folded profile counts), at the time it was taken, to within the
 *   time axis's cell (20 ms, coarser in long runs; a cell's samples are spread evenly over it),
 *   in the thread it was taken in (OS tid, Java id, name), with its stack leaf first and frame types
 *   from the frames' kinds (interpreted, JIT compiled, inlined; native for the rest; see kinds); a thread
 *   root frame [NAME tid=N] is not a frame there, and a ":<line>" becomes the frame's line;
 * - one sampler.CPUSample per stack, thread and cell with the CPU time it stands for;
 * - event=alloc instead: one jdk.ObjectAllocationSample per sample, with the stack's allocated
 *   class (its `_[a]` leaf, in internal form: "[B", "java/lang/String") as objectClass, not as a
 *   frame, and the bytes of its stack, thread and cell shared among its samples as weights;
 * - event=lock instead: one jdk.ThreadPark (a stack whose frame under its `_[l]` leaf is
 *   Unsafe.park, or a [park without blocker]) or jdk.JavaMonitorEnter per recorded wait, the
 *   lock's class as parkedClass or monitorClass (null for a park without a blocker), the ns of
 *   its stack, thread and cell shared among its waits as durations;
 * - sampler.Setting events at the start (event, interval, hasrun, program) and one
 *   sampler.Summary per counter (the stats file's keys and values) at the end.
 * Returns 0, -ENOMEM, -EIO or -EINVAL (a snapshot the writer refused). */
int jfr_profile_write(FILE *f, const struct jfr_profile_info *info,
                      const struct sampler_snapshot *s);

#endif
