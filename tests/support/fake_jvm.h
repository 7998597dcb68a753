/*
 * fake_jvm.h — a stand-in for the JVM, for the tests and the benchmarks that drive the sampler
 * without one: an AsyncGetCallTrace that reports one frame (the interrupted thread's role),
 * names for those frames, and a JNIEnv to register threads with. The one fake JVM of the
 * project (tests/sampler, bench/loopcost.c).
 */
#ifndef SAMPLER_FAKE_JVM_H
#define SAMPLER_FAKE_JVM_H

#include <jni.h>
#include <signal.h>
#include <stdint.h>

#include "sampler.h"

/* What the calling thread "runs": the method id the fake AsyncGetCallTrace reports for it. */
#define FAKE_ROLE_BUSY ((jmethodID)0x1000)  /* "Busy.run" */
#define FAKE_ROLE_IDLE ((jmethodID)0x2000)  /* "Idle.run" */
#define FAKE_ROLE_BURST ((jmethodID)0x3000) /* "Burst.run" */
#define FAKE_ROLE_FAULT ((jmethodID)0xdead) /* its walk faults: reads address 8 (SIGSEGV) */
/* its walk reads address 8 inside a probe that fake_jvm_vm_handler handles, as HotSpot's
 * SafeFetch: the walk goes on and reports the role */
#define FAKE_ROLE_PROBE ((jmethodID)0xfe7c)
/* its walk raises FAKE_NESTED_SIGNAL on its own thread: the test's handler for it runs nested
 * inside the walk (and the signal handler that called it), then the walk reports the role */
#define FAKE_ROLE_NESTED ((jmethodID)0xbeef)
#define FAKE_NESTED_SIGNAL SIGUSR1
/* In a call into the VM: its walk answers -3 (unknown not Java) unless the frame anchor the
 * test named (fake_jvm_set_anchor) has a pc — as HotSpot's does — and then one frame. */
#define FAKE_ROLE_IN_VM ((jmethodID)0x4000)

/* Sets the calling thread's role; NULL makes its walks fail with -5 (unknown Java). */
void fake_jvm_set_role(jmethodID role);

/* The word that holds the last Java pc of the frame anchor FAKE_ROLE_IN_VM threads look at
 * (NULL: none). The pc each walk saw there is kept: fake_jvm_anchor_pcs_seen() ORs them. */
void fake_jvm_set_anchor(volatile uintptr_t *last_pc);
uintptr_t fake_jvm_anchor_pcs_seen(void);

/* While on, every walk answers -2 (GC active), as HotSpot's does while a collection runs. */
void fake_jvm_set_gc_active(int on);

/* The JVM to give sampler_init: the fake AsyncGetCallTrace and method names, no symbols. */
struct sampler_jvm fake_jvm(void);

/* The JNIEnv fake threads register with (any non-NULL pointer: the fake walk ignores it). */
JNIEnv *fake_jvm_env(void);

/* Registers the calling thread with the sampler under `name`, with its JNIEnv and stack.
 * Returns what sampler_thread_started returns. */
int fake_jvm_register_self(const char *name);

/* The fake JVM's fault entry (what HotSpot's JVM_handle_linux_signal is to guard.h): handles a
 * fault of a FAKE_ROLE_PROBE walk's probe (jumps to the probe's continuation); returns 0 for
 * every other fault. */
int fake_jvm_vm_handler(int sig, siginfo_t *si, void *uc, int abort_if_unrecognized);

/* Counts the fake AsyncGetCallTrace calls (all threads). */
unsigned long fake_jvm_walks(void);

#endif
