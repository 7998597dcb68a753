/*
 * strings.h — the process-wide string interner: frame names (traces.c) and stub names (the
 * code map) get a dense id and a copy that is never moved or freed, so a name's pointer stays
 * valid for the life of the process, also after the code it names was unloaded.
 *
 * Thread-safe: strings_intern takes the interner's mutex (never call it from a signal
 * handler); strings_get and strings_count take no lock.
 */
#ifndef SAMPLER_STRINGS_H
#define SAMPLER_STRINGS_H

#include <stddef.h>
#include <stdint.h>

#define STRINGS_NO_ID UINT32_MAX

/* The id of the `len` bytes at s (interned on first sight), or STRINGS_NO_ID when out of
 * memory or when the interner is full (STRINGS_MAX names). Thread-safe; not signal-safe. */
uint32_t strings_intern(const char *s, size_t len);

/* The NUL-terminated name with this id, valid until the process ends; "[bad frame id]" for an
 * id never handed out. Lock-free: safe against concurrent strings_intern. */
const char *strings_get(uint32_t id);

/* Number of names interned: ids are 0 .. strings_count()-1. Lock-free. */
size_t strings_count(void);

#endif
