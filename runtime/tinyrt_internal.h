/* tinyrt_internal.h — what runtime/session.c needs from runtime/pool.c.
 * Not installed; not part of the API. */
#ifndef TINYRT_INTERNAL_H_
#define TINYRT_INTERNAL_H_

#include "tinyrt.h"

/* Non-blocking try-lock on a flag word: nonzero if it was already held. */
#define TINYRT_TRY_LOCK(flag) __atomic_exchange_n((flag), 1u, __ATOMIC_ACQUIRE)
#define TINYRT_UNLOCK(flag) __atomic_store_n((flag), 0u, __ATOMIC_RELEASE)

/* Nonzero if `pool` is a live pool created at its own address. */
int tinyrt_internal_pool_valid(const tinyrt_pool *pool);

/* Takes the pool for one run: OK, NOT_INITIALIZED or BUSY. */
tinyrt_status tinyrt_internal_pool_acquire(tinyrt_pool *pool);
void tinyrt_internal_pool_release(tinyrt_pool *pool);

/* Runs fn over the tasks [0, tasks) on the acquired pool (NULL: on the
 * calling thread) and returns when every task is done. */
void tinyrt_internal_pool_step(tinyrt_pool *pool, tinyrt_kernel_fn fn, uint8_t *arena, int32_t tasks);

#endif /* TINYRT_INTERNAL_H_ */
