/*
 * names.c — jmethodID -> "pkg/Class.method" (see names.h). Called from the sampler thread
 * once per method (the sampler caches the result), never from the signal handler.
 */
#include "names.h"

#include <errno.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sampler.h"

static const char *primitive(char c) {
  switch (c) {
  case 'Z': return "boolean";
  case 'B': return "byte";
  case 'C': return "char";
  case 'S': return "short";
  case 'I': return "int";
  case 'J': return "long";
  case 'F': return "float";
  case 'D': return "double";
  case 'V': return "void";
  default: return NULL;
  }
}

/* 1 when [p, end) is all hex digits. */
static int hex_to(const char *p, const char *end) {
  for (; p < end; p++)
    if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f') || (*p >= 'A' && *p <= 'F')))
      return 0;
  return 1;
}

int names_class(const char *sig, char *buf, size_t len) {
  if (!len) return -ENOSPC;
  int dims = 0;
  while (sig[dims] == '[') dims++;
  const char *s = sig + dims;
  size_t n = 0;
  int ok = 1;
  const char *prim = primitive(*s);
  if (*s == 'L') {
    const char *start = s + 1, *end = strchr(start, ';');
    if (!end) end = start + strlen(start);
    /* hidden classes: "<name>.0x<hex digits>" at the end — keep <name> */
    for (const char *p = start; p + 3 < end; p++) {
      if (p[0] == '.' && p[1] == '0' && p[2] == 'x' && hex_to(p + 3, end)) {
        end = p;
        break;
      }
    }
    n = (size_t)(end - start);
    if (n >= len) n = len - 1, ok = 0;
    memcpy(buf, start, n);
  } else {
    const char *name = prim ? prim : s;
    n = strlen(name);
    if (n >= len) n = len - 1, ok = 0;
    memcpy(buf, name, n);
  }
  for (int d = 0; d < dims; d++) {
    if (n + 2 >= len) {
      ok = 0;
      break;
    }
    buf[n++] = '[';
    buf[n++] = ']';
  }
  buf[n] = '\0';
  return ok ? (int)n : -ENOSPC;
}

int names_frame(const char *class_sig, const char *method, char *buf, size_t len) {
  if (!len) return -ENOSPC;
  /* composed whole as JVMTI wrote it, then converted: a cut falls between characters */
  size_t cap = 2 * strlen(class_sig) + 8 + strlen(method) + 2; /* "I" -> "int", '[' -> "[]" */
  char *raw = malloc(cap);
  if (!raw) return -ENOMEM;
  int n = names_class(class_sig, raw, cap);
  if (n >= 0) snprintf(raw + n, cap - (size_t)n, ".%s", method);
  int rc = n < 0 ? n : utf8_name(raw, strlen(raw), buf, len);
  free(raw);
  return rc < 0 ? rc : 0;
}

jint names_line(const jvmtiLineNumberEntry *table, jint n, jint bci) {
  jint line = 0;
  jlocation best = -1;
  for (jint i = 0; i < n; i++) /* tables are not always sorted */
    if (table[i].start_location <= bci && table[i].start_location > best) {
      best = table[i].start_location;
      line = table[i].line_number;
    }
  return line;
}

int names_method(jvmtiEnv *jvmti, JNIEnv *jni, jmethodID m, jint bci, char *buf, size_t len) {
  jclass cls = NULL;
  char *csig = NULL, *mname = NULL;
  jvmtiError e = (*jvmti)->GetMethodDeclaringClass(jvmti, m, &cls);
  if (e == JVMTI_ERROR_NONE) e = (*jvmti)->GetClassSignature(jvmti, cls, &csig, NULL);
  if (e == JVMTI_ERROR_NONE) e = (*jvmti)->GetMethodName(jvmti, m, &mname, NULL, NULL);
  int rc = e == JVMTI_ERROR_NONE ? names_frame(csig, mname, buf, len) : -(int)e;
  if (rc == -ENOSPC) rc = 0; /* a long name, cut */
  if (rc == 0 && bci >= 0) {
    jint n = 0;
    jvmtiLineNumberEntry *table = NULL;
    if ((*jvmti)->GetLineNumberTable(jvmti, m, &n, &table) == JVMTI_ERROR_NONE) {
      jint line = names_line(table, n, bci);
      size_t used = strlen(buf);
      if (line > 0 && used < len) snprintf(buf + used, len - used, ":%d", (int)line);
      (*jvmti)->Deallocate(jvmti, (unsigned char *)table);
    }
  }
  if (csig) (*jvmti)->Deallocate(jvmti, (unsigned char *)csig);
  if (mname) (*jvmti)->Deallocate(jvmti, (unsigned char *)mname);
  if (cls && jni) (*jni)->DeleteLocalRef(jni, cls);
  return rc;
}

/* A frame name's line (names.h). */
size_t names_split_line(const char *name, size_t len, int64_t *line) {
  size_t i = len;
  while (i > 0 && name[i - 1] >= '0' && name[i - 1] <= '9') i--;
  *line = 0;
  if (i == len || i < 2 || name[i - 1] != ':' || len - i > 9) return len;
  *line = strtoll(name + i, NULL, 10);
  return i - 1;
}

/* A thread's root frame (names.h). */
int names_thread_root(const char *name, const char **tname, size_t *tlen, int64_t *tid) {
  size_t len = strlen(name);
  if (len < 8 || name[0] != '[' || name[len - 1] != ']') return 0;
  size_t i = len - 1;
  while (i > 0 && name[i - 1] >= '0' && name[i - 1] <= '9') i--;
  if (i == len - 1 || i < 6 || memcmp(name + i - 5, " tid=", 5) != 0) return 0;
  *tname = name + 1;
  *tlen = i - 5 - 1;
  *tid = strtoll(name + i, NULL, 10);
  return 1;
}
