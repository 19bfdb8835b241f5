// fuzz_runtime_api — the runtime's C API under fuzzed model descriptors and
// fuzzed call sequences. Every call must return a status (or the documented
// value) and never crash or touch memory it does not own; the runtime is
// built with ASan+UBSan here, and every table the descriptor declares is
// allocated with exactly the bytes it declares, so a read past what the
// descriptor says is a sanitizer report.
//
// What C cannot check is kept out, as docs/SECURITY.md and abi/tinyrt.h
// say: the harness never lies about memory (a pointer in the descriptor
// points at as many bytes as the descriptor says, strings end in NUL, the
// arena and pool storage are as large as the caller claims), never creates
// a pool in storage that holds a live pool, and never forges a session's
// or pool's magic and address. Everything else is fuzzed: every descriptor
// field (magic, ABI version, size, architecture, ISA bits, counts, strides,
// alignment, tensor names, ranks, dims, dtypes, offsets and sizes, steps
// and task counts, custom-op call steps and their status slots, the
// weights table and checksum), and sequences of init, run, verify,
// input/output lookups by index and name, messages, pool create, destroy,
// spin and thread count, with NULLs, wrong indices, misaligned or short
// arenas and storage, copied and clobbered sessions and pools, destroyed
// pools, and calls made from inside a run (through the step hook) that must
// answer TINYRT_ERR_BUSY; branch steps (ABI 1.3) with their condition
// bytes, which the harness sets as an application sets its inputs.
//
// Oracles beyond "no crash": a status is one of the enum's values (or the
// custom op's own status); calls on a session that was never initialized, is
// a copy or was clobbered answer NOT_INITIALIZED; a run calls exactly the
// steps its condition bytes select, in order, stops at a branch error
// (TINYRT_ERR_BRANCH) or a failed custom op, and covers each step's tasks
// exactly once, with the session's arena; the hook sees a begin/end pair
// for each step that ran; views point
// inside the arena at the descriptor's offsets; lookups by name find the
// first tensor of that name; verify answers OK exactly when the weights
// table is sound and its checksum right (for ABI >= 1.2 descriptors).
#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "tinyrt.h"

extern "C" int fuzz_session_run(tinyrt_session *s);  // fuzz_runtime_c.c

namespace {

[[noreturn]] void finding(const std::string &what) {
  fprintf(stderr, "\n==tinyrt fuzz finding== %s\n", what.c_str());
  fflush(stderr);
  abort();
}
#define EXPECT(cond, what)                                                                           \
  do {                                                                                               \
    if (!(cond)) finding(std::string(what) + " (" #cond ", line " + std::to_string(__LINE__) + ")"); \
  } while (0)

// TINYRT_FUZZ_TRACE=1 prints each call (to read a crash input).
bool g_trace = false;
void trace(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void trace(const char *fmt, ...) {
  if (!g_trace) return;
  va_list ap;
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
}

bool known_status(int st) { return st >= TINYRT_OK && st <= TINYRT_ERR_BRANCH; }

// ----------------------------------------------------------- buffers --
// Exactly `bytes` bytes (ASan reports any access past them) at an address
// that is `misalign` bytes past a 64-byte boundary.
struct Buf {
  void *base = nullptr;
  uint8_t *p = nullptr;
  size_t bytes = 0;
  Buf() = default;
  Buf(size_t n, size_t misalign = 0) : bytes(n) {
    size_t total = std::max<size_t>(n + misalign, 1);
    if (posix_memalign(&base, 64, total) != 0) abort();
    p = static_cast<uint8_t *>(base) + misalign;
    memset(base, 0, total);
  }
  Buf(const Buf &) = delete;
  ~Buf() { free(base); }
};

// --------------------------------------------------------- the model --
constexpr int kMaxSteps = 8;

struct StepPlan {
  int32_t tasks = 1;
  bool call = false;
  uint64_t status_offset = 0;
  int32_t call_status = 0;  // what the custom op stores
  // ABI 1.3 branches: the step runs only when the byte at cond_offset is
  // nonzero == expect; a FAIL step stops the run when reached.
  bool guarded = false, fail = false;
  uint64_t cond_offset = 0;
  uint32_t expect = 0;
};

// The arena's first kCondBytes bytes hold the branch conditions: the
// harness's kernels never write them (only custom-op calls may, their
// status), so which steps run is known before the run (expected_run).
constexpr uint64_t kCondBytes = 64;

struct Model {
  std::unique_ptr<Buf> desc;
  std::vector<std::unique_ptr<Buf>> keep;  // tables, names, dims, weights
  const tinyrt_model *m = nullptr;
  uint32_t desc_bytes = 0;
  uint32_t tensor_stride = 0, step_stride = 0;
  std::vector<std::string> in_names, out_names;  // of entries with names
  StepPlan steps[kMaxSteps];
  uint32_t num_steps = 0;
  bool weights_sound = false;  // weights table consistent (verify can only say CORRUPT or OK)
  bool checksum_right = false;
};

// What one run records.
struct RunLog {
  std::mutex mu;
  const uint8_t *arena = nullptr;
  uint64_t arena_bytes = 0;  // the model's
  std::vector<std::pair<int32_t, int32_t>> ranges[kMaxSteps];
  std::vector<int> order;                      // steps in the order their first chunk ran
  std::vector<std::pair<uint32_t, int>> hook;  // (step, begin)
};

Model *g_model = nullptr;
RunLog *g_run = nullptr;

template <int I>
void kernel(uint8_t *arena, int32_t b, int32_t e) {
  RunLog *r = g_run;
  EXPECT(r != nullptr, "a kernel ran outside tinyrt_session_run");
  EXPECT(arena == r->arena, "a kernel got another arena than the session's");
  EXPECT(0 <= b && b < e && e <= g_model->steps[I].tasks, "a kernel got a task range outside [0, tasks)");
  // Generated code writes its arena: touch some of it (the model's size),
  // never the condition bytes.
  if (r->arena_bytes > kCondBytes)
    for (int32_t t = b; t < e && t < b + 16; ++t)
      arena[kCondBytes + (uint64_t)t * 61 % (r->arena_bytes - kCondBytes)] ^= 1;
  std::lock_guard<std::mutex> lock(r->mu);
  if (r->ranges[I].empty()) r->order.push_back(I);
  r->ranges[I].push_back({b, e});
}

template <int I>
void call_kernel(uint8_t *arena, int32_t b, int32_t e) {
  RunLog *r = g_run;
  EXPECT(r != nullptr && arena == r->arena, "a custom op call got another arena than the session's");
  EXPECT(b == 0 && e == 1, "a custom op call step got a task range other than [0, 1)");
  const StepPlan &s = g_model->steps[I];
  EXPECT(r->arena_bytes >= 4 && s.status_offset <= r->arena_bytes - 4,
         "a call step ran whose status slot is outside the arena");
  memcpy(arena + s.status_offset, &s.call_status, 4);
  std::lock_guard<std::mutex> lock(r->mu);
  r->order.push_back(I);
  r->ranges[I].push_back({b, e});
}

template <int... I>
std::pair<tinyrt_kernel_fn, tinyrt_kernel_fn> fns(int i, std::integer_sequence<int, I...>) {
  tinyrt_kernel_fn k[] = {kernel<I>...};
  tinyrt_kernel_fn c[] = {call_kernel<I>...};
  return {k[i], c[i]};
}

uint64_t fnv1a64(uint64_t h, const uint8_t *p, size_t n) {
  while (n--) {
    h ^= *p++;
    h *= 0x100000001b3ull;
  }
  return h;
}

constexpr uint32_t kDesc10 = offsetof(tinyrt_model, tensor_desc_bytes);
constexpr uint32_t kDesc11 = offsetof(tinyrt_model, options_hash);
constexpr uint32_t kDesc12 = sizeof(tinyrt_model);

std::string fuzz_name(FuzzedDataProvider &f) {
  switch (f.ConsumeIntegralInRange(0, 3)) {
    case 0: return "x";
    case 1: return "y";
    case 2: return std::string(f.ConsumeIntegralInRange<size_t>(0, 300), 'n');
    default: return f.ConsumeRandomLengthString(40).c_str();  // up to a NUL, as C sees it
  }
}

// A NUL-terminated copy of s kept alive by the model.
const char *keep_str(Model &md, const std::string &s) {
  md.keep.push_back(std::make_unique<Buf>(s.size() + 1));
  memcpy(md.keep.back()->p, s.c_str(), s.size() + 1);
  return reinterpret_cast<const char *>(md.keep.back()->p);
}

// Above these the runtime refuses a table before reading it (its sanity
// bounds, runtime/session.c MAX_TABLE and MAX_STRIDE).
constexpr uint32_t kRefusedCount = (1u << 20) + 1, kRefusedStride = 1025;

// A table of n entries `stride` apart, or NULL, or misaligned. A table the
// runtime must refuse before reading (count or stride above its bounds)
// gets a small buffer: a read would be reported.
uint8_t *make_table(Model &md, FuzzedDataProvider &f, uint32_t n, uint32_t stride) {
  int kind = f.ConsumeIntegralInRange(0, 15);
  if (kind == 0) return nullptr;
  if (n > 4096 && n < kRefusedCount) abort();  // never generated: too big to allocate per input
  size_t bytes = n >= kRefusedCount || stride >= kRefusedStride ? 64 : (size_t)n * stride;
  size_t misalign = kind == 1 ? f.ConsumeIntegralInRange(1, 7) : 0;
  md.keep.push_back(std::make_unique<Buf>(bytes, misalign));
  return md.keep.back()->p;
}

void fill_tensor(Model &md, FuzzedDataProvider &f, uint8_t *at, uint32_t stride, uint64_t arena,
                 std::vector<std::string> *names) {
  tinyrt_tensor_desc t;
  memset(&t, 0, sizeof t);
  bool have_name = f.ConsumeIntegralInRange(0, 15) != 0;
  std::string name = fuzz_name(f);
  t.name = have_name ? keep_str(md, name) : nullptr;
  names->push_back(have_name ? name : std::string("\xff<null>"));
  int r = f.ConsumeIntegralInRange(0, 15);
  t.rank = r < 12 ? r % 5 : r == 12 ? TINYRT_MAX_RANK : r == 13 ? TINYRT_MAX_RANK + 1 : f.ConsumeIntegral<uint32_t>();
  static const uint32_t dtypes[] = {1, 2, 3, 4, 5, 6, 7, 9, 10, 11, 12, 13, 16, 0, 8, 14, 15, 17, 255};
  t.dtype = f.ConsumeBool() ? 1 : dtypes[f.ConsumeIntegralInRange<size_t>(0, sizeof dtypes / sizeof *dtypes - 1)];
  static const unsigned char eb[17] = {0, 4, 1, 1, 2, 2, 4, 8, 0, 1, 2, 8, 4, 8, 0, 0, 2};
  uint64_t elems = 1;
  bool overflow = false;
  if (t.rank <= TINYRT_MAX_RANK + 1 && f.ConsumeIntegralInRange(0, 15)) {
    md.keep.push_back(std::make_unique<Buf>(sizeof(int64_t) * (t.rank ? t.rank : 1)));
    int64_t *dims = reinterpret_cast<int64_t *>(md.keep.back()->p);
    for (uint32_t k = 0; k < t.rank; ++k) {
      int d = f.ConsumeIntegralInRange(0, 20);
      dims[k] = d < 16    ? d % 5
                : d == 16 ? -1
                : d == 17 ? INT64_MAX
                : d == 18 ? (INT64_C(1) << 32)
                          : f.ConsumeIntegral<int64_t>();
      if (dims[k] >= 0 && !__builtin_mul_overflow(elems, (uint64_t)dims[k], &elems)) continue;
      overflow = true;
    }
    t.dims = dims;
  }
  uint64_t sz = overflow ? 0 : elems * (t.dtype < 17 ? eb[t.dtype] : 1);
  switch (f.ConsumeIntegralInRange(0, 7)) {
    case 0: t.bytes = f.ConsumeIntegral<uint64_t>(); break;
    case 1: t.bytes = sz + 1; break;
    default: t.bytes = sz;
  }
  switch (f.ConsumeIntegralInRange(0, 7)) {
    case 0: t.arena_offset = f.ConsumeIntegral<uint64_t>(); break;
    case 1: t.arena_offset = arena; break;
    case 2: t.arena_offset = 64 * f.ConsumeIntegralInRange<uint64_t>(0, 64) + f.ConsumeIntegralInRange(0, 1); break;
    default: t.arena_offset = arena > t.bytes ? (arena - t.bytes) / 64 * 64 : 0;
  }
  memcpy(at, &t, std::min<size_t>(stride, sizeof t));
}

// Builds a descriptor from the input; the runtime is the judge of whether
// it is valid.
void make_model(Model &md, FuzzedDataProvider &f) {
  tinyrt_model m;
  memset(&m, 0, sizeof m);
  m.magic = f.ConsumeIntegralInRange(0, 31) ? TINYRT_ARTIFACT_MAGIC : f.ConsumeIntegral<uint32_t>();
  m.abi_major = f.ConsumeIntegralInRange(0, 31) ? TINYRT_ABI_MAJOR : f.ConsumeIntegral<uint16_t>();
  m.abi_minor = f.ConsumeIntegralInRange<uint16_t>(0, 3);
  switch (f.ConsumeIntegralInRange(0, 15)) {
    case 0: m.desc_bytes = kDesc10; break;
    case 1: m.desc_bytes = kDesc11; break;
    case 2: m.desc_bytes = kDesc12 + 8 * f.ConsumeIntegralInRange(1, 8); break;  // a future minor
    case 3: m.desc_bytes = f.ConsumeIntegralInRange<uint32_t>(0, kDesc12 + 64); break;
    default: m.desc_bytes = kDesc12;
  }
  md.desc_bytes = m.desc_bytes;
  m.arch = f.ConsumeIntegralInRange(0, 31) ? TINYRT_ARCH_NATIVE : f.ConsumeIntegralInRange(0, 4);
  m.isa_required = f.ConsumeIntegralInRange(0, 7) ? tinyrt_cpu_features() & f.ConsumeIntegral<uint32_t>()
                                                  : f.ConsumeIntegral<uint32_t>();
  auto count = [&](uint32_t typical) -> uint32_t {
    int k = f.ConsumeIntegralInRange(0, 31);
    return k < 29    ? (uint32_t)(k % (typical + 1))
           : k == 29 ? kRefusedCount
                     : f.ConsumeIntegralInRange<uint32_t>(kRefusedCount, UINT32_MAX);
  };
  m.num_inputs = count(3);
  m.num_outputs = count(3);
  m.num_steps = count(kMaxSteps);
  m.name = f.ConsumeIntegralInRange(0, 15) ? keep_str(md, fuzz_name(f)) : nullptr;
  switch (f.ConsumeIntegralInRange(0, 7)) {
    case 0: m.arena_bytes = 0; break;
    case 1: m.arena_bytes = f.ConsumeIntegral<uint64_t>(); break;
    case 2: m.arena_bytes = f.ConsumeIntegralInRange<uint64_t>(1, 5000); break;
    default: m.arena_bytes = 64 * f.ConsumeIntegralInRange<uint64_t>(1, 64);
  }
  // The strides the runtime walks the tables with (docs/ABI.md): the 1.0
  // entry sizes below ABI 1.1, else the descriptor's fields.
  bool has_strides = m.desc_bytes >= offsetof(tinyrt_model, step_desc_bytes) + sizeof(uint32_t);
  auto stride = [&](uint32_t natural, uint32_t min) -> uint32_t {
    int k = f.ConsumeIntegralInRange(0, 15);
    return k < 11    ? natural
           : k == 11 ? min
           : k == 12 ? natural + 8
           : k == 13 ? kRefusedStride
                     : f.ConsumeIntegralInRange<uint32_t>(0, 2048);
  };
  m.tensor_desc_bytes = stride(sizeof(tinyrt_tensor_desc), sizeof(tinyrt_tensor_desc));
  m.step_desc_bytes = stride(sizeof(tinyrt_step_desc), TINYRT_STEP_DESC_1_1_BYTES);
  md.tensor_stride = has_strides ? m.tensor_desc_bytes : sizeof(tinyrt_tensor_desc);
  md.step_stride = has_strides ? m.step_desc_bytes : TINYRT_STEP_DESC_1_1_BYTES;

  uint8_t *ins = make_table(md, f, m.num_inputs, md.tensor_stride);
  uint8_t *outs = make_table(md, f, m.num_outputs, md.tensor_stride);
  uint8_t *steps = make_table(md, f, m.num_steps, md.step_stride);
  m.inputs = reinterpret_cast<const tinyrt_tensor_desc *>(ins);
  m.outputs = reinterpret_cast<const tinyrt_tensor_desc *>(outs);
  m.steps = reinterpret_cast<const tinyrt_step_desc *>(steps);
  bool sized = m.num_inputs <= 4096 && m.num_outputs <= 4096 && md.tensor_stride < kRefusedStride;
  if (ins && sized && md.tensor_stride >= sizeof(const char *))
    for (uint32_t i = 0; i < m.num_inputs; ++i)
      fill_tensor(md, f, ins + (size_t)i * md.tensor_stride, md.tensor_stride, m.arena_bytes, &md.in_names);
  if (outs && sized && md.tensor_stride >= sizeof(const char *))
    for (uint32_t i = 0; i < m.num_outputs; ++i)
      fill_tensor(md, f, outs + (size_t)i * md.tensor_stride, md.tensor_stride, m.arena_bytes, &md.out_names);
  md.num_steps = m.num_steps <= kMaxSteps ? m.num_steps : 0;
  if (steps && m.num_steps <= kMaxSteps && md.step_stride < kRefusedStride)
    for (uint32_t i = 0; i < m.num_steps; ++i) {
      StepPlan &sp = md.steps[i];
      tinyrt_step_desc s;
      memset(&s, 0, sizeof s);
      int t = f.ConsumeIntegralInRange(0, 15);
      sp.tasks = t < 10    ? 1 + t * t
                 : t == 10 ? 0
                 : t == 11 ? -1
                 : t == 12 ? INT32_MIN
                 : t == 13 ? 4099
                           : f.ConsumeIntegralInRange(1, 1 << 16);
      s.tasks = sp.tasks;
      int kind = f.ConsumeIntegralInRange(0, 15);
      sp.call = kind >= 12 && kind <= 14;
      s.flags = kind == 15 ? f.ConsumeIntegral<int32_t>() : sp.call ? (int32_t)TINYRT_STEP_CALL : 0;
      auto fp = fns(i, std::make_integer_sequence<int, kMaxSteps>());
      s.fn = f.ConsumeIntegralInRange(0, 31) == 0 ? nullptr : (s.flags & TINYRT_STEP_CALL) ? fp.second : fp.first;
      sp.call = (s.flags & TINYRT_STEP_CALL) != 0;
      if (sp.call && f.ConsumeBool()) s.tasks = sp.tasks = 1;
      s.call_node = f.ConsumeIntegralInRange(0, 7) ? keep_str(md, fuzz_name(f)) : nullptr;
      switch (f.ConsumeIntegralInRange(0, 7)) {
        case 0: s.status_offset = f.ConsumeIntegral<uint64_t>(); break;
        case 1: s.status_offset = m.arena_bytes - f.ConsumeIntegralInRange(0, 4); break;
        case 2: s.status_offset = 4 * f.ConsumeIntegralInRange(0, 100) + f.ConsumeIntegralInRange(0, 3); break;
        default: s.status_offset = m.arena_bytes >= 64 ? m.arena_bytes - 64 : 0;
      }
      sp.status_offset = s.status_offset;
      sp.call_status = f.ConsumeIntegralInRange(0, 3)   ? 0
                       : f.ConsumeIntegralInRange(0, 3) ? f.ConsumeIntegralInRange(1, 14)
                                                        : f.ConsumeIntegral<int32_t>();
      // Branches (ABI 1.3): a condition byte among the first kCondBytes of
      // the arena, or outside the arena (refused); branch errors with or
      // without code and guard.
      switch (f.ConsumeIntegralInRange(0, 7)) {
        case 0: s.flags |= TINYRT_STEP_GUARDED; break;
        case 1: s.flags |= TINYRT_STEP_GUARDED | TINYRT_STEP_FAIL; break;
        case 2: s.flags |= TINYRT_STEP_FAIL; break;
        case 3:
          s.flags |= TINYRT_STEP_GUARDED | TINYRT_STEP_FAIL;
          s.fn = nullptr;
          break;
        default: break;
      }
      s.cond_offset = f.ConsumeIntegralInRange(0, 15) ? f.ConsumeIntegralInRange<uint64_t>(0, kCondBytes - 1)
                                                      : m.arena_bytes + f.ConsumeIntegralInRange<uint64_t>(0, 8);
      s.cond_expect = f.ConsumeIntegralInRange(0, 7) ? f.ConsumeBool() : f.ConsumeIntegral<uint32_t>();
      sp.guarded = (s.flags & TINYRT_STEP_GUARDED) != 0;
      sp.fail = (s.flags & TINYRT_STEP_FAIL) != 0;
      sp.cond_offset = s.cond_offset;
      sp.expect = s.cond_expect;
      memcpy(steps + (size_t)i * md.step_stride, &s, std::min<size_t>(md.step_stride, sizeof s));
    }

  // Weights (ABI 1.2): ranges over buffers of exactly their size.
  uint32_t nw = count(4);
  m.num_weights = nw;
  m.weights_range_bytes = stride(sizeof(tinyrt_weights_range), sizeof(tinyrt_weights_range));
  uint8_t *w = make_table(md, f, nw, m.weights_range_bytes);
  m.weights = reinterpret_cast<const tinyrt_weights_range *>(w);
  bool sound = (nw == 0 || (w && (uintptr_t)w % alignof(tinyrt_weights_range) == 0)) && nw <= (1u << 20) &&
               m.weights_range_bytes >= sizeof(tinyrt_weights_range) && m.weights_range_bytes <= 1024 &&
               m.weights_range_bytes % alignof(tinyrt_weights_range) == 0;
  uint64_t h = 0xcbf29ce484222325ull, total = 0;
  if (w && nw <= 4096 && m.weights_range_bytes < kRefusedStride &&
      m.weights_range_bytes >= sizeof(tinyrt_weights_range))
    for (uint32_t i = 0; i < nw; ++i) {
      tinyrt_weights_range r;
      size_t n = f.ConsumeIntegralInRange<size_t>(0, 300);
      if (f.ConsumeIntegralInRange(0, 15)) {
        md.keep.push_back(std::make_unique<Buf>(n));
        for (size_t k = 0; k < n; ++k) md.keep.back()->p[k] = (uint8_t)(k * 7 + i);
        r.data = md.keep.back()->p;
        r.bytes = n;
      } else {
        r.data = nullptr;
        r.bytes = f.ConsumeBool() ? 0 : n + 1;
        sound = sound && r.bytes == 0;
      }
      h = fnv1a64(h, static_cast<const uint8_t *>(r.data), r.data ? r.bytes : 0);
      total += r.bytes;
      memcpy(w + (size_t)i * m.weights_range_bytes, &r, sizeof r);
    }
  else
    sound = sound && (nw == 0);
  switch (f.ConsumeIntegralInRange(0, 3)) {
    case 0: m.weights_bytes = f.ConsumeBool() ? total + 1 : f.ConsumeIntegral<uint64_t>(); break;
    default: m.weights_bytes = total;
  }
  sound = sound && m.weights_bytes == total;
  m.weights_checksum = f.ConsumeIntegralInRange(0, 3) ? h : h ^ (1ull << f.ConsumeIntegralInRange(0, 63));
  md.weights_sound = sound;
  md.checksum_right = m.weights_checksum == h;
  m.compiler_version = "fuzz";

  // The descriptor: exactly desc_bytes (at least the ABI 1.0 part, which
  // any descriptor has), the rest beyond sizeof(tinyrt_model) fuzzed.
  size_t alloc = std::max<size_t>(m.desc_bytes, kDesc10);
  md.desc = std::make_unique<Buf>(alloc);
  memcpy(md.desc->p, &m, std::min(alloc, sizeof m));
  for (size_t k = sizeof m; k < alloc; ++k) md.desc->p[k] = f.ConsumeIntegral<uint8_t>();
  md.m = reinterpret_cast<const tinyrt_model *>(md.desc->p);
}

// ------------------------------------------------------ the sequence --
constexpr int kSessions = 3, kPools = 2;

struct SessionSlot {
  std::unique_ptr<Buf> mem;  // the tinyrt_session's storage
  enum State { Fresh, Live, Failed, Copy, Clobbered } state = Fresh;
  const tinyrt_pool *pool = nullptr;  // the pool bound at init
  int origin = -1;                    // Live or Copy: the slot whose address the session holds
  uint32_t live_magic = 0;            // the magic a successful init left
  uint8_t *arena = nullptr;
  size_t arena_bytes = 0;
  bool hook = false;
  tinyrt_session *s() { return reinterpret_cast<tinyrt_session *>(mem->p); }
};

struct PoolSlot {
  std::unique_ptr<Buf> mem;
  enum State { Empty, Live, Dead, Copy } state = Empty;
  tinyrt_pool *pool = nullptr;
  uint64_t gen = 0;  // bumped at every create
  int threads = 0;
};

struct World {
  Model md;
  SessionSlot ses[kSessions];
  PoolSlot pools[kPools];
  std::vector<std::unique_ptr<Buf>> arenas;  // outlive every session
  uint64_t pool_gen = 0;
  // The nested call the hook makes once per run (0: none).
  int nested = 0;
  int nested_other = 0;
  int running = -1;  // the session being run
};

World *g_world = nullptr;

// The session's pool (if any) is live: a pool that lives at the address it
// was bound to (a destroyed pool's storage may hold a new pool since).
bool pool_ok(World &w, const SessionSlot &s) {
  if (!s.pool) return true;
  for (const PoolSlot &p : w.pools)
    if (p.state == PoolSlot::Live && p.pool == s.pool) return true;
  return false;
}

// The steps a run should execute and the status it should return, from the
// condition bytes at its start: a guarded step runs when its byte says so,
// a branch error reached stops the run with TINYRT_ERR_BRANCH, a custom op
// stores its status (possibly into a condition byte) and a nonzero one
// stops the run.
std::pair<std::vector<int>, int> expected_run(const Model &md, std::vector<uint8_t> cond) {
  std::vector<int> order;
  for (uint32_t i = 0; i < md.num_steps; ++i) {
    const StepPlan &sp = md.steps[i];
    if (sp.guarded && (cond.at(sp.cond_offset) != 0) != (sp.expect != 0)) continue;
    if (sp.fail) return {order, TINYRT_ERR_BRANCH};
    order.push_back((int)i);
    if (!sp.call) continue;
    for (uint64_t b = 0; b < 4; ++b)
      if (sp.status_offset + b < cond.size())
        cond[sp.status_offset + b] = (uint8_t)((uint32_t)sp.call_status >> (8 * b));
    if (sp.call_status != TINYRT_OK) return {order, sp.call_status};
  }
  return {order, TINYRT_OK};
}

void check_run_log(World &w, RunLog &r, int st) {
  const Model &md = w.md;
  if (st != TINYRT_OK) return;
  // Each step that ran covered its [0, tasks) exactly once.
  for (uint32_t i = 0; i < md.num_steps; ++i) {
    if (r.ranges[i].empty()) continue;
    auto v = r.ranges[i];
    std::sort(v.begin(), v.end());
    int32_t at = 0;
    for (auto &rg : v) {
      EXPECT(rg.first == at, "task ranges of a step overlap or leave a gap");
      at = rg.second;
    }
    EXPECT(at == md.steps[i].tasks, "a step's tasks were not all run");
  }
}

void check_hook_log(const RunLog &r) {
  // A begin/end pair for each step that ran, in order (skipped steps and
  // branch errors call no hook).
  EXPECT(r.hook.size() == 2 * r.order.size(), "the step hook saw other steps than ran");
  for (size_t k = 0; k < r.hook.size(); ++k)
    EXPECT((int)r.hook[k].first == r.order[k / 2] && r.hook[k].second == (k % 2 == 0),
           "the step hook saw steps out of order");
}

int do_run(World &w, int i);

void hook(void *user, uint32_t step, int begin) {
  World &w = *static_cast<World *>(user);
  EXPECT(g_run != nullptr, "the step hook ran outside a run");
  g_run->hook.push_back({step, begin});
  if (!w.nested || !begin) return;
  int what = w.nested;
  w.nested = 0;  // once per run
  SessionSlot &me = w.ses[w.running];
  tinyrt_session *s = me.s();
  tinyrt_tensor t;
  switch (what) {
    case 1: EXPECT(fuzz_session_run(s) == TINYRT_ERR_BUSY, "run on a running session did not answer BUSY"); break;
    case 2:
      EXPECT(tinyrt_session_verify(s) == TINYRT_ERR_BUSY, "verify on a running session did not answer BUSY");
      break;
    case 3:
      EXPECT(tinyrt_session_input(s, 0, &t) == TINYRT_ERR_BUSY, "input() on a running session did not answer BUSY");
      break;
    case 4:
      EXPECT(tinyrt_session_find_output(s, "y", &t) == TINYRT_ERR_BUSY,
             "find_output on a running session did not answer BUSY");
      break;
    case 5:
      if (me.pool)
        EXPECT(tinyrt_pool_destroy(const_cast<tinyrt_pool *>(me.pool)) == TINYRT_ERR_BUSY,
               "destroying a pool during its run did not answer BUSY");
      break;
    case 6: {
      // Another session: BUSY if it shares our pool, else it runs (nested).
      int o = w.nested_other;
      if (o == w.running) break;
      SessionSlot &other = w.ses[o];
      if (other.state == SessionSlot::Live && me.pool && other.pool == me.pool) {
        int rst = fuzz_session_run(other.s());
        trace("  (hook) run session %d on the busy pool: %d", o, rst);
        EXPECT(rst == TINYRT_ERR_BUSY, "a second run on a busy pool did not answer BUSY");
      } else if (other.state == SessionSlot::Live) {
        RunLog *outer = g_run;
        int running = w.running;
        do_run(w, o);
        g_run = outer;
        w.running = running;
      }
      break;
    }
  }
}

int do_run(World &w, int i) {
  SessionSlot &slot = w.ses[i];
  RunLog log;
  log.arena = slot.arena;
  log.arena_bytes = slot.state == SessionSlot::Live ? w.md.m->arena_bytes : 0;
  std::vector<uint8_t> cond(slot.arena, slot.arena + std::min<uint64_t>(log.arena_bytes, kCondBytes));
  g_run = &log;
  w.running = i;
  int st = fuzz_session_run(slot.s());
  trace("run session %d (state %d): %d '%s'", i, (int)slot.state, (int)st,
        slot.state == SessionSlot::Fresh ? "" : tinyrt_session_message(slot.s()));
  g_run = nullptr;
  w.running = -1;
  switch (slot.state) {
    case SessionSlot::Live:
      if (!pool_ok(w, slot)) {
        EXPECT(st == TINYRT_ERR_NOT_INITIALIZED, "run with a destroyed pool did not answer NOT_INITIALIZED");
        return st;
      }
      {
        auto expect = expected_run(w.md, cond);
        EXPECT(log.order == expect.first, "the run executed other steps than its conditions select, or out of order");
        EXPECT(st == expect.second, "the run returned another status than its steps should");
      }
      check_run_log(w, log, st);
      // Only a branch error or a custom op's own status stops a run.
      if (st == TINYRT_ERR_BRANCH)
        EXPECT(strstr(tinyrt_session_message(slot.s()), "step ") != nullptr, "a branch error's message names no step");
      else if (st != TINYRT_OK)
        EXPECT(strstr(tinyrt_session_message(slot.s()), "custom op node") != nullptr,
               "a failed call's message names no node");
      if (slot.hook) check_hook_log(log);
      break;
    default:
      EXPECT(st == TINYRT_ERR_NOT_INITIALIZED,
             "run on a session that is not initialized did not answer NOT_INITIALIZED");
      EXPECT(log.order.empty(), "an uninitialized session ran kernels");
  }
  return st;
}

uint64_t fnv_of_weights(const tinyrt_model *m);

void op_init(World &w, FuzzedDataProvider &f) {
  int i = f.ConsumeIntegralInRange(0, kSessions - 1);
  SessionSlot &slot = w.ses[i];
  const tinyrt_model *model = f.ConsumeIntegralInRange(0, 15) ? w.md.m : nullptr;
  size_t need = w.md.m->arena_bytes <= (1u << 20) ? (size_t)w.md.m->arena_bytes : 64;
  size_t len;
  switch (f.ConsumeIntegralInRange(0, 7)) {
    case 0: len = need ? need - 1 : 0; break;
    case 1: len = f.ConsumeIntegralInRange<size_t>(0, 4096); break;
    case 2: len = need + f.ConsumeIntegralInRange<size_t>(1, 256); break;
    default: len = need;
  }
  size_t misalign = f.ConsumeIntegralInRange(0, 15) ? 0 : f.ConsumeIntegralInRange(1, 63);
  uint8_t *arena = nullptr;
  if (f.ConsumeIntegralInRange(0, 15)) {
    w.arenas.push_back(std::make_unique<Buf>(len, misalign));
    arena = w.arenas.back()->p;
  }
  // The arena size we claim is the size we have (the caller's promise).
  size_t claim = arena ? len : 0;
  tinyrt_session_options opt;
  tinyrt_session_options_init(&opt);
  int pool = -1;
  if (f.ConsumeBool()) {
    pool = f.ConsumeIntegralInRange(0, kPools - 1);
    PoolSlot &p = w.pools[pool];
    opt.pool = p.state == PoolSlot::Copy ? reinterpret_cast<tinyrt_pool *>(p.mem->p) : p.pool;
    if (p.state == PoolSlot::Empty) pool = -1;
  }
  bool hook_on = f.ConsumeBool();
  if (hook_on) {
    opt.on_step = hook;
    opt.on_step_user = &w;
  }
  bool use_opt = f.ConsumeIntegralInRange(0, 7) != 0;
  tinyrt_session *s = f.ConsumeIntegralInRange(0, 31) ? slot.s() : nullptr;
  tinyrt_status st = tinyrt_session_init(s, model, arena, claim, use_opt ? &opt : nullptr);
  trace("init session %d%s model=%p arena=%p+%zu pool slot %d (%p) hook %d opt %d: %d '%s'", i, s ? "" : "(NULL)",
        (const void *)model, (void *)arena, claim, pool, (void *)opt.pool, (int)hook_on, (int)use_opt, (int)st,
        s ? tinyrt_session_message(s) : "");
  EXPECT(known_status(st), "init returned an unknown status");
  if (!s) {
    EXPECT(st == TINYRT_ERR_INVALID_ARGUMENT, "init(NULL) did not answer INVALID_ARGUMENT");
    return;
  }
  EXPECT(strnlen(tinyrt_session_message(s), sizeof s->message) < sizeof s->message, "the message is not terminated");
  if (!model) EXPECT(st == TINYRT_ERR_INVALID_ARGUMENT, "init without a model did not answer INVALID_ARGUMENT");
  if (st == TINYRT_OK) {
    EXPECT(model && claim >= model->arena_bytes, "init accepted an arena smaller than the model's");
    EXPECT(((uintptr_t)arena % TINYRT_ARENA_ALIGN) == 0, "init accepted a misaligned arena");
    if (use_opt && pool >= 0) EXPECT(w.pools[pool].state == PoolSlot::Live, "init accepted a pool that is not live");
    slot.state = SessionSlot::Live;
    slot.origin = i;
    slot.live_magic = s->magic;
    slot.pool = use_opt ? opt.pool : nullptr;
    slot.arena = arena;
    slot.arena_bytes = claim;
    slot.hook = use_opt && hook_on;
    // The application's inputs: the condition bytes of the branches.
    uint64_t bits = f.ConsumeIntegral<uint64_t>();
    for (uint64_t b = 0; b < std::min<uint64_t>(claim, kCondBytes); ++b) arena[b] = (uint8_t)((bits >> b) & 1);
    if (claim && f.ConsumeIntegralInRange(0, 7) == 0)
      arena[f.ConsumeIntegralInRange<uint64_t>(0, std::min<uint64_t>(claim, kCondBytes) - 1)] = 0xfe;
    EXPECT(tinyrt_session_num_inputs(s) == model->num_inputs, "num_inputs differs from the descriptor");
    EXPECT(tinyrt_session_num_outputs(s) == model->num_outputs, "num_outputs differs from the descriptor");
  } else {
    slot.state = SessionSlot::Failed;
    EXPECT(tinyrt_session_num_inputs(s) == 0, "a failed session reports inputs");
    EXPECT(tinyrt_session_message(s)[0] != '\0', "a failed init left no message");
  }
}

void op_view(World &w, FuzzedDataProvider &f, bool outputs, bool by_name) {
  int i = f.ConsumeIntegralInRange(0, kSessions - 1);
  SessionSlot &slot = w.ses[i];
  tinyrt_session *s = f.ConsumeIntegralInRange(0, 31) ? slot.s() : nullptr;
  tinyrt_tensor t, *tp = f.ConsumeIntegralInRange(0, 31) ? &t : nullptr;
  memset(&t, 0, sizeof t);
  const std::vector<std::string> &names = outputs ? w.md.out_names : w.md.in_names;
  uint32_t n = slot.state == SessionSlot::Live ? (outputs ? w.md.m->num_outputs : w.md.m->num_inputs) : 0;
  tinyrt_status st;
  uint32_t index = 0;
  std::string name;
  bool null_name = false;
  if (by_name) {
    if (!names.empty() && f.ConsumeBool())
      name = names[f.ConsumeIntegralInRange<size_t>(0, names.size() - 1)];
    else
      name = fuzz_name(f);
    null_name = f.ConsumeIntegralInRange(0, 31) == 0;
    const char *np = null_name ? nullptr : name.c_str();
    st = outputs ? tinyrt_session_find_output(s, np, tp) : tinyrt_session_find_input(s, np, tp);
  } else {
    index = f.ConsumeIntegralInRange(0, 7) ? f.ConsumeIntegralInRange<uint32_t>(0, 4) : f.ConsumeIntegral<uint32_t>();
    st = outputs ? tinyrt_session_output(s, index, tp) : tinyrt_session_input(s, index, tp);
  }
  EXPECT(known_status(st), "a view call returned an unknown status");
  if (!s || !tp || null_name) {
    EXPECT(st == TINYRT_ERR_INVALID_ARGUMENT, "a view call with NULL did not answer INVALID_ARGUMENT");
    return;
  }
  if (slot.state != SessionSlot::Live) {
    EXPECT(st == TINYRT_ERR_NOT_INITIALIZED, "a view on an uninitialized session did not answer NOT_INITIALIZED");
    return;
  }
  if (by_name) {
    // The first entry of that name, if any.
    size_t k = 0;
    while (k < n && names[k] != name) ++k;
    EXPECT((k < n) == (st == TINYRT_OK), "find by name disagrees with the descriptor");
    if (st != TINYRT_OK) EXPECT(st == TINYRT_ERR_NOT_FOUND, "a missing name did not answer NOT_FOUND");
    index = (uint32_t)k;
  } else {
    EXPECT((index < n) == (st == TINYRT_OK), "a view by index disagrees with the count");
    if (st != TINYRT_OK) EXPECT(st == TINYRT_ERR_INVALID_ARGUMENT, "a bad index did not answer INVALID_ARGUMENT");
  }
  if (st != TINYRT_OK) return;
  const tinyrt_tensor_desc *d = reinterpret_cast<const tinyrt_tensor_desc *>(
      reinterpret_cast<const uint8_t *>(outputs ? w.md.m->outputs : w.md.m->inputs) +
      (size_t)index * w.md.tensor_stride);
  EXPECT(t.data == slot.arena + d->arena_offset && t.bytes == d->bytes && t.rank == d->rank && t.dims == d->dims &&
             t.name == d->name,
         "a view differs from its descriptor entry");
  EXPECT(d->arena_offset <= slot.arena_bytes && d->bytes <= slot.arena_bytes - d->arena_offset,
         "a view reaches outside the arena");
  // The application writes its input / reads its output.
  if (t.bytes) memset(t.data, 0x5a, t.bytes);
  for (uint32_t k = 0; k < t.rank; ++k) (void)*(volatile const int64_t *)&t.dims[k];
  (void)strlen(t.name);
}

void op_verify(World &w, FuzzedDataProvider &f) {
  int i = f.ConsumeIntegralInRange(0, kSessions - 1);
  SessionSlot &slot = w.ses[i];
  tinyrt_session *s = f.ConsumeIntegralInRange(0, 31) ? slot.s() : nullptr;
  tinyrt_status st = tinyrt_session_verify(s);
  trace("verify session %d: %d", i, (int)st);
  EXPECT(known_status(st), "verify returned an unknown status");
  if (!s) {
    EXPECT(st == TINYRT_ERR_INVALID_ARGUMENT, "verify(NULL) did not answer INVALID_ARGUMENT");
    return;
  }
  if (slot.state != SessionSlot::Live) {
    EXPECT(st == TINYRT_ERR_NOT_INITIALIZED, "verify on an uninitialized session did not answer NOT_INITIALIZED");
    return;
  }
  if (w.md.desc_bytes < kDesc12) {
    EXPECT(st == TINYRT_ERR_UNSUPPORTED, "verify of a pre-1.2 descriptor did not answer UNSUPPORTED");
    return;
  }
  if (w.md.weights_sound)
    EXPECT(st == (w.md.checksum_right ? TINYRT_OK : TINYRT_ERR_CORRUPT), "verify of a sound weights table is wrong");
  else
    EXPECT(st == TINYRT_ERR_BAD_MODEL || st == TINYRT_OK || st == TINYRT_ERR_CORRUPT, "verify returned an odd status");
}

void op_pool_create(World &w, FuzzedDataProvider &f) {
  int j = f.ConsumeIntegralInRange(0, kPools - 1);
  PoolSlot &p = w.pools[j];
  if (p.state == PoolSlot::Live) return;  // the caller's promise: no live pool in the storage
  static const int kThreads[] = {1, 2, 3, 4, 8, 0, -1, TINYRT_MAX_THREADS + 1, INT32_MIN};
  int threads = kThreads[f.ConsumeIntegralInRange<size_t>(0, sizeof kThreads / sizeof *kThreads - 1)];
  size_t need = tinyrt_pool_storage_bytes(threads > 0 && threads <= 8 ? threads : 1);
  EXPECT(threads <= 0 || threads > TINYRT_MAX_THREADS ||
             tinyrt_pool_storage_bytes(threads) <= TINYRT_POOL_STORAGE_BYTES(threads),
         "tinyrt_pool_storage_bytes exceeds TINYRT_POOL_STORAGE_BYTES");
  size_t have = f.ConsumeIntegralInRange(0, 7) ? need : f.ConsumeIntegralInRange<size_t>(0, need);
  size_t misalign = f.ConsumeIntegralInRange(0, 15) ? 0 : f.ConsumeIntegralInRange(1, 63);
  // The storage is replaced only when nothing refers to it (a session bound
  // to a destroyed pool keeps pointing at it).
  if (!p.mem || p.mem->bytes < have || misalign) {
    if (p.mem) w.arenas.push_back(std::move(p.mem));  // keep the old storage alive
    p.mem = std::make_unique<Buf>(std::max(have, (size_t)TINYRT_POOL_STORAGE_BYTES(8)), misalign);
    if (p.state == PoolSlot::Copy) p.state = PoolSlot::Empty;  // fresh storage
  }
  tinyrt_pool *out = reinterpret_cast<tinyrt_pool *>(1);
  bool null_out = f.ConsumeIntegralInRange(0, 31) == 0;
  tinyrt_status st = tinyrt_pool_create(p.mem->p, have, threads, null_out ? nullptr : &out);
  trace("pool_create slot %d at %p bytes %zu (need %zu) threads %d: %d", j, (void *)p.mem->p, have,
        tinyrt_pool_storage_bytes(threads), threads, (int)st);
  EXPECT(known_status(st), "pool_create returned an unknown status");
  if (st == TINYRT_OK) {
    EXPECT(!null_out && out == reinterpret_cast<tinyrt_pool *>(p.mem->p), "pool_create returned another pointer");
    EXPECT(threads >= 1 && threads <= TINYRT_MAX_THREADS && have >= tinyrt_pool_storage_bytes(threads) && !misalign,
           "pool_create accepted bad arguments");
    EXPECT(tinyrt_pool_threads(out) == threads, "pool_threads differs from the count created");
    p.state = PoolSlot::Live;
    p.pool = out;
    p.gen = ++w.pool_gen;
    p.threads = threads;
    tinyrt_pool_set_spin_us(out, f.ConsumeIntegralInRange(0, 3) ? 0 : f.ConsumeIntegralInRange(0, 50));
  } else {
    // The storage holds no live pool (whatever it held, or nothing).
    EXPECT(null_out || out == nullptr, "a failed pool_create left a pool pointer");
  }
}

void op_pool_destroy(World &w, FuzzedDataProvider &f) {
  int j = f.ConsumeIntegralInRange(0, kPools - 1);
  PoolSlot &p = w.pools[j];
  if (f.ConsumeIntegralInRange(0, 31) == 0) {
    EXPECT(tinyrt_pool_destroy(nullptr) == TINYRT_ERR_INVALID_ARGUMENT,
           "pool_destroy(NULL) did not answer INVALID_ARGUMENT");
    return;
  }
  if (p.state == PoolSlot::Empty) return;
  tinyrt_pool *pool = p.state == PoolSlot::Copy ? reinterpret_cast<tinyrt_pool *>(p.mem->p) : p.pool;
  tinyrt_status st = tinyrt_pool_destroy(pool);
  trace("pool_destroy slot %d (state %d) %p: %d", j, (int)p.state, (void *)pool, (int)st);
  if (p.state == PoolSlot::Live) {
    EXPECT(st == TINYRT_OK, "pool_destroy of a live idle pool failed");
    p.state = PoolSlot::Dead;
    EXPECT(tinyrt_pool_threads(pool) == 0, "a destroyed pool reports threads");
  } else {
    EXPECT(st == TINYRT_ERR_NOT_INITIALIZED, "pool_destroy of a dead or copied pool did not answer NOT_INITIALIZED");
  }
}

void op_pool_misc(World &w, FuzzedDataProvider &f) {
  int j = f.ConsumeIntegralInRange(0, kPools - 1);
  PoolSlot &p = w.pools[j];
  tinyrt_pool *pool = p.state == PoolSlot::Empty  ? nullptr
                      : p.state == PoolSlot::Copy ? reinterpret_cast<tinyrt_pool *>(p.mem->p)
                                                  : p.pool;
  if (f.ConsumeBool()) {
    tinyrt_status st = tinyrt_pool_set_spin_us(pool, f.ConsumeIntegralInRange<uint32_t>(0, 100));
    EXPECT(st == (p.state == PoolSlot::Live ? TINYRT_OK
                  : pool                    ? TINYRT_ERR_NOT_INITIALIZED
                                            : TINYRT_ERR_INVALID_ARGUMENT),
           "pool_set_spin_us answered wrong");
  } else {
    int n = tinyrt_pool_threads(pool);
    EXPECT(n == (p.state == PoolSlot::Live ? p.threads : pool ? 0 : 1), "pool_threads answered wrong");
  }
}

// A copy of one pool's storage in another slot (never over a live pool).
void op_pool_copy(World &w, FuzzedDataProvider &f) {
  int a = f.ConsumeIntegralInRange(0, kPools - 1), b = 1 - a;
  PoolSlot &src = w.pools[a], &dst = w.pools[b];
  if (src.state != PoolSlot::Live || dst.state == PoolSlot::Live) return;
  size_t n = tinyrt_pool_storage_bytes(src.threads);
  if (!dst.mem || dst.mem->bytes < n) {
    if (dst.mem) w.arenas.push_back(std::move(dst.mem));
    dst.mem = std::make_unique<Buf>(std::max(n, (size_t)TINYRT_POOL_STORAGE_BYTES(8)));
  }
  memcpy(dst.mem->p, src.mem->p, n);
  trace("pool_copy slot %d -> %d (%p)", a, b, (void *)dst.mem->p);
  dst.state = PoolSlot::Copy;
  dst.gen = ++w.pool_gen;
}

void op_session_copy(World &w, FuzzedDataProvider &f) {
  int a = f.ConsumeIntegralInRange(0, kSessions - 1), b = f.ConsumeIntegralInRange(0, kSessions - 1);
  if (a == b) return;
  memcpy(w.ses[b].s(), w.ses[a].s(), sizeof(tinyrt_session));
  trace("session_copy %d -> %d", a, b);
  SessionSlot &src = w.ses[a], &dst = w.ses[b];
  dst.pool = src.pool;
  dst.origin = src.origin;
  dst.arena = src.arena;
  dst.arena_bytes = src.arena_bytes;
  dst.hook = src.hook;
  dst.live_magic = src.live_magic;
  dst.state = src.state;
  // A copy is refused, unless it lands back at the address it was made at
  // (then it is byte for byte that session, live if its magic is intact).
  if (src.state == SessionSlot::Live || src.state == SessionSlot::Copy || src.state == SessionSlot::Clobbered)
    dst.state = src.origin != b                    ? SessionSlot::Copy
                : dst.s()->magic == dst.live_magic ? SessionSlot::Live
                                                   : SessionSlot::Clobbered;
}

void op_session_clobber(World &w, FuzzedDataProvider &f) {
  int i = f.ConsumeIntegralInRange(0, kSessions - 1);
  SessionSlot &slot = w.ses[i];
  size_t at = f.ConsumeIntegralInRange<size_t>(0, sizeof(tinyrt_session) - 1);
  uint8_t *p = slot.mem->p;
  // The private fields of a session that was live are the runtime's
  // (damage there is undefined, as for any C object): only its magic is
  // hit, which may also be restored. Never the address field, which could
  // forge a live session out of a copy. Storage that never held a live
  // session takes any damage.
  const size_t magic_end = offsetof(tinyrt_session, magic) + sizeof(uint32_t);
  const size_t self = offsetof(tinyrt_session, self);
  if (at >= self && at < self + sizeof(void *)) return;
  bool was_live =
      slot.state == SessionSlot::Live || slot.state == SessionSlot::Clobbered || slot.state == SessionSlot::Copy;
  if (was_live && at >= magic_end) return;
  p[at] ^= (uint8_t)f.ConsumeIntegralInRange(1, 255);
  trace("session_clobber %d byte %zu", i, at);
  if (slot.state == SessionSlot::Live || slot.state == SessionSlot::Clobbered)
    slot.state = slot.s()->magic == slot.live_magic ? SessionSlot::Live : SessionSlot::Clobbered;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  FuzzedDataProvider f(data, size);
  static const bool trace_env = getenv("TINYRT_FUZZ_TRACE") != nullptr;
  g_trace = trace_env;
  auto w = std::make_unique<World>();
  make_model(w->md, f);
  g_model = &w->md;
  g_world = w.get();
  for (auto &s : w->ses) {
    s.mem = std::make_unique<Buf>(sizeof(tinyrt_session));
    // The session "may hold anything before": uninitialized storage.
    memset(s.mem->p, f.ConsumeIntegral<uint8_t>(), sizeof(tinyrt_session));
  }
  // Calls that must not crash whatever they get.
  EXPECT(tinyrt_status_string((tinyrt_status)f.ConsumeIntegral<int32_t>()) != nullptr, "status_string returned NULL");
  EXPECT(tinyrt_model_arena_bytes(nullptr) == 0, "model_arena_bytes(NULL) is not 0");
  (void)tinyrt_model_arena_bytes(w->md.m);
  EXPECT(strcmp(tinyrt_session_message(nullptr), "session is NULL") == 0, "message(NULL)");
  EXPECT(tinyrt_session_num_inputs(nullptr) == 0, "num_inputs(NULL)");
  EXPECT(tinyrt_pool_threads(nullptr) == 1, "pool_threads(NULL) is not 1");
  tinyrt_session_options_init(nullptr);
  for (int ops = 0; ops < 48 && f.remaining_bytes() > 0; ++ops) {
    switch (f.ConsumeIntegralInRange(0, 15)) {
      case 0:
      case 1: op_init(*w, f); break;
      case 2:
      case 3: {
        int i = f.ConsumeIntegralInRange(0, kSessions - 1);
        w->nested = f.ConsumeIntegralInRange(0, 3) ? 0 : f.ConsumeIntegralInRange(1, 6);
        w->nested_other = f.ConsumeIntegralInRange(0, kSessions - 1);
        if (f.ConsumeIntegralInRange(0, 31) == 0) {
          EXPECT(fuzz_session_run(nullptr) == TINYRT_ERR_INVALID_ARGUMENT, "run(NULL)");
          break;
        }
        do_run(*w, i);
        w->nested = 0;
        break;
      }
      case 4: op_verify(*w, f); break;
      case 5: op_view(*w, f, false, false); break;
      case 6: op_view(*w, f, true, false); break;
      case 7: op_view(*w, f, false, true); break;
      case 8: op_view(*w, f, true, true); break;
      case 9: op_pool_create(*w, f); break;
      case 10: op_pool_destroy(*w, f); break;
      case 11: op_pool_misc(*w, f); break;
      case 12: op_pool_copy(*w, f); break;
      case 13: op_session_copy(*w, f); break;
      case 14: op_session_clobber(*w, f); break;
      case 15: {
        int i = f.ConsumeIntegralInRange(0, kSessions - 1);
        SessionSlot &slot = w->ses[i];
        uint32_t n = tinyrt_session_num_inputs(slot.s()) + tinyrt_session_num_outputs(slot.s());
        if (slot.state != SessionSlot::Live) EXPECT(n == 0, "a session that is not live reports tensors");
        if (slot.state != SessionSlot::Fresh)
          EXPECT(strnlen(tinyrt_session_message(slot.s()), sizeof(tinyrt_session::message)) <
                         sizeof(tinyrt_session::message) ||
                     slot.state == SessionSlot::Clobbered || slot.state == SessionSlot::Copy,
                 "a session message is not terminated");
        break;
      }
    }
  }
  // Pools are joined before their storage goes.
  for (auto &p : w->pools)
    if (p.state == PoolSlot::Live) EXPECT(tinyrt_pool_destroy(p.pool) == TINYRT_OK, "final pool_destroy failed");
  g_model = nullptr;
  g_world = nullptr;
  return 0;
}
