/*
 * intern.h — the process-wide string interner: frame names (traces.c) and stub names (the
 * code map) get a dense id and a copy that is never moved or freed, so a name's pointer stays
 * valid for the life of the process, also after the code it names was unloaded.
 *
 * A name is written into every output as it is here, and the folded format has no escapes: so
 * the interner cleans what it is given with utf8_name (utf8.h: UTF-8 from modified UTF-8, U+FFFD
 * for bytes that form no character, ';' — the frame separator — as ':', a control character —
 * a newline would end the line — as '?'), and a name that ends in a space and digits gets '_'
 * for that space (a leaf "x 12" would read as a count); two names that clean alike are one name.
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
 * memory or when the interner is full (intern_set_limits; counted: intern_refused). Thread-safe;
 * not signal-safe. */
uint32_t intern_string(const char *s, size_t len);

/* Frees every name and the index: ids given before are invalid after (the limits stay). For
 * a set-up that failed (sampler_init), when nothing holds an id or reads a name. Not
 * thread-safe against any other call. */
void intern_fini(void);

/* The interner's limits: names, and bytes of their text. Defaults INTERN_MAX_NAMES and
 * INTERN_MAX_BYTES; tests set small ones. Thread-safe. */
#define INTERN_MAX_NAMES (4u << 20)
#define INTERN_MAX_BYTES (128u << 20)
void intern_set_limits(size_t names, size_t bytes);

/* Names refused so far because the interner was full. Thread-safe. */
uint64_t intern_refused(void);

/* The NUL-terminated name with this id, valid until the process ends; "[bad frame id]" for an
 * id never handed out. Lock-free: safe against concurrent intern_string. */
const char *intern_name(uint32_t id);

/* Number of names interned: ids are 0 .. intern_count()-1. Lock-free. */
size_t intern_count(void);

/* The bytes the interner holds: the names' text, their chunks of pointers, its index.
 * Thread-safe. */
size_t intern_bytes(void);

#endif
