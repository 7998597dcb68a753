/*
 * evq.h — a bounded queue of variable-length records from many producer threads to one
 * consumer: events that JVMTI posts on the thread they happen on (an allocation sampled) and
 * that only the sampler thread may record (the stack table and the time axis are its alone).
 *
 * Two halves of preallocated memory: producers append to the active half (a reservation is
 * one atomic add; no lock, no wait, no allocation), the consumer swaps the halves and reads
 * the one it took once its last writer has left — or, while one is still inside, at its next
 * drain: neither side ever waits for the other. A record that does not fit is refused
 * (evq_reserve returns NULL) and the producer counts it: nothing is dropped silently.
 *
 * Producers: any thread, not signal-safe only because nothing here needs to be (no lock, no
 * allocation: it is async-signal-safe in fact). Consumer: one thread at a time.
 */
#ifndef SAMPLER_EVQ_H
#define SAMPLER_EVQ_H

#include <stddef.h>
#include <stdint.h>

/* The memory of each half: 2 MiB, ~2,000 records of a 60-frame stack; the consumer drains
 * every round (an interval, 10 ms by default). */
#define EVQ_HALF_BYTES ((size_t)2 << 20)

/* Allocates the halves, once (later calls: 0). Returns 0 or -ENOMEM (nothing allocated then).
 * Not thread-safe: call before any producer can run. The memory stays for the life of the
 * process (evq_fini aside): a producer late out of its callback still writes into valid memory. */
int evq_init(void);

/* Frees the halves evq_init allocated: only for a set-up that failed before any producer could
 * run (sampler_init). Not thread-safe. */
void evq_fini(void);

/* A reservation: which half it is in. */
struct evq_ticket {
  int half;
};

/* Reserves len bytes (8-byte aligned) in the active half; returns where to write them, or NULL
 * when the half is full or evq_init has not run (the caller counts the record as lost). Every
 * non-NULL reservation must be ended with evq_commit. Any thread; lock-free. */
void *evq_reserve(size_t len, struct evq_ticket *t);

/* Ends the reservation t: the record can be read. */
void evq_commit(const struct evq_ticket *t);

/* Reads the records of the half taken at the last drain once its writers have left (each with
 * fn(ctx, record, len), in the order reserved), then takes the active half for the next
 * drain. Returns how many records fn was given. A half with a writer still inside is left for
 * the next call: this never waits. One consumer thread at a time. */
size_t evq_drain(void (*fn)(void *ctx, const void *rec, size_t len), void *ctx);

/* 1 when a drain has records left to read (the half taken, or the active one). */
int evq_pending(void);

#endif
