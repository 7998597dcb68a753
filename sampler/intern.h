/*
 * intern.h — the process-wide string interner: frame names (traces.c) and stub names (the
 * code map) get a dense id and a copy that is never moved or freed, so a name's pointer stays
 * valid for the life of the process, also after the code it names was unloaded.
 *
 * A name is written into every output as it is here, and the folded format has no escapes: so
 * the interner cleans what it is given — ';' (the frame separator) becomes ':', a control
 * character (a newline would end the line) '?', and a name that ends in a space and digits gets
 * '_' for that space (a leaf "x 12" would read as a count) — and two names that clean alike are
 * one name.
 *
 * Thread-safe: intern_string takes the interner's mutex (never call it from a signal
 * handler); intern_name and intern_count take no lock.
 */
#ifndef SAMPLER_INTERN_H
#define SAMPLER_INTERN_H

#include <stddef.h>
#include <stdint.h>

#define INTERN_NO_ID UINT32_MAX

/* The id of the `len` bytes at s (interned on first sight), or INTERN_NO_ID when out of
 * memory or when the interner is full (4,194,304 names). Thread-safe; not signal-safe. */
uint32_t intern_string(const char *s, size_t len);

/* The NUL-terminated name with this id, valid until the process ends; "[bad frame id]" for an
 * id never handed out. Lock-free: safe against concurrent intern_string. */
const char *intern_name(uint32_t id);

/* Number of names interned: ids are 0 .. intern_count()-1. Lock-free. */
size_t intern_count(void);

#endif
