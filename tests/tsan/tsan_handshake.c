/*
 * tsan_handshake.c — the handshake between the sampler thread and the signal handler (sample.h)
 * under ThreadSanitizer: one thread plays the sampler with the handshake's own transitions
 * (handshake_ask, _collected, _withdraw: what thread/run.c and record.c call) — it writes the
 * request's mode, asks, reads the record once the word says DONE, hands the record back,
 * and now and then withdraws a request nobody has claimed yet; the other thread is the sampled
 * thread and runs the real handler (signal/handler_sig.c) over and over, called directly with
 * the siginfo our signal carries (ThreadSanitizer defers real signals to its own points:
 * calling the handler makes every interleaving of the two sides possible). A request's mode
 * read before the ask is visible, or a record read before the answer is, is a data race
 * ThreadSanitizer reports — and then this program exits non-zero (halt_on_error).
 *
 * Besides the sanitizer's verdict it checks what the sampler reads: every answer carries the
 * frame the fake AsyncGetCallTrace wrote for it (a count that only grows), walked as its
 * mode asked, and enough requests were answered and withdrawn for the run to mean something.
 * Exits 0 when all of that held.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <jni.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "handler.h"
#include "platform.h"
#include "registry.h"
#include "sample.h"
#include "sample_walk.h"

#define SIG (SIGRTMIN + 5)
#define SECONDS 2
#define MAX_SECONDS 30
#define METHOD ((jmethodID)(uintptr_t)0x5a5a0)

static atomic_int stop, slot_index = -1;
static void (*handler_fn)(int, siginfo_t *, void *);

/* The fake AsyncGetCallTrace: one frame whose line is the number of walks so far (the sampled
 * thread's own count; the sampler reads it through the record only). */
static int32_t walks;
static void fake_asgct(asgct_trace *trace, jint depth, void *uc) {
  (void)uc;
  if (depth < 1) return;
  trace->frames[0].lineno = ++walks;
  trace->frames[0].method_id = METHOD;
  trace->num_frames = 1;
}

/* The sampled thread: registers itself, then takes "signals" until told to stop. */
static void *sampled(void *arg) {
  (void)arg;
  struct sampler_target t = {
      .tid = plat_gettid(), .name = "sampled", .env = (JNIEnv *)(uintptr_t)0x1000};
  plat_self_stack(&t.stack_lo, &t.stack_hi);
  int i = registry_add(&t);
  ucontext_t uc;
  getcontext(&uc);
  siginfo_t si;
  memset(&si, 0, sizeof si);
  si.si_signo = SIG;
  si.si_code = SI_QUEUE;
  si.si_pid = getpid();
  si.si_value.sival_int = i;
  atomic_store(&slot_index, i);
  while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
    getcontext(&uc); /* registers that change: IF_MOVED requests are walked now and then */
    handler_fn(SIG, &si, &uc);
  }
  return NULL;
}

int main(void) {
  if (registry_init(4) != 0 || handler_install(SIG, fake_asgct, 4) != 0) {
    fprintf(stderr, "tsan_handshake: set-up failed\n");
    return 1;
  }
  struct sigaction cur;
  if (sigaction(SIG, NULL, &cur) != 0 || !(cur.sa_flags & SA_SIGINFO)) {
    fprintf(stderr, "tsan_handshake: the handler is not installed\n");
    return 1;
  }
  handler_fn = cur.sa_sigaction; /* the real one: sample_handler is static */
  handler_set_active(1);
  pthread_t th;
  if (pthread_create(&th, NULL, sampled, NULL) != 0) return 1;
  while (atomic_load(&slot_index) < 0) usleep(1000);
  struct thread_slot *s = registry_slot(atomic_load(&slot_index));

  unsigned long asked = 0, answered = 0, withdrawn = 0, wrong = 0, captures = 0;
  int32_t last_line = 0;
  uint32_t seq = 0;
  struct timespec t0, now;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (unsigned long round = 0;; round++) {
    uint32_t w = atomic_load_explicit(&s->handshake, memory_order_acquire);
    switch (handshake_state(w)) {
    case SAMPLE_IDLE:
      s->mode = asked % 2 ? SAMPLE_IF_MOVED : SAMPLE_CAPTURE; /* read by the claimant */
      seq = handshake_ask(&s->handshake, w);
      asked++;
      break;
    case SAMPLE_PENDING:
      if (round % 7 == 0 && handshake_withdraw(&s->handshake, w)) withdrawn++;
      break;
    case SAMPLE_DONE: {
      const struct sample_record *r = s->record; /* the handler's writes, read after DONE */
      int ok = handshake_seq(w) == seq && r->start_ns <= r->end_ns;
      if (r->walked) {
        ok = ok && r->num_frames == 1 && r->walk->frames[0].method_id == METHOD &&
             r->walk->frames[0].lineno > last_line;
        last_line = r->walk->frames[0].lineno;
      }
      if (s->mode == SAMPLE_CAPTURE) {
        ok = ok && r->walked && r->cpu_exit > 0;
        captures++;
      }
      if (!ok) wrong++;
      answered++;
      handshake_collected(&s->handshake, w);
      break;
    }
    default: break; /* BUSY: the handler is at it */
    }
    if (round % 1024 == 0) {
      clock_gettime(CLOCK_MONOTONIC, &now);
      /* SECONDS at least; on a busy host (the suite's own build beside it) until the counts
       * below are reached too, MAX_SECONDS at most: a count is what is asserted, not a rate */
      long spent = (long)(now.tv_sec - t0.tv_sec);
      if (spent >= MAX_SECONDS || (spent >= SECONDS && answered >= 100 && withdrawn > 0)) break;
    }
  }
  atomic_store(&stop, 1);
  pthread_join(th, NULL);
  printf("tsan_handshake: %lu requests, %lu answered (%lu captures), %lu withdrawn, %lu wrong, "
         "%lu stray\n",
         asked, answered, captures, withdrawn, wrong,
         (unsigned long)atomic_load(&handler_counters()->stray));
  if (wrong || answered < 100 || withdrawn == 0) {
    fprintf(stderr, "tsan_handshake: FAILED\n");
    return 1;
  }
  return 0;
}
