/*
 * utf8.h — the one conversion every name goes through as it enters the profile: method, class
 * and thread names from JVMTI (modified UTF-8), thread names from the kernel (/proc comm, cut at
 * 15 bytes, possibly inside a character), symbol and file names from ELF objects (any bytes).
 * What comes out is what every output can carry as it is: standard UTF-8 without the bytes that
 * would break a format's structure (the folded format has no escapes).
 *
 * Pure functions: no lock, no allocation; thread-safe. Not used in the signal handler.
 */
#ifndef SAMPLER_UTF8_H
#define SAMPLER_UTF8_H

#include <stddef.h>

/* Writes the n bytes at in as a name into out (len bytes, always NUL-terminated):
 *  - UTF-8 is kept; modified UTF-8 is converted: a surrogate pair written as two 3-byte
 *    sequences becomes the 4-byte sequence of its character, C0 80 (U+0000) becomes '?';
 *  - bytes that form no character (a stray continuation byte, a sequence cut short, a lone
 *    surrogate, an overlong form, F5..FF) become U+FFFD, one for each maximal ill-formed part
 *    (as Unicode recommends), so nothing is dropped silently;
 *  - ';' (the folded format's frame separator) becomes ':'; a control character (C0, DEL, C1:
 *    a newline would end a folded line) becomes '?'.
 * When the result does not fit, it is cut before the first character that does not fit —
 * never inside one. Output is never more than 3 bytes per input byte. Returns the length
 * written, -ENOSPC (cut) or -EINVAL (out NULL or len 0). in and out must not overlap.
 * Thread-safe, no allocation. */
int utf8_name(const char *in, size_t n, char *out, size_t len);

#endif
