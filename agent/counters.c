/*
 * counters.c — the counters, defined once, in COUNTERS[] below (see counters.h): a key (the
 * stats file's, unchanged from the old summary line so that its readers could move), where its
 * value lives in struct sampler_report (an offset, or a getter for a derived value), how it is
 * shown (divided by `scale`, with `decimals` digits), its unit, whether it is a loss, and its
 * meaning in markdown. Every output of the counters is made from this table in its order, so a
 * counter cannot be named, scaled or explained differently in two places.
 *
 * Pure: reads a report it is given; no JVM, no state. Not signal-safe (stdio).
 */
#include "counters.h"
#include "flamegraph.h"

#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <string.h>

enum counter_section {
  SEC_SAMPLING,
  SEC_HASRUN,
  SEC_THREADS,
  SEC_ASGCT,
  SEC_SIGNALS,
  SEC_TABLES,
  SEC_COST,
  SEC_COUNT
};

static const char *const SECTION_TITLE[SEC_COUNT] = {
    "Sampling",
    "ThreadHasRun evidence",
    "Threads and native frames",
    "AsyncGetCallTrace",
    "Signals and losses",
    "Tables",
    "Cost",
};

/* Where a counter's value is: a uint64_t, size_t or int at `off` in struct sampler_report, or
 * what `get` works out from the report. */
enum counter_type { CT_U64, CT_SIZE, CT_INT, CT_GET };

struct counter_spec {
  const char *key;
  enum counter_section section;
  enum counter_type type;
  size_t off;
  double (*get)(const struct sampler_report *r);
  double scale; /* shown: value / scale */
  int decimals; /* digits after the point; 0: a whole number */
  const char *unit;
  int loss;            /* a loss: said at exit when not 0 */
  const char *meaning; /* markdown, one line */
};

/* ---- derived values ---- */

static double pct(uint64_t part, uint64_t whole) {
  return whole ? 100.0 * (double)part / (double)whole : 0.0;
}
static double get_asgct_ok(const struct sampler_report *r) { return (double)r->n.asgct[0]; }
static double get_not_kept(const struct sampler_report *r) {
  return (double)(r->n.store_failed + r->n.names_refused);
}
static double get_coverage(const struct sampler_report *r) { return r->coverage_permille / 10.0; }
static double get_coverage_lost(const struct sampler_report *r) { return r->lost_permille / 10.0; }
static double get_coverage_sampler(const struct sampler_report *r) {
  return r->sampler_permille / 10.0;
}
static double get_not_seen(const struct sampler_report *r) { return r->unseen_permille / 10.0; }
static double get_own_cpu_pct(const struct sampler_report *r) {
  return pct(r->own_cpu_ns, r->n.process_cpu_ns);
}
static double get_tables_kb(const struct sampler_report *r) {
  return (double)(r->table_bytes / 1024);
}

static double get_time_kb(const struct sampler_report *r) { return (double)(r->time_bytes / 1024); }

/* ---- the table: the one place a counter is defined ---- */

#define U64(field) CT_U64, offsetof(struct sampler_report, field), NULL
#define SIZE(field) CT_SIZE, offsetof(struct sampler_report, field), NULL
#define INT(field) CT_INT, offsetof(struct sampler_report, field), NULL
#define GET(fn) CT_GET, 0, fn
#define COUNT 1.0, 0                 /* a whole number as it is */
#define NS_AS(scale, dec) scale, dec /* nanoseconds shown in a larger unit */

static const struct counter_spec COUNTERS[] = {
    /* Sampling */
    {"wall_s", SEC_SAMPLING, U64(n.wall_ns), NS_AS(1e9, 3), "s", 0, "time sampled"},
    {"ticks", SEC_SAMPLING, U64(n.ticks), COUNT, "rounds", 0, "sampling rounds"},
    {"overruns", SEC_SAMPLING, U64(n.overruns), COUNT, "rounds", 0,
     "rounds skipped because the previous one ran past their deadline"},
    {"threads", SEC_SAMPLING, INT(threads_registered), COUNT, "threads", 0,
     "threads registered in all"},
    {"threads_live", SEC_SAMPLING, INT(threads_live), COUNT, "threads", 0,
     "threads registered when the stats were taken"},
    {"samples", SEC_SAMPLING, U64(n.units), COUNT, "samples", 0,
     "samples written: one per interval of a thread's CPU (`event=wall`: per interval per "
     "thread; `hasrun=regs`: one per capture) — the folded counts, the flame graph's total"},
    {"captures", SEC_SAMPLING, U64(n.samples), COUNT, "captures", 0,
     "stacks the signal handler took"},
    {"cpu_ms", SEC_SAMPLING, U64(n.cpu_ns), NS_AS(1e6, 1), "ms", 0,
     "CPU time the profile attributes"},
    {"stacks", SEC_SAMPLING, SIZE(stacks), COUNT, "stacks", 0, "distinct stacks in the profile"},
    {"blocked", SEC_SAMPLING, U64(n.blocked), COUNT, "captures", 0,
     "captures that found the thread in a system call (kept with a `[cpu before wait]` leaf; "
     "`event=wall`: a state leaf)"},
    {"wall_reused", SEC_SAMPLING, U64(n.wall_reused), COUNT, "samples", 0,
     "`event=wall`: samples given again without a signal (the thread had not run)"},
    {"alloc_samples", SEC_SAMPLING, U64(n.alloc_samples), COUNT, "samples", 0,
     "`event=alloc`: allocation samples recorded (JVMTI `SampledObjectAlloc`)"},
    {"alloc_bytes", SEC_SAMPLING, U64(n.alloc_bytes), COUNT, "bytes", 0,
     "`event=alloc`: the bytes they stand for, estimated (each sample of an object of s bytes: "
     "s / (1 − e^(−s/`alloc`))) — the folded counts, the flame graph's total"},
    {"alloc_objects", SEC_SAMPLING, U64(n.alloc_objects), COUNT, "allocations", 0,
     "`event=alloc`: the allocations they stand for, estimated (1 / (1 − e^(−s/`alloc`)) each)"},
    {"alloc_lost", SEC_SAMPLING, U64(n.alloc_lost), COUNT, "samples", 1,
     "`event=alloc`: samples the queue to the sampler thread could not take (full, or the "
     "thread not registered): kept under `[sample lost]`"},
    {"alloc_lost_bytes", SEC_SAMPLING, U64(n.alloc_lost_bytes), COUNT, "bytes", 0,
     "`event=alloc`: the bytes they stood for, estimated (in the profile, under `[sample lost]`)"},
    {"lock_waits", SEC_SAMPLING, U64(n.lock_waits), COUNT, "waits", 0,
     "`event=lock`: lock waits seen (contended `synchronized` entries, parks), any length"},
    {"lock_samples", SEC_SAMPLING, U64(n.lock_samples), COUNT, "waits", 0,
     "`event=lock`: of those, recorded — every wait of at least `lock=`, a shorter one of d ns "
     "with probability d / `lock`"},
    {"lock_ns", SEC_SAMPLING, U64(n.lock_ns), COUNT, "ns", 0,
     "`event=lock`: the ns blocked they stand for, estimated (a wait past `lock=`: itself; a "
     "shorter one recorded: `lock=`) — the folded counts, the flame graph's total"},
    {"lock_lost", SEC_SAMPLING, U64(n.lock_lost), COUNT, "waits", 1,
     "`event=lock`: recorded waits the queue to the sampler thread could not take (full, or the "
     "thread not registered): kept under `[sample lost]`"},
    {"lock_lost_ns", SEC_SAMPLING, U64(n.lock_lost_ns), COUNT, "ns", 0,
     "`event=lock`: the ns they stood for, estimated (in the profile, under `[sample lost]`)"},
    {"lock_walks_jvmti", SEC_SAMPLING, U64(n.lock_walks_jvmti), COUNT, "waits", 0,
     "`event=lock`: recorded waits whose stack AsyncGetCallTrace could not walk from the thread's "
     "last Java frame (a runtime stub's: a monitor entered from compiled code), taken by JVMTI's "
     "`GetStackTrace` instead (slower, the same frames)"},
    {"alloc_walks_jvmti", SEC_SAMPLING, U64(n.alloc_walks_jvmti), COUNT, "samples", 0,
     "`event=alloc`: allocation samples whose stack AsyncGetCallTrace could not walk from the "
     "thread's last Java frame, even after its runtime stub was made walkable, taken by JVMTI's "
     "`GetStackTrace` instead (slower, the same frames)"},
    {"stubs_walkable", SEC_SAMPLING, U64(n.stubs_walkable), COUNT, "stubs", 0,
     "`event=alloc`: C1/C2 runtime stubs (an allocation's slow path) found at the top of an "
     "allocating thread's last Java frame and marked walkable from their call into the VM on, so "
     "that AsyncGetCallTrace walks through them (HotSpot marks them never safe for profiling "
     "walks; see \"Allocation stacks\")"},
    {"process_cpu_ms", SEC_SAMPLING, U64(n.process_cpu_ns), NS_AS(1e6, 1), "ms", 0,
     "the whole process's CPU time while sampling (every thread)"},
    {"coverage", SEC_SAMPLING, GET(get_coverage), 1.0, 1, "%", 0,
     "the share of the process's CPU time the profile holds (0 with `hasrun=regs`, which "
     "measures no CPU time)"},
    {"coverage_lost", SEC_SAMPLING, GET(get_coverage_lost), 1.0, 1, "%", 0,
     "of it, points with no frame walked: `[sample lost]`, `[not sampled: signal blocked]`, "
     "failure frames"},
    {"coverage_sampler", SEC_SAMPLING, GET(get_coverage_sampler), 1.0, 1, "%", 0,
     "of it, points the sampler thread's own"},
    {"not_seen", SEC_SAMPLING, GET(get_not_seen), 1.0, 1, "%", 0,
     "the process's CPU time not in the profile: threads not sampled, CPU not yet due a sample, "
     "the cost of our signals"},

    /* ThreadHasRun evidence */
    {"clock_reads", SEC_HASRUN, U64(n.looks), COUNT, "reads", 0,
     "reads of a thread's CPU clock (`clock_gettime`, ~0.3 µs each)"},
    {"skipped_cpu", SEC_HASRUN, U64(n.skipped_cpu), COUNT, "thread-rounds", 0,
     "judged not run by the CPU clock"},
    {"skipped_idle", SEC_HASRUN, U64(n.skipped_idle), COUNT, "thread-rounds", 0,
     "not looked at (idle back-off)"},
    {"skipped_waiting", SEC_HASRUN, U64(n.skipped_waiting), COUNT, "thread-rounds", 0,
     "not looked at: a Java thread in one of the VM's waits (park, wait, sleep, monitor)"},
    {"skipped_regs", SEC_HASRUN, U64(n.skipped_regs), COUNT, "requests", 0,
     "judged not run by the register checksum"},
    {"deferred", SEC_HASRUN, U64(n.deferred), COUNT, "thread-rounds", 0,
     "a due capture waited for its thread to run"},
    {"running_asked", SEC_HASRUN, U64(n.running_asked), COUNT, "times", 0,
     "the schedule asked whether a thread with a due capture runs now"},
    {"running_jvm", SEC_HASRUN, U64(n.running_jvm), COUNT, "times", 0,
     "of those, answered by the thread's JVM state (no `/proc` read)"},
    {"ended_samples", SEC_HASRUN, U64(n.ended_units), COUNT, "samples", 0,
     "due when their thread ended: given to the last stack it was caught in"},
    {"unsampled", SEC_HASRUN, U64(n.unsampled_units), COUNT, "samples", 0,
     "of threads that ended before the sampler caught them running (the CPU they used, read in "
     "their `ThreadEnd`): kept under `[thread ended before it was sampled]`"},
    {"unsampled_threads", SEC_HASRUN, U64(n.unsampled_threads), COUNT, "threads", 0,
     "those threads"},
    {"ambiguous_kept_ms", SEC_HASRUN, U64(n.ambiguous_kept_ns), NS_AS(1e6, 3), "ms", 0,
     "CPU time with the registers unchanged, kept"},
    {"ambiguous_dropped_ms", SEC_HASRUN, U64(n.ambiguous_dropped_ns), NS_AS(1e6, 3), "ms", 0,
     "CPU time with the registers unchanged, dropped"},
    {"clock_errors", SEC_HASRUN, U64(n.clock_errors), COUNT, "reads", 0,
     "CPU clock reads that failed for a live thread"},

    /* Threads and native frames */
    {"thread_listings", SEC_THREADS, U64(n.thread_listings), COUNT, "listings", 0,
     "reads of `/proc/self/task` to find the JVM's own threads: every ~50 ms the threads are "
     "counted (one `fstat`), and listed only when there are more than the sampler has registered"},
    {"threads_found", SEC_THREADS, U64(n.threads_found), COUNT, "threads", 0,
     "threads found in `/proc/self/task` that nobody had registered"},
    {"threads_refused", SEC_THREADS, U64(n.threads_refused), COUNT, "threads", 1,
     "of those, not sampled: the registry was full"},
    {"threads_renamed", SEC_THREADS, U64(n.threads_renamed), COUNT, "threads", 0,
     "of those, renamed: their kernel name changed after they were found (read again at the "
     "next look and every second); their later samples carry the new name"},
    {"threads_gone", SEC_THREADS, U64(n.threads_gone), COUNT, "threads", 0,
     "registrations dropped because their thread had ended"},
    {"jvm_thread_captures", SEC_THREADS, U64(n.jvm_thread_samples), COUNT, "captures", 0,
     "captures of threads without Java frames (the JVM's own)"},
    {"native_frames", SEC_THREADS, U64(n.native_frames), COUNT, "frames", 0,
     "native frames recorded"},
    {"native_libunwind", SEC_THREADS, U64(n.native_general), COUNT, "walks", 0,
     "native walks libunwind did (a frame the compiled unwind tables could not follow)"},
    {"tables_from_cache", SEC_THREADS, U64(tables_read), COUNT, "tables", 0,
     "objects' unwind tables read from the cache (`cache=`) in this process, not compiled"},
    {"tables_to_cache", SEC_THREADS, U64(tables_written), COUNT, "tables", 0,
     "unwind tables compiled in this process and written to the cache"},
    {"symbols_from_cache", SEC_THREADS, U64(symbols_read), COUNT, "objects", 0,
     "objects whose function symbols were read from the cache in this process, not from their "
     "files"},
    {"symbols_to_cache", SEC_THREADS, U64(symbols_written), COUNT, "objects", 0,
     "objects whose symbols were read from their files in this process and written to the cache "
     "(those with a `.symtab` of their own)"},
    {"cache_refused", SEC_THREADS, U64(cache_refused), COUNT, "files", 0,
     "files in the cache not used: from another build of the agent or another object with the "
     "same build-id, damaged, or not this user's (compiled again and overwritten)"},
    {"cache_write_failed", SEC_THREADS, U64(cache_failed), COUNT, "entries", 0,
     "unwind tables and symbols the cache could not write (disk full, directory gone): made "
     "again next time"},

    /* AsyncGetCallTrace */
    {"asgct_ok", SEC_ASGCT, GET(get_asgct_ok), COUNT, "walks", 0,
     "`AsyncGetCallTrace` walks that succeeded"},
    {"asgct_fail", SEC_ASGCT, U64(asgct_failed), COUNT, "walks", 0,
     "`AsyncGetCallTrace` walks that failed"},
    {"recovered", SEC_ASGCT, U64(recovered), COUNT, "walks", 0,
     "failed walks attributed after all (through the compiled-code map, the frame anchor, or "
     "the last walk in the same VM call)"},
    {"recovered_stub", SEC_ASGCT, U64(n.recovered_stub), COUNT, "walks", 0,
     "of those, walked from the Java caller of the stub the PC was in"},
    {"recovered_anchor", SEC_ASGCT, U64(n.recovered_anchor), COUNT, "walks", 0,
     "walked from the Java caller of VM code (its frame anchor)"},
    {"attributed_code", SEC_ASGCT, U64(n.attributed_code), COUNT, "walks", 0,
     "attributed to the compiled method (and inline chain) the PC was in"},
    {"recovered_same_call", SEC_ASGCT, U64(n.recovered_same_call), COUNT, "walks", 0,
     "given the frames of the last walk in the same VM call"},
    {"recovered_native", SEC_ASGCT, U64(n.recovered_native), COUNT, "walks", 0,
     "walked from the Java caller of a leaf native call"},
    {"named_stub", SEC_ASGCT, U64(n.named_stub), COUNT, "walks", 0,
     "stub named, its callers not walked"},
    {"failed_kept", SEC_ASGCT, U64(failed_kept), COUNT, "walks", 0,
     "failed walks left under their failure frame"},
    {"rewalked_native", SEC_ASGCT, U64(n.rewalked_native), COUNT, "walks", 0,
     "walks that skipped the Java caller of a leaf native call, walked again from it"},
    {"anchor_refused", SEC_ASGCT, U64(anchor_refused), COUNT, "walks", 0,
     "anchor walks refused: the JNIEnv named another thread's JavaThread"},
    {"code_stale", SEC_ASGCT, U64(code_stale), COUNT, "lookups", 0,
     "compiled methods the code map gave the handler that the code cache said were freed, the "
     "range another compilation's now (the code cache as the source: no CompiledMethodUnload); "
     "the code cache's answer taken instead"},

    /* Signals and losses */
    {"requests", SEC_SIGNALS, U64(n.requests), COUNT, "signals", 0, "signals sent"},
    {"timer_requests", SEC_SIGNALS, U64(n.timer_requests), COUNT, "requests", 0,
     "requests of busy threads left to their CPU-time timers (`cputimers`: no signal sent)"},
    {"timer_captures", SEC_SIGNALS, U64(n.timer_captures), COUNT, "captures", 0,
     "the captures those timers delivered at a tick"},
    {"timer_fallbacks", SEC_SIGNALS, U64(n.timer_fallbacks), COUNT, "requests", 0,
     "timer requests signalled after two ticks without an answer"},
    {"timer_ended", SEC_SIGNALS, U64(n.timer_ended), COUNT, "requests", 0,
     "timer requests still open when their thread ended (their samples go to its last stack)"},
    {"timers_refused", SEC_SIGNALS, U64(n.timers_refused), COUNT, "threads", 0,
     "threads whose timer could not be made (the user's queued-signal limit, or more than 1,024 "
     "at once: signalled instead)"},
    {"lost", SEC_SIGNALS, U64(n.lost_send), COUNT, "signals", 1,
     "signals that could not be sent (thread gone, queue full)"},
    {"lost_samples", SEC_SIGNALS, U64(n.lost_units), COUNT, "samples", 1,
     "samples kept under `[sample lost]`"},
    {"late", SEC_SIGNALS, U64(n.late), COUNT, "requests", 0,
     "answered after the next round (recorded when they came)"},
    {"unanswered", SEC_SIGNALS, U64(n.unanswered), COUNT, "requests", 1,
     "never answered (their samples kept under `[sample lost]`)"},
    {"timed_out", SEC_SIGNALS, U64(n.timed_out), COUNT, "requests", 0,
     "of those, withdrawn after 1 s while sampling (the signal lost or blocked; the thread is "
     "asked again later); the rest at the end"},
    {"outstanding", SEC_SIGNALS, U64(n.outstanding), COUNT, "thread-rounds", 0,
     "skipped while an earlier request was still open"},
    {"sig_withheld", SEC_SIGNALS, U64(n.sig_withheld), COUNT, "requests", 0,
     "not sent: the thread blocks the sampling signal or has one pending (each sent would stay "
     "queued)"},
    {"sig_blocked", SEC_SIGNALS, U64(n.sig_blocked_units), COUNT, "samples", 1,
     "their samples, kept under `[not sampled: signal blocked]`"},
    {"sig_blocked_threads", SEC_SIGNALS, U64(n.sig_blocked_threads), COUNT, "times", 0,
     "a thread was found blocking the signal or with one pending"},
    {"sig_checks", SEC_SIGNALS, U64(n.sig_checks), COUNT, "reads", 0,
     "reads of a thread's `/proc/self/task/<tid>/status` to know that (~11 µs of CPU each)"},
    {"sig_check_ms", SEC_SIGNALS, U64(n.sig_check_ns), NS_AS(1e6, 3), "ms", 0, "their time"},
    {"handler_replaced", SEC_SIGNALS, INT(handler_replaced), COUNT, "", 1,
     "1 when the sampling signal's handler was replaced by someone else: no more signals were "
     "sent (choose another `signal=`)"},
    {"faults", SEC_SIGNALS, U64(faults), COUNT, "captures", 1,
     "captures a fault (SIGSEGV, SIGBUS) interrupted, contained: kept as `[fault during sample]`"},
    {"native_cut", SEC_SIGNALS, U64(native_cut), COUNT, "walks", 0,
     "of those, native walks a fault cut (each may leave one libunwind pool object)"},
    {"vm_handled", SEC_SIGNALS, U64(vm_handled), COUNT, "faults", 0,
     "faults in `AsyncGetCallTrace` left to the JVM (its own probes)"},
    {"guard_full", SEC_SIGNALS, U64(guard_full), COUNT, "walks", 1,
     "walks or reads skipped: every fault guard was taken (kept as lost)"},
    {"answered", SEC_SIGNALS, U64(handler_acks), COUNT, "signals", 0,
     "signals the handler answered"},
    {"stray", SEC_SIGNALS, U64(handler_stray), COUNT, "signals", 0,
     "signals of ours with nothing pending"},
    {"foreign", SEC_SIGNALS, U64(handler_foreign), COUNT, "signals", 0,
     "signals from elsewhere (ignored)"},
    {"wrong_thread", SEC_SIGNALS, U64(handler_wrong_tid), COUNT, "signals", 0,
     "signals that arrived on a wrong thread"},

    /* Tables */
    {"tables_kb", SEC_TABLES, GET(get_tables_kb), COUNT, "kB", 0,
     "what the profile's tables hold: the stack table, the frame key cache and the names (as "
     "allocated; ~135 MB at most for the stacks and keys, 128 MB of name text)"},
    {"names", SEC_TABLES, SIZE(names), COUNT, "names", 0, "frame names kept"},
    {"keys", SEC_TABLES, SIZE(keys), COUNT, "keys", 0, "cached frame keys (method or pc → name)"},
    {"code_entries", SEC_TABLES, SIZE(code_entries), COUNT, "entries", 0,
     "the compiled-code map's live entries (nmethods, stubs): 0 until a run signals threads, "
     "whose first round turns the map's JVMTI events on and puts the JVM's code in it (read from "
     "the code cache, the stubs replayed)"},
    {"code_replays", SEC_TABLES, U64(n.code_replays), COUNT, "times", 0,
     "times that happened in this profile (events off again at the run's end)"},
    {"code_from_cache", SEC_TABLES, U64(n.code_from_cache), COUNT, "nmethods", 0,
     "of the compiled methods those starts put in the map, read from HotSpot's code cache itself "
     "with their inline records (0: replayed by the events, where the JVM's tables do not "
     "describe them)"},
    {"code_posted", SEC_TABLES, U64(code_posted), COUNT, "nmethods", 0,
     "compiled methods HotSpot posted to the map (CompiledMethodLoad, its replays included): 0 "
     "with the code cache as the source, where no event per compilation is on"},
    {"code_kept", SEC_TABLES, U64(n.code_kept), COUNT, "nmethods", 0,
     "compiled methods those reads found in the map already, the same compilation (address, "
     "method, compile id) read at an earlier start: kept without reading their tables again"},
    {"code_left_out", SEC_TABLES, U64(n.code_left_out), COUNT, "nmethods", 0,
     "compiled methods those reads left out: no jmethodID made for their method yet, or freed "
     "while read"},
    {"code_swept", SEC_TABLES, U64(n.code_swept), COUNT, "entries", 0,
     "entries a replay did not renew, dropped: code unloaded while the events were off"},
    {"code_found_late", SEC_TABLES, U64(n.code_found_late), COUNT, "samples", 0,
     "samples whose pc, or a recovery's caller, was in code compiled since the map last heard "
     "(its CompiledMethodLoad not posted yet, or with the code cache as the source, not met "
     "yet): found by the handler in the code cache, with its inline chain"},
    {"code_learned", SEC_TABLES, U64(n.code_learned), COUNT, "nmethods", 0,
     "compiled methods the sampler thread added to the map from the code cache during runs: "
     "those, and (the code cache as the source) the current code of walked frames' methods the "
     "map did not know as compiled"},
    {"code_walks", SEC_TABLES, U64(n.code_walks), COUNT, "times", 0,
     "walks of the code cache during runs (the code cache as the source: no CompiledMethodLoad): "
     "what was compiled since added, compiled methods no longer there dropped"},
    {"stub_replays", SEC_TABLES, U64(n.stub_replays), COUNT, "times", 0,
     "the stubs replayed again during runs (the code cache as the source: their event is on only "
     "while HotSpot replays them): a walk that failed in generated code the map did not have, a "
     "stub made since; once for a code blob, the wait after each doubling from 100 ms to 10 s"},
    {"debug_flag_failed", SEC_TABLES, U64(n.debug_flag_failed), COUNT, "times", 1,
     "HotSpot's DebugNonSafepoints could not be set for a run, or put back after it"},
    {"not_kept", SEC_TABLES, GET(get_not_kept), COUNT, "", 1,
     "stacks and names a full table could not keep — the tables have limits so that memory "
     "stays bounded over long runs"},
    {"stacks_not_kept", SEC_TABLES, U64(n.store_failed), COUNT, "captures", 0,
     "of those, captures whose stack could not be stored: kept under `[stack not kept: table "
     "full]`"},
    {"stacks_refused", SEC_TABLES, U64(n.stacks_refused), COUNT, "captures", 0,
     "of those, refused by the stack table's limits (the rest: no memory)"},
    {"names_refused", SEC_TABLES, U64(n.names_refused), COUNT, "names", 0,
     "names not kept: `[name not kept: table full]`"},
    {"keys_refused", SEC_TABLES, U64(n.keys_refused), COUNT, "times", 0,
     "the frame key cache was full and emptied (names are then looked up again)"},
    {"keys_unloaded", SEC_TABLES, U64(n.keys_unloaded), COUNT, "keys", 0,
     "frame keys dropped because their methods' classes were unloaded (looked for whenever the "
     "cache has doubled)"},
    {"time_cell_ms", SEC_TABLES, U64(time_cell_ns), NS_AS(1e6, 0), "ms", 0,
     "the time axis's cells: when each capture was taken, to within one (20 ms; coarser — 100 "
     "ms, 1 s, 10 s, 1 min, 10 min, 1 h — once the axis reached its limit, `timeline=`)"},
    {"time_coarsened", SEC_TABLES, U64(time_coarsened), COUNT, "times", 0,
     "times the time axis's cells were made coarser to stay within its limit (no capture "
     "dropped: those of one coarser cell merged)"},
    {"time_entries", SEC_TABLES, SIZE(time_entries), COUNT, "entries", 0,
     "the time axis's entries: one per stack, thread and cell (another when one's weights pass "
     "what its 16 bytes hold)"},
    {"time_kb", SEC_TABLES, GET(get_time_kb), COUNT, "kB", 0,
     "what the time axis holds (as allocated: its entries at most `timeline=`, 32 MB by default, "
     "while the cells can coarsen; and the threads)"},
    {"time_lost", SEC_TABLES, U64(n.time_lost), COUNT, "captures", 1,
     "captures whose time could not be kept (no memory): in the profile, not on its time axis"},

    /* Cost */
    {"cost_median_us", SEC_COST, U64(cost_median_ns), NS_AS(1e3, 1), "us", 0,
     "the handler's time per capture, median"},
    {"cost_p99_us", SEC_COST, U64(cost_p99_ns), NS_AS(1e3, 1), "us", 0, "its 99th percentile"},
    {"cost_max_us", SEC_COST, U64(cost_max_ns), NS_AS(1e3, 1), "us", 0, "its maximum"},
    {"native_median_us", SEC_COST, U64(native_median_ns), NS_AS(1e3, 1), "us", 0,
     "the native walk's part of it, median, for captures with native frames"},
    {"native_p99_us", SEC_COST, U64(native_p99_ns), NS_AS(1e3, 1), "us", 0, "its 99th percentile"},
    {"latency_median_us", SEC_COST, U64(latency_median_ns), NS_AS(1e3, 1), "us", 0,
     "signal sent → handler running, median (captures by signal; a timer's wait is the tick's)"},
    {"latency_p99_us", SEC_COST, U64(latency_p99_ns), NS_AS(1e3, 1), "us", 0,
     "its 99th percentile"},
    {"sampler_cpu_ms", SEC_COST, U64(n.sampler_cpu_ns), NS_AS(1e6, 1), "ms", 0,
     "the sampler thread's own CPU time"},
    {"round_median_us", SEC_COST, U64(round_median_ns), NS_AS(1e3, 1), "us", 0,
     "the sampler thread's CPU per round, median"},
    {"round_p99_us", SEC_COST, U64(round_p99_ns), NS_AS(1e3, 1), "us", 0, "its 99th percentile"},
    {"code_replay_ms", SEC_COST, U64(n.code_replay_ns), NS_AS(1e6, 1), "ms", 0,
     "the sampler thread's CPU putting the JVM's code in the map at runs' starts (in "
     "`sampler_cpu_ms`)"},
    {"code_walk_ms", SEC_COST, U64(n.code_walk_ns), NS_AS(1e6, 1), "ms", 0,
     "the sampler thread's CPU in those walks (in `sampler_cpu_ms`)"},
    {"handler_ms", SEC_COST, U64(n.handler_ns), NS_AS(1e6, 1), "ms", 0,
     "the handler's time in all the captures (entry to exit)"},
    {"alloc_cost_ms", SEC_COST, U64(n.alloc_cost_ns), NS_AS(1e6, 1), "ms", 0,
     "`event=alloc`: the allocating threads' time in the agent's callback (the stack walk, the "
     "class's name, the queue), in `own_cpu_ms`: its CPU time, read on one callback in 32 of a "
     "thread and counted 32 times (an estimate, its clock reads in it: 8–28% above perf's count "
     "on crypto)"},
    {"lock_cost_ms", SEC_COST, U64(n.lock_cost_ns), NS_AS(1e6, 1), "ms", 0,
     "`event=lock`: the waiting threads' time in the agent after a recorded wait (the stack "
     "walk, the lock's class, the queue), in `own_cpu_ms`: its CPU time, read on one wait in 32 "
     "of a thread and counted 32 times"},
    {"own_cpu_ms", SEC_COST, U64(own_cpu_ns), NS_AS(1e6, 1), "ms", 0,
     "the agent's own CPU time: the sampler thread's, the handler's and (`event=alloc`, "
     "`lock`) the callbacks'"},
    {"own_cpu_pct", SEC_COST, GET(get_own_cpu_pct), 1.0, 2, "%", 0,
     "that, as a share of the process's CPU time while sampling; not in it: the kernel's work to "
     "deliver our signals and timers (5–20 µs of a thread's time per cross-CPU signal here, "
     "`bench/sigcost.py`)"},
};

#define COUNTER_COUNT (sizeof COUNTERS / sizeof *COUNTERS)

/* The key of the i-th counter (counters.h). Thread-safe, signal-safe. */
const char *counter_name(size_t i) { return i < COUNTER_COUNT ? COUNTERS[i].key : NULL; }

/* The value of c in r as the outputs show it, into buf: a whole number, or `decimals` digits. */
static void counter_value(const struct counter_spec *c, const struct sampler_report *r, char *buf,
                          size_t len) {
  const char *at = (const char *)r + c->off;
  uint64_t whole = 0;
  double v = 0;
  switch (c->type) {
  case CT_U64: memcpy(&whole, at, sizeof whole); break;
  case CT_SIZE: {
    size_t z;
    memcpy(&z, at, sizeof z);
    whole = z;
    break;
  }
  case CT_INT: {
    int i;
    memcpy(&i, at, sizeof i);
    whole = i < 0 ? 0 : (uint64_t)i;
    break;
  }
  case CT_GET: v = c->get(r); break;
  }
  if (c->type != CT_GET && c->decimals == 0 && c->scale == 1.0) {
    snprintf(buf, len, "%" PRIu64, whole); /* exact, however large */
    return;
  }
  if (c->type != CT_GET) v = (double)whole;
  snprintf(buf, len, "%.*f", c->decimals, v / c->scale);
}

/* Every counter of r, key and value as shown (counters.h). */
int counters_each(const struct sampler_report *r,
                  int (*fn)(void *ctx, const char *key, const char *value), void *ctx) {
  for (size_t i = 0; i < COUNTER_COUNT; i++) {
    char v[64];
    counter_value(&COUNTERS[i], r, v, sizeof v);
    int rc = fn(ctx, COUNTERS[i].key, v);
    if (rc) return rc;
  }
  return 0;
}

/* Whether c's value in r is 0 (as shown). */
static int counter_zero(const struct counter_spec *c, const struct sampler_report *r) {
  char v[64];
  counter_value(c, r, v, sizeof v);
  return strspn(v, "0.") == strlen(v);
}

/* The stats as JSON (counters.h). Returns 0, -EIO or -ENOMEM. */
int counters_json(FILE *f, const struct agent_options *o, const char *path,
                  const struct sampler_report *r) {
  fputs("{\n  \"file\": ", f);
  /* the path is any bytes; JSON is UTF-8: flamegraph.h's writer makes it so */
  int rc = fg_write_json_string(f, path, strlen(path));
  if (rc) return rc;
  char names[64];
  opt_event_names(opt_events(o), ",", names, sizeof names);
  fprintf(f, ",\n  \"format\": \"%s\",\n  \"event\": \"%s\"", opt_format_name(o->format), names);
  for (size_t i = 0; i < COUNTER_COUNT; i++) {
    char v[64];
    counter_value(&COUNTERS[i], r, v, sizeof v);
    fprintf(f, ",\n  \"%s\": %s", COUNTERS[i].key, v);
  }
  fputs("\n}\n", f);
  return ferror(f) ? -EIO : 0;
}

/* Writes md without its backticks (the text outputs are not markdown). */
static void put_plain(FILE *f, const char *md) {
  for (; *md; md++)
    if (*md != '`') fputc(*md, f);
}

/* The counters by section, as text (counters.h). Returns 0 or -EIO. */
int counters_text(FILE *f, const struct sampler_report *r) {
  for (int s = 0; s < SEC_COUNT; s++) {
    fprintf(f, "%s\n", SECTION_TITLE[s]);
    for (size_t i = 0; i < COUNTER_COUNT; i++) {
      const struct counter_spec *c = &COUNTERS[i];
      if (c->section != (enum counter_section)s) continue;
      char v[64];
      counter_value(c, r, v, sizeof v);
      fprintf(f, "  %-22s %12s %-13s ", c->key, v, c->unit);
      put_plain(f, c->meaning);
      fputc('\n', f);
    }
    fputc('\n', f);
  }
  return ferror(f) ? -EIO : 0;
}

/* What the line said at exit says of event kind ev (enum sampler_event) in r, into buf. */
static int exit_event(char *buf, size_t len, int ev, const char *cov,
                      const struct sampler_report *r) {
  switch (ev) {
  case SAMPLER_EVENT_LOCK:
    return snprintf(buf, len,
                    "%" PRIu64 " lock waits seen, %" PRIu64 " recorded, %" PRIu64
                    " ns blocked (estimated)",
                    r->n.lock_waits, r->n.lock_samples, r->n.lock_ns);
  case SAMPLER_EVENT_ALLOC:
    return snprintf(buf, len, "%" PRIu64 " allocation samples, %" PRIu64 " bytes (estimated)",
                    r->n.alloc_samples, r->n.alloc_bytes);
  default: return snprintf(buf, len, "%" PRIu64 " samples, coverage %s", r->n.units, cov);
  }
}

/* The line said at exit (counters.h): each event's part, "cpu: ...; alloc: ..." when several. */
void counters_exit_line(char *buf, size_t len, const struct agent_options *o, const char *path,
                        const char *stats, const struct sampler_report *r) {
  char cov[32] = "n/a"; /* hasrun=regs measures no CPU time */
  if (o->hasrun != SAMPLER_HASRUN_REGS) snprintf(cov, sizeof cov, "%.1f%%", get_coverage(r));
  unsigned events = opt_events(o);
  int w = snprintf(buf, len, "profile written to %s: ", path);
  for (int k = 0, first = 1; k < SAMPLER_EVENTS; k++) {
    if (!(events & 1u << k)) continue;
    size_t at = w < 0 || (size_t)w >= len ? len : (size_t)w;
    if (events & (events - 1))
      w += snprintf(buf + at, len - at, "%s%s: ", first ? "" : "; ", opt_event_name(k));
    at = w < 0 || (size_t)w >= len ? len : (size_t)w;
    w += exit_event(buf + at, len - at, k, cov, r);
    first = 0;
  }
  size_t at = w < 0 || (size_t)w >= len ? len : (size_t)w;
  w += snprintf(buf + at, len - at, ", own CPU %.2f%%", get_own_cpu_pct(r));
  size_t n = w < 0 ? 0 : (size_t)w;
  const char *sep = "; ";
  for (size_t i = 0; i < COUNTER_COUNT && n < len; i++) {
    const struct counter_spec *c = &COUNTERS[i];
    if (!c->loss || counter_zero(c, r)) continue;
    char v[64];
    counter_value(c, r, v, sizeof v);
    w = snprintf(buf + n, len - n, "%s%s %s", sep, c->key, v);
    n += w < 0 ? 0 : (size_t)w;
    sep = ", ";
  }
  if (stats && *stats && n < len) snprintf(buf + n, len - n, "; stats in %s", stats);
}

/* The docs' table (counters.h). Returns 0 or -EIO. */
int counters_markdown_table(FILE *f) {
  fputs("| key | unit | meaning |\n|---|---|---|\n", f);
  for (size_t i = 0; i < COUNTER_COUNT; i++) {
    const struct counter_spec *c = &COUNTERS[i];
    char key[64], meaning[1024];
    snprintf(key, sizeof key, "`%s`", c->key);
    snprintf(meaning, sizeof meaning, "%s%s", c->meaning,
             c->loss ? " — a loss: said at exit when not 0" : "");
    fputs("|", f);
    opt_markdown_cell(f, key);
    opt_markdown_cell(f, c->unit);
    opt_markdown_cell(f, meaning);
    fputs("\n", f);
  }
  return ferror(f) ? -EIO : 0;
}
