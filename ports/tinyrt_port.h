/*
 * tinyrt_port.h — the seam between the portable runtime and a platform.
 *
 * A port implements the public pool functions of tinyrt.h plus the two
 * functions below. ports/linux uses pthreads and the kernel's view of CPU
 * features; ports/baremetal runs everything on the calling thread and trusts
 * the features the runtime itself was compiled for.
 */
#ifndef TINYRT_PORT_H_
#define TINYRT_PORT_H_

#include "tinyrt.h"

/* Runs fn over the tasks [0, tasks) split into one contiguous range per pool
 * thread (pool may be NULL: the calling thread runs everything), and returns
 * when all ranges are done. The split depends only on the thread count. */
void tinyrt_port_parallel_for(tinyrt_pool *pool, tinyrt_kernel_fn fn,
                              uint8_t *arena, int32_t tasks);

/* TINYRT_ISA_* bits the running CPU (and OS) supports. */
uint32_t tinyrt_port_cpu_features(void);

/* Task range of thread `index` of `threads` for `tasks` tasks. */
static inline void tinyrt_port_split(int32_t tasks, int threads, int index,
                                     int32_t *begin, int32_t *end) {
  *begin = (int32_t)(((int64_t)tasks * index) / threads);
  *end = (int32_t)(((int64_t)tasks * (index + 1)) / threads);
}

#endif /* TINYRT_PORT_H_ */
