/* pool_pthreads.c — the Linux thread pool: threads - 1 workers started once,
 * woken per step by a generation counter (spin first, then a condition
 * variable), each running one fixed slice of the step's tasks. */
#include <pthread.h>
#include <string.h>

#include "tinyrt_port.h"

#if defined(__x86_64__) || defined(__i386__)
#define CPU_RELAX() __builtin_ia32_pause()
#elif defined(__aarch64__) || defined(__arm__)
#define CPU_RELAX() __asm__ __volatile__("yield")
#else
#define CPU_RELAX() ((void)0)
#endif

#define LOAD(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define STORE(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)

struct tinyrt_pool {
  int threads;
  int stop;
  pthread_mutex_t mu;
  pthread_cond_t work_cv;
  pthread_cond_t done_cv;
  uint32_t generation; /* bumped once per step */
  int32_t pending;     /* workers still inside the current step */
  tinyrt_kernel_fn fn;
  uint8_t *arena;
  int32_t tasks;
  struct worker {
    tinyrt_pool *pool;
    int index;
    pthread_t tid;
  } workers[1]; /* threads - 1 entries */
};

static size_t storage_bytes(int threads) {
  return sizeof(tinyrt_pool) +
         (size_t)(threads > 1 ? threads - 1 : 0) * sizeof(struct worker);
}

size_t tinyrt_pool_storage_bytes(int threads) { return storage_bytes(threads); }

int tinyrt_pool_threads(const tinyrt_pool *pool) { return pool ? pool->threads : 1; }

static void run_slice(tinyrt_pool *p, int index) {
  int32_t b, e;
  tinyrt_port_split(p->tasks, p->threads, index, &b, &e);
  if (b < e) p->fn(p->arena, b, e);
}

static void *worker_main(void *arg) {
  struct worker *w = (struct worker *)arg;
  tinyrt_pool *p = w->pool;
  /* Generation 0 is the pool's initial state. Reading the counter here
   * instead would race with a first step posted before this thread ran. */
  uint32_t seen = 0;
  for (;;) {
    long spin;
    for (spin = 0; spin < TINYRT_POOL_SPIN && LOAD(&p->generation) == seen &&
                   !LOAD(&p->stop); ++spin)
      CPU_RELAX();
    if (LOAD(&p->generation) == seen && !LOAD(&p->stop)) {
      pthread_mutex_lock(&p->mu);
      while (LOAD(&p->generation) == seen && !LOAD(&p->stop))
        pthread_cond_wait(&p->work_cv, &p->mu);
      pthread_mutex_unlock(&p->mu);
    }
    if (LOAD(&p->stop)) return NULL;
    seen = LOAD(&p->generation);
    run_slice(p, w->index);
    if (__atomic_sub_fetch(&p->pending, 1, __ATOMIC_ACQ_REL) == 0) {
      pthread_mutex_lock(&p->mu);
      pthread_cond_broadcast(&p->done_cv);
      pthread_mutex_unlock(&p->mu);
    }
  }
}

tinyrt_status tinyrt_pool_create(void *storage, size_t bytes, int threads,
                                 tinyrt_pool **out) {
  tinyrt_pool *p = (tinyrt_pool *)storage;
  int i;
  if (out) *out = NULL;
  if (!storage || !out) return TINYRT_ERR_INVALID_ARGUMENT;
  if (threads < 1 || threads > TINYRT_MAX_THREADS) return TINYRT_ERR_THREADS;
  if ((uintptr_t)storage % TINYRT_ARENA_ALIGN) return TINYRT_ERR_ARENA_MISALIGNED;
  if (bytes < storage_bytes(threads)) return TINYRT_ERR_STORAGE_TOO_SMALL;
  memset(p, 0, storage_bytes(threads));
  p->threads = threads;
  pthread_mutex_init(&p->mu, NULL);
  pthread_cond_init(&p->work_cv, NULL);
  pthread_cond_init(&p->done_cv, NULL);
  for (i = 1; i < threads; ++i) {
    struct worker *w = &p->workers[i - 1];
    w->pool = p;
    w->index = i;
    if (pthread_create(&w->tid, NULL, worker_main, w) != 0) {
      p->threads = i; /* join the ones that started */
      tinyrt_pool_destroy(p);
      return TINYRT_ERR_THREADS;
    }
  }
  *out = p;
  return TINYRT_OK;
}

tinyrt_status tinyrt_pool_destroy(tinyrt_pool *p) {
  int i;
  if (!p) return TINYRT_ERR_INVALID_ARGUMENT;
  pthread_mutex_lock(&p->mu);
  STORE(&p->stop, 1);
  pthread_cond_broadcast(&p->work_cv);
  pthread_mutex_unlock(&p->mu);
  for (i = 1; i < p->threads; ++i) pthread_join(p->workers[i - 1].tid, NULL);
  pthread_mutex_destroy(&p->mu);
  pthread_cond_destroy(&p->work_cv);
  pthread_cond_destroy(&p->done_cv);
  return TINYRT_OK;
}

void tinyrt_port_parallel_for(tinyrt_pool *p, tinyrt_kernel_fn fn,
                              uint8_t *arena, int32_t tasks) {
  long spin;
  if (!p || p->threads == 1 || tasks == 1) {
    fn(arena, 0, tasks);
    return;
  }
  p->fn = fn;
  p->arena = arena;
  p->tasks = tasks;
  STORE(&p->pending, p->threads - 1);
  pthread_mutex_lock(&p->mu);
  __atomic_add_fetch(&p->generation, 1, __ATOMIC_ACQ_REL);
  pthread_mutex_unlock(&p->mu);
  pthread_cond_broadcast(&p->work_cv);
  run_slice(p, 0);
  for (spin = 0; spin < TINYRT_POOL_SPIN && LOAD(&p->pending) != 0; ++spin)
    CPU_RELAX();
  if (LOAD(&p->pending) != 0) {
    pthread_mutex_lock(&p->mu);
    while (LOAD(&p->pending) != 0) pthread_cond_wait(&p->done_cv, &p->mu);
    pthread_mutex_unlock(&p->mu);
  }
}
