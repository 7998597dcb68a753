/*
 * stubwalk_sig.c — the signal-safe side of stubwalk (stubwalk.h): the table of stubs and its
 * lock-free lookup, which the sampling signal handler asks whether a walk went through a stub
 * whose frame stubwalk changed. Loads only.
 */
#include "stubwalk.h"
#include "stubwalk_internal.h"

struct stubwalk_table stubwalk_table;

int stubwalk_entry_at(uintptr_t pc) {
  int n = atomic_load_explicit(&stubwalk_table.n, memory_order_acquire);
  for (int i = 0; i < n; i++)
    if (pc >= stubwalk_table.seen[i].begin && pc < stubwalk_table.seen[i].end) return i;
  return -1;
}

int stubwalk_changed_at(uintptr_t pc) {
  int i = stubwalk_entry_at(pc);
  return i >= 0 && atomic_load_explicit(&stubwalk_table.seen[i].ours, memory_order_relaxed) >= 0;
}

int stubwalk_any(void) { return atomic_load_explicit(&stubwalk_table.n, memory_order_relaxed) > 0; }
