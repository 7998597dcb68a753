/*
 * hotspot.h — the few HotSpot internals the handler reads, located through the JVM's own
 * self-description (the gHotSpotVM* tables libjvm exports for the serviceability agent):
 * a JavaThread's frame anchor (last Java sp/pc), its thread state, its stack, and the value
 * of _thread_in_vm. Nothing is hard-coded: a JVM whose tables lack one of them simply gets no
 * anchor walk.
 *
 * Why: AsyncGetCallTrace answers -3 (unknown not Java) for a thread that runs VM code called
 * from Java — an allocation slow path, a runtime call of the interpreter or of a C2 runtime
 * stub — because the anchor such a call leaves has its sp but not its pc (the VM fills the pc
 * in only when the thread blocks: JavaFrameAnchor::make_walkable, pc = sp[-1]). The handler
 * does the same for the length of one AsyncGetCallTrace call and then puts it back, so the
 * sample gets its Java stack.
 */
#ifndef SAMPLER_HOTSPOT_H
#define SAMPLER_HOTSPOT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

/* The int32 and the pointer-sized word at byte offset off of a copy of JVM memory (unaligned
 * reads, by memcpy). Pure; signal-safe. */
static inline int32_t hotspot_i32_at(const unsigned char *p, long off) {
  int32_t v;
  memcpy(&v, p + off, sizeof v);
  return v;
}
static inline uintptr_t hotspot_word_at(const unsigned char *p, long off) {
  uintptr_t v;
  memcpy(&v, p + off, sizeof v);
  return v;
}

struct hotspot_layout {
  long anchor;          /* JavaThread::_anchor */
  long last_sp;         /* JavaFrameAnchor::_last_Java_sp */
  long last_pc;         /* JavaFrameAnchor::_last_Java_pc */
  long state;           /* JavaThread::_thread_state (an int) */
  long stack_base;      /* JavaThread::_stack_base (the high end) */
  long stack_size;      /* JavaThread::_stack_size */
  long osthread;        /* JavaThread::_osthread (listed as Thread::_osthread in JDK 25) */
  long os_tid;          /* OSThread::_thread_id (a pid_t) */
  int in_vm;            /* the value of _thread_in_vm */
  int in_java, blocked; /* _thread_in_Java, _thread_blocked; -1 when not described */
  int in_vm_trans;      /* _thread_in_vm_trans (leaving the VM); -1 when not described */
  /* optional, -1 when this JVM does not describe them (then runtime stubs are not walked) */
  long last_fp; /* JavaFrameAnchor::_last_Java_fp */
  long blob_code_begin, blob_code_end, blob_frame_size, blob_size,
      blob_header_size;                    /* CodeBlob:: */
  long blob_code_offset, blob_data_offset; /* CodeBlob:: in JDK 25, instead of _code_begin/_end */
  long blob_frame_complete;      /* CodeBlob::_frame_complete_offset, -1 when not described */
  int blob_frame_complete_bytes; /* its width: 4 (int: JDK 17, 21), 2 (int16_t: JDK 25), 0 */
  long nm_compile_id;            /* nmethod::_compile_id (an int), -1 when not described */
  long env;                      /* JNIEnv address - JavaThread address; set by hotspot_find_env */
};

/* Looks up a symbol of libjvm (its address, as dlsym would return it), or NULL. */
typedef void *(*hotspot_sym_fn)(const char *name, void *ctx);

/* Fills *l (all but env) from the tables `sym` finds. 0, or -ENOENT with *why set to a
 * constant text naming what is missing. Not signal-safe (call at start). */
int hotspot_read_layout(hotspot_sym_fn sym, void *ctx, struct hotspot_layout *l, const char **why);

/* One entry of the tables, for the modules that read more of HotSpot (codecache.c). Each
 * searches the tables from the start: call at set-up only. Not signal-safe.
 * hotspot_vm_field: the offset of the non-static field type::name (declared by type or one of
 * its superclasses), or -1. hotspot_vm_static: the address of the static field type::name, or
 * NULL. hotspot_vm_type_size: sizeof(type) as the types table states it, or -1. */
long hotspot_vm_field(hotspot_sym_fn sym, void *ctx, const char *type, const char *name);
void *hotspot_vm_static(hotspot_sym_fn sym, void *ctx, const char *type, const char *name);
long hotspot_vm_type_size(hotspot_sym_fn sym, void *ctx, const char *type);

/* Finds the bool flag `name` (-XX:+name) in HotSpot's flag table, which the tables describe
 * (JVMFlag::flags, ::numFlags, the entries' _name, _addr, _flags and _type), and its value's
 * address (*addr) for hotspot_flag_set. Every read goes through the kernel (process_vm_readv): an
 * entry that does not read as one fails, never faults. Returns 0 (off at its default: *addr
 * set), 1 (on already), -EPERM (off, and not at its default — set on the command line, say: to
 * be left as it is), -ENOENT (the tables describe no flags, or there is no such bool flag),
 * -EFAULT (unreadable); *why says which when < 0. Not signal-safe (call at start). */
int hotspot_flag_find(hotspot_sym_fn sym, void *ctx, const char *name, uintptr_t *addr,
                      const char **why);

/* Sets the bool at addr (hotspot_flag_find's) on or off, through the kernel (process_vm_writev):
 * 0, or -errno when it was not written. The JIT reads such flags once per compilation: every
 * method compiled after the call sees the new value. Not signal-safe. */
int hotspot_flag_set(uintptr_t addr, int on);

/* The frame size in words of the code blob whose code is [code, code + size) — a runtime stub
 * generated by C1 or C2 — or 0 when there is no such blob or it cannot be read (the blob's
 * header is searched for just before its code; every read is checked, never faults). The
 * header states its code's bounds as addresses (_code_begin, _code_end: JDK 17, 21) or as
 * offsets from itself (_code_offset, _data_offset: JDK 25). Not signal-safe (call from
 * DynamicCodeGenerated). */
int hotspot_blob_frame_words(const struct hotspot_layout *l, const void *code, size_t size);

/* The same, and the header's address into *header (0 when there is no such blob). Not
 * signal-safe. */
int hotspot_blob_find(const struct hotspot_layout *l, const void *code, size_t size,
                      uintptr_t *header);

/* Makes the frame of the blob whose header is at `header` and whose code is [code, code + size)
 * complete, for HotSpot's stack walkers (CodeBlob::is_frame_complete_at, which
 * frame::safe_for_sender asks of runtime stubs), from pc on: its _frame_complete_offset becomes
 * pc - code. pc must be a return address inside the code whose frame the blob has built (a
 * runtime stub's call into the VM): the caller's claim, stubwalk.c says why it holds. Writes
 * only over frame_never_safe (-1), or over `ours` (an offset this function set before, -1 for
 * none) when pc is earlier; one aligned store of the field's width, after a write of the same
 * bytes through the kernel proved the page writable. Returns 1 (written), 0 (already complete at
 * pc), -EEXIST (HotSpot's own offset, later than pc: left alone), -ENOTSUP (this JVM does not
 * describe the field, or with another width), -EINVAL (pc not inside, or misaligned field),
 * -EFAULT (not readable or not writable). Not signal-safe; any thread. */
int hotspot_blob_complete_from(const struct hotspot_layout *l, uintptr_t header, uintptr_t code,
                               size_t size, uintptr_t pc, int32_t ours);

/* Given the JNIEnv and the JavaThread address (java.lang.Thread.eetop) of one thread, sets
 * l->env and checks it: the JavaThread found from the env must name the kernel thread `tid`.
 * 0, or -EINVAL with *why. Call on that thread, from a JVMTI callback. */
int hotspot_find_env(struct hotspot_layout *l, const void *jni_env, uintptr_t java_thread, int tid,
                     const char **why);

/* The kernel tid and the JNIEnv of another thread, from its JavaThread address
 * (java.lang.Thread.eetop): the tid from its OSThread, the env at the offset hotspot_find_env
 * found. Every read is checked (a thread that ended meanwhile cannot make it fault). Returns
 * 0, -EINVAL (no env offset known, or java_thread 0), -ESRCH (the thread has no OS thread:
 * not started or gone), -EFAULT. Not signal-safe (call at start or attach). */
int hotspot_thread_ids(const struct hotspot_layout *l, uintptr_t java_thread, pid_t *tid,
                       void **jni_env);

/* Whether a thread in JavaThread state `state` (its _thread_state) runs: 1 in Java code
 * (running, or runnable and waiting for a CPU), 0 in one of the VM's waits (parked, in
 * Object.wait, sleeping, entering a monitor, stopped at a safepoint), -1 for every other state
 * (native code, the VM, a transition, or states this JVM does not describe): only the kernel
 * can tell then. Signal-safe; any thread. */
int hotspot_state_runs(const struct hotspot_layout *l, int state);

#endif
