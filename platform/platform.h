/*
 * platform.h — the one interface between the portable sampler and the CPU and OS.
 *
 * Two halves:
 *  - the architecture backend (platform/<arch>/regs.c, one per CPU, same function names in
 *    each): reads the interrupted register set out of a signal handler's ucontext_t;
 *  - Linux primitives: those the signal handler calls (platform/linux_signal.c: thread id,
 *    clocks) and those of the sampler thread and set-up (platform/linux.c: directed signals,
 *    other threads' CPU clocks and state, futexes, the thread list, stacks, checked reads).
 *
 * Everything marked "signal-safe" may be called from the sampling signal handler: no
 * allocation, no locks, no stdio, errno preserved.
 */
#ifndef SAMPLER_PLATFORM_H
#define SAMPLER_PLATFORM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <ucontext.h>

/* ---- architecture backend (platform/x86_64/regs.c, platform/aarch64/regs.c) ---- */

/* "x86_64" or "aarch64". */
const char *plat_arch_name(void);

/* A 64-bit checksum of the interrupted register set: pc, sp, fp and the general registers
 * (x86-64: rip rsp rbp rax rbx rcx rdx rsi rdi r8-r15 and eflags; aarch64: pc sp x0-x30 and
 * pstate). Any single changed register changes the value (a mixing hash, not a plain sum or xor
 * where changes can cancel); identical sets give identical values. Signal-safe. */
uint64_t plat_regs_checksum(const ucontext_t *uc);

/* Program counter, stack pointer and frame pointer of the interrupted context. Signal-safe. */
uintptr_t plat_uc_pc(const ucontext_t *uc);
uintptr_t plat_uc_sp(const ucontext_t *uc);
uintptr_t plat_uc_fp(const ucontext_t *uc);

/* The caller of a routine interrupted before it set up a frame of its own (a leaf stub at or
 * near its entry): its return address — x86-64: the word at sp; aarch64: lr — and the caller's
 * sp (*caller_sp). Reads only the word at sp, which lies in the interrupted stack. Signal-safe. */
uintptr_t plat_uc_leaf_return(const ucontext_t *uc, uintptr_t *caller_sp);

/* The register with DWARF number `regno` (the numbering of the architecture's ELF ABI, which
 * libunwind's accessors use: x86-64 0-15 rax rdx rcx rbx rsi rdi rbp rsp r8-r15, 16 the return
 * address (rip); aarch64 0-30 x0-x30, 31 sp, 32 pc) of the interrupted context into *val.
 * Returns 0, or -EINVAL for a number this backend does not read. Signal-safe. */
int plat_uc_dwarf_reg(const ucontext_t *uc, int regno, uintptr_t *val);

/* The DWARF numbers of the pc, sp and fp (plat_uc_dwarf_reg). */
extern const int plat_dwarf_pc, plat_dwarf_sp, plat_dwarf_fp;

/* Sets pc, sp and fp of uc (for walking from a caller's frame). Signal-safe. */
void plat_uc_set_frame(ucontext_t *uc, uintptr_t pc, uintptr_t sp, uintptr_t fp);

/* 1 if the interrupted thread was blocked in (or restarting) a system call when the signal
 * arrived, 0 if it was running user code. Reads the instruction at/just before pc (x86-64:
 * `syscall` 0f 05 at pc with the syscall number restored in rax, or at pc-2 with rax holding
 * -EINTR/-ERESTART*; aarch64: `svc #0` d4000001 at pc or pc-4), never across a page boundary
 * it was not interrupted in. Signal-safe, but the read faults on execute-only code: call it
 * under the fault guard (the handler does, sampler/signal/guard.h). */
int plat_uc_in_syscall(const ucontext_t *uc);

/* ---- Linux primitives, signal path (platform/linux_signal.c) ---- */

/* Kernel thread id of the caller (raw syscall). Signal-safe. */
pid_t plat_gettid(void);

/* The calling thread's own CPU time (ns). Signal-safe. */
uint64_t plat_self_cpu_ns(void);

/* The whole process's CPU time (all threads, user+system, ns). Signal-safe. */
uint64_t plat_process_cpu_ns(void);

/* CLOCK_MONOTONIC in ns. Signal-safe. */
uint64_t plat_mono_ns(void);

/* ---- Linux primitives of the sampler thread and set-up (platform/linux.c) ---- */

/* Sends signal `sig` to thread `tid` of this process with `value` in si_value.sival_int and
 * si_code SI_QUEUE (rt_tgsigqueueinfo), so the handler can tell our requests from anybody
 * else's. Returns 0 or -errno (-ESRCH: no such thread, -EAGAIN: queue full). Signal-safe. */
int plat_signal_thread(pid_t tid, int sig, int value);

/* A timer on thread `tid`'s CPU clock (of this process) that sends `sig` to that thread with
 * `value` in si_value.sival_int and si_code SI_TIMER when it expires; made disarmed. The kernel
 * checks such timers at its scheduler tick, on the CPU the thread runs on: the signal costs no
 * interrupt of its own. Returns 0 with the timer in *timer, or -errno (-EINVAL: thread gone,
 * -EAGAIN: the user's queued-signal limit reached). */
int plat_cpu_timer_create(pid_t tid, int sig, int value, int *timer);

/* Arms the timer to expire as soon as its thread has run at all: it fires at the first
 * scheduler tick that finds the thread running (never while it is blocked). once 0: disarms
 * it. Returns 0 or -errno (-ESRCH: its thread has ended). */
int plat_cpu_timer_arm(int timer, int once);

/* Deletes the timer (disarmed or not). */
void plat_cpu_timer_delete(int timer);

/* The kernel's scheduler tick (the resolution of its coarse clocks), ns; 0 when unknown. */
uint64_t plat_tick_ns(void);

/* CLOCK_MONOTONIC as of the kernel's last tick (CLOCK_MONOTONIC_COARSE), ns: where the ticks
 * fall on the monotonic clock. */
uint64_t plat_last_tick_ns(void);

/* CPU time consumed so far by thread `tid` of this process (user+system, ns), read from its
 * per-thread CPU clock without disturbing it. Returns 0 or -errno (-EINVAL: thread gone). */
int plat_thread_cpu_ns(pid_t tid, uint64_t *ns);

/* 1 when the kernel says thread `tid` of this process is running or runnable, 0 when it is
 * blocked (sleeping, stopped), or -errno (-ENOENT: gone). Reads /proc/self/task/<tid>/wchan
 * (a blocked thread's: where it waits) and, when that names no wait, its stat file; keeps the
 * descriptors open for the next call about the same thread (~1.5 us for a blocked one then,
 * ~3.3 us for a running one, ~9 us with an open): at most 1,024 descriptors, 1/16 of the
 * descriptor limit, numbered from 1,024 up when the limit allows. One caller thread at a time;
 * not signal-safe. */
int plat_thread_running(pid_t tid);
/* The files plat_thread_running reads: "wchan, stat", "stat (wchan not yet known)" (until
 * wchan has named a wait) or "stat" (wchan names none here). */
const char *plat_thread_running_source(void);

/* What thread `tid` of this process does with signal `sig`, from its /proc/self/task/<tid>/status
 * (SigBlk, SigPnd): PLAT_SIG_BLOCKED when it blocks it, PLAT_SIG_PENDING when one is pending for
 * the thread itself (sent to it, not to the process: ShdPnd is not looked at), or 0; -errno when
 * the file cannot be read or says neither (-ENOENT, -ESRCH: gone). An open, a read and a close:
 * ~11 us of CPU here (the kernel formats the whole file; /tmp probe, 5,000 reads); for
 * occasional use. Not signal-safe. */
#define PLAT_SIG_BLOCKED 1
#define PLAT_SIG_PENDING 2
int plat_thread_signal_state(pid_t tid, int sig);

/* Gives the memory malloc holds free back to the system (glibc: malloc_trim), in every arena:
 * after a burst of allocation and freeing, such as writing a profile, the allocator otherwise
 * keeps it, and a process that writes one every minute grows. A few milliseconds; not
 * signal-safe. */
void plat_release_free_memory(void);

/* The C library allocator's state, for the whole process (the JVM's allocations and ours): the
 * bytes its blocks in use hold, and the bytes it keeps free in its arenas (not given back to
 * the system). Returns 0, or -ENOSYS where it cannot say (not glibc). Locks each arena for a
 * moment: for occasional use (`sampler status`); not signal-safe. */
int plat_malloc_stats(size_t *in_use, size_t *kept_free);

/* A growable block for the profile's large tables: below 64 KB it is malloc's; from 64 KB it
 * is a mapping of its own, which grows in place or moves without copying (mremap) and goes back
 * to the system whole when freed or regrown — a doubling array in malloc's arenas leaves the
 * old copy as a hole the arena keeps. `old_len` is the size the block was given last (0 with
 * p NULL), new_len > 0. Returns the block (its first min(old_len, new_len) bytes kept) or NULL,
 * the old block then untouched. Not signal-safe. */
void *plat_block_resize(void *p, size_t old_len, size_t new_len);
void plat_block_free(void *p, size_t len);

/* Makes the whole pages of [p, p + len) present at once (one system call, MADV_POPULATE_WRITE:
 * Linux 5.14; nothing on an older kernel), for a large block of fresh memory about to be written
 * whole, whose pages would otherwise fault one at a time at their first write (a JVM's start
 * writes ~2,700 such pages of unwind tables and symbols; `build/bench/readcost 1`, the tables:
 * 11.3 ms with a fault a page, 9.9 ms with this). Below 64 KB it does nothing. Its contents stay
 * what they were. Not signal-safe. */
void plat_prefault(void *p, size_t len);

/* Closes the descriptors plat_thread_running keeps; the number it keeps now. */
void plat_thread_running_release(void);
int plat_thread_running_kept(void);

/* Futex wait on *addr while it equals `expected`, for at most timeout_ns (0: no timeout).
 * Returns 0 when woken or the value differed, -ETIMEDOUT, -EINTR. */
int plat_futex_wait(const uint32_t *addr, uint32_t expected, uint64_t timeout_ns);

/* Wakes up to n waiters on addr. Signal-safe. */
void plat_futex_wake(const uint32_t *addr, int n);

/* Sets the calling thread's timer slack (how late the kernel may fire its timers, to coalesce
 * wake-ups) to ns. Returns 0 or -errno. */
int plat_set_timer_slack_ns(unsigned long ns);

/* The calling thread's stack: [*lo, *hi). Returns 0 or -errno. Not signal-safe (allocates). */
int plat_self_stack(uintptr_t *lo, uintptr_t *hi);

/* Calls fn(ctx, tid) for every thread of this process; stops early when fn returns non-zero
 * and returns that value. Returns 0 or -errno when the list cannot be read. Reads the
 * directory only (~1 us a thread). Not signal-safe. */
int plat_foreach_thread(int (*fn)(void *ctx, pid_t tid), void *ctx);

/* The number of threads of this process, or -errno: the link count of /proc/self/task, which
 * the kernel keeps at 2 + the threads (one fstat of a descriptor kept open, ~0.7 us whatever
 * the number, where listing them takes ~1 us a thread). Not signal-safe. */
int plat_thread_count(void);

/* The kernel's name of thread `tid` of this process (its comm: at most 15 bytes; the JVM sets
 * it from the thread's name) into buf. Returns 0 or -errno (-ENOENT: gone). Not signal-safe. */
int plat_thread_name(pid_t tid, char *buf, size_t len);

/* The mapping of this process that contains addr: [*lo, *hi) as /proc/self/maps lists it.
 * Returns 0 or -ENOENT (not mapped), -errno. Reads the whole list: for occasional use (a
 * thread's stack, learnt once). Not signal-safe. */
int plat_mapping_of(uintptr_t addr, uintptr_t *lo, uintptr_t *hi);

/* The process's file-mode creation mask, read without changing it (/proc/self/status; 022 when
 * the kernel does not say). Not signal-safe. */
unsigned plat_umask(void);

/* A path that opens the running executable (whatever it was started as), and its real path
 * into buf (plat_self_exe_name: 0, or -errno with buf empty). Not signal-safe. */
const char *plat_self_exe_path(void);
int plat_self_exe_name(char *buf, size_t len);

/* Copies len bytes at addr of this process into buf without faulting, whatever addr is
 * (process_vm_readv). Returns 0, or -EFAULT (or another -errno) when any byte is not
 * readable. Not signal-safe in spirit (a system call per read); use at set-up. */
int plat_read_memory(uintptr_t addr, void *buf, size_t len);

/* plat_read_memory for n regions of len bytes each, at addrs[0..n), into buf + i * len, in as
 * few system calls as the kernel allows (process_vm_readv takes up to 1024 regions). ok[i] is
 * 1 when region i was read whole, else 0 (its bytes in buf are undefined). Returns how many
 * were read whole, or -errno when not one system call could run. Not signal-safe; set-up. */
int plat_read_memory_each(const uintptr_t *addrs, size_t len, int n, void *buf, unsigned char *ok);

/* Copies buf[0..len) over len bytes at addr of this process without faulting (process_vm_writev:
 * the kernel refuses a page that is not writable, it does not force the write). Returns 0, or
 * -EFAULT (or another -errno) when any byte is not writable; some bytes may have been written
 * then. No ordering or atomicity promised for concurrent readers. Not signal-safe. */
int plat_write_memory(uintptr_t addr, const void *buf, size_t len);

#endif
