/*
 * marks.c — the run's marks (marks.h): an array under a mutex, in the order added.
 */
#include "marks.h"

#include <errno.h>
#include <pthread.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct mark marks[MARKS_MAX];
static size_t n;
static uint64_t lost;

int marks_add(int kind, uint64_t start_ns, uint64_t end_ns) {
  int rc = 0;
  pthread_mutex_lock(&lock);
  if (n < MARKS_MAX)
    marks[n++] = (struct mark){start_ns, end_ns < start_ns ? start_ns : end_ns, kind};
  else {
    lost++;
    rc = -ENOSPC;
  }
  pthread_mutex_unlock(&lock);
  return rc;
}

size_t marks_copy(uint64_t from_ns, struct mark *out, size_t max, uint64_t *lost_out) {
  size_t k = 0;
  pthread_mutex_lock(&lock);
  for (size_t i = 0; i < n && k < max; i++)
    if (marks[i].end_ns >= from_ns) out[k++] = marks[i];
  *lost_out = lost;
  pthread_mutex_unlock(&lock);
  return k;
}

size_t marks_count(uint64_t from_ns) {
  size_t k = 0;
  pthread_mutex_lock(&lock);
  for (size_t i = 0; i < n; i++) k += marks[i].end_ns >= from_ns;
  pthread_mutex_unlock(&lock);
  return k;
}

void marks_forget_before(uint64_t mono_ns) {
  pthread_mutex_lock(&lock);
  size_t k = 0;
  for (size_t i = 0; i < n; i++)
    if (marks[i].end_ns >= mono_ns) marks[k++] = marks[i];
  n = k;
  lost = 0;
  pthread_mutex_unlock(&lock);
}
