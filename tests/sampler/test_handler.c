/*
 * Tests of the sampling signal handler (sampler/signal/handler_sig.c) on its own: real threads,
 * real signals, the handshake driven by hand (as thread/run.c drives it), the fake JVM's
 * AsyncGetCallTrace. What the handler answers for a capture, for "only if it moved", for a
 * thread with no JNIEnv, for signals that are not ours or not expected, that a failed walk
 * is recovered through the code map, that faults are contained only when they are the sample's
 * own, and that the frame anchor of a VM call is walked only when the JNIEnv names the
 * interrupted thread's own JavaThread.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "codecache.h"
#include "codemap.h"
#include "fake_codecache.h"
#include "fake_jvm.h"
#include "guard.h"
#include "handler.h"
#include "hotspot.h"
#include "platform.h"
#include "registry.h"
#include "sample.h"
#include "sample_walk.h"

#define SIG (SIGRTMIN + 4)

static atomic_int stop;
static _Atomic pid_t worker_tid;
static atomic_int worker_slot = -1;

/* What the worker thread does while it is sampled. */
enum work { SPIN, SLEEP };

struct worker_args {
  enum work work;
  jmethodID role;
  int with_env;
};

static void *worker(void *arg) {
  const struct worker_args *a = arg;
  fake_jvm_set_role(a->role);
  struct sampler_target t = {
      .tid = plat_gettid(), .name = "worker", .env = a->with_env ? fake_jvm_env() : NULL};
  plat_self_stack(&t.stack_lo, &t.stack_hi);
  atomic_store(&worker_slot, registry_add(&t));
  atomic_store(&worker_tid, t.tid);
  volatile uint64_t x = 0;
  while (!atomic_load(&stop)) {
    if (a->work == SPIN)
      x++;
    else
      syscall(SYS_futex, &stop, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0); /* blocked until the end */
  }
  return NULL;
}

static pthread_t start_worker(struct worker_args *a) {
  cr_assert_eq(registry_init(8), 0);
  struct sampler_jvm jvm = fake_jvm();
  cr_assert_eq(handler_install(SIG, jvm.asgct, 8), 0);
  handler_set_active(1);
  atomic_store(&stop, 0);
  atomic_store(&worker_slot, -1);
  pthread_t th;
  pthread_create(&th, NULL, worker, a);
  while (atomic_load(&worker_slot) < 0) usleep(1000);
  usleep(20000); /* let it settle into its loop or its wait */
  return th;
}

static void stop_worker(pthread_t th) {
  atomic_store(&stop, 1);
  syscall(SYS_futex, &stop, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
  pthread_join(th, NULL);
}

/* Asks the worker for one sample in `mode`, as the sampler would; returns its record once the
 * handler has answered (DONE), and sets the slot IDLE again. */
static const struct sample_record *ask(int mode) {
  int i = atomic_load(&worker_slot);
  struct thread_slot *s = registry_slot(i);
  uint32_t w = atomic_load(&s->handshake);
  cr_assert_eq(handshake_state(w), SAMPLE_IDLE);
  s->mode = mode;
  uint32_t seq = handshake_seq(w) + 1;
  atomic_store(&s->handshake, handshake_word(seq, SAMPLE_PENDING));
  cr_assert_eq(plat_signal_thread(s->tid, SIG, i), 0);
  for (int spins = 0; handshake_state(atomic_load(&s->handshake)) != SAMPLE_DONE; spins++) {
    cr_assert_lt(spins, 20000, "no answer within 2 s");
    usleep(100);
  }
  cr_assert_eq(handshake_seq(atomic_load(&s->handshake)), seq,
               "the answer carries the request's sequence");
  atomic_store(&s->handshake, handshake_word(seq, SAMPLE_IDLE));
  return s->record;
}

Test(handler, a_capture_walks_the_stack_and_reads_the_cpu_clock) {
  struct worker_args a = {SPIN, FAKE_ROLE_BUSY, 1};
  pthread_t th = start_worker(&a);
  const struct sample_record *r = ask(SAMPLE_CAPTURE);
  cr_expect_eq(r->walked, 1);
  cr_expect_eq(r->num_frames, 1);
  cr_expect_eq(r->walk->frames[0].method_id, FAKE_ROLE_BUSY);
  cr_expect_eq(r->recovered, RECOVERY_NONE);
  cr_expect_eq(r->dropped, 0);
  cr_expect_eq(r->in_syscall, 0, "a spinning thread is not in a system call");
  cr_expect_gt(r->cpu_exit, 0u, "a capture reads the thread's CPU clock at exit");
  cr_expect_leq(r->start_ns, r->end_ns);
  stop_worker(th);
}

Test(handler, if_moved_walks_only_a_thread_whose_registers_changed) {
  struct worker_args a = {SLEEP, FAKE_ROLE_IDLE, 1};
  pthread_t th = start_worker(&a);
  const struct sample_record *r = ask(SAMPLE_IF_MOVED);
  cr_expect_eq(r->moved, 1, "the first request has nothing to compare with");
  cr_expect_eq(r->walked, 1);
  cr_expect_eq(r->in_syscall, 1, "blocked in futex");
  unsigned long walks = fake_jvm_walks();
  for (int k = 0; k < 20; k++) {
    r = ask(SAMPLE_IF_MOVED);
    cr_expect_eq(r->moved, 0, "a blocked thread keeps its registers (request %d)", k);
    cr_expect_eq(r->walked, 0);
    cr_expect_eq(r->cpu_exit, 0u, "no CPU clock read when not capturing");
  }
  cr_expect_eq(fake_jvm_walks(), walks, "no walk for a thread that did not move");
  r = ask(SAMPLE_CAPTURE);
  cr_expect_eq(r->walked, 1, "a capture walks even when nothing moved");
  stop_worker(th);
}

Test(handler, a_thread_without_a_jnienv_is_not_walked) {
  struct worker_args a = {SPIN, FAKE_ROLE_BUSY, 0};
  pthread_t th = start_worker(&a);
  unsigned long walks = fake_jvm_walks();
  const struct sample_record *r = ask(SAMPLE_CAPTURE);
  cr_expect_eq(r->walked, 1);
  cr_expect_eq(r->num_frames, ASGCT_NOT_JAVA_THREAD);
  cr_expect_eq(fake_jvm_walks(), walks,
               "AsyncGetCallTrace is not called without the thread's JNIEnv");
  stop_worker(th);
}

/* not inlined: the code map is told its page (the worker must be there, not in a copy) */
__attribute__((noinline)) static void spin_here(void) {
  while (!atomic_load(&stop)) __asm__ volatile("" ::: "memory");
}

static void *stub_worker(void *arg) {
  (void)arg;
  fake_jvm_set_role(NULL); /* every walk fails: -5 unknown Java */
  struct sampler_target t = {.tid = plat_gettid(), .name = "in a stub", .env = fake_jvm_env()};
  atomic_store(&worker_slot, registry_add(&t));
  spin_here();
  return NULL;
}

Test(handler, a_failed_walk_in_a_stub_is_named_through_the_code_map) {
  cr_assert_eq(registry_init(8), 0);
  cr_assert_eq(codemap_init(), 0);
  /* the worker's loop "is" a stub: the code map says so */
  cr_assert_eq(codemap_add_stub("StubRoutines::test",
                                (const void *)((uintptr_t)spin_here & ~(uintptr_t)4095), 8192, 0),
               0);
  struct sampler_jvm jvm = fake_jvm();
  cr_assert_eq(handler_install(SIG, jvm.asgct, 8), 0);
  handler_set_active(1);
  atomic_store(&stop, 0);
  pthread_t th;
  pthread_create(&th, NULL, stub_worker, NULL);
  while (atomic_load(&worker_slot) < 0) usleep(1000);
  usleep(20000);
  const struct sample_record *r = ask(SAMPLE_CAPTURE);
  cr_expect_eq(r->num_frames, ASGCT_UNKNOWN_JAVA);
  cr_expect_eq(r->walk->hit.kind, CODEMAP_STUB, "the PC was found in the stub");
  cr_expect_str_eq(r->walk->hit.name, "StubRoutines::test");
  stop_worker(th);
}

Test(handler, signals_that_are_not_expected_are_counted_and_ignored) {
  struct worker_args a = {SPIN, FAKE_ROLE_BUSY, 1};
  pthread_t th = start_worker(&a);
  const struct handler_counters *c = handler_counters();
  uint64_t stray = atomic_load(&c->stray), foreign = atomic_load(&c->foreign),
           acks = atomic_load(&c->acks);
  pid_t tid = atomic_load(&worker_tid);
  cr_assert_eq(plat_signal_thread(tid, SIG, atomic_load(&worker_slot)), 0,
               "ours, but nothing is pending");
  cr_assert_eq(syscall(SYS_tgkill, getpid(), tid, SIG), 0, "someone else's (SI_TKILL)");
  cr_assert_eq(plat_signal_thread(tid, SIG, 100000), 0, "a slot that does not exist");
  /* delivered when the thread next runs: on a busy machine that can take long */
  for (int ms = 0;
       ms < 5000 && (atomic_load(&c->stray) < stray + 2 || atomic_load(&c->foreign) < foreign + 1);
       ms++)
    usleep(1000);
  usleep(20000); /* and nothing more comes */
  cr_expect_eq(atomic_load(&c->stray), stray + 2);
  cr_expect_eq(atomic_load(&c->foreign), foreign + 1);
  cr_expect_eq(atomic_load(&c->acks), acks, "nothing was answered");
  handler_set_active(0);
  struct thread_slot *s = registry_slot(atomic_load(&worker_slot));
  s->mode = SAMPLE_CAPTURE;
  atomic_store(&s->handshake, handshake_word(1000, SAMPLE_PENDING));
  cr_assert_eq(plat_signal_thread(tid, SIG, atomic_load(&worker_slot)), 0);
  for (int ms = 0; ms < 5000 && atomic_load(&c->stray) < stray + 3; ms++) usleep(1000);
  usleep(20000);
  cr_expect_eq(handshake_state(atomic_load(&s->handshake)), SAMPLE_PENDING,
               "an inactive handler takes nothing");
  cr_expect_eq(atomic_load(&c->stray), stray + 3);
  atomic_store(&s->handshake, handshake_word(1000, SAMPLE_IDLE));
  stop_worker(th);
}

/* A fault in a sample (here: inside the fake AsyncGetCallTrace) is contained: the handler
 * answers with [fault during sample], the thread lives on, and the next fault is contained too
 * (the jump out of the fault handler left nothing blocked). A fault outside any sample still
 * reaches the handler that was there before (the JVM's). */
static sigjmp_buf outside;
static atomic_int previous_calls;

static void previous_handler(int sig, siginfo_t *si, void *uc) {
  (void)sig, (void)si, (void)uc;
  atomic_fetch_add(&previous_calls, 1);
  siglongjmp(outside, 1);
}

Test(handler, a_fault_during_a_sample_is_contained_and_others_are_passed_on) {
  struct sigaction prev;
  memset(&prev, 0, sizeof prev);
  prev.sa_sigaction = previous_handler;
  prev.sa_flags = SA_SIGINFO;
  sigaction(SIGSEGV, &prev, NULL);
  cr_assert_eq(guard_install(), 0);
  struct worker_args a = {SPIN, FAKE_ROLE_FAULT, 1};
  pthread_t th = start_worker(&a);
  uint64_t faults = guard_faults();
  for (int k = 0; k < 3; k++) {
    const struct sample_record *r = ask(SAMPLE_CAPTURE);
    cr_expect_eq(r->num_frames, ASGCT_SAMPLE_FAULT, "sample %d: kept as a fault", k);
  }
  cr_expect_eq(guard_faults(), faults + 3, "every fault was contained");
  cr_expect_eq(atomic_load(&previous_calls), 0, "none reached the previous handler");
  /* a fault that is not a sample's */
  if (sigsetjmp(outside, 1) == 0) {
    static volatile int *volatile nowhere = (volatile int *)(uintptr_t)8;
    volatile int x = *nowhere;
    (void)x;
    cr_expect_fail("the read of address 8 did not fault");
  }
  cr_expect_eq(atomic_load(&previous_calls), 1,
               "a fault outside a sample goes to the previous handler");
  cr_expect_eq(guard_faults(), faults + 3);
  stop_worker(th);
  guard_uninstall();
  struct sigaction now;
  sigaction(SIGSEGV, NULL, &now);
  cr_expect(now.sa_sigaction == previous_handler, "uninstall puts the previous handler back");
}

/* With every slot of the guard table taken, the handler does not walk unguarded: the walk is
 * dropped (the record says so) and counted, and the fake AsyncGetCallTrace is not called. */
Test(handler, a_full_guard_table_drops_the_walk_and_counts_it) {
  cr_assert_eq(guard_install(), 0);
  struct worker_args a = {SPIN, FAKE_ROLE_BUSY, 1};
  pthread_t th = start_worker(&a);
  static struct guard taken[256];
  int n = 0;
  while (n < 256 && guard_register(&taken[n], plat_gettid(), 0) == 0) n++;
  cr_assert_eq(n, 256, "the table holds 256 guards");
  uint64_t full = guard_full();
  unsigned long walks = fake_jvm_walks();
  const struct sample_record *r = ask(SAMPLE_CAPTURE);
  cr_expect_eq(r->walked, 1, "asked to walk");
  cr_expect_eq(r->dropped, 1, "but dropped: no guard");
  cr_expect_eq(fake_jvm_walks(), walks, "nothing was walked unguarded");
  cr_expect_eq(guard_full(), full + 1, "counted");
  for (int k = 0; k < n; k++) guard_leave(&taken[k]);
  r = ask(SAMPLE_CAPTURE);
  cr_expect_eq(r->dropped, 0);
  cr_expect_eq(r->num_frames, 1, "walked again once a guard is free");
  stop_worker(th);
  guard_uninstall();
}

/* A fault raised by another signal's handler that runs nested inside the walk (on the guarded
 * thread, while the guard is registered) is not the sample's: it goes to the handler that was
 * there before (the JVM's), which here lets the nested handler finish; the walk then goes on. */
static sigjmp_buf nested_env;
static atomic_int nested_active, nested_faults, nested_runs;

static void nested_segv(int sig, siginfo_t *si, void *uc) {
  (void)sig, (void)si, (void)uc;
  if (!atomic_load(&nested_active)) _exit(3); /* a fault nobody expected: fail loudly */
  atomic_fetch_add(&nested_faults, 1);
  siglongjmp(nested_env, 1);
}

static void nested_handler(int sig) {
  (void)sig;
  atomic_fetch_add(&nested_runs, 1);
  if (sigsetjmp(nested_env, 1) == 0) {
    atomic_store(&nested_active, 1);
    static volatile int *volatile nowhere = (volatile int *)(uintptr_t)8;
    (void)*nowhere;
  }
  atomic_store(&nested_active, 0);
}

Test(handler, a_fault_of_a_nested_handler_goes_to_the_jvm) {
  struct sigaction prev, nested;
  memset(&prev, 0, sizeof prev);
  prev.sa_sigaction = nested_segv;
  prev.sa_flags = SA_SIGINFO;
  sigaction(SIGSEGV, &prev, NULL);
  memset(&nested, 0, sizeof nested);
  nested.sa_handler = nested_handler; /* blocks its own signal while it runs, as usual */
  sigaction(FAKE_NESTED_SIGNAL, &nested, NULL);
  cr_assert_eq(guard_install(), 0);
  struct worker_args a = {SPIN, FAKE_ROLE_NESTED, 1};
  pthread_t th = start_worker(&a);
  uint64_t faults = guard_faults();
  const struct sample_record *r = ask(SAMPLE_CAPTURE);
  cr_expect_eq(atomic_load(&nested_runs), 1, "the nested handler ran inside the walk");
  cr_expect_eq(atomic_load(&nested_faults), 1, "its fault reached the previous handler");
  cr_expect_eq(guard_faults(), faults, "the guard did not take it");
  cr_expect_eq(r->num_frames, 1, "the walk went on and finished");
  cr_expect_eq(r->walk->frames[0].method_id, FAKE_ROLE_NESTED);
  stop_worker(th);
  guard_uninstall();
}

/* Inside AsyncGetCallTrace the JVM's own fault entry is asked first: a probe it handles (as
 * HotSpot's SafeFetch) continues, and the sample is not a fault. */
Test(handler, a_fault_the_jvm_handles_inside_the_walk_is_left_to_it) {
  cr_assert_eq(guard_install(), 0);
  guard_set_vm_handler(fake_jvm_vm_handler);
  struct worker_args a = {SPIN, FAKE_ROLE_PROBE, 1};
  pthread_t th = start_worker(&a);
  uint64_t faults = guard_faults();
  const struct sample_record *r = ask(SAMPLE_CAPTURE);
  cr_expect_eq(r->num_frames, 1, "the probe's walk finished");
  cr_expect_eq(r->walk->frames[0].method_id, FAKE_ROLE_PROBE);
  cr_expect_eq(guard_faults(), faults, "not contained: the JVM handled it");
  stop_worker(th);
  guard_set_vm_handler(NULL);
  guard_uninstall();
}

/* The jump back from a contained fault leaves the thread's signal mask as it was before the
 * guard, even though the fault handler ran with the JVM's sa_mask (nearly every signal): on
 * the sampler thread (no signal return follows) a blocked mask would stay. */
Test(handler, a_contained_fault_leaves_the_signal_mask_as_it_was) {
  struct sigaction prev;
  memset(&prev, 0, sizeof prev);
  prev.sa_sigaction = previous_handler;
  prev.sa_flags = SA_SIGINFO;
  sigfillset(&prev.sa_mask); /* as HotSpot: every signal but the synchronous ones */
  sigdelset(&prev.sa_mask, SIGSEGV);
  sigdelset(&prev.sa_mask, SIGBUS);
  sigdelset(&prev.sa_mask, SIGILL);
  sigdelset(&prev.sa_mask, SIGFPE);
  sigdelset(&prev.sa_mask, SIGTRAP);
  sigaction(SIGSEGV, &prev, NULL);
  cr_assert_eq(guard_install(), 0);
  uint64_t before = guard_mask_now(), faults = guard_faults();
  struct guard g;
  int f = guard_enter(&g, plat_gettid(), before);
  if (f == 0) {
    static volatile int *volatile nowhere = (volatile int *)(uintptr_t)8;
    (void)*nowhere;
  }
  if (f != GUARD_FULL) guard_leave(&g);
  cr_expect_eq(f, SIGSEGV, "the fault came back to the guard");
  cr_expect_eq(guard_faults(), faults + 1);
  cr_expect_eq(atomic_load(&previous_calls), 0);
  cr_expect_eq(guard_mask_now(), before, "the mask after the fault: %#llx, before: %#llx",
               (unsigned long long)guard_mask_now(), (unsigned long long)before);
  guard_uninstall();
}

/* Our signal on another thread than its slot's (a late one, for a thread that gave its slot to a
 * new thread) claims nothing and writes nothing: the slot's request stays for its own thread. */
Test(handler, a_signal_on_another_thread_than_the_slots_takes_nothing) {
  struct worker_args a = {SPIN, FAKE_ROLE_BUSY, 1};
  pthread_t th = start_worker(&a);
  int i = atomic_load(&worker_slot);
  struct thread_slot *s = registry_slot(i);
  const struct handler_counters *c = handler_counters();
  uint64_t wrong = atomic_load(&c->wrong_tid), acks = atomic_load(&c->acks);
  s->record->num_frames = 12345; /* a mark: the record must stay as it is */
  s->mode = SAMPLE_CAPTURE;
  atomic_store(&s->handshake, handshake_word(7, SAMPLE_PENDING));
  cr_assert_eq(plat_signal_thread(plat_gettid(), SIG, i), 0, "to this thread, not the worker");
  for (int k = 0; k < 200 && atomic_load(&c->wrong_tid) == wrong; k++) usleep(1000);
  cr_expect_eq(atomic_load(&c->wrong_tid), wrong + 1, "counted as on a wrong thread");
  cr_expect_eq(atomic_load(&s->handshake), handshake_word(7, SAMPLE_PENDING),
               "the request is still open");
  cr_expect_eq(s->record->num_frames, 12345, "the record was not written");
  cr_expect_eq(atomic_load(&c->acks), acks);
  atomic_store(&s->handshake, handshake_word(7, SAMPLE_IDLE));
  stop_worker(th);
}

/* The frame anchor: a fake JavaThread laid out as hotspot_layout says (its JNIEnv inside it, as
 * HotSpot's is), a fake OSThread, and "generated code" the anchor's return address points into.
 * The worker, in a VM call (FAKE_ROLE_IN_VM), keeps a "Java frame" on its own stack: the
 * anchor's last sp points just above the word that holds the return address. */
static _Alignas(16) unsigned char java_thread[512];
static int32_t os_thread[4];
static unsigned char generated_code[64];
static const struct hotspot_layout fake_layout = {.anchor = 0x40,
                                                  .last_sp = 0,
                                                  .last_pc = 8,
                                                  .last_fp = 16,
                                                  .state = 0x10,
                                                  .stack_base = 0x18,
                                                  .stack_size = 0x20,
                                                  .osthread = 0x28,
                                                  .os_tid = 0,
                                                  .in_vm = 6,
                                                  .in_vm_trans = 7,
                                                  .in_java = 8,
                                                  .blocked = 10,
                                                  .env = 0x100,
                                                  .blob_code_begin = -1,
                                                  .blob_code_end = -1,
                                                  .blob_frame_size = -1,
                                                  .blob_size = -1,
                                                  .blob_header_size = -1,
                                                  .blob_code_offset = -1,
                                                  .blob_data_offset = -1};
static _Atomic pid_t os_thread_names; /* the tid the fake OSThread gives; 0: the worker's own */

static uintptr_t *jt_word(long off) { return (uintptr_t *)(java_thread + off); }

static void *vm_worker(void *arg) {
  (void)arg;
  fake_jvm_set_role(FAKE_ROLE_IN_VM);
  volatile uintptr_t frame[4] = {0, (uintptr_t)generated_code + 16, 0, 0};
  uintptr_t lo, hi;
  plat_self_stack(&lo, &hi);
  pid_t tid = plat_gettid();
  pid_t named = atomic_load(&os_thread_names);
  os_thread[0] = named ? named : tid;
  *jt_word(fake_layout.osthread) = (uintptr_t)os_thread;
  *jt_word(fake_layout.stack_base) = hi;
  *jt_word(fake_layout.stack_size) = hi - lo;
  *(int *)(java_thread + fake_layout.state) = fake_layout.in_vm;
  *jt_word(fake_layout.anchor + fake_layout.last_sp) = (uintptr_t)&frame[2];
  *jt_word(fake_layout.anchor + fake_layout.last_pc) = 0; /* as a VM call leaves it */
  struct sampler_target t = {
      .tid = tid, .name = "in the VM", .env = (JNIEnv *)(java_thread + fake_layout.env)};
  atomic_store(&worker_slot, registry_add(&t));
  spin_here();
  return (void *)frame[1]; /* frame stays live while spinning */
}

/* Runs the in-VM worker with its OSThread naming `named` (0: itself) and returns its sample. */
static const struct sample_record *sample_in_vm(pid_t named, pthread_t *th) {
  cr_assert_eq(registry_init(8), 0);
  cr_assert_eq(codemap_init(), 0);
  cr_assert_eq(codemap_add_stub("Interpreter", generated_code, sizeof generated_code, 0), 0);
  struct sampler_jvm jvm = fake_jvm();
  cr_assert_eq(handler_install(SIG, jvm.asgct, 8), 0);
  handler_set_hotspot(&fake_layout);
  handler_set_active(1);
  fake_jvm_set_anchor(jt_word(fake_layout.anchor + fake_layout.last_pc));
  atomic_store(&os_thread_names, named);
  atomic_store(&stop, 0);
  atomic_store(&worker_slot, -1);
  pthread_create(th, NULL, vm_worker, NULL);
  while (atomic_load(&worker_slot) < 0) usleep(1000);
  usleep(20000);
  return ask(SAMPLE_CAPTURE);
}

Test(handler, a_vm_call_is_walked_from_its_frame_anchor_which_is_put_back) {
  pthread_t th;
  uint64_t refused = atomic_load(&handler_counters()->anchor_refused);
  const struct sample_record *r = sample_in_vm(0, &th);
  uintptr_t sp = *jt_word(fake_layout.anchor + fake_layout.last_sp);
  cr_expect_eq(r->fail_code, ASGCT_UNKNOWN_NOT_JAVA);
  cr_expect_eq(r->recovered, RECOVERY_ANCHOR, "walked from the anchor");
  cr_expect_eq(r->num_frames, 1);
  cr_expect_eq(fake_jvm_anchor_pcs_seen(), (uintptr_t)generated_code + 16,
               "the walk saw the return address as the anchor's pc");
  cr_expect_eq(*jt_word(fake_layout.anchor + fake_layout.last_pc), 0, "the pc is put back");
  cr_expect_eq(*jt_word(fake_layout.anchor + fake_layout.last_sp), sp, "the sp is untouched");
  cr_expect_eq(atomic_load(&handler_counters()->anchor_refused), refused);
  stop_worker(th);
}

/* A JNIEnv whose JavaThread names another kernel thread (a stale registration, an env that is
 * not the thread's own): its anchor belongs to a thread that may be running — never written. */
Test(handler, the_anchor_of_a_java_thread_that_is_not_this_one_is_never_written) {
  pthread_t th;
  uint64_t refused = atomic_load(&handler_counters()->anchor_refused);
  const struct sample_record *r = sample_in_vm(plat_gettid(), &th); /* names the test's thread */
  cr_expect_eq(r->num_frames, ASGCT_UNKNOWN_NOT_JAVA, "not walked");
  cr_expect_eq(r->recovered, RECOVERY_NONE);
  cr_expect_eq(fake_jvm_anchor_pcs_seen(), 0, "the anchor's pc was never set");
  cr_expect_eq(atomic_load(&handler_counters()->anchor_refused), refused + 1, "counted");
  stop_worker(th);
}

/* While a collection runs AsyncGetCallTrace walks nobody: a thread still in the call out of Java
 * its last walk was taken in (the same anchor) gets that walk's frames again; once the anchor
 * names another call, it does not. */
Test(handler, in_the_same_vm_call_a_walk_refused_for_gc_gives_the_last_walks_frames) {
  pthread_t th;
  const struct sample_record *r = sample_in_vm(0, &th);
  cr_assert_eq(r->recovered, RECOVERY_ANCHOR, "the first walk, from the anchor");
  fake_jvm_set_gc_active(1);
  r = ask(SAMPLE_CAPTURE);
  cr_expect_eq(r->fail_code, ASGCT_GC_ACTIVE);
  cr_expect_eq(r->recovered, RECOVERY_SAME_CALL);
  cr_expect_eq(r->num_frames, 1);
  cr_expect_eq(r->walk->frames[0].method_id, FAKE_ROLE_IN_VM);
  /* another call: its anchor one word higher, above a different return address */
  *jt_word(fake_layout.anchor + fake_layout.last_sp) += sizeof(uintptr_t);
  r = ask(SAMPLE_CAPTURE);
  cr_expect_eq(r->num_frames, ASGCT_GC_ACTIVE, "not the call of the last walk");
  cr_expect_eq(r->recovered, RECOVERY_NONE);
  fake_jvm_set_gc_active(0);
  stop_worker(th);
}

/* Code compiled since the code map last heard of it (its CompiledMethodLoad not posted yet): a
 * thread spinning in the fake code cache's nmethod (fake_codecache.h), whose walks fail, with
 * the map empty. With the handler reading the code cache, the failed walk is attributed to the
 * nmethod with its inline chain, as the map would have, and its code is left for the sampler to
 * learn; without it, nothing; with a code cache whose heap list faults, the fault is the read's
 * (a guard nested in the sample's own): counted, and the sample goes on as a failed walk. */
#define NEW_CODE_METHOD ((jmethodID)0x5000)
static struct fake_codecache new_code;
static volatile unsigned char new_code_stop;

static void *new_code_worker(void *arg) {
  (void)arg;
  fake_jvm_set_role(NULL); /* every walk fails: -5 unknown Java */
  struct sampler_target t = {.tid = plat_gettid(), .name = "in new code", .env = fake_jvm_env()};
  atomic_store(&worker_slot, registry_add(&t));
  fake_codecache_run(&new_code, &new_code_stop);
  return NULL;
}

/* Samples a thread in the nmethod, the handler given `layout` (NULL: no code cache). */
static pthread_t start_in_new_code(const struct codecache_layout *layout) {
  cr_assert_eq(registry_init(8), 0);
  cr_assert_eq(codemap_init(), 0);
  cr_assert_eq(guard_install(), 0);
  struct sampler_jvm jvm = fake_jvm();
  cr_assert_eq(handler_install(SIG, jvm.asgct, 8), 0);
  handler_set_codecache(layout);
  handler_set_active(1);
  new_code_stop = 0;
  atomic_store(&worker_slot, -1);
  pthread_t th;
  pthread_create(&th, NULL, new_code_worker, NULL);
  while (atomic_load(&worker_slot) < 0) usleep(1000);
  usleep(20000);
  return th;
}

static void stop_in_new_code(pthread_t th) {
  new_code_stop = 1;
  pthread_join(th, NULL);
  handler_uninstall();
  guard_uninstall();
  fake_codecache_free(&new_code);
}

Test(handler, a_failed_walk_in_code_the_map_has_not_heard_of_is_found_in_the_code_cache) {
  cr_assert_eq(fake_codecache_make(&new_code, NEW_CODE_METHOD, 7), 0);
  new_code.layout.read = guard_read, new_code.layout.mask = guard_mask_now;
  pthread_t th = start_in_new_code(&new_code.layout);
  uint64_t faults = guard_faults();
  for (int k = 0; k < 20; k++) {
    const struct sample_record *r = ask(SAMPLE_CAPTURE);
    cr_assert_eq(r->num_frames, ASGCT_UNKNOWN_JAVA, "the walk failed (sample %d)", k);
    cr_assert_eq(r->walk->hit.kind, CODEMAP_NMETHOD, "found in the code cache (sample %d)", k);
    cr_expect_eq(r->walk->hit.method, NEW_CODE_METHOD);
    cr_expect_eq(r->walk->hit.start, new_code.code_begin);
    cr_expect_eq(r->walk->hit.end, new_code.code_end);
    cr_expect_eq(r->walk->hit.ninline, 1, "its scope at the pc");
    cr_expect_eq(r->walk->hit.inl_method[0], NEW_CODE_METHOD);
    cr_expect_eq(r->walk->hit.inl_bci[0], 7);
    cr_expect_eq(r->cache_code, new_code.code_begin, "left for the sampler to learn");
    cr_expect_eq(r->recovered, RECOVERY_NONE);
  }
  cr_expect_eq(guard_faults(), faults, "no read faulted");
  stop_in_new_code(th);
}

Test(handler, without_the_code_cache_a_failed_walk_in_new_code_is_not_found) {
  cr_assert_eq(fake_codecache_make(&new_code, NEW_CODE_METHOD, 7), 0);
  pthread_t th = start_in_new_code(NULL);
  const struct sample_record *r = ask(SAMPLE_CAPTURE);
  cr_expect_eq(r->num_frames, ASGCT_UNKNOWN_JAVA);
  cr_expect_eq(r->walk->hit.kind, CODEMAP_NONE);
  cr_expect_eq(r->cache_code, 0);
  stop_in_new_code(th);
}

Test(handler, a_fault_in_the_code_cache_read_is_the_reads_and_the_sample_goes_on) {
  cr_assert_eq(fake_codecache_make(&new_code, NEW_CODE_METHOD, 7), 0);
  long page = sysconf(_SC_PAGESIZE);
  void *none = mmap(NULL, (size_t)page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  cr_assert_neq(none, MAP_FAILED);
  struct codecache_layout bad = new_code.layout;
  bad.heaps = (uintptr_t)none; /* the heap list's pointer on a page nobody may read */
  bad.read = guard_read, bad.mask = guard_mask_now;
  pthread_t th = start_in_new_code(&bad);
  uint64_t faults = guard_faults();
  for (int k = 0; k < 50; k++) {
    const struct sample_record *r = ask(SAMPLE_CAPTURE);
    cr_assert_eq(r->num_frames, ASGCT_UNKNOWN_JAVA, "a failed walk, not a fault (sample %d)", k);
    cr_assert_eq(r->walk->hit.kind, CODEMAP_NONE);
    cr_assert_eq(r->cache_code, 0);
  }
  cr_expect_eq(guard_faults(), faults + 50, "each read's fault contained and counted");
  stop_in_new_code(th);
  munmap(none, (size_t)page);
}

/* Without CompiledMethodUnload (the code cache as the source), the map may hold a compiled
 * method whose code was freed and whose range is another compilation's now: with the check on,
 * the handler asks the code cache about the map's answer, keeps it when it is the same
 * compilation and takes the code cache's when it is not (counted: code_stale); with the check
 * off, the map's answer stands. */
Test(handler, a_compiled_method_the_map_holds_is_checked_against_the_code_cache) {
  cr_assert_eq(fake_codecache_make(&new_code, NEW_CODE_METHOD, 7), 0);
  new_code.layout.read = guard_read, new_code.layout.mask = guard_mask_now;
  pthread_t th = start_in_new_code(&new_code.layout);
  struct codemap_cache_stats st;
  cr_assert_eq(codemap_add_cache_at(&new_code.layout, new_code.code_begin, &st), 0);
  cr_assert_eq(st.added, 1, "compile id 1, scope at bci 7, in the map");
  handler_check_code(1);
  uint64_t stale = handler_counters()->code_stale;
  const struct sample_record *r = ask(SAMPLE_CAPTURE);
  cr_assert_eq(r->walk->hit.kind, CODEMAP_NMETHOD);
  cr_expect_eq(r->walk->hit.inl_bci[0], 7);
  cr_expect_eq(r->cache_code, 0, "the map's own: nothing to learn");
  cr_expect_eq(handler_counters()->code_stale, stale, "the same compilation");
  fake_codecache_recompile(&new_code, 2, 9); /* freed, and another compilation there */
  for (int k = 0; k < 10; k++) {
    r = ask(SAMPLE_CAPTURE);
    cr_assert_eq(r->walk->hit.kind, CODEMAP_NMETHOD);
    cr_expect_eq(r->walk->hit.inl_bci[0], 9, "the code cache's scope (sample %d)", k);
    cr_expect_eq(r->cache_code, new_code.code_begin, "left for the sampler to learn");
  }
  cr_expect_eq(handler_counters()->code_stale, stale + 10);
  handler_check_code(0);
  r = ask(SAMPLE_CAPTURE);
  cr_expect_eq(r->walk->hit.inl_bci[0], 7, "unchecked: the map's answer");
  stop_in_new_code(th);
  codemap_fini();
}
