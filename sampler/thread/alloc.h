/*
 * alloc.h — the events JVMTI posts on their own thread, queued for the sampler thread:
 * lock waits (event=lock, lock_* below: weighed in ns blocked, the lock's class the leaf
 * "Class_[l]") and allocation samples (event=alloc): JVMTI's SampledObjectAlloc posts them on the
 * allocating thread, where alloc_push puts a record (thread, time, size, class, Java frames)
 * into the bounded queue (evq.h); the sampler thread drains the queue each round
 * (alloc_drain) into the stack table and the time axis, weighted as estimated bytes and
 * allocations. What the queue cannot take is counted (samples, estimated bytes) and kept in
 * the profile under [sample lost]. The frames' and the class's names are made on the sampler
 * thread.
 */
#ifndef SAMPLER_ALLOC_H
#define SAMPLER_ALLOC_H

#include <jni.h>
#include <stddef.h>
#include <stdint.h>

/* One frame as JVMTI's GetStackTrace gives it (jvmtiFrameInfo's layout). */
struct alloc_frame {
  jmethodID method;
  int64_t bci; /* jlocation: the bytecode index, -1 for a native method */
};

/* Starts (interval: the mean sampling interval in bytes, > 0) or stops (0) taking records.
 * Returns 0 or -ENOMEM (the queue could not be made). Between runs, or at their start. */
int alloc_set_interval(uint64_t interval);

/* The agent's cost in its JVMTI callbacks is their CPU time, measured on one callback in
 * ALLOC_COST_EVERY of each thread (two reads of the thread's CPU clock: system calls) and
 * counted ALLOC_COST_EVERY times — an unbiased estimate. Not wall time: a callback preempted,
 * or held at a safepoint inside JVMTI, would count time it did not spend. One in 8 cost ~7% of
 * an allocation sample's callback on crypto at alloc=2m (perf; the thread's CPU clock is a
 * system call of microseconds on this VM); one in 32 still measures ~300 of 10,000 samples. */
#define ALLOC_COST_EVERY 32

/* Where a callback's cost begins: the calling thread's CPU clock (+1) on one call in
 * ALLOC_COST_EVERY of this thread's allocation (lock 0) or lock (lock 1) callbacks, else 0 (not
 * measured). Pass it to alloc_push / lock_push. Any thread. */
uint64_t alloc_cost_begin(int lock);

/* Counts a recorded wait's stack that AsyncGetCallTrace could not walk and JVMTI's
 * GetStackTrace took (lock_walks_jvmti). Any thread; lock-free. */
void lock_count_jvmti_walk(void);

/* The same for an allocation sample's stack (alloc_walks_jvmti). Any thread; lock-free. */
void alloc_count_jvmti_walk(void);

/* The callbacks' estimated CPU time (ns) for allocations and for lock waits since the last
 * call, taken (the sums restart at 0). Any thread. */
void alloc_take_costs(uint64_t *alloc_ns, uint64_t *lock_ns);

/* A sampled allocation of `size` bytes of the class whose JVMTI signature is sig[sig_len]
 * ("[B", "Ljava/lang/String;"), allocated at frames[0..n) (the top frame first), on the calling
 * thread; cost_began: alloc_cost_begin() as the host's callback began (the CPU from then to the
 * end of the push is the agent's cost). Returns 0, -EAGAIN (no run is taking samples:
 * not counted), -ENOSPC (the queue was full: counted lost), -ESRCH (the thread is not
 * registered: counted lost). Any thread; lock-free but for the thread registry's lookup of the
 * caller's name; never waits for the sampler thread. */
int alloc_push(const char *sig, size_t sig_len, uint64_t size, const struct alloc_frame *frames,
               int n, uint64_t cost_began);

/* The estimated weight of one sample of an allocation of size bytes at mean interval I:
 * HotSpot samples the byte stream at exponentially distributed distances (mean I), so the
 * allocation is sampled with p = 1 - exp(-size/I); it stands for size/p bytes and 1/p
 * allocations. Pure. */
double alloc_weight(uint64_t size, uint64_t interval, double *objects);

/* The Java name of a class from its JVMTI signature (UTF-8): "[B" -> "byte[]",
 * "[[Ljava/lang/Object;" -> "java.lang.Object[][]", "Ljava/lang/String;" -> "java.lang.String".
 * Writes at most len bytes (NUL-terminated; cut when longer); returns the length. Pure. */
size_t alloc_class_name(const char *sig, size_t n, char *out, size_t len);

/* Records every record the queue holds now (each under the thread's root when `threads`, its
 * Java frames, and its class as the leaf), and what could not be queued since the last drain.
 * Sampler thread; traces_lock held. */
void alloc_drain(void);

/* ---- event=lock: the same queue and drain, records of kind lock ---- */

/* Starts (on, with the threshold in ns) or stops (on 0) taking lock waits. Returns 0 or
 * -ENOMEM (the queue could not be made). Between runs, or at their start. */
int lock_set_threshold(int on, uint64_t threshold_ns);

/* Counts one wait of wait_ns that a thread has just ended, and says whether to record it
 * (1) or not (0): a wait of at least the threshold always, a shorter one with probability
 * wait_ns / threshold (this thread's own random numbers). 0 when no lock run is on (not
 * counted). Any thread; lock-free, no system call but the first time on a thread. */
int lock_take(uint64_t wait_ns);

/* A wait of wait_ns that lock_take chose, for the lock whose class's JVMTI signature is
 * sig[sig_len] (sig_len 0: a park without a blocker), at frames[0..n) (the top first), on the
 * calling thread; cost_began: alloc_cost_begin() once the wait ended (the CPU from then is the
 * agent's cost). Returns 0, -EAGAIN (no lock run), -ENOSPC or -ESRCH (counted lost with its
 * estimated ns, kept under [sample lost]). Any thread; never waits for the sampler thread. */
int lock_push(const char *sig, size_t sig_len, uint64_t wait_ns, const struct alloc_frame *frames,
              int n, uint64_t cost_began);

/* The estimated weight of one recorded wait of wait_ns at threshold_ns: itself when at least
 * the threshold (always recorded); else the threshold, standing for threshold / wait_ns waits
 * (recorded with probability wait_ns / threshold: expected ns = wait_ns, unbiased). Pure. */
double lock_weight(uint64_t wait_ns, uint64_t threshold_ns, double *waits);

/* 1 when records wait in the queue (a drain would record some). */
int alloc_pending(void);

#endif
