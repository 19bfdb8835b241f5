/*
 * tinyrt_config.h — build knobs of the runtime. Each may be overridden by
 * the integrator with -D on the command line.
 */
#ifndef TINYRT_CONFIG_H_
#define TINYRT_CONFIG_H_

/* Arena and pool storage alignment in bytes; generated code relies on it. */
#if !defined(TINYRT_ARENA_ALIGN)
#define TINYRT_ARENA_ALIGN 64
#endif

/* Largest thread pool a port accepts. */
#if !defined(TINYRT_MAX_THREADS)
#define TINYRT_MAX_THREADS 64
#endif

/* Iterations a pool thread spins on a new step before it sleeps. Steps are
 * often tens of microseconds; waking a sleeping thread costs about as much. */
#if !defined(TINYRT_POOL_SPIN)
#define TINYRT_POOL_SPIN 200000
#endif

/* Upper bound of tinyrt_pool_storage_bytes(n) on every port, for static
 * allocation. */
#define TINYRT_POOL_STORAGE_BYTES(threads) (512u + 256u * (unsigned)(threads))

#endif /* TINYRT_CONFIG_H_ */
