/* pool_none.c — bare metal: no threads. A "pool" of one thread is accepted
 * so that code written for the Linux port runs unchanged. */
#include <string.h>

#include "tinyrt_port.h"

struct tinyrt_pool {
  int threads;
};

size_t tinyrt_pool_storage_bytes(int threads) {
  (void)threads;
  return sizeof(tinyrt_pool);
}

int tinyrt_pool_threads(const tinyrt_pool *pool) { return pool ? pool->threads : 1; }

tinyrt_status tinyrt_pool_create(void *storage, size_t bytes, int threads,
                                 tinyrt_pool **out) {
  if (out) *out = NULL;
  if (!storage || !out) return TINYRT_ERR_INVALID_ARGUMENT;
  if (threads != 1) return TINYRT_ERR_THREADS;
  if ((uintptr_t)storage % TINYRT_ARENA_ALIGN) return TINYRT_ERR_ARENA_MISALIGNED;
  if (bytes < sizeof(tinyrt_pool)) return TINYRT_ERR_STORAGE_TOO_SMALL;
  memset(storage, 0, sizeof(tinyrt_pool));
  ((tinyrt_pool *)storage)->threads = 1;
  *out = (tinyrt_pool *)storage;
  return TINYRT_OK;
}

tinyrt_status tinyrt_pool_destroy(tinyrt_pool *pool) {
  return pool ? TINYRT_OK : TINYRT_ERR_INVALID_ARGUMENT;
}

void tinyrt_port_parallel_for(tinyrt_pool *pool, tinyrt_kernel_fn fn,
                              uint8_t *arena, int32_t tasks) {
  (void)pool;
  fn(arena, 0, tasks);
}
