/* tinyrt_port_threads.h (Linux) — the thread primitives of the pool, as
 * thin inline wrappers of pthreads and CLOCK_MONOTONIC. See tinyrt_port.h. */
#ifndef TINYRT_PORT_THREADS_H_
#define TINYRT_PORT_THREADS_H_

#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <time.h>

#define TINYRT_PORT_THREADS 1

typedef pthread_mutex_t tinyrt_port_mutex;
typedef pthread_cond_t tinyrt_port_cond;
typedef pthread_t tinyrt_port_thread;

static inline void tinyrt_port_mutex_init(tinyrt_port_mutex *m) { pthread_mutex_init(m, NULL); }
static inline void tinyrt_port_mutex_destroy(tinyrt_port_mutex *m) { pthread_mutex_destroy(m); }
static inline void tinyrt_port_mutex_lock(tinyrt_port_mutex *m) { pthread_mutex_lock(m); }
static inline void tinyrt_port_mutex_unlock(tinyrt_port_mutex *m) { pthread_mutex_unlock(m); }

static inline void tinyrt_port_cond_init(tinyrt_port_cond *c) { pthread_cond_init(c, NULL); }
static inline void tinyrt_port_cond_destroy(tinyrt_port_cond *c) { pthread_cond_destroy(c); }
static inline void tinyrt_port_cond_wait(tinyrt_port_cond *c, tinyrt_port_mutex *m) { pthread_cond_wait(c, m); }
static inline void tinyrt_port_cond_broadcast(tinyrt_port_cond *c) { pthread_cond_broadcast(c); }

static inline int tinyrt_port_thread_create(tinyrt_port_thread *t, void *(*fn)(void *), void *arg) {
  return pthread_create(t, NULL, fn, arg);
}
static inline void tinyrt_port_thread_join(tinyrt_port_thread t) { pthread_join(t, NULL); }

static inline uint32_t tinyrt_port_now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint32_t)ts.tv_sec * 1000000u + (uint32_t)ts.tv_nsec / 1000u;
}

static inline void tinyrt_port_yield(void) { sched_yield(); }

static inline void tinyrt_port_cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__) || (defined(__arm__) && __ARM_ARCH >= 7)
  __asm__ __volatile__("yield");
#endif
}

#endif /* TINYRT_PORT_THREADS_H_ */
