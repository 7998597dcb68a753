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

/* Stubs changed since the process began (stubwalk_complete_top's 1s, without repeats). Any
 * thread. */
uint64_t stubwalk_changed(void);

#endif
