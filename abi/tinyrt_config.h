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

/* Microseconds a pool thread waiting for work (or the caller waiting for
 * the last chunks of a step) spins before it sleeps on a condition
 * variable. Steps are often tens of microseconds and waking a sleeping
 * thread costs about as much; spinning longer only burns a core that
 * another thread could use. tinyrt_pool_set_spin_us() changes it per pool. */
#if !defined(TINYRT_POOL_SPIN_US)
#define TINYRT_POOL_SPIN_US 50
#endif

/* Run-time dimensions (docs/ABI.md): 0 leaves their code out (about 1.3 KB
 * of flash on ARMv7 Thumb-2) for firmware whose models have fixed shapes;
 * such a runtime refuses a model compiled with ranges (TINYRT_ERR_BAD_MODEL,
 * naming this knob), and tinyrt_session_set_input_dims accepts only an
 * input's own dims. */
#if !defined(TINYRT_RUNTIME_DIMS)
#define TINYRT_RUNTIME_DIMS 1
#endif

/* Upper bound of tinyrt_pool_storage_bytes(n) on every port, for static
 * allocation (runtime/pool.c checks it at compile time). */
#define TINYRT_POOL_STORAGE_BYTES(threads) (512u + 256u * (unsigned)(threads))

#endif /* TINYRT_CONFIG_H_ */
