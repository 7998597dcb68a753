/*
 * asgct.h — HotSpot's AsyncGetCallTrace: the frame layout it fills and the failure codes it
 * returns (num_frames <= 0, from HotSpot's forte.cpp). libjvm.so exports the function but no
 * header declares it; the agent finds it with dlsym.
 */
#ifndef SAMPLER_ASGCT_H
#define SAMPLER_ASGCT_H

#include <jni.h>

typedef struct {
  jint lineno; /* bytecode index (not a line); -3 for native methods */
  jmethodID method_id;
} asgct_frame;

typedef struct {
  JNIEnv *env_id;      /* the *target* thread's JNIEnv */
  jint num_frames;     /* > 0 frames, <= 0 an asgct_code */
  asgct_frame *frames; /* leaf first */
} asgct_trace;

typedef void (*asgct_fn)(asgct_trace *trace, jint depth, void *ucontext);

/* num_frames <= 0: why the walk failed. ASGCT_NOT_JAVA_THREAD (no JNIEnv registered for the
 * thread) and ASGCT_SAMPLE_FAULT (guard.h) are ours, the rest are HotSpot's. */
enum asgct_code {
  ASGCT_NO_JAVA_FRAME = 0,
  ASGCT_NO_CLASS_LOAD = -1,
  ASGCT_GC_ACTIVE = -2,
  ASGCT_UNKNOWN_NOT_JAVA = -3,
  ASGCT_NOT_WALKABLE_NOT_JAVA = -4,
  ASGCT_UNKNOWN_JAVA = -5,
  ASGCT_NOT_WALKABLE_JAVA = -6,
  ASGCT_UNKNOWN_STATE = -7,
  ASGCT_THREAD_EXIT = -8,
  ASGCT_DEOPT = -9,
  ASGCT_SAFEPOINT = -10,
  ASGCT_NOT_JAVA_THREAD = -11,
  ASGCT_SAMPLE_FAULT = -12, /* ours: a fault (SIGSEGV/SIGBUS) during the sample, contained */
  ASGCT_NCODES = 13         /* codes 0 .. -12 index as -code */
};

/* The frame name a failed sample is kept under, e.g. "[unknown Java]". */
static inline const char *asgct_code_frame(int code) {
  static const char *const names[ASGCT_NCODES] = {"[no Java frame]",
                                                  "[no class load events]",
                                                  "[GC active]",
                                                  "[unknown not Java]",
                                                  "[not walkable not Java]",
                                                  "[unknown Java]",
                                                  "[not walkable Java]",
                                                  "[unknown state]",
                                                  "[thread exit]",
                                                  "[deoptimization]",
                                                  "[safepoint]",
                                                  "[not a Java thread]",
                                                  "[fault during sample]"};
  return (code <= 0 && code > -ASGCT_NCODES) ? names[-code] : "[ASGCT: unexpected code]";
}

#endif
