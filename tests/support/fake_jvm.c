/*
 * fake_jvm.c — the stand-in JVM (see fake_jvm.h). Its AsyncGetCallTrace runs in the sampling
 * signal handler: it reads a thread-local role (static TLS: this file is linked into an
 * executable, never dlopen'ed) and writes one frame; it allocates nothing.
 */
#include "fake_jvm.h"

#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "platform.h"

static __thread jmethodID role;
static __thread sigjmp_buf probe_env; /* a FAKE_ROLE_PROBE walk's continuation */
static __thread volatile int probing;
static volatile jint *volatile nowhere = (volatile jint *)(uintptr_t)8; /* never mapped */
static atomic_ulong walks;
static volatile uintptr_t *_Atomic anchor_pc;
static _Atomic uintptr_t pcs_seen;
static atomic_int gc_active;

void fake_jvm_set_gc_active(int on) { atomic_store(&gc_active, on); }

void fake_jvm_set_anchor(volatile uintptr_t *last_pc) { atomic_store(&anchor_pc, last_pc); }

uintptr_t fake_jvm_anchor_pcs_seen(void) { return atomic_load(&pcs_seen); }

void fake_jvm_set_role(jmethodID r) { role = r; }

unsigned long fake_jvm_walks(void) { return atomic_load(&walks); }

static void fake_asgct(asgct_trace *t, jint depth, void *uc) {
  (void)uc;
  atomic_fetch_add_explicit(&walks, 1, memory_order_relaxed);
  if (depth < 1) return;
  if (atomic_load(&gc_active)) {
    t->num_frames = ASGCT_GC_ACTIVE;
    return;
  }
  if (role == FAKE_ROLE_FAULT) t->num_frames = *nowhere; /* a fault, on purpose */
  if (role == FAKE_ROLE_PROBE) {
    /* like SafeFetch: the fault handler of the JVM continues the probe (the mask restored) */
    if (sigsetjmp(probe_env, 1) == 0) {
      probing = 1;
      t->num_frames = *nowhere;
    }
    probing = 0;
  }
  if (role == FAKE_ROLE_NESTED) syscall(SYS_tgkill, getpid(), plat_gettid(), FAKE_NESTED_SIGNAL);
  t->frames[0].method_id = role;
  t->frames[0].lineno = 0;
  t->num_frames = role ? 1 : ASGCT_UNKNOWN_JAVA;
  if (role == FAKE_ROLE_IN_VM) {
    volatile uintptr_t *a = atomic_load(&anchor_pc);
    uintptr_t pc = a ? *a : 0;
    atomic_fetch_or(&pcs_seen, pc);
    if (!pc) t->num_frames = ASGCT_UNKNOWN_NOT_JAVA;
  }
}

static int fake_method_name(void *ctx, jmethodID m, jint bci, char *buf, size_t len) {
  (void)ctx, (void)bci;
  const char *name = m == FAKE_ROLE_BUSY    ? "Busy.run"
                     : m == FAKE_ROLE_IDLE  ? "Idle.run"
                     : m == FAKE_ROLE_BURST ? "Burst.run"
                     : m == FAKE_ROLE_IN_VM ? "InVm.run"
                                            : NULL;
  if (!name) return -1;
  snprintf(buf, len, "%s", name);
  return 0;
}

int fake_jvm_vm_handler(int sig, siginfo_t *si, void *uc, int abort_if_unrecognized) {
  (void)sig, (void)si, (void)uc, (void)abort_if_unrecognized;
  if (probing) siglongjmp(probe_env, 1);
  return 0;
}

struct sampler_jvm fake_jvm(void) {
  struct sampler_jvm j = {.asgct = fake_asgct, .method_name = fake_method_name};
  return j;
}

JNIEnv *fake_jvm_env(void) {
  static JNIEnv dummy;
  return &dummy;
}

int fake_jvm_register_self(const char *name) {
  struct sampler_target t = {.tid = plat_gettid(), .name = name, .env = fake_jvm_env()};
  plat_self_stack(&t.stack_lo, &t.stack_hi);
  return sampler_thread_started(&t);
}
