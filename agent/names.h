/*
 * names.h — Java names as a profile shows them: "java/lang/String.hashCode".
 * The pure conversions are separate from the JVMTI lookup so they can be unit-tested.
 */
#ifndef SAMPLER_NAMES_H
#define SAMPLER_NAMES_H

#include <jvmti.h>
#include <stddef.h>
#include <stdint.h>

/* Writes the class name of a JVM type signature into buf: "Ljava/lang/String;" ->
 * "java/lang/String", "[I" -> "int[]", "[[Ljava/lang/Object;" -> "java/lang/Object[][]".
 * A hidden class's address suffix is dropped ("Lp/Main$$Lambda$14.0x0000000800c03000;" ->
 * "p/Main$$Lambda$14") so profiles of two runs compare. Returns the length written, or -ENOSPC
 * when buf is too small (buf then holds a truncated, NUL-terminated name). */
int names_class(const char *sig, char *buf, size_t len);

/* Writes "<class>.<method>" into buf from a class signature and a method name in JVMTI's
 * modified UTF-8, converted (utf8_name: UTF-8, cut between characters); returns 0, -ENOSPC (cut)
 * or -ENOMEM. */
int names_frame(const char *class_sig, const char *method, char *buf, size_t len);

/* The line of bytecode index bci in a line number table: the entry with the largest start
 * location <= bci; 0 when there is none. */
jint names_line(const jvmtiLineNumberEntry *table, jint n, jint bci);

/* The name of method m via JVMTI, with ":<line>" of bytecode index bci when bci >= 0 and the
 * class has line numbers, as UTF-8 (names_frame): 0, or a negative code (JVMTI error, e.g. the
 * class was unloaded; -ENOMEM) with buf untouched. Any thread with a JNIEnv; jni may be NULL when the caller has no local
 * references to release (they are then released when its native frame ends). */
int names_method(jvmtiEnv *jvmti, JNIEnv *jni, jmethodID m, jint bci, char *buf, size_t len);

/* The length of a frame name's first len bytes without a final ":<digits>" (the `lines`
 * option's), and that line in *line (0 when none). Thread-safe. */
size_t names_split_line(const char *name, size_t len, int64_t *line);

/* Whether name is a thread's root frame "[NAME tid=N]" (the `threads` option's): then its
 * NAME (*tname, *tlen bytes) and N. Thread-safe. */
int names_thread_root(const char *name, const char **tname, size_t *tlen, int64_t *tid);

#endif
