/*
 * fake_codecache.c — see fake_codecache.h. One mapping of 64 KB: the code heap is its first half
 * (one used block: its header, then the nmethod's CodeBlob, the nmethod's metadata, scopes data
 * and PcDescs, then its code); the second half holds what lies elsewhere in a JVM (the Method and
 * its chain to the jmethodID, the CodeHeap, its segment map, the heap list).
 */
#include "fake_codecache.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#define MEMORY 65536
#define HEAP 32768 /* the code heap: [memory, memory + HEAP) */
#define LOG2 7     /* 128-byte segments */

/* where things are in the memory */
#define BLOCK 0
#define BLOB 16
#define META 1024 /* from the blob: the metadata (one Method*) */
#define SCOPES 1032
#define PCS 1048
#define PCS_END (PCS + 3 * 16)
#define CODE 2048
#define CODE_SIZE 256
#define METHOD 40960
#define CONST_METHOD 41024
#define POOL 41088
#define HOLDER 41152
#define IDS 41216
#define ID_SLOT 41280 /* what a jmethodID points to: the Method* */
#define CODEHEAP 45056
#define SEGMAP 49152
#define HEAP_LIST 53248
#define HEAP_LIST_DATA 53312
#define HEAPS 53376

static const char NMETHOD_NAME[16] = "nmethod";

static void put_word(unsigned char *at, uintptr_t v) { memcpy(at, &v, sizeof v); }
static void put_i32(unsigned char *at, int32_t v) { memcpy(at, &v, sizeof v); }

/* The loop: while (*stop == 0); return — the flag's address in the first argument's register. */
static int put_loop(unsigned char *code) {
#if defined(__x86_64__)
  static const unsigned char loop[] = {
      0x0f, 0xb6, 0x07, /* movzx eax, byte [rdi] */
      0x85, 0xc0,       /* test eax, eax */
      0x74, 0xf9,       /* je -7 */
      0xc3,             /* ret */
  };
#elif defined(__aarch64__)
  static const uint32_t loop[] = {
      0x39400001, /* ldrb w1, [x0] */
      0x34ffffe1, /* cbz w1, -4 */
      0xd65f03c0, /* ret */
  };
#endif
#if defined(__x86_64__) || defined(__aarch64__)
  memcpy(code, loop, sizeof loop);
  __builtin___clear_cache((char *)code, (char *)code + sizeof loop);
  return 0;
#else
  (void)code;
  return -ENOTSUP;
#endif
}

int fake_codecache_make(struct fake_codecache *f, jmethodID method, int32_t bci) {
  memset(f, 0, sizeof *f);
  if (bci < -1 || bci > 190) return -EINVAL; /* one byte of the stream, stored + 1 */
  unsigned char *m =
      mmap(NULL, MEMORY, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) return -errno;
  const uintptr_t base = (uintptr_t)m, blob = base + BLOB;
  unsigned char *b = m + BLOB;
  struct codecache_layout *l = &f->layout;
  memset(l, -1, sizeof *l); /* every offset absent (-1) unless set below */
  l->scopes_why = NULL;
  l->read = NULL;
  l->mask = NULL;
  l->read_guarded = l->read_bound = 0;
  l->read_tid = 0;
  l->read_mask = 0;

  /* the heap list: a GrowableArray of one CodeHeap* */
  l->heaps = base + HEAPS, l->ga_len = 0, l->ga_data = 8;
  put_word(m + HEAPS, base + HEAP_LIST);
  put_i32(m + HEAP_LIST, 1);
  put_word(m + HEAP_LIST + 8, base + HEAP_LIST_DATA);
  put_word(m + HEAP_LIST_DATA, base + CODEHEAP);
  /* the CodeHeap: its memory's VirtualSpace, its segment map's, the segment size */
  l->heap_memory = 0, l->heap_segmap = 32, l->heap_log2 = 64;
  l->vs_low_boundary = 0, l->vs_low = 8, l->vs_high = 16;
  put_word(m + CODEHEAP + 0, base);
  put_word(m + CODEHEAP + 8, base);
  put_word(m + CODEHEAP + 16, base + HEAP);
  put_word(m + CODEHEAP + 32 + 8, base + SEGMAP);
  put_i32(m + CODEHEAP + 64, LOG2);
  /* one block over the whole heap, marked as CodeHeap::mark_segmap_as_used marks it: its
   * first segment 0, the others counting up to 0xFE and over again from 1 */
  m[SEGMAP] = 0;
  for (int i = 1; i < HEAP >> LOG2; i++)
    m[SEGMAP + i] = (unsigned char)(m[SEGMAP + i - 1] == 0xfe ? 1 : m[SEGMAP + i - 1] + 1);
  l->block_size = 16, l->block_length = 0, l->block_length_bytes = 8, l->block_used = 8;
  put_word(m + BLOCK, HEAP >> LOG2);
  m[BLOCK + 8] = 1;
  /* the CodeBlob of an nmethod (JDK 17's fields: its code by address, debug information by
   * offsets from it, the scopes data by address) */
  l->blob_name = 0, l->blob_size = 8, l->blob_code_begin = 16, l->blob_code_end = 24;
  l->nm_method = 32, l->nm_comp_level = 40, l->comp_level_bytes = 4;
  l->nm_pcs_offset = 44, l->nm_deps_offset = 48, l->nm_metadata_offset = 52;
  l->nm_scopes_begin = 56;
  l->nm_compile_id = 64;
  put_word(b + 0, (uintptr_t)NMETHOD_NAME);
  put_i32(b + 8, HEAP - BLOB);
  f->code_begin = blob + CODE;
  f->code_end = f->code_begin + CODE_SIZE;
  put_word(b + 16, f->code_begin);
  put_word(b + 24, f->code_end);
  put_word(b + 32, base + METHOD);
  put_i32(b + 40, 4); /* C2 */
  put_i32(b + 44, PCS);
  put_i32(b + 48, PCS_END);
  put_i32(b + 52, META);
  put_word(b + 56, blob + SCOPES);
  put_i32(b + 64, 1); /* the JVM's first compilation */
  put_word(b + META, base + METHOD);
  /* the scopes data: decode offset 0 is none; at 1 the one scope: no sender, metadata 1, bci
   * (JDK 17's CompressedStream: a value below 192 is its one byte) */
  l->u5_excluded = 0;
  b[SCOPES + 1] = 0;
  b[SCOPES + 2] = 1;
  b[SCOPES + 3] = (unsigned char)(bci + 1);
  /* PcDescs: the opening sentinel, one at offset 64 with the scope (the loop's pcs all before
   * it), the closing sentinel after the code */
  l->pcd_size = 16, l->pcd_pc = 0, l->pcd_scope = 4;
  put_i32(b + PCS, -1);
  put_i32(b + PCS + 16, 64);
  put_i32(b + PCS + 16 + 4, 1);
  put_i32(b + PCS + 32, CODE_SIZE + 1);
  /* Method → ConstMethod (its pool, idnum 1) → ConstantPool → holder → jmethodID cache */
  l->method_const = 0, l->const_constants = 0, l->const_idnum = 8;
  l->pool_holder = 0, l->klass_jmethod_ids = 0;
  put_word(m + METHOD, base + CONST_METHOD);
  l->method_code = 16; /* Method::_code: the nmethod, its blob's address */
  put_word(m + METHOD + 16, blob);
  put_word(m + ID_SLOT, base + METHOD);
  f->id_slot = (void *)(base + ID_SLOT);
  put_word(m + CONST_METHOD, base + POOL);
  m[CONST_METHOD + 8] = 1;
  put_word(m + POOL, base + HOLDER);
  put_word(m + HOLDER, base + IDS);
  put_word(m + IDS, 3); /* the cache's length, then a jmethodID per idnum */
  put_word(m + IDS + 16, (uintptr_t)method);
  f->memory = m;
  f->method = method;
  f->bci = bci;
  int rc = put_loop(m + BLOB + CODE);
  if (rc != 0) fake_codecache_free(f);
  return rc;
}

void fake_codecache_recompile(struct fake_codecache *f, int32_t compile_id, int32_t bci) {
  unsigned char *b = f->memory + BLOB;
  put_i32(b + 64, compile_id);
  b[SCOPES + 3] = (unsigned char)(bci + 1);
  f->bci = bci;
}

void fake_codecache_run(const struct fake_codecache *f, volatile unsigned char *stop) {
  void (*loop)(volatile unsigned char *);
  uintptr_t code = f->code_begin;
  memcpy(&loop, &code, sizeof loop);
  loop(stop);
}

void fake_codecache_free(struct fake_codecache *f) {
  if (f->memory) munmap(f->memory, MEMORY);
  f->memory = NULL;
}
