/*
 * tinyrt_port.h — the seam between the portable runtime and a platform.
 *
 * The runtime (runtime/session.c, runtime/pool.c) is the same on every
 * platform; the thread pool's protocol lives once, in runtime/pool.c. A port
 * is a directory (ports/linux, ports/baremetal) that supplies only
 * primitives:
 *
 *   - tinyrt_port_cpu_features() below, in a .c file of the port;
 *   - the header tinyrt_port_threads.h, found on the include path of the
 *     runtime build, with the thread primitives (types and functions, which
 *     may be static inline). It defines TINYRT_PORT_THREADS to 1 or 0.
 *
 * With TINYRT_PORT_THREADS 0 (bare metal) nothing else is needed: pools
 * accept threads == 1 only and every step runs on the caller. With 1 the
 * header provides:
 *
 *   types  tinyrt_port_mutex, tinyrt_port_cond, tinyrt_port_thread
 *          (plain data, stored in the pool's caller storage)
 *   void tinyrt_port_mutex_init(tinyrt_port_mutex *m);   cannot fail
 *   void tinyrt_port_mutex_destroy(tinyrt_port_mutex *m);
 *   void tinyrt_port_mutex_lock(tinyrt_port_mutex *m);
 *   void tinyrt_port_mutex_unlock(tinyrt_port_mutex *m);
 *   void tinyrt_port_cond_init(tinyrt_port_cond *c);     cannot fail
 *   void tinyrt_port_cond_destroy(tinyrt_port_cond *c);
 *   void tinyrt_port_cond_wait(tinyrt_port_cond *c, tinyrt_port_mutex *m);
 *        (may wake spuriously: the pool re-checks its condition)
 *   void tinyrt_port_cond_broadcast(tinyrt_port_cond *c);
 *   int  tinyrt_port_thread_create(tinyrt_port_thread *t,
 *                                  void *(*fn)(void *), void *arg); 0 = ok
 *   void tinyrt_port_thread_join(tinyrt_port_thread t);
 *   uint32_t tinyrt_port_now_us(void);  monotonic microseconds (may wrap)
 *   void tinyrt_port_cpu_relax(void);   spin-loop hint (PAUSE, YIELD, nop)
 *   void tinyrt_port_yield(void);       let another ready thread run (a nop
 *                                       where the scheduler cannot)
 *
 * None of them may allocate from a heap the application does not control.
 * Atomics are the compiler's __atomic builtins (GCC, Clang).
 */
#ifndef TINYRT_PORT_H_
#define TINYRT_PORT_H_

#include "tinyrt.h"

/* TINYRT_ISA_* bits the running CPU (and OS) supports. */
uint32_t tinyrt_port_cpu_features(void);

#endif /* TINYRT_PORT_H_ */
