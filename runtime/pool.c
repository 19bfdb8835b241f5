/* pool.c — the thread pool, on the primitives of the port
 * (tinyrt_port_threads.h: mutex, condition variable, threads, a monotonic
 * clock, a spin hint).
 *
 * A pool of n threads is the caller (thread 0) plus n - 1 workers started
 * once. For a step of `tasks` tasks the caller cuts the tasks into chunks
 * (about CHUNKS_PER_THREAD per thread), gives thread i the i-th of n equal
 * ranges of them, bumps a generation counter and works; workers that notice
 * the new generation work too. A thread takes chunks from the front of its
 * own range, then steals from the back of the others' ranges; a range is
 * one word (first and end chunk) changed by compare-exchange, so each chunk
 * is run by exactly one thread. The step ends when `pending` (chunks not
 * finished) reaches 0. The caller never waits for a thread that holds no
 * chunk: the range of a worker that is asleep or descheduled is stolen.
 * Successive steps give a thread the same share of their tasks, so a
 * thread mostly reads what it wrote in the step before (its cache) when
 * their task spaces line up, as a convolution's rows do with the next
 * one's. Results do not depend on which thread ran which chunk: every task
 * writes only its own outputs.
 *
 * A thread waiting for work (or the caller for the last chunks) spins for
 * spin_us microseconds, yielding the CPU between short bursts (with more
 * threads than cores, a spinning thread would otherwise hold the core a
 * descheduled chunk holder needs), then sleeps on a condition variable; the
 * other side takes the mutex and broadcasts only when a sleeper is counted.
 *
 * Step parameters (fn, arena, tasks, chunk) are plain fields: the caller
 * writes them while no chunk is claimable (every range is empty), then the
 * ranges (release), and a thread reads them only after its claim (acquire)
 * of a chunk, which the caller cannot overwrite before that chunk is
 * finished.
 */
#if !defined(_POSIX_C_SOURCE) && !defined(_GNU_SOURCE) && !defined(_DEFAULT_SOURCE)
#define _POSIX_C_SOURCE 200809L /* a POSIX port's clock under -std=c99 */
#endif
#include <string.h>

#include "tinyrt_internal.h"
#include "tinyrt_port.h"
#include "tinyrt_port_threads.h"

#define POOL_MAGIC 0x4c4f4f50u /* "POOL" */
#define CHUNKS_PER_THREAD 4

#define LOAD(p, order) __atomic_load_n((p), __ATOMIC_##order)
#define STORE(p, v, order) __atomic_store_n((p), (v), __ATOMIC_##order)

#if TINYRT_PORT_THREADS
/* Per thread: its range of the step's chunks, first << 16 | end (empty when
 * first >= end), and for a worker its handle. 64 bytes each, so no two
 * threads' ranges share a cache line. */
typedef union {
  struct {
    uint32_t range;
    tinyrt_port_thread thread;
    struct tinyrt_pool *pool;
  } s;
  unsigned char line[64];
} pool_slot;
#endif

struct tinyrt_pool {
  uint32_t magic;          /* POOL_MAGIC while live */
  uint32_t busy;           /* a run (or destroy) holds the pool */
  const tinyrt_pool *self; /* own address: a copy is refused */
  int threads;
  uint32_t spin_us;
#if TINYRT_PORT_THREADS
  tinyrt_kernel_fn fn;
  uint8_t *arena;
  int32_t tasks, chunk;
  uint32_t stop;
  uint32_t gen;             /* bumped for every step (and by destroy) */
  uint32_t sleepers;        /* workers asleep on work_cv, or about to be */
  uint32_t caller_sleeping; /* caller asleep on done_cv, or about to be */
  uint32_t pending;         /* chunks not finished yet */
  tinyrt_port_mutex mu;
  tinyrt_port_cond work_cv, done_cv;
  pool_slot slots[1]; /* threads entries */
#endif
};

#if TINYRT_PORT_THREADS
#define EXTRA_BYTES(threads) ((size_t)((threads)-1) * sizeof(pool_slot))
#else
#define EXTRA_BYTES(threads) 0
#endif

/* TINYRT_POOL_STORAGE_BYTES(n) bounds the storage for every n: both grow
 * linearly in n, so checking n = 1 and n = TINYRT_MAX_THREADS suffices. */
typedef char tinyrt_pool_storage_bound_check[sizeof(tinyrt_pool) <= TINYRT_POOL_STORAGE_BYTES(1) &&
                                                     sizeof(tinyrt_pool) + EXTRA_BYTES(TINYRT_MAX_THREADS) <=
                                                         TINYRT_POOL_STORAGE_BYTES(TINYRT_MAX_THREADS)
                                                 ? 1
                                                 : -1];

size_t tinyrt_pool_storage_bytes(int threads) { return sizeof(tinyrt_pool) + (threads > 1 ? EXTRA_BYTES(threads) : 0); }

/* A live pool lives in aligned storage (tinyrt_pool_create refuses any
 * other): a misaligned pointer, such as a copy of a pool in an unaligned
 * buffer, is refused before its magic is read (an unaligned atomic load
 * faults on ARM). */
int tinyrt_internal_pool_valid(const tinyrt_pool *p) {
  return p && (uintptr_t)p % TINYRT_ARENA_ALIGN == 0 && LOAD(&p->magic, ACQUIRE) == POOL_MAGIC && p->self == p;
}

int tinyrt_pool_threads(const tinyrt_pool *p) { return tinyrt_internal_pool_valid(p) ? p->threads : !p; }

tinyrt_status tinyrt_pool_set_spin_us(tinyrt_pool *p, uint32_t us) {
  if (!tinyrt_internal_pool_valid(p)) return p ? TINYRT_ERR_NOT_INITIALIZED : TINYRT_ERR_INVALID_ARGUMENT;
  STORE(&p->spin_us, us, RELAXED);
  return TINYRT_OK;
}

tinyrt_status tinyrt_internal_pool_acquire(tinyrt_pool *p) {
  if (!tinyrt_internal_pool_valid(p)) return TINYRT_ERR_NOT_INITIALIZED;
  return TINYRT_TRY_LOCK(&p->busy) ? TINYRT_ERR_BUSY : TINYRT_OK;
}

void tinyrt_internal_pool_release(tinyrt_pool *p) { TINYRT_UNLOCK(&p->busy); }

#if TINYRT_PORT_THREADS

/* Waits while (*word == val) == eq: spins about spin_us microseconds, then
 * sleeps on cv, counted in *sleepers. The side that changes *word does so
 * with a sequentially consistent operation and then calls wake(): either it
 * sees the sleeper count, or the sleeper sees the new value. */
static void wait_while(tinyrt_pool *p, uint32_t *word, uint32_t val, int eq, tinyrt_port_cond *cv, uint32_t *sleepers) {
  uint32_t n = 0, t0 = 0, now;
  while ((LOAD(word, ACQUIRE) == val) == eq) {
    tinyrt_port_cpu_relax();
    if (++n % 32) continue;
    now = tinyrt_port_now_us();
    if (n == 32)
      t0 = now;
    else if (now - t0 >= LOAD(&p->spin_us, RELAXED)) {
      tinyrt_port_mutex_lock(&p->mu);
      __atomic_add_fetch(sleepers, 1, __ATOMIC_SEQ_CST);
      while ((LOAD(word, SEQ_CST) == val) == eq) tinyrt_port_cond_wait(cv, &p->mu);
      __atomic_sub_fetch(sleepers, 1, __ATOMIC_RELAXED);
      tinyrt_port_mutex_unlock(&p->mu);
      return;
    }
    tinyrt_port_yield(); /* lets a descheduled chunk holder run */
  }
}

static void wake(tinyrt_pool *p, tinyrt_port_cond *cv, uint32_t *sleepers) {
  if (LOAD(sleepers, SEQ_CST)) {
    tinyrt_port_mutex_lock(&p->mu);
    tinyrt_port_cond_broadcast(cv);
    tinyrt_port_mutex_unlock(&p->mu);
  }
}

/* Takes a chunk from the front (own range) or the back of *range; -1 when
 * it is empty. */
static int32_t take(uint32_t *range, int front) {
  uint32_t r = LOAD(range, RELAXED), first, end;
  for (;;) {
    first = r >> 16;
    end = r & 0xffffu;
    if (first >= end) return -1;
    if (__atomic_compare_exchange_n(range, &r, front ? r + 0x10000u : r - 1u, 1, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
      return (int32_t)(front ? first : end - 1);
  }
}

/* Claims and runs chunks of the current step, thread `self`'s own range
 * first, then the others', until none is left. */
static void work(tinyrt_pool *p, int self) {
  int i = 0, victim;
  int32_t c, b, e;
  for (;;) {
    victim = (self + i) % p->threads;
    c = take(&p->slots[victim].s.range, i == 0);
    if (c < 0) {
      if (++i == p->threads) return;
      continue;
    }
    b = c * p->chunk;
    e = p->tasks - b > p->chunk ? b + p->chunk : p->tasks;
    p->fn(p->arena, b, e);
    if (__atomic_sub_fetch(&p->pending, 1, __ATOMIC_SEQ_CST) == 0) wake(p, &p->done_cv, &p->caller_sleeping);
  }
}

static void *worker_main(void *arg) {
  pool_slot *slot = (pool_slot *)arg;
  tinyrt_pool *p = slot->s.pool;
  int self = (int)(slot - p->slots);
  uint32_t seen = 0; /* the generation at create; a step may precede us */
  for (;;) {
    wait_while(p, &p->gen, seen, 1, &p->work_cv, &p->sleepers);
    /* Generation first, then stop: had we read the generation destroy
     * bumps after the stop check, we would wait for a next one forever. */
    seen = LOAD(&p->gen, ACQUIRE);
    if (LOAD(&p->stop, ACQUIRE)) return NULL;
    work(p, self);
  }
}

static void stop_workers(tinyrt_pool *p) {
  int i;
  tinyrt_port_mutex_lock(&p->mu);
  STORE(&p->stop, 1, RELEASE);
  __atomic_add_fetch(&p->gen, 1, __ATOMIC_SEQ_CST);
  tinyrt_port_cond_broadcast(&p->work_cv);
  tinyrt_port_mutex_unlock(&p->mu);
  for (i = 1; i < p->threads; ++i) tinyrt_port_thread_join(p->slots[i].s.thread);
  tinyrt_port_cond_destroy(&p->done_cv);
  tinyrt_port_cond_destroy(&p->work_cv);
  tinyrt_port_mutex_destroy(&p->mu);
}

void tinyrt_internal_pool_step(tinyrt_pool *p, tinyrt_kernel_fn fn, uint8_t *arena, int32_t tasks) {
  if (p && p->threads > 1 && tasks > 1) {
    int32_t per = p->threads * CHUNKS_PER_THREAD, chunks, i;
    p->fn = fn;
    p->arena = arena;
    p->tasks = tasks;
    p->chunk = tasks / per + (tasks % per != 0);
    chunks = (tasks - 1) / p->chunk + 1; /* <= per <= 4 * TINYRT_MAX_THREADS < 2^16 */
    STORE(&p->pending, (uint32_t)chunks, RELAXED);
    for (i = 0; i < p->threads; ++i) /* publishes the fields above */
      STORE(&p->slots[i].s.range, (uint32_t)(i * chunks / p->threads) << 16 | (uint32_t)((i + 1) * chunks / p->threads),
            RELEASE);
    __atomic_add_fetch(&p->gen, 1, __ATOMIC_SEQ_CST);
    wake(p, &p->work_cv, &p->sleepers);
    work(p, 0);
    wait_while(p, &p->pending, 0, 0, &p->done_cv, &p->caller_sleeping);
    return;
  }
  fn(arena, 0, tasks);
}

#else /* no threads */

void tinyrt_internal_pool_step(tinyrt_pool *p, tinyrt_kernel_fn fn, uint8_t *arena, int32_t tasks) {
  (void)p;
  fn(arena, 0, tasks);
}

#endif

tinyrt_status tinyrt_pool_create(void *storage, size_t bytes, int threads, tinyrt_pool **out) {
  tinyrt_pool *p = (tinyrt_pool *)storage;
  if (out) *out = NULL;
  if (!storage || !out) return TINYRT_ERR_INVALID_ARGUMENT;
  if (threads < 1 || threads > (TINYRT_PORT_THREADS ? TINYRT_MAX_THREADS : 1)) return TINYRT_ERR_THREADS;
  if ((uintptr_t)storage % TINYRT_ARENA_ALIGN) return TINYRT_ERR_ARENA_MISALIGNED;
  if (bytes < tinyrt_pool_storage_bytes(threads)) return TINYRT_ERR_STORAGE_TOO_SMALL;
  memset(p, 0, tinyrt_pool_storage_bytes(threads));
  p->self = p;
  p->threads = threads;
  p->spin_us = TINYRT_POOL_SPIN_US;
#if TINYRT_PORT_THREADS
  {
    int i;
    tinyrt_port_mutex_init(&p->mu);
    tinyrt_port_cond_init(&p->work_cv);
    tinyrt_port_cond_init(&p->done_cv);
    for (i = 1; i < threads; ++i) {
      p->slots[i].s.pool = p;
      if (tinyrt_port_thread_create(&p->slots[i].s.thread, worker_main, &p->slots[i]) != 0) {
        p->threads = i; /* join the ones that started */
        stop_workers(p);
        return TINYRT_ERR_THREADS;
      }
    }
  }
#endif
  STORE(&p->magic, POOL_MAGIC, RELEASE);
  *out = p;
  return TINYRT_OK;
}

tinyrt_status tinyrt_pool_destroy(tinyrt_pool *p) {
  tinyrt_status st;
  if (!p) return TINYRT_ERR_INVALID_ARGUMENT;
  st = tinyrt_internal_pool_acquire(p);
  if (st != TINYRT_OK) return st;
  /* Dead from here on; `busy` stays held so that nothing starts on it. */
  STORE(&p->magic, 0, RELEASE);
#if TINYRT_PORT_THREADS
  stop_workers(p);
#endif
  return TINYRT_OK;
}
