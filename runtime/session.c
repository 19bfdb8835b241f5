/* session.c — validates a model descriptor against the machine and the
 * caller's arena, and runs its steps. */
#include <stddef.h>
#include <string.h>

#include "tinyrt.h"
#include "tinyrt_internal.h"
#include "tinyrt_port.h"

#define SESSION_MAGIC 0x53545254u /* "TRTS" */
#define MAX_TABLE (1u << 20)      /* sanity bound of every descriptor table */
#define MAX_STRIDE 1024u          /* sanity bound of a table entry */
#define AT(base, stride, i) ((const void *)((const char *)(base) + (size_t)(i) * (stride)))

#define THIS_ARCH TINYRT_ARCH_NATIVE

/* ---- message formatting without printf (firmware may not have it) ---- */

typedef struct msg_writer {
  char *buf;
  size_t cap, len;
} msg_writer;

static void msg_str(msg_writer *w, const char *s) {
  while (*s && w->len + 1 < w->cap) w->buf[w->len++] = *s++;
  w->buf[w->len] = '\0';
}

/* v in base 10 or 16 (0x-prefixed), at least `width` digits. */
static void msg_num(msg_writer *w, uint64_t v, unsigned base, int width) {
  char tmp[24];
  int n = 0;
  do {
    unsigned d = (unsigned)(v % base);
    tmp[n++] = (char)(d < 10 ? '0' + d : 'a' + d - 10);
    v /= base;
  } while ((v || n < width) && n < (int)sizeof tmp);
  if (base == 16) msg_str(w, "0x");
  while (n > 0 && w->len + 1 < w->cap) w->buf[w->len++] = tmp[--n];
  w->buf[w->len] = '\0';
}

#define msg_u64(w, v, base) msg_num((w), (v), (base), 1)

static msg_writer session_msg(tinyrt_session *s) {
  msg_writer w;
  w.buf = s->message;
  w.cap = sizeof s->message;
  w.len = 0;
  s->message[0] = '\0';
  return w;
}

static const char *arch_name(uint32_t arch) {
  switch (arch) {
    case TINYRT_ARCH_X86_64: return "x86-64";
    case TINYRT_ARCH_ARMV7: return "armv7";
    case TINYRT_ARCH_AARCH64: return "aarch64";
  }
  return "unknown";
}

/* The TINYRT_ISA_* bits' names, bit 0 first, each ended by a NUL ("" for
 * a bit without one); one string, no pointer table (the bare-metal text
 * budget). */
static const char kIsaNames[] =
    "avx2\0fma\0avx512f\0avx512bw\0avx512vl\0avx512dq\0\0\0" /* 0-7 */
    "neon\0vfpv4\0asimd\0asimddp\0asimdhp\0\0\0\0"           /* 8-15 */
    "f16c\0bmi1\0bmi2\0popcnt\0avx512vnni\0avxvnni\0";       /* 16-21 */

static tinyrt_status fail(tinyrt_session *s, tinyrt_status st, const char *text) {
  msg_writer w = session_msg(s);
  msg_str(&w, text);
  return st;
}

/* ------------------------------------------------------------ checks -- */

static int mul_ok(uint64_t *p, uint64_t d) {
#if defined(__GNUC__)
  return !__builtin_mul_overflow(*p, d, p);
#else
  if (d && *p > UINT64_MAX / d) return 0;
  *p *= d;
  return 1;
#endif
}

/* Bytes per element of the dtypes whose size the runtime knows (0: not). */
static const unsigned char kDtypeBytes[17] = {0, 4, 1, 1, 2, 2, 4, 8, 0, 1, 2, 8, 4, 8, 0, 0, 2};

/* Does the tensor entry (of a table `stride` bytes apart) have run-time
 * dimensions (ABI 1.4)? */
static int tensor_has_run_dims(const tinyrt_tensor_desc *t, uint32_t stride) {
  return stride >= sizeof(tinyrt_tensor_desc) && t->dims_min != NULL;
}

/* NULL if the input/output descriptor is sound, else what is wrong. */
static const char *tensor_desc_error(const tinyrt_tensor_desc *t, uint32_t stride, uint64_t arena_bytes) {
  uint64_t known = t->dtype < sizeof kDtypeBytes ? kDtypeBytes[t->dtype] : 0;
  uint64_t n = known ? known : 1;
  uint32_t k;
  if (!t->name) return "has no name";
  if (t->rank > TINYRT_MAX_RANK || (t->rank && !t->dims)) return "has a bad rank or no dims";
  if (t->arena_offset % TINYRT_ARENA_ALIGN || t->arena_offset > arena_bytes || t->bytes > arena_bytes - t->arena_offset)
    return "lies outside its arena";
  for (k = 0; k < t->rank; ++k)
    if (t->dims[k] < 0 || !mul_ok(&n, (uint64_t)t->dims[k])) return "has a bad dim";
  if (known && n != t->bytes) return "has bytes that disagree with its dims";
  if (tensor_has_run_dims(t, stride)) {
    if (!TINYRT_RUNTIME_DIMS) return "has run-time dims (TINYRT_RUNTIME_DIMS=0)";
    if (!known || !t->dim_ids || t->rank == 0 || t->dims_offset % 8 || t->dims_offset > arena_bytes ||
        arena_bytes - t->dims_offset < 8u * t->rank)
      return "has run-time dimensions without their bounds or arena slot";
    for (k = 0; k < t->rank; ++k)
      if (t->dims_min[k] < 0 || t->dims_min[k] > t->dims[k]) return "has a run-time dimension with bad bounds";
  }
  return NULL;
}

/* Alignments of the table entries. */
struct tensor_align {
  char c;
  tinyrt_tensor_desc d;
};
struct step_align {
  char c;
  tinyrt_step_desc d;
};
/* Step entries up to ABI 1.1 (fn, tasks, flags) need only their own
 * alignment: a 1.2 entry's 64-bit field must not refuse older tables. */
struct step11 {
  tinyrt_kernel_fn fn;
  int32_t tasks, flags;
};
struct step11_align {
  char c;
  struct step11 d;
};

/* A table of n entries `stride` bytes apart: a sane size, a stride that
 * covers the fields read, aligned, NULL only when empty. */
static int table_ok(const void *base, uint32_t n, uint32_t stride, size_t min, size_t align) {
  return n <= MAX_TABLE && stride >= min && stride <= MAX_STRIDE && stride % align == 0 &&
         (n == 0 || (base && (uintptr_t)base % align == 0));
}

static tinyrt_status check_tensors(tinyrt_session *s, const tinyrt_model *m, int outputs) {
  uint32_t i, n = outputs ? m->num_outputs : m->num_inputs;
  const void *base = outputs ? (const void *)m->outputs : (const void *)m->inputs;
  const char *err;
  msg_writer w;
  for (i = 0; i < n; ++i)
    if ((err = tensor_desc_error((const tinyrt_tensor_desc *)AT(base, s->tensor_stride, i), s->tensor_stride,
                                 m->arena_bytes)) != NULL) {
      w = session_msg(s);
      msg_str(&w, outputs ? "model output " : "model input ");
      msg_u64(&w, i, 10);
      msg_str(&w, " ");
      msg_str(&w, err);
      return TINYRT_ERR_BAD_MODEL;
    }
  return TINYRT_OK;
}

static tinyrt_status check_model(tinyrt_session *s, const tinyrt_model *m) {
  msg_writer w;
  uint32_t i;
  tinyrt_status st;
  if (m->magic != TINYRT_ARTIFACT_MAGIC) {
    w = session_msg(s);
    msg_str(&w, "not a tinyrt model descriptor: magic is ");
    msg_u64(&w, m->magic, 16);
    return TINYRT_ERR_BAD_MODEL;
  }
  if (m->abi_major != TINYRT_ABI_MAJOR) {
    w = session_msg(s);
    msg_str(&w, "model uses tinyrt ABI ");
    msg_u64(&w, m->abi_major, 10);
    msg_str(&w, ".x, this runtime implements ABI ");
    msg_u64(&w, TINYRT_ABI_MAJOR, 10);
    msg_str(&w, ".x: recompile the model with a matching tinyrt-compile");
    return TINYRT_ERR_ABI_MISMATCH;
  }
  /* ABI 1.0 ends at tensor_desc_bytes; its tables hold the 1.0 structs. */
  if (m->desc_bytes < offsetof(tinyrt_model, tensor_desc_bytes))
    return fail(s, TINYRT_ERR_BAD_MODEL, "model descriptor is truncated");
  s->tensor_stride = TINYRT_TENSOR_DESC_1_3_BYTES; /* the 1.0 entry */
  s->step_stride = TINYRT_STEP_DESC_1_1_BYTES;
  if (m->desc_bytes >= offsetof(tinyrt_model, step_desc_bytes) + sizeof m->step_desc_bytes) {
    s->tensor_stride = m->tensor_desc_bytes;
    s->step_stride = m->step_desc_bytes;
  }
  if (m->arch != THIS_ARCH) {
    w = session_msg(s);
    msg_str(&w, "model was compiled for ");
    msg_str(&w, arch_name(m->arch));
    msg_str(&w, ", this runtime runs on ");
    msg_str(&w, arch_name(THIS_ARCH));
    return TINYRT_ERR_WRONG_ARCH;
  }
  {
    uint32_t missing = m->isa_required & ~tinyrt_port_cpu_features();
    if (missing) {
      w = session_msg(s);
      msg_str(&w, "this CPU lacks features the model was compiled for:");
      const char *name = kIsaNames;
      for (i = 0; name < kIsaNames + sizeof kIsaNames - 1; ++i) {
        if (*name && (missing >> i & 1u)) {
          msg_str(&w, " ");
          msg_str(&w, name);
        }
        while (*name++) {}
      }
      msg_str(&w, " (compile for a lesser --target)");
      return TINYRT_ERR_CPU_UNSUPPORTED;
    }
  }
  if (!table_ok(m->inputs, m->num_inputs, s->tensor_stride, TINYRT_TENSOR_DESC_1_3_BYTES,
                offsetof(struct tensor_align, d)) ||
      !table_ok(m->outputs, m->num_outputs, s->tensor_stride, TINYRT_TENSOR_DESC_1_3_BYTES,
                offsetof(struct tensor_align, d)) ||
      !table_ok(m->steps, m->num_steps, s->step_stride, TINYRT_STEP_DESC_1_1_BYTES,
                s->step_stride >= sizeof(tinyrt_step_desc) ? offsetof(struct step_align, d)
                                                           : offsetof(struct step11_align, d))) {
    w = session_msg(s);
    msg_str(&w, "model has a bad table (count, NULL, alignment or stride: tensors ");
    msg_u64(&w, s->tensor_stride, 10);
    msg_str(&w, ", steps ");
    msg_u64(&w, s->step_stride, 10);
    msg_str(&w, " bytes)");
    return TINYRT_ERR_BAD_MODEL;
  }
  if ((st = check_tensors(s, m, 0)) != TINYRT_OK || (st = check_tensors(s, m, 1)) != TINYRT_OK) return st;
  for (i = 0; i < m->num_steps; ++i) {
    const tinyrt_step_desc *d = (const tinyrt_step_desc *)AT(m->steps, s->step_stride, i);
    uint32_t flags = (uint32_t)d->flags;
    if (flags & ~TINYRT_STEP_KNOWN_FLAGS) return fail(s, TINYRT_ERR_BAD_MODEL, "model step with unknown flags");
    /* A branch: a condition byte inside the arena (the fields are 1.3's). */
    if ((flags & TINYRT_STEP_GUARDED) &&
        (s->step_stride < sizeof(tinyrt_step_desc) || d->cond_offset >= m->arena_bytes))
      return fail(s, TINYRT_ERR_BAD_MODEL, "model branch condition outside the arena");
    /* A branch error: no code, a message, and a guard. */
    if (flags & TINYRT_STEP_FAIL) {
      if (!(flags & TINYRT_STEP_GUARDED) || (flags & TINYRT_STEP_CALL) || !d->call_node)
        return fail(s, TINYRT_ERR_BAD_MODEL, "model branch error without guard or message");
      continue;
    }
    if (!d->fn || d->tasks < 1) return fail(s, TINYRT_ERR_BAD_MODEL, "model step without code or tasks");
    /* A custom-op call: one task and a status slot inside the arena. */
    if ((d->flags & TINYRT_STEP_CALL) &&
        (s->step_stride < sizeof(tinyrt_step_desc) || d->tasks != 1 || !d->call_node || d->status_offset % 4 != 0 ||
         d->status_offset > m->arena_bytes || m->arena_bytes - d->status_offset < 4))
      return fail(s, TINYRT_ERR_BAD_MODEL, "model call step without a status slot in the arena");
  }
  return TINYRT_OK;
}

/* ------------------------------------------------- run-time dimensions -- */

static const tinyrt_tensor_desc *desc_at(const tinyrt_session *s, int outputs, uint32_t i) {
  return (const tinyrt_tensor_desc *)AT(outputs ? (const void *)s->model->outputs : (const void *)s->model->inputs,
                                        s->tensor_stride, i);
}

#if TINYRT_RUNTIME_DIMS
/* "input 'x' axis K" into w. */
static void msg_axis(msg_writer *w, const tinyrt_tensor_desc *d, uint32_t k) {
  msg_str(w, "input '");
  msg_str(w, d->name);
  msg_str(w, "' axis ");
  msg_u64(w, k, 10);
}

/* The actual dimensions of a tensor with run-time dimensions (in the arena). */
static int64_t *actual_dims(const tinyrt_session *s, const tinyrt_tensor_desc *d) {
  return (int64_t *)(void *)(s->arena + d->dims_offset);
}

/* Every input and output takes its upper bounds (init); notes whether the
 * model has run-time dimensions at all (a fixed model's runs skip them). */
static void reset_dims(tinyrt_session *s) {
  uint32_t i, k;
  int out;
  for (out = 0; out < 2; ++out)
    for (i = 0; i < (out ? s->model->num_outputs : s->model->num_inputs); ++i) {
      const tinyrt_tensor_desc *d = desc_at(s, out, i);
      if (!tensor_has_run_dims(d, s->tensor_stride)) continue;
      s->has_dims = 1;
      for (k = 0; k < d->rank; ++k) actual_dims(s, d)[k] = d->dims[k];
    }
}

/* Moves a tensor's rows between its dense layout at its actual dims and
 * the layout of its upper bounds (the one the generated code uses), in
 * place: to_bounds for an input before a run (rows from the last, each
 * moving up), else for an output after it (rows from the first). Sizes fit
 * size_t: they lie inside the arena. */
static void relayout(uint8_t *data, const tinyrt_tensor_desc *d, const int64_t *dims, int to_bounds) {
  size_t ds[TINYRT_MAX_RANK], ps[TINYRT_MAX_RANK], rows = 1, r, j, q, inner, dense, padded;
  uint32_t k, n = d->rank;
  int differ = 0;
  if (n < 2) return; /* one axis: one layout */
  ds[n - 1] = ps[n - 1] = kDtypeBytes[d->dtype];
  for (k = n - 1; k-- > 0;) {
    ds[k] = ds[k + 1] * (size_t)dims[k + 1];
    ps[k] = ps[k + 1] * (size_t)d->dims[k + 1];
    differ |= dims[k] > 1 && ds[k] != ps[k];
    rows *= (size_t)dims[k];
  }
  /* Blocks of the rows along axis n - 2: one division chain per block
   * (divisions cost tens of cycles each), its rows one stride apart. */
  inner = (size_t)dims[n - 2];
  for (r = 0; differ && inner && r < rows / inner; ++r) {
    q = to_bounds ? rows / inner - 1 - r : r;
    dense = padded = 0;
    for (k = n - 2; k-- > 0;) {
      size_t i = q % (size_t)dims[k];
      q /= (size_t)dims[k];
      dense += i * ds[k];
      padded += i * ps[k];
    }
    for (j = 0; j < inner; ++j) {
      size_t at = to_bounds ? inner - 1 - j : j, dn = dense + at * ds[n - 2], pd = padded + at * ps[n - 2];
      memmove(data + (to_bounds ? pd : dn), data + (to_bounds ? dn : pd), ds[n - 2]);
    }
  }
}

/* Before a run (to_bounds): the inputs' dims agree where they are one
 * dimension, and their elements move to the layout of their bounds; after
 * it, the outputs' elements move back. */
static tinyrt_status relayout_all(tinyrt_session *s, int to_bounds) {
  uint32_t i, j, k, l, n = to_bounds ? s->model->num_inputs : s->model->num_outputs;
  for (i = 0; to_bounds && i < n; ++i) {
    const tinyrt_tensor_desc *a = desc_at(s, 0, i);
    for (j = 0; tensor_has_run_dims(a, s->tensor_stride) && j < i; ++j) {
      const tinyrt_tensor_desc *b = desc_at(s, 0, j);
      for (k = 0; tensor_has_run_dims(b, s->tensor_stride) && k < a->rank; ++k)
        for (l = 0; l < b->rank; ++l)
          if (a->dim_ids[k] >= 0 && a->dim_ids[k] == b->dim_ids[l] && actual_dims(s, a)[k] != actual_dims(s, b)[l]) {
            msg_writer w = session_msg(s);
            msg_axis(&w, a, k);
            msg_str(&w, " and ");
            msg_axis(&w, b, l);
            msg_str(&w, " are the same dimension but differ");
            return TINYRT_ERR_SHAPE;
          }
    }
  }
  for (i = 0; i < n; ++i) {
    const tinyrt_tensor_desc *a = desc_at(s, !to_bounds, i);
    if (tensor_has_run_dims(a, s->tensor_stride)) relayout(s->arena + a->arena_offset, a, actual_dims(s, a), to_bounds);
  }
  return TINYRT_OK;
}
#else
#define reset_dims(s) ((void)0)
#define relayout_all(s, to_bounds) TINYRT_OK
#endif

/* -------------------------------------------------------------- API -- */

size_t tinyrt_model_arena_bytes(const tinyrt_model *model) {
  return model && model->magic == TINYRT_ARTIFACT_MAGIC ? (size_t)model->arena_bytes : 0;
}

uint32_t tinyrt_cpu_features(void) { return tinyrt_port_cpu_features(); }

void tinyrt_session_options_init(tinyrt_session_options *options) {
  if (options) memset(options, 0, sizeof *options);
}

/* Nonzero if `s` was initialized at its own address. */
static int session_valid(const tinyrt_session *s) { return s->magic == SESSION_MAGIC && s->self == s; }

/* Takes the session for one call: OK, NOT_INITIALIZED (message set) or BUSY
 * (message untouched: another thread owns the session). */
static tinyrt_status enter(tinyrt_session *s) {
  if (!session_valid(s))
    return fail(s, TINYRT_ERR_NOT_INITIALIZED,
                "session not initialized (init failed or was not called, or this is a copy)");
  return TINYRT_TRY_LOCK(&s->busy) ? TINYRT_ERR_BUSY : TINYRT_OK;
}

tinyrt_status tinyrt_session_init(tinyrt_session *s, const tinyrt_model *model, void *arena, size_t arena_bytes,
                                  const tinyrt_session_options *options) {
  tinyrt_status st;
  msg_writer w;
  tinyrt_pool *pool = options ? options->pool : NULL;
  if (!s) return TINYRT_ERR_INVALID_ARGUMENT;
  memset(s, 0, sizeof *s);
  if (!model) return fail(s, TINYRT_ERR_INVALID_ARGUMENT, "model is NULL");
  if (!arena && model->arena_bytes) return fail(s, TINYRT_ERR_INVALID_ARGUMENT, "arena is NULL");
  st = check_model(s, model);
  if (st != TINYRT_OK) return st;
  if (pool && !tinyrt_internal_pool_valid(pool))
    return fail(s, TINYRT_ERR_NOT_INITIALIZED, "options.pool is not a live tinyrt pool");
  if ((uintptr_t)arena % TINYRT_ARENA_ALIGN != 0) {
    w = session_msg(s);
    msg_str(&w, "arena at ");
    msg_u64(&w, (uintptr_t)arena, 16);
    msg_str(&w, " is not aligned to ");
    msg_u64(&w, TINYRT_ARENA_ALIGN, 10);
    msg_str(&w, " bytes (use TINYRT_ALIGNED_ARENA)");
    return TINYRT_ERR_ARENA_MISALIGNED;
  }
  /* [arena, arena + arena_bytes) must be a range of addresses: one that
     wraps past the top of the address space is no buffer. */
  if (arena && arena_bytes > UINTPTR_MAX - (uintptr_t)arena)
    return fail(s, TINYRT_ERR_INVALID_ARGUMENT, "arena wraps the address space");
  if ((uint64_t)arena_bytes < model->arena_bytes) {
    w = session_msg(s);
    msg_str(&w, "arena too small: model '");
    msg_str(&w, model->name ? model->name : "?");
    msg_str(&w, "' needs ");
    msg_u64(&w, model->arena_bytes, 10);
    msg_str(&w, " bytes, got ");
    msg_u64(&w, arena_bytes, 10);
    return TINYRT_ERR_ARENA_TOO_SMALL;
  }
  s->model = model;
  s->arena = (uint8_t *)arena;
  s->arena_bytes = arena_bytes;
  reset_dims(s);
  s->pool = pool;
  s->on_step = options ? options->on_step : NULL;
  s->on_step_user = options ? options->on_step_user : NULL;
  s->self = s;
  s->magic = SESSION_MAGIC;
  return TINYRT_OK;
}

typedef char shape_error_follows_branch_error[TINYRT_ERR_SHAPE == TINYRT_ERR_BRANCH + 1 ? 1 : -1];

tinyrt_status tinyrt_session_run(tinyrt_session *s) {
  uint32_t i;
  const tinyrt_model *m;
  tinyrt_status st;
  if (!s) return TINYRT_ERR_INVALID_ARGUMENT;
  if ((st = enter(s)) != TINYRT_OK) return st;
  if (s->pool && (st = tinyrt_internal_pool_acquire(s->pool)) != TINYRT_OK) {
    fail(s, st, st == TINYRT_ERR_BUSY ? "the pool is running another session" : "the session's pool was destroyed");
    TINYRT_UNLOCK(&s->busy);
    return st;
  }
  m = s->model;
  if (s->has_dims && (st = relayout_all(s, 1)) != TINYRT_OK) {
    if (s->pool) tinyrt_internal_pool_release(s->pool);
    TINYRT_UNLOCK(&s->busy);
    return st;
  }
  for (i = 0; i < m->num_steps; ++i) {
    const tinyrt_step_desc *d = (const tinyrt_step_desc *)AT(m->steps, s->step_stride, i);
    /* A step of a branch not taken is skipped (no hook call). */
    if ((d->flags & TINYRT_STEP_GUARDED) && (s->arena[d->cond_offset] != 0) != (d->cond_expect != 0)) continue;
    if (d->flags & TINYRT_STEP_FAIL) {
      msg_writer w = session_msg(s);
      msg_str(&w, "step ");
      msg_u64(&w, i, 10);
      msg_str(&w, ": ");
      msg_str(&w, d->call_node);
      if (s->pool) tinyrt_internal_pool_release(s->pool);
      TINYRT_UNLOCK(&s->busy);
      /* TINYRT_ERR_SHAPE for a test of the run's extents (ABI 1.5): the
       * code after TINYRT_ERR_BRANCH, as the typedef below checks. */
      return (tinyrt_status)(TINYRT_ERR_BRANCH + ((d->flags & TINYRT_STEP_SHAPE_ERROR) != 0));
    }
    if (s->on_step) s->on_step(s->on_step_user, i, 1);
    if (d->flags & TINYRT_STEP_CALL) {
      /* A custom op: called on this thread; its status stops the run. */
      int32_t call_st;
      d->fn(s->arena, 0, 1);
      memcpy(&call_st, s->arena + d->status_offset, sizeof call_st);
      if (s->on_step) s->on_step(s->on_step_user, i, 0);
      if (call_st != TINYRT_OK) {
        msg_writer w = session_msg(s);
        msg_str(&w, "custom op node '");
        msg_str(&w, d->call_node);
        msg_str(&w, "' failed with status ");
        msg_u64(&w, (uint64_t)(uint32_t)call_st, 10);
        msg_str(&w, " (step ");
        msg_u64(&w, i, 10);
        msg_str(&w, ")");
        if (s->pool) tinyrt_internal_pool_release(s->pool);
        TINYRT_UNLOCK(&s->busy);
        return (tinyrt_status)call_st;
      }
      continue;
    }
    tinyrt_internal_pool_step(s->pool, d->fn, s->arena, d->tasks);
    if (s->on_step) s->on_step(s->on_step_user, i, 0);
  }
  if (s->pool) tinyrt_internal_pool_release(s->pool);
  if (s->has_dims) (void)relayout_all(s, 0);
  s->message[0] = '\0';
  TINYRT_UNLOCK(&s->busy);
  return TINYRT_OK;
}

uint32_t tinyrt_session_num_inputs(const tinyrt_session *s) { return s && session_valid(s) ? s->model->num_inputs : 0; }

uint32_t tinyrt_session_num_outputs(const tinyrt_session *s) {
  return s && session_valid(s) ? s->model->num_outputs : 0;
}

/* The tensor `index` of the inputs/outputs, or if name != NULL the one of
 * that name. */
static tinyrt_status tensor_view(tinyrt_session *s, int outputs, uint32_t index, const char *name, tinyrt_tensor *t) {
  uint32_t n;
  msg_writer w;
  const tinyrt_tensor_desc *d;
  tinyrt_status st;
  if (!s || !t) return TINYRT_ERR_INVALID_ARGUMENT;
  if ((st = enter(s)) != TINYRT_OK) return st;
  n = outputs ? s->model->num_outputs : s->model->num_inputs;
  if (name)
    for (index = 0; index < n && strcmp(desc_at(s, outputs, index)->name, name) != 0; ++index) {}
  if (index >= n) {
    w = session_msg(s);
    if (name) {
      msg_str(&w, outputs ? "no output named '" : "no input named '");
      msg_str(&w, name);
      msg_str(&w, "'");
      st = TINYRT_ERR_NOT_FOUND;
    } else {
      msg_str(&w, outputs ? "output index " : "input index ");
      msg_u64(&w, index, 10);
      msg_str(&w, " out of range: the model has ");
      msg_u64(&w, n, 10);
      st = TINYRT_ERR_INVALID_ARGUMENT;
    }
  } else {
    d = desc_at(s, outputs, index);
    t->name = d->name;
    /* No arena (a model of 0 arena bytes): every offset is 0, and NULL + 0
     * is undefined in C. */
    t->data = s->arena ? s->arena + d->arena_offset : NULL;
    t->dims = d->dims;
    t->rank = d->rank;
    t->dtype = (tinyrt_dtype)d->dtype;
    t->bytes = (size_t)d->bytes;
#if TINYRT_RUNTIME_DIMS
    if (tensor_has_run_dims(d, s->tensor_stride)) { /* the actual dims, and their bytes */
      uint32_t k;
      t->dims = actual_dims(s, d);
      t->bytes = kDtypeBytes[d->dtype];
      for (k = 0; k < d->rank; ++k) t->bytes *= (size_t)t->dims[k];
    }
#endif
    s->message[0] = '\0';
  }
  TINYRT_UNLOCK(&s->busy);
  return st;
}

tinyrt_status tinyrt_session_input(tinyrt_session *s, uint32_t index, tinyrt_tensor *t) {
  return tensor_view(s, 0, index, NULL, t);
}

tinyrt_status tinyrt_session_output(tinyrt_session *s, uint32_t index, tinyrt_tensor *t) {
  return tensor_view(s, 1, index, NULL, t);
}

#if TINYRT_RUNTIME_DIMS
tinyrt_status tinyrt_session_set_input_dims(tinyrt_session *s, uint32_t index, const int64_t *dims, uint32_t rank) {
  const tinyrt_tensor_desc *d;
  tinyrt_status st;
  msg_writer w;
  uint32_t k;
  if (!s || (!dims && rank)) return TINYRT_ERR_INVALID_ARGUMENT;
  if ((st = enter(s)) != TINYRT_OK) return st;
  w = session_msg(s);
  if (index >= s->model->num_inputs) {
    msg_str(&w, "no input ");
    msg_u64(&w, index, 10);
    TINYRT_UNLOCK(&s->busy);
    return TINYRT_ERR_INVALID_ARGUMENT;
  }
  d = desc_at(s, 0, index);
  if (rank != d->rank) {
    msg_str(&w, "input '");
    msg_str(&w, d->name);
    msg_str(&w, "' has rank ");
    msg_u64(&w, d->rank, 10);
    st = TINYRT_ERR_SHAPE;
  }
  for (k = 0; st == TINYRT_OK && k < rank; ++k) {
    int64_t lo = tensor_has_run_dims(d, s->tensor_stride) ? d->dims_min[k] : d->dims[k], hi = d->dims[k];
    if (dims[k] < lo || dims[k] > hi) {
      msg_axis(&w, d, k);
      msg_str(&w, ": ");
      msg_u64(&w, dims[k] < 0 ? 0 - (uint64_t)dims[k] : (uint64_t)dims[k], 10);
      msg_str(&w, dims[k] < 0 ? " below 0" : " outside ");
      msg_u64(&w, (uint64_t)lo, 10);
      msg_str(&w, ":");
      msg_u64(&w, (uint64_t)hi, 10);
      st = TINYRT_ERR_SHAPE;
    }
  }
#if TINYRT_RUNTIME_DIMS
  if (st == TINYRT_OK && tensor_has_run_dims(d, s->tensor_stride))
    for (k = 0; k < rank; ++k) actual_dims(s, d)[k] = dims[k];
#endif
  TINYRT_UNLOCK(&s->busy);
  return st;
}
#else
/* Built without run-time dimensions (TINYRT_RUNTIME_DIMS=0): no model here
 * has any, and the call is not supported. */
tinyrt_status tinyrt_session_set_input_dims(tinyrt_session *s, uint32_t index, const int64_t *dims, uint32_t rank) {
  (void)index;
  (void)dims;
  (void)rank;
  return s ? TINYRT_ERR_UNSUPPORTED : TINYRT_ERR_INVALID_ARGUMENT;
}
#endif

tinyrt_status tinyrt_session_find_input(tinyrt_session *s, const char *name, tinyrt_tensor *t) {
  return name ? tensor_view(s, 0, 0, name, t) : TINYRT_ERR_INVALID_ARGUMENT;
}

tinyrt_status tinyrt_session_find_output(tinyrt_session *s, const char *name, tinyrt_tensor *t) {
  return name ? tensor_view(s, 1, 0, name, t) : TINYRT_ERR_INVALID_ARGUMENT;
}

/* ------------------------------------------------------------ verify -- */

#define FNV64_OFFSET 0xcbf29ce484222325ull
#define FNV64_PRIME 0x100000001b3ull

/* FNV-1a 64, continued from `h` over n bytes (one xor and one multiply per
 * byte, no table: small and cheap on a microcontroller). */
static uint64_t fnv1a64(uint64_t h, const uint8_t *p, size_t n) {
  while (n--) {
    h ^= *p++;
    h *= FNV64_PRIME;
  }
  return h;
}

struct weights_align {
  char c;
  tinyrt_weights_range d;
};

tinyrt_status tinyrt_session_verify(tinyrt_session *s) {
  const tinyrt_model *m;
  const tinyrt_weights_range *r;
  uint64_t h = FNV64_OFFSET, total = 0;
  uint32_t i = 0;
  tinyrt_status st;
  msg_writer w;
  if (!s) return TINYRT_ERR_INVALID_ARGUMENT;
  if ((st = enter(s)) != TINYRT_OK) return st;
  m = s->model;
  w = session_msg(s);
  if (m->desc_bytes < offsetof(tinyrt_model, weights_range_bytes) + sizeof m->weights_range_bytes) {
    msg_str(&w, "model descriptor (ABI 1.");
    msg_u64(&w, m->abi_minor, 10);
    msg_str(&w, ") records no weights checksum: nothing verified");
    st = TINYRT_ERR_UNSUPPORTED;
  } else {
    if (table_ok(m->weights, m->num_weights, m->weights_range_bytes, sizeof *r, offsetof(struct weights_align, d)))
      for (; i < m->num_weights; ++i) {
        r = (const tinyrt_weights_range *)AT(m->weights, m->weights_range_bytes, i);
        /* total <= weights_bytes holds here, so the subtraction cannot wrap */
        if ((r->bytes && !r->data) || r->bytes > m->weights_bytes - total ||
            r->bytes > (uint64_t)(UINTPTR_MAX - (uintptr_t)r->data))
          break;
        h = fnv1a64(h, (const uint8_t *)r->data, (size_t)r->bytes);
        total += r->bytes;
      }
    if (i < m->num_weights || total != m->weights_bytes) {
      msg_str(&w, "model descriptor has a bad weights table (at range ");
      msg_u64(&w, i, 10);
      msg_str(&w, ")");
      st = TINYRT_ERR_BAD_MODEL;
    } else if (h != m->weights_checksum) {
      msg_str(&w, "weights checksum mismatch: expected ");
      msg_num(&w, m->weights_checksum, 16, 16);
      msg_str(&w, ", found ");
      msg_num(&w, h, 16, 16);
      msg_str(&w, " (FNV-1a 64 of ");
      msg_u64(&w, total, 10);
      msg_str(&w, " bytes)");
      st = TINYRT_ERR_CORRUPT;
    }
  }
  TINYRT_UNLOCK(&s->busy);
  return st;
}

const char *tinyrt_session_message(const tinyrt_session *s) { return s ? s->message : "session is NULL"; }
