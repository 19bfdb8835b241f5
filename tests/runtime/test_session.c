/* test_session.c — the runtime's contract, with hand-built descriptors:
 * every validation at init names what failed, the arena is the only
 * memory used, misuse of sessions and pools returns a status, and results
 * do not depend on the thread count. Built and run for every target (under
 * qemu for ARM), and under ThreadSanitizer and AddressSanitizer+UBSan on
 * the host. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tinyrt.h"

static int failures;
#define CHECK(cond)                                                            \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
      ++failures;                                                              \
    }                                                                          \
  } while (0)

#define ARCH TINYRT_ARCH_NATIVE

#if defined(TINYRT_TEST_BAREMETAL)
#define MAX_POOL_THREADS 1
#else
#define MAX_POOL_THREADS 4
#endif

#define ALOAD(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define ASTORE(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)

static void sleep_us(long us) {
  struct timespec ts;
  ts.tv_sec = us / 1000000;
  ts.tv_nsec = (us % 1000000) * 1000;
  nanosleep(&ts, NULL);
}

/* A two-step "model": y[i] = 2 * x[i] + i, then z[i] = y[i] + y[n-1-i]. */
#define N 1000
static void step_scale(uint8_t *arena, int32_t b, int32_t e) {
  const float *x = (const float *)arena;
  float *y = (float *)(arena + 4096);
  int32_t i;
  for (i = b; i < e; ++i) y[i] = 2.0f * x[i] + (float)i;
}
/* 37 tasks of uneven chunks, so that thread splits fall mid-array. */
#define CHUNKS 37
static void step_mirror(uint8_t *arena, int32_t b, int32_t e) {
  const float *y = (const float *)(arena + 4096);
  float *z = (float *)(arena + 8192);
  int32_t i;
  for (i = b * N / CHUNKS; i < e * N / CHUNKS; ++i) z[i] = y[i] + y[N - 1 - i];
}

static const int64_t kDims[1] = {N};
static const tinyrt_tensor_desc kIn[1] = {{"x", kDims, TINYRT_DTYPE_FLOAT32, 1, 0, N * 4}};
static const tinyrt_tensor_desc kOut[1] = {{"z", kDims, TINYRT_DTYPE_FLOAT32, 1, 8192, N * 4}};
static const tinyrt_step_desc kSteps[2] = {{step_scale, N, 0}, {step_mirror, CHUNKS, 0}};
/* The same steps as an ABI 1.0/1.1 table (entries end at flags). */
static const struct {
  tinyrt_kernel_fn fn;
  int32_t tasks, flags;
} kSteps_1_1[2] = {{step_scale, N, 0}, {step_mirror, CHUNKS, 0}};

static tinyrt_model good_model(void) {
  tinyrt_model m;
  memset(&m, 0, sizeof m);
  m.magic = TINYRT_ARTIFACT_MAGIC;
  m.abi_major = TINYRT_ABI_MAJOR;
  m.abi_minor = TINYRT_ABI_MINOR;
  m.desc_bytes = sizeof m;
  m.arch = ARCH;
  m.isa_required = 0;
  m.num_inputs = 1;
  m.num_outputs = 1;
  m.num_steps = 2;
  m.name = "mirror";
  m.arena_bytes = 8192 + N * 4;
  m.inputs = kIn;
  m.outputs = kOut;
  m.steps = kSteps;
  m.tensor_desc_bytes = sizeof(tinyrt_tensor_desc);
  m.step_desc_bytes = sizeof(tinyrt_step_desc);
  return m;
}

static unsigned char arena_mem[16384 + 64] TINYRT_ALIGNED_ARENA;
static unsigned char pool_mem[TINYRT_POOL_STORAGE_BYTES(4)] TINYRT_ALIGNED_ARENA;

static tinyrt_status init(tinyrt_session *s, const tinyrt_model *m) {
  return tinyrt_session_init(s, m, arena_mem, sizeof arena_mem, NULL);
}

/* init fails with `st` and a message containing `text`. */
static int refused(const tinyrt_model *m, tinyrt_status st, const char *text) {
  tinyrt_session s;
  tinyrt_status got = init(&s, m);
  if (got != st || !strstr(tinyrt_session_message(&s), text)) {
    fprintf(stderr, "  got %d '%s', wanted %d '%s'\n", (int)got, tinyrt_session_message(&s), (int)st, text);
    return 0;
  }
  return tinyrt_session_run(&s) == TINYRT_ERR_NOT_INITIALIZED;
}

static void test_validation(void) {
  tinyrt_session s;
  tinyrt_model m = good_model();
  CHECK(init(&s, &m) == TINYRT_OK);
  CHECK(strcmp(tinyrt_session_message(&s), "") == 0);

  m = good_model();
  m.magic = 0x12345678;
  CHECK(refused(&m, TINYRT_ERR_BAD_MODEL, "magic"));

  m = good_model();
  m.abi_major = TINYRT_ABI_MAJOR + 1;
  CHECK(refused(&m, TINYRT_ERR_ABI_MISMATCH, "ABI"));

  m = good_model();
  m.arch = ARCH == TINYRT_ARCH_X86_64 ? TINYRT_ARCH_AARCH64 : TINYRT_ARCH_X86_64;
  CHECK(refused(&m, TINYRT_ERR_WRONG_ARCH, "compiled for"));

  /* Every feature bit of another architecture is missing on this CPU. */
  m = good_model();
  m.isa_required = ARCH == TINYRT_ARCH_X86_64
                       ? TINYRT_ISA_A64_ASIMD | TINYRT_ISA_A64_DOTPROD | TINYRT_ISA_A64_FP16 | TINYRT_ISA_X86_AVX512VNNI
                       : TINYRT_ISA_X86_AVX512F;
  /* (The host has AVX512-VNNI or not: the names up to asimdhp are checked.) */
  CHECK(refused(&m, TINYRT_ERR_CPU_UNSUPPORTED, ARCH == TINYRT_ARCH_X86_64 ? "asimd asimddp asimdhp" : "avx512f"));
  if (ARCH != TINYRT_ARCH_X86_64) {
    m.isa_required = TINYRT_ISA_X86_F16C | TINYRT_ISA_X86_BMI1 | TINYRT_ISA_X86_BMI2 | TINYRT_ISA_X86_POPCNT |
                     TINYRT_ISA_X86_AVX512VNNI | TINYRT_ISA_X86_AVXVNNI;
    CHECK(refused(&m, TINYRT_ERR_CPU_UNSUPPORTED, "f16c bmi1 bmi2 popcnt avx512vnni avxvnni"));
  }

  m = good_model();
  CHECK(tinyrt_session_init(&s, &m, arena_mem, 1000, NULL) == TINYRT_ERR_ARENA_TOO_SMALL);
  CHECK(strstr(tinyrt_session_message(&s), "needs 12192 bytes, got 1000") != NULL);
  CHECK(tinyrt_model_arena_bytes(&m) == 12192);

  CHECK(tinyrt_session_init(&s, &m, arena_mem + 4, sizeof arena_mem - 4, NULL) == TINYRT_ERR_ARENA_MISALIGNED);
  /* An arena whose range wraps past the top of the address space. */
  CHECK(tinyrt_session_init(&s, &m, arena_mem, SIZE_MAX, NULL) == TINYRT_ERR_INVALID_ARGUMENT);
  CHECK(strstr(tinyrt_session_message(&s), "arena wraps the address space") != NULL);
  CHECK(tinyrt_session_run(&s) == TINYRT_ERR_NOT_INITIALIZED);
  CHECK(tinyrt_session_init(&s, &m, arena_mem, (size_t)(UINTPTR_MAX - (uintptr_t)arena_mem), NULL) == TINYRT_OK);
  CHECK(tinyrt_session_init(&s, NULL, arena_mem, sizeof arena_mem, NULL) == TINYRT_ERR_INVALID_ARGUMENT);
  CHECK(tinyrt_session_init(NULL, &m, arena_mem, sizeof arena_mem, NULL) == TINYRT_ERR_INVALID_ARGUMENT);

  /* Tensor descriptors: arena bounds, name, rank, dims, bytes. */
  {
    static const int64_t big[2] = {INT64_C(1) << 40, INT64_C(1) << 40};
    static const int64_t neg[1] = {-4};
    static const int64_t zero[2] = {0, 5};
    static const int64_t many[TINYRT_MAX_RANK + 1] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
    tinyrt_tensor_desc d = kOut[0];
    m = good_model();
    m.outputs = &d;
    d.arena_offset = 1u << 20;
    CHECK(refused(&m, TINYRT_ERR_BAD_MODEL, "output 0 lies outside its arena"));
    d = kOut[0];
    d.arena_offset = 8192 + 4;
    CHECK(refused(&m, TINYRT_ERR_BAD_MODEL, "outside its arena"));
    d = kOut[0];
    d.name = NULL;
    CHECK(refused(&m, TINYRT_ERR_BAD_MODEL, "output 0 has no name"));
    d = kOut[0];
    d.dims = many;
    d.rank = TINYRT_MAX_RANK + 1;
    CHECK(refused(&m, TINYRT_ERR_BAD_MODEL, "bad rank"));
    d.rank = TINYRT_MAX_RANK; /* 16 ones and N * 4 bytes: 1 element */
    CHECK(refused(&m, TINYRT_ERR_BAD_MODEL, "disagree with its dims"));
    d.bytes = 4;
    CHECK(init(&s, &m) == TINYRT_OK);
    d = kOut[0];
    d.dims = NULL;
    CHECK(refused(&m, TINYRT_ERR_BAD_MODEL, "no dims"));
    d = kOut[0];
    d.bytes = N * 4 - 4;
    CHECK(refused(&m, TINYRT_ERR_BAD_MODEL, "disagree"));
    d.dtype = TINYRT_DTYPE_INT64; /* 8 bytes an element */
    d.bytes = N * 4;
    CHECK(refused(&m, TINYRT_ERR_BAD_MODEL, "disagree"));
    d.dtype = 8; /* ONNX string: size unknown to the runtime, not checked */
    CHECK(init(&s, &m) == TINYRT_OK);
    d.dtype = 200;
    CHECK(init(&s, &m) == TINYRT_OK);
    d = kOut[0];
    d.dims = neg;
    CHECK(refused(&m, TINYRT_ERR_BAD_MODEL, "bad dim"));
    d = kOut[0];
    d.dims = big; /* 2^80 elements: the product overflows */
    d.rank = 2;
    d.dtype = 200;
    CHECK(refused(&m, TINYRT_ERR_BAD_MODEL, "bad dim"));
    d = kOut[0];
    d.dims = zero;
    d.rank = 2;
    d.bytes = 0;
    CHECK(init(&s, &m) == TINYRT_OK);
    d = kIn[0];
    d.rank = 0; /* a scalar: one element */
    d.dims = NULL;
    d.bytes = 4;
    CHECK(init(&s, &m) == TINYRT_OK);
    m = good_model();
    m.inputs = &d;
    d.name = NULL;
    CHECK(refused(&m, TINYRT_ERR_BAD_MODEL, "input 0 has no name"));
  }
  /* Tables: NULL, sizes, steps. */
  {
    tinyrt_step_desc st[2] = {{step_scale, N, 0}, {step_mirror, 0, 0}};
    m = good_model();
    m.steps = st;
    CHECK(refused(&m, TINYRT_ERR_BAD_MODEL, "without code or tasks"));
    st[1].tasks = -5;
    CHECK(refused(&m, TINYRT_ERR_BAD_MODEL, "without code or tasks"));
    st[1].tasks = 1;
    st[1].fn = NULL;
    CHECK(refused(&m, TINYRT_ERR_BAD_MODEL, "without code or tasks"));
    m = good_model();
    m.steps = NULL;
    CHECK(refused(&m, TINYRT_ERR_BAD_MODEL, "bad table"));
    m = good_model();
    m.num_steps = 1u << 30;
    CHECK(refused(&m, TINYRT_ERR_BAD_MODEL, "bad table"));
    m = good_model();
    m.num_inputs = 0xffffffffu;
    CHECK(refused(&m, TINYRT_ERR_BAD_MODEL, "bad table"));
    m = good_model();
    m.outputs = (const tinyrt_tensor_desc *)((const char *)kOut + 4);
    CHECK(refused(&m, TINYRT_ERR_BAD_MODEL, "alignment"));
  }
  /* Strides: too small, misaligned, absurd, and an ABI 1.0 descriptor. */
  m = good_model();
  m.tensor_desc_bytes = 8;
  CHECK(refused(&m, TINYRT_ERR_BAD_MODEL, "tensors 8,"));
  m.tensor_desc_bytes = 0;
  CHECK(refused(&m, TINYRT_ERR_BAD_MODEL, "stride"));
  m = good_model();
  m.step_desc_bytes = TINYRT_STEP_DESC_1_1_BYTES - 4;
  CHECK(refused(&m, TINYRT_ERR_BAD_MODEL, "stride"));
  m = good_model();
  m.tensor_desc_bytes = sizeof(tinyrt_tensor_desc) + 4;
  CHECK(refused(&m, TINYRT_ERR_BAD_MODEL, "stride"));
  m = good_model();
  m.step_desc_bytes = 1u << 20;
  CHECK(refused(&m, TINYRT_ERR_BAD_MODEL, "stride"));
  m = good_model();
  m.desc_bytes = offsetof(tinyrt_model, tensor_desc_bytes); /* ABI 1.0 */
  m.abi_minor = 0;
  m.tensor_desc_bytes = 8; /* not covered by desc_bytes: ignored */
  m.step_desc_bytes = 8;
  m.steps = (const tinyrt_step_desc *)kSteps_1_1; /* its table has the 1.0 entries */
  CHECK(init(&s, &m) == TINYRT_OK);
  m.desc_bytes -= 8;
  CHECK(refused(&m, TINYRT_ERR_BAD_MODEL, "truncated"));

  CHECK(tinyrt_status_string(TINYRT_ERR_ARENA_TOO_SMALL)[0] != '\0');
  CHECK(strcmp(tinyrt_status_string(TINYRT_ERR_BUSY), tinyrt_status_string((tinyrt_status)999)) != 0);
  CHECK(tinyrt_status_string((tinyrt_status)999) != NULL);
}

/* Descriptor tables whose entries are larger than this runtime's structs
 * (a later minor ABI appended fields) are walked with their stride. */
struct wide_tensor {
  tinyrt_tensor_desc d;
  uint64_t appended[3];
};
struct wide_step {
  tinyrt_step_desc d;
  void *appended[3];
};

static void test_wide_tables(void) {
  static struct wide_tensor in[2], out[1];
  static struct wide_step st[2];
  static float ref[N];
  tinyrt_session s;
  tinyrt_tensor t;
  tinyrt_model m = good_model();
  int i;
  CHECK(init(&s, &m) == TINYRT_OK);
  CHECK(tinyrt_session_input(&s, 0, &t) == TINYRT_OK);
  for (i = 0; i < N; ++i) ((float *)t.data)[i] = (float)(i % 5);
  CHECK(tinyrt_session_run(&s) == TINYRT_OK);
  CHECK(tinyrt_session_output(&s, 0, &t) == TINYRT_OK);
  memcpy(ref, t.data, sizeof ref);
  memset(t.data, 0, sizeof ref);

  memset(in, 0xee, sizeof in);
  memset(out, 0xee, sizeof out);
  memset(st, 0xee, sizeof st);
  in[0].d = kIn[0];
  in[1].d = kIn[0];
  in[1].d.name = "x2";
  in[1].d.arena_offset = 4096;
  out[0].d = kOut[0];
  st[0].d = kSteps[0];
  st[1].d = kSteps[1];
  m.num_inputs = 2;
  m.inputs = &in[0].d;
  m.outputs = &out[0].d;
  m.steps = &st[0].d;
  m.tensor_desc_bytes = sizeof in[0];
  m.step_desc_bytes = sizeof st[0];
  m.desc_bytes = sizeof m + 16; /* a later minor's descriptor is longer too */
  CHECK(init(&s, &m) == TINYRT_OK);
  CHECK(tinyrt_session_find_input(&s, "x2", &t) == TINYRT_OK);
  CHECK((uint8_t *)t.data == arena_mem + 4096 && t.bytes == N * 4);
  CHECK(tinyrt_session_input(&s, 1, &t) == TINYRT_OK && strcmp(t.name, "x2") == 0);
  CHECK(tinyrt_session_input(&s, 2, &t) == TINYRT_ERR_INVALID_ARGUMENT);
  CHECK(tinyrt_session_run(&s) == TINYRT_OK);
  CHECK(tinyrt_session_find_output(&s, "z", &t) == TINYRT_OK);
  CHECK(memcmp(t.data, ref, sizeof ref) == 0);
}

/* Sessions that were never initialized, failed to, or were copied. */
static void test_session_misuse(void) {
  tinyrt_session s, copy;
  tinyrt_tensor t;
  tinyrt_model m = good_model();
  memset(&s, 0, sizeof s);
  CHECK(tinyrt_session_run(&s) == TINYRT_ERR_NOT_INITIALIZED);
  CHECK(strstr(tinyrt_session_message(&s), "not initialized") != NULL);
  memset(&s, 0xa5, sizeof s); /* garbage */
  CHECK(tinyrt_session_run(&s) == TINYRT_ERR_NOT_INITIALIZED);
  CHECK(tinyrt_session_input(&s, 0, &t) == TINYRT_ERR_NOT_INITIALIZED);
  CHECK(tinyrt_session_output(&s, 0, &t) == TINYRT_ERR_NOT_INITIALIZED);
  CHECK(tinyrt_session_find_input(&s, "x", &t) == TINYRT_ERR_NOT_INITIALIZED);
  CHECK(tinyrt_session_find_output(&s, "z", &t) == TINYRT_ERR_NOT_INITIALIZED);
  CHECK(tinyrt_session_num_inputs(&s) == 0 && tinyrt_session_num_outputs(&s) == 0);
  CHECK(tinyrt_session_run(NULL) == TINYRT_ERR_INVALID_ARGUMENT);
  CHECK(tinyrt_session_find_input(&s, NULL, &t) == TINYRT_ERR_INVALID_ARGUMENT);

  m.magic = 0;
  CHECK(init(&s, &m) == TINYRT_ERR_BAD_MODEL);
  CHECK(tinyrt_session_run(&s) == TINYRT_ERR_NOT_INITIALIZED);

  m = good_model();
  CHECK(init(&s, &m) == TINYRT_OK);
  memcpy(&copy, &s, sizeof s);
  CHECK(tinyrt_session_run(&copy) == TINYRT_ERR_NOT_INITIALIZED);
  CHECK(strstr(tinyrt_session_message(&copy), "copy") != NULL);
  CHECK(tinyrt_session_input(&copy, 0, &t) == TINYRT_ERR_NOT_INITIALIZED);
  CHECK(tinyrt_session_num_inputs(&copy) == 0);
  CHECK(tinyrt_session_run(&s) == TINYRT_OK);
  CHECK(tinyrt_session_num_inputs(&s) == 1);
  /* Re-initializing the copy makes it a session of its own. */
  CHECK(init(&copy, &m) == TINYRT_OK);
  CHECK(tinyrt_session_run(&copy) == TINYRT_OK);

  /* A model that needs no arena runs without one; its (empty) views point
   * nowhere (found by fuzz_runtime_api: NULL + 0 under UBSan). */
  {
    static const int64_t zero[1] = {0};
    static const tinyrt_tensor_desc empty[1] = {{"e", zero, TINYRT_DTYPE_FLOAT32, 1, 0, 0}};
    m = good_model();
    m.arena_bytes = 0;
    m.num_steps = 0;
    m.inputs = m.outputs = empty;
    CHECK(tinyrt_session_init(&s, &m, NULL, 0, NULL) == TINYRT_OK);
    CHECK(tinyrt_session_run(&s) == TINYRT_OK);
    CHECK(tinyrt_session_input(&s, 0, &t) == TINYRT_OK && t.data == NULL && t.bytes == 0);
    CHECK(tinyrt_session_find_output(&s, "e", &t) == TINYRT_OK && t.data == NULL);
  }
}

/* Pools that are garbage, destroyed or copies. */
static void test_pool_misuse(void) {
  static unsigned char other[TINYRT_POOL_STORAGE_BYTES(4)] TINYRT_ALIGNED_ARENA;
  tinyrt_pool *pool = NULL;
  tinyrt_session s;
  tinyrt_session_options opt;
  tinyrt_model m = good_model();
  int n;
  for (n = 1; n <= TINYRT_MAX_THREADS; ++n) CHECK(tinyrt_pool_storage_bytes(n) <= TINYRT_POOL_STORAGE_BYTES(n));
  CHECK(tinyrt_pool_create(pool_mem, 16, 1, &pool) == TINYRT_ERR_STORAGE_TOO_SMALL);
  CHECK(tinyrt_pool_create(pool_mem, sizeof pool_mem, 0, &pool) == TINYRT_ERR_THREADS);
  CHECK(tinyrt_pool_create(pool_mem, sizeof pool_mem, TINYRT_MAX_THREADS + 1, &pool) == TINYRT_ERR_THREADS);
  CHECK(tinyrt_pool_create(pool_mem + 8, sizeof pool_mem - 8, 1, &pool) == TINYRT_ERR_ARENA_MISALIGNED);
  CHECK(tinyrt_pool_create(NULL, sizeof pool_mem, 1, &pool) == TINYRT_ERR_INVALID_ARGUMENT);
  CHECK(tinyrt_pool_destroy(NULL) == TINYRT_ERR_INVALID_ARGUMENT);
  CHECK(tinyrt_pool_threads(NULL) == 1);
  CHECK(tinyrt_pool_set_spin_us(NULL, 5) == TINYRT_ERR_INVALID_ARGUMENT);

  /* Zeroed or garbage storage is not a pool. */
  memset(other, 0, sizeof other);
  tinyrt_session_options_init(&opt);
  opt.pool = (tinyrt_pool *)other;
  CHECK(tinyrt_session_init(&s, &m, arena_mem, sizeof arena_mem, &opt) == TINYRT_ERR_NOT_INITIALIZED);
  CHECK(strstr(tinyrt_session_message(&s), "pool") != NULL);
  CHECK(tinyrt_pool_destroy((tinyrt_pool *)other) == TINYRT_ERR_NOT_INITIALIZED);
  CHECK(tinyrt_pool_threads((tinyrt_pool *)other) == 0);
  CHECK(tinyrt_pool_set_spin_us((tinyrt_pool *)other, 5) == TINYRT_ERR_NOT_INITIALIZED);

  /* A copy of a live pool is refused (one thread: no worker writes it). */
  CHECK(tinyrt_pool_create(pool_mem, sizeof pool_mem, 1, &pool) == TINYRT_OK);
  memcpy(other, pool_mem, sizeof other);
  opt.pool = (tinyrt_pool *)other;
  CHECK(tinyrt_session_init(&s, &m, arena_mem, sizeof arena_mem, &opt) == TINYRT_ERR_NOT_INITIALIZED);
  CHECK(tinyrt_pool_destroy((tinyrt_pool *)other) == TINYRT_ERR_NOT_INITIALIZED);
  /* ... also in storage that is not aligned, where a live pool can never
   * be (refused before any unaligned read; found by fuzz_runtime_api). */
  memcpy(other + 1, pool_mem, sizeof other - 1);
  opt.pool = (tinyrt_pool *)(other + 1);
  CHECK(tinyrt_session_init(&s, &m, arena_mem, sizeof arena_mem, &opt) == TINYRT_ERR_NOT_INITIALIZED);
  CHECK(tinyrt_pool_threads(opt.pool) == 0);
  CHECK(tinyrt_pool_set_spin_us(opt.pool, 5) == TINYRT_ERR_NOT_INITIALIZED);
  CHECK(tinyrt_pool_destroy(opt.pool) == TINYRT_ERR_NOT_INITIALIZED);
  CHECK(tinyrt_pool_destroy(pool) == TINYRT_OK);

  CHECK(tinyrt_pool_create(pool_mem, sizeof pool_mem, MAX_POOL_THREADS, &pool) == TINYRT_OK);
  CHECK(tinyrt_pool_set_spin_us(pool, 0) == TINYRT_OK);

  /* A session whose pool was destroyed is refused; so is a second destroy. */
  opt.pool = pool;
  CHECK(tinyrt_session_init(&s, &m, arena_mem, sizeof arena_mem, &opt) == TINYRT_OK);
  CHECK(tinyrt_session_run(&s) == TINYRT_OK);
  CHECK(tinyrt_pool_destroy(pool) == TINYRT_OK);
  CHECK(tinyrt_session_run(&s) == TINYRT_ERR_NOT_INITIALIZED);
  CHECK(strstr(tinyrt_session_message(&s), "destroyed") != NULL);
  CHECK(tinyrt_pool_destroy(pool) == TINYRT_ERR_NOT_INITIALIZED);
  CHECK(tinyrt_pool_threads(pool) == 0);
  CHECK(tinyrt_session_init(&s, &m, arena_mem, sizeof arena_mem, &opt) == TINYRT_ERR_NOT_INITIALIZED);
}

static void run_with(tinyrt_pool *pool, float *out) {
  tinyrt_session s;
  tinyrt_session_options opt;
  tinyrt_tensor x, z;
  tinyrt_model m = good_model();
  int i;
  tinyrt_session_options_init(&opt);
  opt.pool = pool;
  CHECK(tinyrt_session_init(&s, &m, arena_mem, sizeof arena_mem, &opt) == TINYRT_OK);
  CHECK(tinyrt_session_num_inputs(&s) == 1 && tinyrt_session_num_outputs(&s) == 1);
  CHECK(tinyrt_session_find_input(&s, "x", &x) == TINYRT_OK);
  CHECK(x.bytes == N * 4 && x.rank == 1 && x.dims[0] == N && x.dtype == TINYRT_DTYPE_FLOAT32);
  CHECK(tinyrt_session_find_input(&s, "nope", &x) == TINYRT_ERR_NOT_FOUND);
  CHECK(strstr(tinyrt_session_message(&s), "nope") != NULL);
  CHECK(tinyrt_session_input(&s, 1, &x) == TINYRT_ERR_INVALID_ARGUMENT);
  CHECK(tinyrt_session_input(&s, 0, &x) == TINYRT_OK);
  for (i = 0; i < N; ++i) ((float *)x.data)[i] = (float)(i % 7) - 3.0f;
  CHECK(tinyrt_session_run(&s) == TINYRT_OK);
  CHECK(tinyrt_session_output(&s, 0, &z) == TINYRT_OK);
  memcpy(out, z.data, N * 4);
}

/* The step hook sees begin/end of every step, in order, on each run. */
static uint32_t hook_log[16];
static int hook_calls;
static void hook(void *user, uint32_t step, int begin) {
  if (hook_calls < 16) hook_log[hook_calls] = step * 2u + (begin ? 1u : 0u);
  hook_calls++;
  *(int *)user += 1;
}

/* tinyrt_session_verify: FNV-1a 64 over the descriptor's weight ranges. */
static uint64_t fnv(uint64_t h, const void *data, size_t n) {
  const unsigned char *b = (const unsigned char *)data;
  while (n--) {
    h ^= *b++;
    h *= 0x100000001b3ull;
  }
  return h;
}
#define FNV_OFFSET 0xcbf29ce484222325ull

/* verify fails with `st` and a message containing `text` (and `text2`). */
static int verify_says(tinyrt_session *s, tinyrt_status st, const char *text, const char *text2) {
  tinyrt_status got = tinyrt_session_verify(s);
  if (got != st || !strstr(tinyrt_session_message(s), text) || (text2 && !strstr(tinyrt_session_message(s), text2))) {
    fprintf(stderr, "  verify: got %d '%s', wanted %d '%s'\n", (int)got, tinyrt_session_message(s), (int)st, text);
    return 0;
  }
  return 1;
}

/* A later minor's weights table entry: longer, walked with its stride. */
struct wide_range {
  tinyrt_weights_range r;
  uint64_t appended[2];
};

static void test_verify(void) {
  static const struct {
    tinyrt_kernel_fn fn;
    int32_t tasks, flags;
  } steps_1_0[2] = {{step_scale, N, 0}, {step_mirror, CHUNKS, 0}};
  static unsigned char w0[37], w1[1000];
  static tinyrt_weights_range ranges[3];
  static struct wide_range wide[2];
  static const char letter_a[1] = {'a'}, foobar[6] = {'f', 'o', 'o', 'b', 'a', 'r'};
  char want[64];
  tinyrt_session s;
  tinyrt_model m = good_model();
  size_t i;
  for (i = 0; i < sizeof w0; ++i) w0[i] = (unsigned char)(i * 7 + 1);
  for (i = 0; i < sizeof w1; ++i) w1[i] = (unsigned char)(i * 13 + 5);
  ranges[0].data = w0;
  ranges[0].bytes = sizeof w0;
  ranges[1].data = NULL; /* an empty constant */
  ranges[1].bytes = 0;
  ranges[2].data = w1;
  ranges[2].bytes = sizeof w1;
  m.weights = ranges;
  m.num_weights = 3;
  m.weights_range_bytes = sizeof ranges[0];
  m.weights_bytes = sizeof w0 + sizeof w1;
  m.weights_checksum = fnv(fnv(FNV_OFFSET, w0, sizeof w0), w1, sizeof w1);
  CHECK(init(&s, &m) == TINYRT_OK);
  CHECK(tinyrt_session_verify(&s) == TINYRT_OK);
  CHECK(strcmp(tinyrt_session_message(&s), "") == 0);

  /* Flash corruption: one bit of one byte. The session stays usable. */
  w1[500] ^= 0x10;
  snprintf(want, sizeof want, "expected 0x%016llx", (unsigned long long)m.weights_checksum);
  CHECK(verify_says(&s, TINYRT_ERR_CORRUPT, want, "1037 bytes"));
  snprintf(want, sizeof want, "found 0x%016llx",
           (unsigned long long)fnv(fnv(FNV_OFFSET, w0, sizeof w0), w1, sizeof w1));
  CHECK(strstr(tinyrt_session_message(&s), want) != NULL);
  CHECK(tinyrt_session_run(&s) == TINYRT_OK);
  w1[500] ^= 0x10;
  CHECK(tinyrt_session_verify(&s) == TINYRT_OK);
  w0[0] ^= 0x80;
  CHECK(verify_says(&s, TINYRT_ERR_CORRUPT, "weights checksum mismatch", NULL));
  w0[0] ^= 0x80;

  /* The standard FNV-1a 64 (test vectors of its authors), over ranges
   * concatenated. */
  ranges[0].data = letter_a;
  ranges[0].bytes = 1;
  m.num_weights = 1;
  m.weights_bytes = 1;
  m.weights_checksum = 0xaf63dc4c8601ec8cull;
  CHECK(init(&s, &m) == TINYRT_OK && tinyrt_session_verify(&s) == TINYRT_OK);
  ranges[0].data = foobar;
  ranges[0].bytes = 3;
  ranges[1].data = foobar + 3;
  ranges[1].bytes = 3;
  m.num_weights = 2;
  m.weights_bytes = 6;
  m.weights_checksum = 0x85944171f73967e8ull;
  CHECK(init(&s, &m) == TINYRT_OK && tinyrt_session_verify(&s) == TINYRT_OK);

  /* No weights at all: the checksum of nothing. */
  m.weights = NULL;
  m.num_weights = 0;
  m.weights_bytes = 0;
  m.weights_checksum = FNV_OFFSET;
  CHECK(init(&s, &m) == TINYRT_OK && tinyrt_session_verify(&s) == TINYRT_OK);

  /* A later minor's longer table entries. */
  memset(wide, 0xee, sizeof wide);
  wide[0].r.data = w0;
  wide[0].r.bytes = sizeof w0;
  wide[1].r.data = w1;
  wide[1].r.bytes = sizeof w1;
  m.weights = &wide[0].r;
  m.num_weights = 2;
  m.weights_range_bytes = sizeof wide[0];
  m.weights_bytes = sizeof w0 + sizeof w1;
  m.weights_checksum = fnv(fnv(FNV_OFFSET, w0, sizeof w0), w1, sizeof w1);
  m.desc_bytes = sizeof m + 8;
  CHECK(init(&s, &m) == TINYRT_OK && tinyrt_session_verify(&s) == TINYRT_OK);

  /* Inconsistent tables: BAD_MODEL, nothing read out of bounds. */
  m.weights_bytes += 1;
  CHECK(init(&s, &m) == TINYRT_OK);
  CHECK(verify_says(&s, TINYRT_ERR_BAD_MODEL, "weights table", "range 2"));
  m.weights_bytes -= 2;
  CHECK(init(&s, &m) == TINYRT_OK);
  CHECK(verify_says(&s, TINYRT_ERR_BAD_MODEL, "weights table", "range 1"));
  m.weights_bytes += 1;
  wide[1].r.data = NULL;
  CHECK(init(&s, &m) == TINYRT_OK);
  CHECK(verify_says(&s, TINYRT_ERR_BAD_MODEL, "weights table", "range 1"));
  wide[1].r.data = w1;
  wide[0].r.bytes = ~(uint64_t)0; /* would wrap the address space */
  CHECK(init(&s, &m) == TINYRT_OK);
  CHECK(verify_says(&s, TINYRT_ERR_BAD_MODEL, "weights table", "range 0"));
  wide[0].r.bytes = sizeof w0;
  m.weights_range_bytes = 8; /* shorter than an entry */
  CHECK(init(&s, &m) == TINYRT_OK);
  CHECK(verify_says(&s, TINYRT_ERR_BAD_MODEL, "weights table", NULL));
  m.weights_range_bytes = sizeof wide[0];
  m.weights = NULL;
  CHECK(init(&s, &m) == TINYRT_OK);
  CHECK(verify_says(&s, TINYRT_ERR_BAD_MODEL, "weights table", NULL));
  m.weights = &wide[0].r;
  CHECK(init(&s, &m) == TINYRT_OK && tinyrt_session_verify(&s) == TINYRT_OK);

  /* Descriptors of older compilers load and run; verify says it cannot. */
  m.desc_bytes = offsetof(tinyrt_model, options_hash); /* ABI 1.1 */
  m.abi_minor = 1;
  m.weights_checksum = 12345; /* not covered by desc_bytes: ignored */
  CHECK(init(&s, &m) == TINYRT_OK);
  CHECK(tinyrt_session_run(&s) == TINYRT_OK);
  CHECK(verify_says(&s, TINYRT_ERR_UNSUPPORTED, "(ABI 1.1) records no weights checksum", "nothing verified"));
  m.desc_bytes = offsetof(tinyrt_model, tensor_desc_bytes); /* ABI 1.0 */
  m.abi_minor = 0;
  m.steps = (const tinyrt_step_desc *)steps_1_0; /* its table has the 1.0 entries */
  CHECK(init(&s, &m) == TINYRT_OK);
  CHECK(tinyrt_session_run(&s) == TINYRT_OK);
  CHECK(verify_says(&s, TINYRT_ERR_UNSUPPORTED, "(ABI 1.0)", NULL));
  m.steps = kSteps;
  m.desc_bytes = offsetof(tinyrt_model, weights_range_bytes); /* cut inside 1.2 */
  m.abi_minor = 2;
  CHECK(init(&s, &m) == TINYRT_OK);
  CHECK(verify_says(&s, TINYRT_ERR_UNSUPPORTED, "no weights checksum", NULL));

  /* Misuse. */
  CHECK(tinyrt_session_verify(NULL) == TINYRT_ERR_INVALID_ARGUMENT);
  memset(&s, 0, sizeof s);
  CHECK(tinyrt_session_verify(&s) == TINYRT_ERR_NOT_INITIALIZED);
  CHECK(strcmp(tinyrt_status_string(TINYRT_ERR_CORRUPT), tinyrt_status_string((tinyrt_status)999)) != 0);
  CHECK(strcmp(tinyrt_status_string(TINYRT_ERR_UNSUPPORTED), tinyrt_status_string((tinyrt_status)999)) != 0);
  CHECK(strstr(tinyrt_status_string(TINYRT_ERR_CORRUPT), "corrupt") != NULL);
}

static void test_step_hook(void) {
  tinyrt_session s;
  tinyrt_session_options opt;
  tinyrt_model m = good_model();
  int user = 0;
  tinyrt_session_options_init(&opt);
  CHECK(opt.on_step == NULL && opt.on_step_user == NULL);
  opt.on_step = hook;
  opt.on_step_user = &user;
  CHECK(tinyrt_session_init(&s, &m, arena_mem, sizeof arena_mem, &opt) == TINYRT_OK);
  hook_calls = 0;
  CHECK(tinyrt_session_run(&s) == TINYRT_OK);
  CHECK(tinyrt_session_run(&s) == TINYRT_OK);
  CHECK(hook_calls == 8 && user == 8);
  CHECK(hook_log[0] == 1 && hook_log[1] == 0 && hook_log[2] == 3 && hook_log[3] == 2 && hook_log[4] == 1);
}

static void test_threads(void) {
  static float ref[N], got[N];
  tinyrt_pool *pool = NULL;
  int i, t;
  run_with(NULL, ref);
  for (i = 0; i < N; ++i) {
    float xi = (float)(i % 7) - 3.0f, xj = (float)((N - 1 - i) % 7) - 3.0f;
    float want = (2.0f * xi + (float)i) + (2.0f * xj + (float)(N - 1 - i));
    if (ref[i] != want) {
      CHECK(ref[i] == want);
      break;
    }
  }
  for (t = 1; t <= 4; ++t) {
    tinyrt_status st = tinyrt_pool_create(pool_mem, sizeof pool_mem, t, &pool);
    if (t > MAX_POOL_THREADS) {
      CHECK(st == TINYRT_ERR_THREADS);
      continue;
    }
    CHECK(st == TINYRT_OK);
    if (st != TINYRT_OK) continue;
    CHECK(tinyrt_pool_threads(pool) == t);
    run_with(pool, got);
    CHECK(memcmp(ref, got, sizeof ref) == 0);
    CHECK(tinyrt_pool_destroy(pool) == TINYRT_OK);
  }
}

/* ------------------------------------------------ task coverage model -- */

/* Steps of 1, 3, 7, 1000 and 100003 tasks; task t of a step updates its own
 * slot o[t] = o[t] * 31 + 7 t + tag, so a task run twice, or not at all,
 * changes the result. A last step reads every slot of the previous steps
 * (it fails if a step is not finished before the next starts). */
#define TASKS_1 1
#define TASKS_3 3
#define TASKS_7 7
#define TASKS_1000 1000
#define TASKS_BIG 100003
#define OFF_1 0
#define OFF_3 64
#define OFF_7 128
#define OFF_1000 192
#define OFF_BIG 4224
#define OFF_SUM (OFF_BIG + 4 * TASKS_BIG + 60)
#define SUM_TASKS 13
#define COVER_ARENA (OFF_SUM + 4 * SUM_TASKS)
static int range_errors;

#define MARK_STEP(name, off, tasks, tag)                                                        \
  static void name(uint8_t *a, int32_t b, int32_t e) {                                          \
    uint32_t *o = (uint32_t *)(a + (off));                                                      \
    if (b < 0 || b >= e || e > (tasks)) __atomic_add_fetch(&range_errors, 1, __ATOMIC_RELAXED); \
    for (; b < e; ++b) o[b] = o[b] * 31u + 7u * (uint32_t)b + (tag);                            \
  }
MARK_STEP(mark_1, OFF_1, TASKS_1, 1u)
MARK_STEP(mark_3, OFF_3, TASKS_3, 2u)
MARK_STEP(mark_7, OFF_7, TASKS_7, 3u)
MARK_STEP(mark_1000, OFF_1000, TASKS_1000, 4u)
MARK_STEP(mark_big, OFF_BIG, TASKS_BIG, 5u)

static void sum_step(uint8_t *a, int32_t b, int32_t e) {
  const uint32_t *x = (const uint32_t *)(a + OFF_1000);
  const uint32_t *y = (const uint32_t *)(a + OFF_BIG);
  uint32_t *o = (uint32_t *)(a + OFF_SUM);
  int32_t i;
  for (; b < e; ++b) {
    uint32_t acc = (uint32_t)b;
    for (i = 0; i < TASKS_1000; ++i) acc = acc * 3u + x[i];
    for (i = b; i < TASKS_BIG; i += SUM_TASKS) acc = acc * 5u + y[i];
    o[b] = acc;
  }
}

static const tinyrt_step_desc kCoverSteps[] = {
    {mark_1000, TASKS_1000, 0}, {mark_1, TASKS_1, 0},     {mark_3, TASKS_3, 0},
    {mark_7, TASKS_7, 0},       {mark_big, TASKS_BIG, 0}, {mark_1000, TASKS_1000, 0},
    {mark_7, TASKS_7, 0},       {sum_step, SUM_TASKS, 0}, {mark_3, TASKS_3, 0},
};

static tinyrt_model cover_model(void) {
  tinyrt_model m = good_model();
  m.num_inputs = 0;
  m.inputs = NULL;
  m.num_outputs = 0;
  m.outputs = NULL;
  m.steps = kCoverSteps;
  m.num_steps = sizeof kCoverSteps / sizeof kCoverSteps[0];
  m.arena_bytes = COVER_ARENA;
  return m;
}

static unsigned char cover_ref[COVER_ARENA] TINYRT_ALIGNED_ARENA;
static unsigned char cover_arena[COVER_ARENA] TINYRT_ALIGNED_ARENA;

/* Runs the coverage model `runs` times from a zeroed arena. */
static void run_cover(tinyrt_pool *pool, unsigned char *arena, int runs) {
  tinyrt_session s;
  tinyrt_session_options opt;
  tinyrt_model m = cover_model();
  int r;
  tinyrt_session_options_init(&opt);
  opt.pool = pool;
  memset(arena, 0, COVER_ARENA);
  CHECK(tinyrt_session_init(&s, &m, arena, COVER_ARENA, &opt) == TINYRT_OK);
  for (r = 0; r < runs; ++r) CHECK(tinyrt_session_run(&s) == TINYRT_OK);
}

static void test_task_coverage(void) {
  tinyrt_pool *pool = NULL;
  int t, spin;
  run_cover(NULL, cover_ref, 3);
  CHECK(((uint32_t *)cover_ref)[0] != 0);
  for (t = 1; t <= MAX_POOL_THREADS; ++t)
    for (spin = 0; spin < 3; ++spin) {
      CHECK(tinyrt_pool_create(pool_mem, sizeof pool_mem, t, &pool) == TINYRT_OK);
      if (spin == 0) CHECK(tinyrt_pool_set_spin_us(pool, 0) == TINYRT_OK);
      if (spin == 2) CHECK(tinyrt_pool_set_spin_us(pool, 100000) == TINYRT_OK);
      run_cover(pool, cover_arena, 3);
      if (memcmp(cover_ref, cover_arena, COVER_ARENA) != 0) {
        fprintf(stderr, "  %d threads, spin setting %d: results differ\n", t, spin);
        ++failures;
      }
      CHECK(tinyrt_pool_destroy(pool) == TINYRT_OK);
    }
  CHECK(ALOAD(&range_errors) == 0);
}

/* Many short runs with sleeping and spinning workers: exercises the
 * wake-up protocol (the sanitizer builds watch it). */
static uint32_t stress_slot[64];
static void stress_step(uint8_t *a, int32_t b, int32_t e) {
  (void)a;
  for (; b < e; ++b) stress_slot[b] += 1;
}

static void test_stress(void) {
  static const tinyrt_step_desc steps[] = {
      {stress_step, 64, 0}, {stress_step, 5, 0}, {stress_step, 2, 0}, {stress_step, 64, 0}};
  tinyrt_model m = good_model();
  tinyrt_pool *pool = NULL;
  tinyrt_session s;
  tinyrt_session_options opt;
  int t, r, i, ok;
  uint32_t spins[3] = {0, 5, TINYRT_POOL_SPIN_US};
  m.num_inputs = m.num_outputs = 0;
  m.inputs = m.outputs = NULL;
  m.steps = steps;
  m.num_steps = 4;
  for (t = 2; t <= MAX_POOL_THREADS; ++t)
    for (i = 0; i < 3; ++i) {
      memset(stress_slot, 0, sizeof stress_slot);
      CHECK(tinyrt_pool_create(pool_mem, sizeof pool_mem, t, &pool) == TINYRT_OK);
      CHECK(tinyrt_pool_set_spin_us(pool, spins[i]) == TINYRT_OK);
      tinyrt_session_options_init(&opt);
      opt.pool = pool;
      CHECK(tinyrt_session_init(&s, &m, arena_mem, sizeof arena_mem, &opt) == TINYRT_OK);
      for (r = 0; r < 400; ++r) {
        CHECK(tinyrt_session_run(&s) == TINYRT_OK);
        if (r % 100 == 99) sleep_us(300); /* let the workers fall asleep */
      }
      for (ok = 1, r = 0; r < 64; ++r) ok &= stress_slot[r] == (r < 2 ? 1600u : r < 5 ? 1200u : 800u);
      CHECK(ok);
      CHECK(tinyrt_pool_destroy(pool) == TINYRT_OK);
    }
}

/* Pools created, run once and destroyed in a loop: destroy must find every
 * worker, whether it is spinning, asleep or just back from a step. */
static void test_pool_lifecycle(void) {
  float out[N];
  tinyrt_pool *pool = NULL;
  int i;
  for (i = 0; i < 300; ++i) {
    CHECK(tinyrt_pool_create(pool_mem, sizeof pool_mem, 1 + i % MAX_POOL_THREADS, &pool) == TINYRT_OK);
    if (i % 3 == 0) CHECK(tinyrt_pool_set_spin_us(pool, 0) == TINYRT_OK);
    if (i % 2) run_with(pool, out);
    CHECK(tinyrt_pool_destroy(pool) == TINYRT_OK);
  }
}

/* ------------------------------------------------------- concurrency -- */

/* rows of a multiple of 64 bytes, so that both are aligned */
static unsigned char race_arena[2][(COVER_ARENA + 63) / 64 * 64] TINYRT_ALIGNED_ARENA;

/* A step that holds its run until the test opens the gate. */
static int gate_entered, gate_open;
static void gate_step(uint8_t *a, int32_t b, int32_t e) {
  (void)a, (void)b, (void)e;
  ASTORE(&gate_entered, 1);
  while (!ALOAD(&gate_open)) sleep_us(100);
}

struct runner_arg {
  tinyrt_session *s;
  tinyrt_status st;
};
static void *run_thread(void *p) {
  struct runner_arg *a = (struct runner_arg *)p;
  a->st = tinyrt_session_run(a->s);
  return NULL;
}

/* Busy session, busy pool, destroy during a run. */
static void test_busy(void) {
  static const tinyrt_step_desc gate_steps[2] = {{step_scale, N, 0}, {gate_step, 1, 0}};
  tinyrt_model gm = good_model(), m = good_model();
  tinyrt_session held, other, lone;
  tinyrt_session_options opt;
  tinyrt_pool *pool = NULL;
  tinyrt_tensor t;
  struct runner_arg arg;
  pthread_t th;
  gm.steps = gate_steps;
  CHECK(tinyrt_pool_create(pool_mem, sizeof pool_mem, MAX_POOL_THREADS, &pool) == TINYRT_OK);
  tinyrt_session_options_init(&opt);
  opt.pool = pool;
  CHECK(tinyrt_session_init(&held, &gm, arena_mem, sizeof arena_mem, &opt) == TINYRT_OK);
  CHECK(tinyrt_session_init(&other, &m, arena_mem, sizeof arena_mem, &opt) == TINYRT_OK);
  CHECK(tinyrt_session_init(&lone, &m, race_arena[0], COVER_ARENA, NULL) == TINYRT_OK);
  CHECK(tinyrt_session_find_input(&held, "zzz", &t) == TINYRT_ERR_NOT_FOUND);

  ASTORE(&gate_entered, 0);
  ASTORE(&gate_open, 0);
  arg.s = &held;
  arg.st = TINYRT_ERR_INVALID_ARGUMENT;
  CHECK(pthread_create(&th, NULL, run_thread, &arg) == 0);
  while (!ALOAD(&gate_entered)) sleep_us(100);
  /* `held` is inside its run. */
  CHECK(tinyrt_session_run(&held) == TINYRT_ERR_BUSY);
  CHECK(tinyrt_session_input(&held, 0, &t) == TINYRT_ERR_BUSY);
  CHECK(tinyrt_session_find_output(&held, "z", &t) == TINYRT_ERR_BUSY);
  CHECK(strstr(tinyrt_session_message(&held), "zzz") != NULL); /* BUSY left it alone */
  CHECK(tinyrt_session_run(&other) == TINYRT_ERR_BUSY);        /* shares the pool */
  CHECK(strstr(tinyrt_session_message(&other), "pool") != NULL);
  CHECK(tinyrt_session_input(&other, 0, &t) == TINYRT_OK); /* lookups need no pool */
  CHECK(tinyrt_pool_destroy(pool) == TINYRT_ERR_BUSY);
  CHECK(tinyrt_pool_threads(pool) == MAX_POOL_THREADS);
  CHECK(tinyrt_pool_set_spin_us(pool, 20) == TINYRT_OK);
  CHECK(tinyrt_session_run(&lone) == TINYRT_OK); /* no pool: runs */
  ASTORE(&gate_open, 1);
  pthread_join(th, NULL);
  CHECK(arg.st == TINYRT_OK);
  CHECK(strcmp(tinyrt_session_message(&held), "") == 0);
  CHECK(tinyrt_session_run(&other) == TINYRT_OK);
  CHECK(tinyrt_session_run(&held) == TINYRT_OK);
  CHECK(tinyrt_pool_destroy(pool) == TINYRT_OK);
  CHECK(tinyrt_session_run(&other) == TINYRT_ERR_NOT_INITIALIZED);
}

/* Two threads, one session each on a shared pool, run as fast as they can:
 * every run either completes with correct results or returns BUSY. Then a
 * destroy races with runs: it succeeds only between runs, and later runs
 * are refused. */
struct racer {
  tinyrt_session s;
  tinyrt_pool *pool;
  int runs, ok, busy, refused, bad;
  int until_refused;
};

static void *race_thread(void *p) {
  struct racer *r = (struct racer *)p;
  int i;
  for (i = 0; i < r->runs || r->until_refused; ++i) {
    tinyrt_status st = tinyrt_session_run(&r->s);
    if (st == TINYRT_OK)
      ++r->ok;
    else if (st == TINYRT_ERR_BUSY)
      ++r->busy;
    else if (st == TINYRT_ERR_NOT_INITIALIZED) {
      ++r->refused;
      break;
    } else
      ++r->bad;
  }
  return NULL;
}

static void test_shared_pool_race(void) {
  static struct racer rc[2];
  tinyrt_model m = cover_model();
  tinyrt_session_options opt;
  tinyrt_pool *pool = NULL;
  pthread_t th[2];
  int i, k, total;
  m.num_steps = 4; /* mark_1000, mark_1, mark_3, mark_7 */
  for (k = 0; k < 2; ++k) {
    CHECK(tinyrt_pool_create(pool_mem, sizeof pool_mem, MAX_POOL_THREADS, &pool) == TINYRT_OK);
    tinyrt_session_options_init(&opt);
    opt.pool = pool;
    for (i = 0; i < 2; ++i) {
      memset(&rc[i], 0, sizeof rc[i]);
      memset(race_arena[i], 0, COVER_ARENA);
      CHECK(tinyrt_session_init(&rc[i].s, &m, race_arena[i], COVER_ARENA, &opt) == TINYRT_OK);
      rc[i].runs = 300;
      rc[i].until_refused = k == 1;
    }
    for (i = 0; i < 2; ++i) CHECK(pthread_create(&th[i], NULL, race_thread, &rc[i]) == 0);
    if (k == 1) {
      sleep_us(2000);
      while (tinyrt_pool_destroy(pool) != TINYRT_OK) {}
    }
    for (i = 0; i < 2; ++i) pthread_join(th[i], NULL);
    for (total = 0, i = 0; i < 2; ++i) {
      CHECK(rc[i].bad == 0);
      CHECK(rc[i].refused == (k == 1));
      total += rc[i].ok;
      /* the first slot of mark_1000 counts this session's completed runs */
      {
        uint32_t want = 0;
        int r;
        for (r = 0; r < rc[i].ok; ++r) want = want * 31u + 4u;
        CHECK(((uint32_t *)(race_arena[i] + OFF_1000))[0] == want);
      }
    }
    if (k == 0) CHECK(total > 0); /* a destroy may come before any run */
    if (k == 0) CHECK(tinyrt_pool_destroy(pool) == TINYRT_OK);
  }
}

/* A custom-op call step (TINYRT_STEP_CALL): run on the calling thread, its
 * stored status stops the run and names the node; bad call steps are
 * refused at init. */
static int32_t call_status;
static void call_step(uint8_t *arena, int32_t b, int32_t e) {
  (void)b;
  (void)e;
  memcpy(arena + 12288, &call_status, 4);
}

static void test_call_step(void) {
  tinyrt_step_desc st[3];
  tinyrt_session s;
  tinyrt_tensor t;
  tinyrt_model m = good_model();
  memcpy(st, kSteps, sizeof kSteps);
  memset(&st[2], 0, sizeof st[2]);
  st[2] = st[1];
  st[1].fn = call_step;
  st[1].tasks = 1;
  st[1].flags = TINYRT_STEP_CALL;
  st[1].call_node = "my_node";
  st[1].status_offset = 12288;
  m.steps = st;
  m.num_steps = 3;
  m.arena_bytes = 12288 + 64;
  call_status = TINYRT_OK;
  CHECK(init(&s, &m) == TINYRT_OK);
  CHECK(tinyrt_session_input(&s, 0, &t) == TINYRT_OK);
  CHECK(tinyrt_session_run(&s) == TINYRT_OK);
  call_status = 77;
  CHECK(tinyrt_session_run(&s) == (tinyrt_status)77);
  CHECK(strstr(tinyrt_session_message(&s), "custom op node 'my_node' failed with status 77") != NULL);
  call_status = TINYRT_OK;
  CHECK(tinyrt_session_run(&s) == TINYRT_OK && tinyrt_session_message(&s)[0] == '\0');
  st[1].status_offset = 12288 + 62; /* past the arena's end */
  CHECK(refused(&m, TINYRT_ERR_BAD_MODEL, "call step"));
  st[1].status_offset = 12288;
  st[1].tasks = 2;
  CHECK(refused(&m, TINYRT_ERR_BAD_MODEL, "call step"));
  st[1].tasks = 1;
  {
    /* A 1.1-sized table cannot hold the call fields. */
    static const struct {
      tinyrt_kernel_fn fn;
      int32_t tasks, flags;
    } narrow[3] = {{step_scale, N, 0}, {call_step, 1, TINYRT_STEP_CALL}, {step_mirror, CHUNKS, 0}};
    m.steps = (const tinyrt_step_desc *)narrow;
    m.step_desc_bytes = sizeof narrow[0];
    CHECK(refused(&m, TINYRT_ERR_BAD_MODEL, "call step"));
  }
}

/* Branches (ABI 1.3): a guarded step runs only when its condition byte
 * says so; a branch error reached stops the run with TINYRT_ERR_BRANCH and
 * its message; skipped steps call no hook; bad branch steps are refused. */
static int hook_calls;
static void count_hook(void *user, uint32_t step, int begin) {
  (void)user;
  (void)step;
  hook_calls += begin;
}

static void test_branches(void) {
  enum { COND = 12288 };
  tinyrt_step_desc st[3];
  tinyrt_session s;
  tinyrt_session_options opt;
  tinyrt_model m = good_model();
  const float *z = (const float *)(arena_mem + 8192);
  int i, ok;
  memset(st, 0, sizeof st);
  st[0] = kSteps[0];
  st[1] = kSteps[1];
  st[1].flags = TINYRT_STEP_GUARDED;
  st[1].cond_offset = COND;
  st[1].cond_expect = 1;
  st[2].flags = TINYRT_STEP_GUARDED | TINYRT_STEP_FAIL;
  st[2].tasks = 1;
  st[2].cond_offset = COND + 1;
  st[2].cond_expect = 0;
  st[2].call_node = "the model was not compiled for the else branch of node 'sr' (If)";
  m.steps = st;
  m.num_steps = 3;
  m.arena_bytes = COND + 64;
  tinyrt_session_options_init(&opt);
  opt.on_step = count_hook;
  CHECK(tinyrt_session_init(&s, &m, arena_mem, sizeof arena_mem, &opt) == TINYRT_OK);
  for (i = 0; i < N; ++i) ((float *)arena_mem)[i] = 1.0f;
  /* Condition true, error guard not taken: both computing steps run. */
  arena_mem[COND] = 1;
  arena_mem[COND + 1] = 1;
  memset(arena_mem + 8192, 0, N * 4);
  hook_calls = 0;
  CHECK(tinyrt_session_run(&s) == TINYRT_OK && hook_calls == 2);
  CHECK(z[0] == 2.0f + 0.0f + 2.0f + (float)(N - 1));
  /* Condition false: the mirror step is skipped (z keeps its zeros). */
  arena_mem[COND] = 0;
  memset(arena_mem + 8192, 0, N * 4);
  hook_calls = 0;
  CHECK(tinyrt_session_run(&s) == TINYRT_OK && hook_calls == 1);
  for (i = 0, ok = 1; i < N; ++i) ok = ok && z[i] == 0.0f;
  CHECK(ok);
  /* Any nonzero byte is true. */
  arena_mem[COND] = 0xfe;
  hook_calls = 0;
  CHECK(tinyrt_session_run(&s) == TINYRT_OK && hook_calls == 2);
  /* The branch error's guard holds: the run stops there, named. */
  arena_mem[COND + 1] = 0;
  CHECK(tinyrt_session_run(&s) == TINYRT_ERR_BRANCH);
  CHECK(strstr(tinyrt_session_message(&s), "step 2: the model was not compiled for the else branch") != NULL);
  CHECK(strcmp(tinyrt_status_string(TINYRT_ERR_BRANCH), "unknown status") != 0);
  /* The same stop flagged as a test of the run's extents (ABI 1.5): SHAPE. */
  st[2].flags = TINYRT_STEP_GUARDED | TINYRT_STEP_FAIL | TINYRT_STEP_SHAPE_ERROR;
  CHECK(tinyrt_session_run(&s) == TINYRT_ERR_SHAPE);
  CHECK(strstr(tinyrt_session_message(&s), "step 2: ") != NULL);
  st[2].flags = TINYRT_STEP_GUARDED | TINYRT_STEP_FAIL;
  arena_mem[COND + 1] = 1;
  CHECK(tinyrt_session_run(&s) == TINYRT_OK && tinyrt_session_message(&s)[0] == '\0');

  /* Refused: a condition byte outside the arena, a branch error without a
   * guard or message, a flag this runtime does not know, branch fields a
   * 1.2-sized table cannot hold. */
  st[1].cond_offset = COND + 64;
  CHECK(refused(&m, TINYRT_ERR_BAD_MODEL, "branch condition"));
  st[1].cond_offset = COND;
  st[2].flags = TINYRT_STEP_FAIL;
  CHECK(refused(&m, TINYRT_ERR_BAD_MODEL, "branch error"));
  st[2].flags = TINYRT_STEP_GUARDED | TINYRT_STEP_FAIL;
  st[2].call_node = NULL;
  CHECK(refused(&m, TINYRT_ERR_BAD_MODEL, "branch error"));
  st[2].call_node = "x";
  st[0].flags = 16;
  CHECK(refused(&m, TINYRT_ERR_BAD_MODEL, "unknown flags"));
  st[0].flags = 0;
  m.step_desc_bytes = TINYRT_STEP_DESC_1_2_BYTES;
  {
    /* The same steps laid out as ABI 1.2 entries. */
    static struct {
      tinyrt_kernel_fn fn;
      int32_t tasks, flags;
      const char *node;
      uint64_t status;
    } narrow[2];
    narrow[0].fn = step_scale;
    narrow[0].tasks = N;
    narrow[1].fn = step_mirror;
    narrow[1].tasks = CHUNKS;
    narrow[1].flags = TINYRT_STEP_GUARDED;
    m.steps = (const tinyrt_step_desc *)narrow;
    m.num_steps = 2;
    m.step_desc_bytes = sizeof narrow[0];
    CHECK(refused(&m, TINYRT_ERR_BAD_MODEL, "branch condition"));
  }
}

/* Run-time dimensions (ABI 1.4): x [2, H, 3] and m [H], H in 1..4 (one
 * dimension, id 0), y [2, H, 3] = x + m over the bounds' layout; a second
 * step writes y's dims. Arena: x at 0, m at 128, y at 192, the dims of x,
 * m and y at 320, 384 and 448. */
#define DYN_XD 320
#define DYN_MD 384
#define DYN_YD 448
static void dyn_add(uint8_t *a, int32_t b, int32_t e) {
  int64_t h_n;
  int n, h, c;
  memcpy(&h_n, a + DYN_XD + 8, 8);
  for (n = b; n < e; ++n)
    for (h = 0; h < h_n; ++h)
      for (c = 0; c < 3; ++c) {
        const float *x = (const float *)(a + 0), *m = (const float *)(a + 128);
        float *y = (float *)(a + 192);
        y[n * 12 + h * 3 + c] = x[n * 12 + h * 3 + c] + m[h];
      }
}
static void dyn_out_dims(uint8_t *a, int32_t b, int32_t e) {
  (void)b;
  (void)e;
  memcpy(a + DYN_YD, a + DYN_XD, 24);
}
static const int64_t kDynXDims[3] = {2, 4, 3}, kDynXMin[3] = {2, 1, 3}, kDynMDims[1] = {4}, kDynMMin[1] = {1};
static const int32_t kDynXIds[3] = {-1, 0, -1}, kDynMIds[1] = {0};
static const tinyrt_tensor_desc kDynIn[2] = {
    {"x", kDynXDims, TINYRT_DTYPE_FLOAT32, 3, 0, 96, kDynXMin, kDynXIds, DYN_XD},
    {"m", kDynMDims, TINYRT_DTYPE_FLOAT32, 1, 128, 16, kDynMMin, kDynMIds, DYN_MD}};
static const tinyrt_tensor_desc kDynOut[1] = {
    {"y", kDynXDims, TINYRT_DTYPE_FLOAT32, 3, 192, 96, kDynXMin, kDynXIds, DYN_YD}};
static const tinyrt_step_desc kDynSteps[2] = {{dyn_add, 2, 0}, {dyn_out_dims, 1, 0}};

static tinyrt_model dyn_model(void) {
  tinyrt_model m = good_model();
  m.num_inputs = 2;
  m.inputs = kDynIn;
  m.outputs = kDynOut;
  m.steps = kDynSteps;
  m.arena_bytes = 512;
  return m;
}

/* set_input_dims fails with `st` and a message containing `text`. */
static int dims_refused(tinyrt_session *s, uint32_t i, const int64_t *d, uint32_t rank, const char *text) {
  tinyrt_status got = tinyrt_session_set_input_dims(s, i, d, rank);
  if (got != TINYRT_ERR_SHAPE || !strstr(tinyrt_session_message(s), text)) {
    fprintf(stderr, "  got %d '%s', wanted SHAPE '%s'\n", (int)got, tinyrt_session_message(s), text);
    return 0;
  }
  return 1;
}

static void test_run_time_dims(void) {
  tinyrt_model m = dyn_model();
  tinyrt_session s;
  tinyrt_tensor t;
  int64_t d2[3] = {2, 2, 3}, bad_h[3] = {2, 5, 3}, bad_n[3] = {3, 2, 3}, h2[1] = {2}, h3[1] = {3};
  float *x, *mm, *y;
  int i, ok = 1;
  CHECK(init(&s, &m) == TINYRT_OK);
  /* Until set: the upper bounds. */
  CHECK(tinyrt_session_input(&s, 0, &t) == TINYRT_OK && t.bytes == 96 && t.dims[1] == 4);
  CHECK(dims_refused(&s, 0, d2, 2, "input 'x' has rank 3"));
  CHECK(dims_refused(&s, 0, bad_h, 3, "input 'x' axis 1: 5 outside 1:4"));
  CHECK(dims_refused(&s, 0, bad_n, 3, "axis 0: 3 outside 2:2"));
  CHECK(tinyrt_session_set_input_dims(&s, 7, d2, 3) == TINYRT_ERR_INVALID_ARGUMENT);
  CHECK(tinyrt_session_set_input_dims(&s, 0, d2, 3) == TINYRT_OK);
  CHECK(tinyrt_session_input(&s, 0, &t) == TINYRT_OK && t.bytes == 48 && t.dims[0] == 2 && t.dims[1] == 2);
  x = (float *)t.data;
  for (i = 0; i < 12; ++i) x[i] = (float)i; /* dense at [2, 2, 3] */
  /* m still has H = 4: the run refuses the disagreement. */
  CHECK(tinyrt_session_run(&s) == TINYRT_ERR_SHAPE &&
        strstr(tinyrt_session_message(&s), "input 'm' axis 0 and input 'x' axis 1 are the same dimension but differ"));
  CHECK(tinyrt_session_set_input_dims(&s, 1, h3, 1) == TINYRT_OK);
  CHECK(tinyrt_session_run(&s) == TINYRT_ERR_SHAPE);
  CHECK(tinyrt_session_set_input_dims(&s, 1, h2, 1) == TINYRT_OK);
  CHECK(tinyrt_session_input(&s, 1, &t) == TINYRT_OK && t.bytes == 8);
  mm = (float *)t.data;
  mm[0] = 100;
  mm[1] = 200;
  for (i = 0; i < 12; ++i) x[i] = (float)i; /* rewritten: the refused runs moved nothing, but inputs are per run */
  CHECK(tinyrt_session_run(&s) == TINYRT_OK);
  CHECK(tinyrt_session_output(&s, 0, &t) == TINYRT_OK && t.bytes == 48 && t.rank == 3 && t.dims[0] == 2 &&
        t.dims[1] == 2 && t.dims[2] == 3);
  y = (float *)t.data;
  for (i = 0; i < 12; ++i) ok &= y[i] == (float)i + (i % 6 < 3 ? 100.0f : 200.0f);
  CHECK(ok);
  /* A dims slot outside the arena is a bad model. */
  {
    tinyrt_tensor_desc in[2];
    memcpy(in, kDynIn, sizeof in);
    in[0].dims_offset = 508;
    m.inputs = in;
    CHECK(refused(&m, TINYRT_ERR_BAD_MODEL, "run-time dimensions without"));
    in[0].dims_offset = DYN_XD;
    in[0].dims_min = kDynXDims; /* lower bounds = upper ones: a fixed input, fine */
    CHECK(init(&s, &m) == TINYRT_OK);
  }
  /* A fixed model takes exactly its own dims. */
  {
    tinyrt_model g = good_model();
    int64_t nd[1] = {N}, other[1] = {N - 1};
    CHECK(init(&s, &g) == TINYRT_OK);
    CHECK(tinyrt_session_set_input_dims(&s, 0, nd, 1) == TINYRT_OK);
    CHECK(dims_refused(&s, 0, other, 1, "999 outside 1000:1000"));
  }
}

int main(void) {
  test_validation();
  test_run_time_dims();
  test_call_step();
  test_branches();
  test_wide_tables();
  test_session_misuse();
  test_verify();
  test_pool_misuse();
  test_step_hook();
  test_threads();
  test_task_coverage();
  test_stress();
  test_pool_lifecycle();
  test_busy();
  test_shared_pool_race();
  printf("runtime features of this CPU: 0x%x\n", (unsigned)tinyrt_cpu_features());
  if (failures) {
    fprintf(stderr, "%d check(s) failed\n", failures);
    return 1;
  }
  printf("test_session: all checks passed\n");
  return 0;
}
