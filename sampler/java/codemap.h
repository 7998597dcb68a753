/*
 * codemap.h — the compiled-code map: PC -> the nmethod or stub whose code contains it.
 *
 * Built from DynamicCodeGenerated (interpreter, stubs, adapters, intrinsics) and, for the
 * nmethods with their inline records (jvmticmlr.h), from HotSpot's code cache itself where its
 * tables describe it (codemap_add_cache at a run's start and at its walks, codemap_add_cache_at
 * for the code samples meet) — else from JVMTI CompiledMethodLoad / CompiledMethodUnload. When AsyncGetCallTrace fails — typically because the PC is in a stub such as
 * Math.sin's libmSin — the signal handler attributes the sample through codemap_lookup().
 *
 * Writers (JVMTI callbacks, any thread) serialize on a mutex and may allocate and wait.
 * codemap_lookup() is async-signal-safe and lock-free: no malloc, no locks, never waits; it
 * lives apart, with the rest of the signal path (codemap_lookup_sig.c). See codemap.c for
 * the design (immutable snapshots, epoch-counted reclamation).
 */
#ifndef SAMPLER_CODEMAP_H
#define SAMPLER_CODEMAP_H

#include <jvmti.h>
#include <jvmticmlr.h>
#include <stddef.h>
#include <stdint.h>

#include "asgct.h"

enum codemap_kind { CODEMAP_NONE = 0, CODEMAP_NMETHOD = 1, CODEMAP_STUB = 2 };

#define CODEMAP_MAX_INLINE 16

/* Filled by codemap_lookup(): a self-contained copy, valid after the map changes. */
struct codemap_hit {
  int kind;             /* enum codemap_kind */
  uintptr_t start, end; /* the range that contains pc: [start, end) */
  jmethodID method;     /* NMETHOD: the compiled (outermost) method */
  const char *name;     /* STUB: its name (stable storage, never freed) */
  uint32_t name_id;     /* STUB: the name's id (intern.h) */
  int frame_words;      /* STUB: its fixed frame size in words, 0 unknown */
  int interpreter;      /* STUB: it is the template interpreter ("Interpreter") */
  int ninline;          /* NMETHOD: inline chain at pc, 0 if no record covers pc */
  jmethodID inl_method[CODEMAP_MAX_INLINE]; /* innermost first, as jvmticmlr's PCStackInfo */
  jint inl_bci[CODEMAP_MAX_INLINE];
  uint64_t generation; /* of the entry: bumps at every add */
  int32_t compile_id; /* NMETHOD read from the code cache: its compile id; 0 unknown (an event's) */
};

/* Writer-side counters (codemap_stats). */
struct codemap_stats {
  uint64_t adds;         /* successful codemap_add_* calls */
  uint64_t removes;      /* successful codemap_remove_method calls */
  uint64_t replaced;     /* live entries dropped because a newer add overlapped them */
  uint64_t remove_miss;  /* codemap_remove_method found no matching live entry */
  uint64_t swept;        /* live entries codemap_sweep dropped (unloaded while no one listened) */
  uint64_t inline_trunc; /* inline chains cut to CODEMAP_MAX_INLINE frames (innermost kept) */
  uint64_t grace_waits;  /* reclamation rounds (each waits for readers that might see old data) */
  uint64_t kinds_lost;   /* inline edges the frame-kind index could not store (no memory) */
  uint64_t kinds_keys;   /* keys the frame-kind index holds now (dead ones until a rebuild) */
};

/* How a Java frame was running, as flame graphs annotate it. */
enum codemap_frame_kind {
  CODEMAP_FRAME_NATIVE = 0,     /* a native method (ASGCT's lineno -3): no annotation */
  CODEMAP_FRAME_JIT = 1,        /* "_[j]": the compiled method that owns the code */
  CODEMAP_FRAME_INLINED = 2,    /* "_[i]": inlined into its caller's compiled code */
  CODEMAP_FRAME_INTERPRETED = 3 /* "_[0]" */
};

/* Creates the empty map. Idempotent. Returns 0 or -ENOMEM. Not signal-safe. */
int codemap_init(void);

/* Drops every entry and frees the map's memory (stub names stay valid). Safe against
 * concurrent lookups (they return 0 afterwards); not against concurrent writers. */
void codemap_fini(void);

/* Adds the nmethod of `m` at [code, code + size). Copies the JVMTI_CMLR_INLINE_INFO records of
 * `compile_info` (may be NULL; other record kinds are skipped). Live entries that overlap the
 * range are replaced (counted in stats.replaced). Returns 0, -EINVAL (NULL code, size <= 0,
 * range wraps), -ENOMEM, or -ENODEV before codemap_init. Any thread; not signal-safe. */
int codemap_add_method(jmethodID m, const void *code, jint size, const void *compile_info);

/* As codemap_add_method, for an nmethod read from the code cache (codemap_cache.c) whose
 * compile id is known (codecache_compile_id; <= 0: unknown, as an event's): a later walk that
 * finds the same compilation there renews the entry instead of reading it again. */
int codemap_add_compiled(jmethodID m, const void *code, jint size, const void *compile_info,
                         int32_t compile_id);

/* The live nmethod entry of m at [code, code + size) added with compile id `compile_id` (> 0)
 * is marked found again, now: a codemap_sweep from a generation before this call keeps it, as if
 * it had been added again — its records are that compilation's, which HotSpot never changes.
 * 0; -ENOENT (no such entry: another compilation there, one added from an event, or none),
 * -ENODEV. Any thread; not signal-safe. */
int codemap_renew_compiled(jmethodID m, const void *code, jint size, int32_t compile_id);

/* As codemap_renew_compiled, for the live stub entry named `name` at exactly [code, code + size):
 * a replay of the stubs (GenerateEvents) renews what the map holds instead of adding it again
 * (its frame size looked up, the map's root copied). 0; -ENOENT (no such entry: another range
 * or name, or none), -ENODEV. Any thread; not signal-safe. */
int codemap_renew_stub(const char *name, const void *code, jint size);

/* Adds a stub / generated blob named `name` (copied and interned for the process lifetime;
 * NULL becomes "unknown stub") whose frames are `frame_words` words (return address
 * included; 0 when unknown or not fixed). Same replacement rule and returns as
 * codemap_add_method. */
int codemap_add_stub(const char *name, const void *code, jint size, int frame_words);

struct codecache_layout;

/* What codemap_add_cache did. */
struct codemap_cache_stats {
  uint64_t nmethods;         /* nmethods the walk found */
  uint64_t added;            /* of those, added to the map with their records */
  uint64_t kept;             /* of those, in the map already, the same compilation: renewed */
  uint64_t unnamed;          /* left out: their method has no jmethodID yet */
  uint64_t unread;           /* left out: their table did not read (freed meanwhile) */
  uint64_t records_unnamed;  /* records left out: a frame's method has no jmethodID yet */
  uint64_t skipped_segments; /* code heap segments whose block did not read as one */
};

/* Adds every live nmethod of HotSpot's code cache with its inline records, as
 * CompiledMethodLoad would (codemap_cache.c): a run's start without GenerateEvents' replay, and
 * its walks. The layout is bound to the calling thread for the walk. 0 with *st filled; -ENOTSUP when the
 * layout cannot read the records (l->scopes_why), -EFAULT when the code heaps cannot be read,
 * -ENOMEM; after an error the map may hold part of the code (a replay then renews it). A
 * layout bound already (codecache_bind, on the calling thread) is used as it is. Any thread; not
 * signal-safe. */
int codemap_add_cache(const struct codecache_layout *l, struct codemap_cache_stats *st);

/* The nmethod whose code holds pc, read from the code cache and added with its inline records
 * as codemap_add_cache adds each (st->nmethods 1 when pc is in one, st->added 1 when it went
 * in): the code a sample met before its CompiledMethodLoad was posted, or without it. pc may be
 * the blob's own address (codecache_method_code's answer). 0; -ENOENT when pc is in no blob now
 * (freed meanwhile), -EFAULT, -ENOTSUP, -ENOMEM as codemap_add_cache. A layout bound already
 * (codecache_bind, on the calling thread) is used as it is: no system call. Any thread; not
 * signal-safe. */
int codemap_add_cache_at(const struct codecache_layout *l, uintptr_t pc,
                         struct codemap_cache_stats *st);

/* Removes the live nmethod of `m` that starts at `code` (CompiledMethodUnload). A later lookup
 * never returns it. Returns 0, -ENOENT (no such live entry: already replaced by a newer load at
 * that address, or never added), -ENOMEM, -ENODEV. Any thread; not signal-safe. */
int codemap_remove_method(jmethodID m, const void *code);

/* The generation of the newest entry added so far (0: none). Any thread; not signal-safe. */
uint64_t codemap_generation(void);

/* Drops every live entry added (or renewed: codemap_renew_compiled) at or before generation
 * `gen` (codemap_generation's). After a replay of all live code (GenerateEvents, or a walk of the
 * code cache) that began at `gen`, what the replay did not add or renew is code that was unloaded
 * while the map's events were off. Returns the number of
 * entries dropped, or -ENOMEM (nothing changed), -ENODEV. Any thread; not signal-safe. */
int codemap_sweep(uint64_t gen);

/* As codemap_sweep, for the compiled methods only (stubs stay): after a walk of the code cache
 * during a run, whose stubs were not replayed. */
int codemap_sweep_compiled(uint64_t gen);

/* Looks up pc. Returns 1 and fills *hit, or 0 (not mapped, or map not initialized).
 * ASYNC-SIGNAL-SAFE, lock-free, wait-free: callable from the signal handler on any thread
 * while writers run. */
int codemap_lookup(uintptr_t pc, struct codemap_hit *hit);

/* The kind of each frame of a stack that AsyncGetCallTrace walked from `pc` (frames leaf
 * first; kinds[i] for frames[i]). The frames at pc are exact: in an nmethod, its inline chain
 * at pc is inlined and the nmethod's method JIT; in the interpreter, interpreted. A caller's
 * kind comes from the live compiled code: inlined when some live nmethod inlines it into that
 * caller at that bytecode index, else JIT when the method has a live nmethod, else interpreted
 * (an activation that started before its method was compiled can be misjudged JIT). Takes the
 * index's own mutex, which writers hold only while they update the index: not signal-safe. */
void codemap_frame_kinds(uintptr_t pc, const asgct_frame *frames, int n, unsigned char *kinds);

/* Number of live entries (a snapshot). Any thread; signal-safe. */
size_t codemap_count(void);

/* Copies the writer-side counters. Takes the writer mutex: not signal-safe. */
void codemap_stats(struct codemap_stats *out);

/* Reclaims every retired snapshot now (waits for readers that might still see them).
 * Normally reclamation is batched; tests and shutdown use this. Not signal-safe. */
void codemap_reclaim(void);

#endif
