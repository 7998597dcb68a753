/*
 * stubwalk.h — lets AsyncGetCallTrace walk a thread's Java stack from its frame anchor when the
 * last frame there is a C1 or C2 runtime stub (an allocation's slow path from compiled code),
 * by marking that stub's frame complete from the return address of its call into the VM on.
 * HotSpot generates those stubs with CodeBlob::_frame_complete_offset = frame_never_safe, so
 * frame::safe_for_sender refuses them and AsyncGetCallTrace stops there (-4); JVMTI's
 * GetStackTrace walks them (it is the VM's own walk, at a state transition) at several times
 * the cost. Why the claim is true and what else reads the field: stubwalk.c.
 */
#ifndef SAMPLER_STUBWALK_H
#define SAMPLER_STUBWALK_H

#include <stdint.h>

struct hotspot_layout;
struct codecache_layout;

/* On the thread whose JavaThread is at java_thread, inside a JVMTI callback (the thread is
 * _thread_in_native, its anchor made walkable by the VM), after AsyncGetCallTrace with no
 * ucontext failed: finds the return address at the top of its frame anchor (_last_Java_pc, or
 * the word below _last_Java_sp when the pc is 0); when it lies inside a stub of the code map
 * whose blob header states a frame size and frame_never_safe, marks that stub's frame complete
 * from there on (hotspot_blob_complete_from). Returns 1 when it changed a stub (walk again), 0
 * otherwise (nothing there to change, refused, or this JVM does not describe the field). Each
 * stub is decided once (a table of those seen; full: no more are changed). Takes a mutex;
 * not signal-safe; never call it from the signal handler (see stubwalk.c). */
int stubwalk_complete_top(const struct hotspot_layout *l, const struct codecache_layout *cc,
                          const void *java_thread);

/* A frame as JVMTI's GetStackTrace gives it (jvmtiFrameInfo's layout): method, bci. */
struct stubwalk_frame {
  void *method;
  int64_t bci;
};

#define STUBWALK_INLINE 16 /* an inline chain's frames, at most */

/* frames[0..n) (n > 0, at most depth), the stack AsyncGetCallTrace walked from the last Java
 * frame of the calling thread (java_thread): when that frame is a stub stubwalk_complete_top
 * made walkable, AsyncGetCallTrace took its compiled caller as interrupted at a random pc and
 * described it by the next debug information after the return address (forte.cpp
 * is_decipherable_compiled_frame: pc_desc_near(pc + 1)) — another bci, often another inline
 * chain (the next call's). Replaces that chain by the call's own (the PcDesc at the return
 * address, from the nmethod's debug information: codecache_scopes), after checking that the
 * frames are the chain it expected. Returns the frames now (n when nothing was to change), or -1
 * when the stack cannot be made exact (the caller takes GetStackTrace's). Not signal-safe. */
int stubwalk_exact_top(const struct hotspot_layout *l, const struct codecache_layout *cc,
                       const void *java_thread, struct stubwalk_frame *frames, int n, int depth);

/* Whether pc lies in a stub whose frame stubwalk_complete_top changed. ASYNC-SIGNAL-SAFE,
 * lock-free (stubwalk_sig.c): the signal handler asks it. */
int stubwalk_changed_at(uintptr_t pc);

/* Whether any stub has been decided (changed or not) — none in a run without event=alloc: the
 * handler asks this before reading the thread's anchor. ASYNC-SIGNAL-SAFE, one load. */
int stubwalk_any(void);

/* Stubs changed since the process began (stubwalk_complete_top's 1s, without repeats). Any
 * thread. */
uint64_t stubwalk_changed(void);

#endif
