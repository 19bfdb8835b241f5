/* session.c — validates a model descriptor against the machine and the
 * caller's arena, and runs its steps. */
#include <string.h>

#include "tinyrt.h"
#include "tinyrt_port.h"

#if defined(__x86_64__)
#define THIS_ARCH TINYRT_ARCH_X86_64
#elif defined(__aarch64__)
#define THIS_ARCH TINYRT_ARCH_AARCH64
#elif defined(__arm__)
#define THIS_ARCH TINYRT_ARCH_ARMV7
#else
#define THIS_ARCH 0
#endif

/* ---- message formatting without printf (firmware may not have it) ---- */

typedef struct msg_writer {
  char *buf;
  size_t cap, len;
} msg_writer;

static void msg_str(msg_writer *w, const char *s) {
  while (*s && w->len + 1 < w->cap) w->buf[w->len++] = *s++;
  w->buf[w->len] = '\0';
}

static void msg_u64(msg_writer *w, uint64_t v, unsigned base) {
  char tmp[24];
  int n = 0;
  do {
    unsigned d = (unsigned)(v % base);
    tmp[n++] = (char)(d < 10 ? '0' + d : 'a' + d - 10);
    v /= base;
  } while (v && n < (int)sizeof tmp);
  if (base == 16) msg_str(w, "0x");
  while (n > 0 && w->len + 1 < w->cap) w->buf[w->len++] = tmp[--n];
  w->buf[w->len] = '\0';
}

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

static const struct {
  uint32_t bit;
  const char *name;
} kIsaNames[] = {
    {TINYRT_ISA_X86_AVX2, "avx2"},         {TINYRT_ISA_X86_FMA, "fma"},
    {TINYRT_ISA_X86_AVX512F, "avx512f"},   {TINYRT_ISA_X86_AVX512BW, "avx512bw"},
    {TINYRT_ISA_X86_AVX512VL, "avx512vl"}, {TINYRT_ISA_X86_AVX512DQ, "avx512dq"},
    {TINYRT_ISA_ARM_NEON, "neon"},         {TINYRT_ISA_ARM_VFPV4, "vfpv4"},
    {TINYRT_ISA_A64_ASIMD, "asimd"},       {TINYRT_ISA_X86_F16C, "f16c"},
    {TINYRT_ISA_X86_BMI1, "bmi1"},         {TINYRT_ISA_X86_BMI2, "bmi2"},
    {TINYRT_ISA_X86_POPCNT, "popcnt"},     {TINYRT_ISA_X86_AVX512VNNI, "avx512vnni"},
};

static tinyrt_status fail(tinyrt_session *s, tinyrt_status st,
                          const char *text) {
  msg_writer w = session_msg(s);
  msg_str(&w, text);
  return st;
}

/* ------------------------------------------------------------ checks -- */

static int tensor_desc_ok(const tinyrt_tensor_desc *t, uint64_t arena_bytes) {
  return t->name && (t->rank == 0 || t->dims) &&
         t->arena_offset % TINYRT_ARENA_ALIGN == 0 &&
         t->arena_offset <= arena_bytes && t->bytes <= arena_bytes - t->arena_offset;
}

static tinyrt_status check_model(tinyrt_session *s, const tinyrt_model *m) {
  msg_writer w;
  uint32_t i;
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
  if (m->desc_bytes < sizeof(tinyrt_model))
    return fail(s, TINYRT_ERR_BAD_MODEL, "model descriptor is truncated");
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
      for (i = 0; i < sizeof kIsaNames / sizeof kIsaNames[0]; ++i)
        if (missing & kIsaNames[i].bit) {
          msg_str(&w, " ");
          msg_str(&w, kIsaNames[i].name);
        }
      msg_str(&w, " (compile for a lesser --target)");
      return TINYRT_ERR_CPU_UNSUPPORTED;
    }
  }
  if ((m->num_inputs && !m->inputs) || (m->num_outputs && !m->outputs) ||
      (m->num_steps && !m->steps))
    return fail(s, TINYRT_ERR_BAD_MODEL, "model descriptor has NULL tables");
  for (i = 0; i < m->num_inputs; ++i)
    if (!tensor_desc_ok(&m->inputs[i], m->arena_bytes))
      return fail(s, TINYRT_ERR_BAD_MODEL, "model input lies outside its arena");
  for (i = 0; i < m->num_outputs; ++i)
    if (!tensor_desc_ok(&m->outputs[i], m->arena_bytes))
      return fail(s, TINYRT_ERR_BAD_MODEL, "model output lies outside its arena");
  for (i = 0; i < m->num_steps; ++i)
    if (!m->steps[i].fn || m->steps[i].tasks < 1)
      return fail(s, TINYRT_ERR_BAD_MODEL, "model step without code or tasks");
  return TINYRT_OK;
}

/* -------------------------------------------------------------- API -- */

size_t tinyrt_model_arena_bytes(const tinyrt_model *model) {
  return model && model->magic == TINYRT_ARTIFACT_MAGIC ? (size_t)model->arena_bytes : 0;
}

uint32_t tinyrt_cpu_features(void) { return tinyrt_port_cpu_features(); }

void tinyrt_session_options_init(tinyrt_session_options *options) {
  if (options) memset(options, 0, sizeof *options);
}

tinyrt_status tinyrt_session_init(tinyrt_session *s, const tinyrt_model *model,
                                  void *arena, size_t arena_bytes,
                                  const tinyrt_session_options *options) {
  tinyrt_status st;
  msg_writer w;
  if (!s) return TINYRT_ERR_INVALID_ARGUMENT;
  memset(s, 0, sizeof *s);
  if (!model) return fail(s, TINYRT_ERR_INVALID_ARGUMENT, "model is NULL");
  if (!arena && model->arena_bytes)
    return fail(s, TINYRT_ERR_INVALID_ARGUMENT, "arena is NULL");
  st = check_model(s, model);
  if (st != TINYRT_OK) return st;
  if ((uintptr_t)arena % TINYRT_ARENA_ALIGN != 0) {
    w = session_msg(s);
    msg_str(&w, "arena at ");
    msg_u64(&w, (uintptr_t)arena, 16);
    msg_str(&w, " is not aligned to ");
    msg_u64(&w, TINYRT_ARENA_ALIGN, 10);
    msg_str(&w, " bytes (use TINYRT_ALIGNED_ARENA)");
    return TINYRT_ERR_ARENA_MISALIGNED;
  }
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
  s->pool = options ? options->pool : NULL;
  s->initialized = 1;
  return TINYRT_OK;
}

tinyrt_status tinyrt_session_run(tinyrt_session *s) {
  uint32_t i;
  const tinyrt_model *m;
  if (!s) return TINYRT_ERR_INVALID_ARGUMENT;
  if (!s->initialized)
    return fail(s, TINYRT_ERR_NOT_INITIALIZED, "run before a successful init");
  m = s->model;
  for (i = 0; i < m->num_steps; ++i)
    tinyrt_port_parallel_for(s->pool, m->steps[i].fn, s->arena, m->steps[i].tasks);
  s->message[0] = '\0';
  return TINYRT_OK;
}

uint32_t tinyrt_session_num_inputs(const tinyrt_session *s) {
  return s && s->initialized ? s->model->num_inputs : 0;
}

uint32_t tinyrt_session_num_outputs(const tinyrt_session *s) {
  return s && s->initialized ? s->model->num_outputs : 0;
}

static void make_view(tinyrt_session *s, const tinyrt_tensor_desc *d,
                      tinyrt_tensor *t) {
  t->name = d->name;
  t->data = s->arena + d->arena_offset;
  t->dims = d->dims;
  t->rank = d->rank;
  t->dtype = (tinyrt_dtype)d->dtype;
  t->bytes = (size_t)d->bytes;
}

static tinyrt_status tensor_at(tinyrt_session *s, int outputs, uint32_t index,
                               tinyrt_tensor *t) {
  uint32_t n;
  msg_writer w;
  if (!s || !t) return TINYRT_ERR_INVALID_ARGUMENT;
  if (!s->initialized)
    return fail(s, TINYRT_ERR_NOT_INITIALIZED, "tensor access before a successful init");
  n = outputs ? s->model->num_outputs : s->model->num_inputs;
  if (index >= n) {
    w = session_msg(s);
    msg_str(&w, outputs ? "output index " : "input index ");
    msg_u64(&w, index, 10);
    msg_str(&w, " out of range: the model has ");
    msg_u64(&w, n, 10);
    return TINYRT_ERR_INVALID_ARGUMENT;
  }
  make_view(s, outputs ? &s->model->outputs[index] : &s->model->inputs[index], t);
  s->message[0] = '\0';
  return TINYRT_OK;
}

static tinyrt_status tensor_named(tinyrt_session *s, int outputs,
                                  const char *name, tinyrt_tensor *t) {
  uint32_t i, n;
  const tinyrt_tensor_desc *d;
  msg_writer w;
  if (!s || !t || !name) return TINYRT_ERR_INVALID_ARGUMENT;
  if (!s->initialized)
    return fail(s, TINYRT_ERR_NOT_INITIALIZED, "tensor access before a successful init");
  n = outputs ? s->model->num_outputs : s->model->num_inputs;
  d = outputs ? s->model->outputs : s->model->inputs;
  for (i = 0; i < n; ++i)
    if (strcmp(d[i].name, name) == 0) return tensor_at(s, outputs, i, t);
  w = session_msg(s);
  msg_str(&w, outputs ? "no output named '" : "no input named '");
  msg_str(&w, name);
  msg_str(&w, "'");
  return TINYRT_ERR_NOT_FOUND;
}

tinyrt_status tinyrt_session_input(tinyrt_session *s, uint32_t index, tinyrt_tensor *t) {
  return tensor_at(s, 0, index, t);
}

tinyrt_status tinyrt_session_output(tinyrt_session *s, uint32_t index, tinyrt_tensor *t) {
  return tensor_at(s, 1, index, t);
}

tinyrt_status tinyrt_session_find_input(tinyrt_session *s, const char *name, tinyrt_tensor *t) {
  return tensor_named(s, 0, name, t);
}

tinyrt_status tinyrt_session_find_output(tinyrt_session *s, const char *name, tinyrt_tensor *t) {
  return tensor_named(s, 1, name, t);
}

const char *tinyrt_session_message(const tinyrt_session *s) {
  return s ? s->message : "session is NULL";
}
