/* test_session.c — the runtime's contract, with hand-built descriptors:
 * every validation at init names what failed, the arena is the only
 * memory used, and results do not depend on the thread count. Built and
 * run for every target (under qemu for ARM). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tinyrt.h"

static int failures;
#define CHECK(cond)                                                      \
  do {                                                                   \
    if (!(cond)) {                                                       \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
      ++failures;                                                        \
    }                                                                    \
  } while (0)

#if defined(__x86_64__)
#define ARCH TINYRT_ARCH_X86_64
#elif defined(__aarch64__)
#define ARCH TINYRT_ARCH_AARCH64
#else
#define ARCH TINYRT_ARCH_ARMV7
#endif

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
  return m;
}

static unsigned char arena_mem[16384 + 64] TINYRT_ALIGNED_ARENA;
static unsigned char pool_mem[TINYRT_POOL_STORAGE_BYTES(4)] TINYRT_ALIGNED_ARENA;

static void test_validation(void) {
  tinyrt_session s;
  tinyrt_model m = good_model();
  CHECK(tinyrt_session_init(&s, &m, arena_mem, sizeof arena_mem, NULL) == TINYRT_OK);
  CHECK(strcmp(tinyrt_session_message(&s), "") == 0);

  m = good_model();
  m.magic = 0x12345678;
  CHECK(tinyrt_session_init(&s, &m, arena_mem, sizeof arena_mem, NULL) == TINYRT_ERR_BAD_MODEL);
  CHECK(strstr(tinyrt_session_message(&s), "magic") != NULL);

  m = good_model();
  m.abi_major = TINYRT_ABI_MAJOR + 1;
  CHECK(tinyrt_session_init(&s, &m, arena_mem, sizeof arena_mem, NULL) == TINYRT_ERR_ABI_MISMATCH);
  CHECK(strstr(tinyrt_session_message(&s), "ABI") != NULL);

  m = good_model();
  m.arch = ARCH == TINYRT_ARCH_X86_64 ? TINYRT_ARCH_AARCH64 : TINYRT_ARCH_X86_64;
  CHECK(tinyrt_session_init(&s, &m, arena_mem, sizeof arena_mem, NULL) == TINYRT_ERR_WRONG_ARCH);
  CHECK(strstr(tinyrt_session_message(&s), "compiled for") != NULL);

  /* Every feature bit of another architecture is missing on this CPU. */
  m = good_model();
  m.isa_required = ARCH == TINYRT_ARCH_X86_64 ? TINYRT_ISA_A64_ASIMD : TINYRT_ISA_X86_AVX512F;
  CHECK(tinyrt_session_init(&s, &m, arena_mem, sizeof arena_mem, NULL) == TINYRT_ERR_CPU_UNSUPPORTED);
  CHECK(strstr(tinyrt_session_message(&s), ARCH == TINYRT_ARCH_X86_64 ? "asimd" : "avx512f") != NULL);

  m = good_model();
  CHECK(tinyrt_session_init(&s, &m, arena_mem, 1000, NULL) == TINYRT_ERR_ARENA_TOO_SMALL);
  CHECK(strstr(tinyrt_session_message(&s), "needs 12192 bytes, got 1000") != NULL);
  CHECK(tinyrt_model_arena_bytes(&m) == 12192);

  CHECK(tinyrt_session_init(&s, &m, arena_mem + 4, sizeof arena_mem - 4, NULL) == TINYRT_ERR_ARENA_MISALIGNED);
  CHECK(tinyrt_session_init(&s, NULL, arena_mem, sizeof arena_mem, NULL) == TINYRT_ERR_INVALID_ARGUMENT);
  CHECK(tinyrt_session_init(NULL, &m, arena_mem, sizeof arena_mem, NULL) == TINYRT_ERR_INVALID_ARGUMENT);

  /* A descriptor whose output lies outside its own arena is rejected. */
  {
    tinyrt_tensor_desc bad_out = kOut[0];
    bad_out.arena_offset = 1u << 20;
    m = good_model();
    m.outputs = &bad_out;
    CHECK(tinyrt_session_init(&s, &m, arena_mem, sizeof arena_mem, NULL) == TINYRT_ERR_BAD_MODEL);
  }
  /* Use before init. */
  memset(&s, 0, sizeof s);
  CHECK(tinyrt_session_run(&s) == TINYRT_ERR_NOT_INITIALIZED);
  CHECK(tinyrt_status_string(TINYRT_ERR_ARENA_TOO_SMALL)[0] != '\0');
  CHECK(tinyrt_status_string((tinyrt_status)999) != NULL);
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
#if defined(TINYRT_TEST_BAREMETAL)
    if (t > 1) {
      CHECK(st == TINYRT_ERR_THREADS);
      continue;
    }
#endif
    CHECK(st == TINYRT_OK);
    if (st != TINYRT_OK) continue;
    CHECK(tinyrt_pool_threads(pool) == t);
    run_with(pool, got);
    CHECK(memcmp(ref, got, sizeof ref) == 0);
    CHECK(tinyrt_pool_destroy(pool) == TINYRT_OK);
  }
  CHECK(tinyrt_pool_create(pool_mem, 16, 2, &pool) != TINYRT_OK);
  CHECK(tinyrt_pool_create(pool_mem, sizeof pool_mem, 0, &pool) == TINYRT_ERR_THREADS);
}

int main(void) {
  test_validation();
  test_threads();
  printf("runtime features of this CPU: 0x%x\n", (unsigned)tinyrt_cpu_features());
  if (failures) {
    fprintf(stderr, "%d check(s) failed\n", failures);
    return 1;
  }
  printf("test_session: all checks passed\n");
  return 0;
}
