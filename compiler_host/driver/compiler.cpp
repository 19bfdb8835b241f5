#include "driver/compiler.h"
#include "driver/tuning.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

#include <nlohmann/json.hpp>

#include <llvm/Support/ErrorHandling.h>
#include <unistd.h>

#include "codegen/module_emitter.h"
#include "driver/host_tools.h"
#include "frontend/onnx_export.h"
#include "passes/pass.h"
#include "util/process.h"

namespace tinyrt {

namespace fs = std::filesystem;

std::string sanitize_identifier(const std::string &s) {
  std::string r;
  for (char ch : s) r += (isalnum((unsigned char)ch) || ch == '_') ? ch : '_';
  if (r.empty() || isdigit((unsigned char)r[0])) r = "m_" + r;
  return r;
}

std::string reserved_name_reason(const std::string &name) {
  std::string low = name;
  for (auto &ch : low) ch = (char)tolower((unsigned char)ch);
  if (low.rfind("tinyrt", 0) == 0)
    return "names beginning with 'tinyrt' belong to the runtime: " + name +
           ".h would sit beside or shadow its "
           "tinyrt*.h headers and " +
           name + "'s macros would enter its TINYRT_ namespace";
  // The C11 and POSIX headers an application includes by these names (a
  // case-insensitive file system finds STDINT.h for <stdint.h>).
  static const std::set<std::string> headers = {
      "assert",    "complex",  "ctype",   "errno",       "fenv",     "float",    "inttypes",  "iso646",    "limits",
      "locale",    "math",     "setjmp",  "signal",      "stdalign", "stdarg",   "stdatomic", "stdbool",   "stddef",
      "stdint",    "stdio",    "stdlib",  "stdnoreturn", "string",   "tgmath",   "threads",   "time",      "uchar",
      "wchar",     "wctype",   "aio",     "cpio",        "dirent",   "dlfcn",    "fcntl",     "fmtmsg",    "fnmatch",
      "ftw",       "glob",     "grp",     "iconv",       "langinfo", "libgen",   "monetary",  "mqueue",    "ndbm",
      "netdb",     "nl_types", "poll",    "pthread",     "pwd",      "regex",    "sched",     "search",    "semaphore",
      "spawn",     "strings",  "stropts", "syslog",      "tar",      "termios",  "trace",     "ulimit",    "unistd",
      "utime",     "utmpx",    "wordexp", "alloca",      "malloc",   "memory",   "features",  "endian",    "byteswap",
      "elf",       "link",     "getopt",  "err",         "sysexits", "arm_neon", "immintrin", "x86intrin", "emmintrin",
      "xmmintrin", "cpuid",    "omp"};
  if (headers.count(low))
    return name + ".h would shadow the C library's or compiler's <" + low + ".h> for code compiled with -I OUTDIR";
  if (name.size() >= 2 && name[0] == '_' && (name[1] == '_' || isupper((unsigned char)name[1])))
    return "identifiers beginning with an underscore and a capital letter or a second underscore are reserved to "
           "the C implementation";
  return "";
}

namespace {

std::string upper(std::string s) {
  for (auto &ch : s) ch = (char)toupper((unsigned char)ch);
  return s;
}

const char *dtype_macro(DType t) {
  switch (t) {
    case DType::F32: return "TINYRT_DTYPE_FLOAT32";
    case DType::U8: return "TINYRT_DTYPE_UINT8";
    case DType::I8: return "TINYRT_DTYPE_INT8";
    case DType::U16: return "TINYRT_DTYPE_UINT16";
    case DType::I16: return "TINYRT_DTYPE_INT16";
    case DType::I32: return "TINYRT_DTYPE_INT32";
    case DType::I64: return "TINYRT_DTYPE_INT64";
    case DType::Bool: return "TINYRT_DTYPE_BOOL";
    case DType::F64: return "TINYRT_DTYPE_FLOAT64";
    case DType::U32: return "TINYRT_DTYPE_UINT32";
    case DType::U64: return "TINYRT_DTYPE_UINT64";
    case DType::F16: return "TINYRT_DTYPE_FLOAT16";
    case DType::BF16: return "TINYRT_DTYPE_BFLOAT16";
    default: return "0";
  }
}

}  // namespace

// A C string literal holding exactly the bytes of `s`, whatever they are:
// printable ASCII stays (with " \\ ? escaped; ? because of trigraphs), every
// other byte becomes a three-digit octal escape, so no name can end the
// literal, the line or the comment it sits in.
std::string c_string(const std::string &s) {
  std::string r = "\"";
  for (char ch : s) {
    unsigned char u = (unsigned char)ch;
    if (ch == '"' || ch == '\\' || ch == '?') {
      r += '\\';
      r += ch;
    } else if (u < 0x20 || u >= 0x7f) {
      char buf[8];
      snprintf(buf, sizeof buf, "\\%03o", u);
      r += buf;
    } else {
      r += ch;
    }
  }
  return r + "\"";
}

std::string hex64(uint64_t v) {
  char buf[24];
  snprintf(buf, sizeof buf, "0x%016llx", (unsigned long long)v);
  return buf;
}

std::string compile_options_text(const Target &t, const std::string &name, const CompileOptions &opt) {
  std::ostringstream o;
  auto dims = [&](const Shape &s) {
    for (size_t k = 0; k < s.size(); ++k) o << (k ? "," : "") << s[k];
  };
  o << "compiler=tinyrt " << TINYRT_VERSION << "\n"
    << "target=" << t.name << " triple=" << t.triple << " cpu=" << t.cpu << " features=" << t.features << "\n"
    << "gemm_tile=";
  if (opt.gemm_tile.empty())
    o << "default";
  else
    o << t.gemm_tiles.at(0).first << "," << t.gemm_tiles.at(0).second << "," << t.gemm_unroll;
  o << "\nname=" << name << "\n";
  for (const auto &kv : opt.import.input_shapes) {
    o << "input_shape=" << c_string(kv.first) << "=";
    auto mins = opt.import.input_shape_mins.find(kv.first);
    for (size_t k = 0; k < kv.second.size(); ++k) {
      o << (k ? "," : "");
      if (mins != opt.import.input_shape_mins.end() && k < mins->second.size() && mins->second[k] < kv.second[k])
        o << mins->second[k] << ":";
      o << kv.second[k];
    }
    o << "\n";
  }
  for (const auto &kv : opt.import.dim_ranges)
    o << "dim=" << c_string(kv.first) << "=" << kv.second.first << ":" << kv.second.second << "\n";
  for (const auto &kv : opt.import.bindings) {
    o << "bind=" << c_string(kv.first) << "=";
    if (kv.second.tensor) {
      const ConstData &c = *kv.second.tensor;
      o << "tensor " << dtype_name(c.dtype) << " [";
      dims(c.shape);
      o << "] " << hex64(fnv1a64_update(kFnv1a64Offset, c.bytes.data(), c.bytes.size()));
    } else {
      char buf[32];
      for (size_t k = 0; k < kv.second.values.size(); ++k) {
        snprintf(buf, sizeof buf, "%.17g", kv.second.values[k]);
        o << (k ? "," : "") << buf;
      }
    }
    o << "\n";
  }
  for (const CustomOpDecl &d : opt.custom_ops)
    o << "custom_op=" << c_string(d.domain) << "::" << c_string(d.op) << "=" << d.symbol << (d.same ? ":same" : "")
      << "\n";
  o << "function_bodies=" << (opt.prefer_function_bodies ? 1 : 0) << "\n";
  if (opt.winograd != WinogradMode::Auto) o << "winograd=" << winograd_mode_name(opt.winograd) << "\n";
  if (opt.winograd_bands) o << "winograd_bands=" << opt.winograd_bands << "\n";
  // (As given: --precision fp16 alone keeps recurrent weights float.)
  if (opt.weights != WeightStorage::F32) o << "weights=" << weight_storage_name(opt.weights) << "\n";
  if (opt.precision != Precision::F32) o << "precision=" << precision_name(opt.precision) << "\n";
  // Tuned tiles (--tuning): what they say, not the file's name.
  auto tile_class = [&](const Target::TileClass &c) {
    o << Target::tile_kind_name(c.kind) << " oc=" << c.oc << " row=" << c.row << " ic=" << c.ic
      << " linear=" << c.linear;
  };
  for (const Target::TunedTile &tt : t.tuned_tiles) {
    o << "tuned_tile=";
    tile_class(tt.at);
    o << " tile=" << tt.mr << "," << tt.nv << "\n";
  }
  for (const Target::TunedWinograd &w : t.tuned_winograd) {
    char buf[128];
    snprintf(buf, sizeof buf, "%.17g,%.17g,%.17g,%.17g", w.ratio[0], w.ratio[1], w.ratio[2], w.ratio[3]);
    o << "tuned_winograd=ic=" << w.ic << " oc=" << w.oc << " out=" << w.out_h << "x" << w.out_w << " batch=" << w.batch
      << " ratios=" << buf << "\n";
  }
  for (const Target::TunedSplit &ts : t.tuned_splits) {
    o << "tuned_split=";
    tile_class(ts.at);
    o << " split=" << task_split_text(ts.split) << "\n";
  }
  if (t.split_forced) o << "task_split=" << task_split_text(t.forced_split) << "\n";
  if (t.serial_step_ops != resolve_target(t.name).serial_step_ops)
    o << "tuned_serial_step_ops=" << t.serial_step_ops << "\n";
  // The budgets given steer the Winograd choices (the other limits only refuse).
  const Limits &lim = opt.import.limits;
  if (lim.max_weights_bytes > 0) o << "max_weights_bytes=" << lim.max_weights_bytes << "\n";
  if (lim.arena_budget_given) o << "max_arena_bytes=" << lim.max_arena_bytes << "\n";
  if (lim.max_weights_ratio > 0) {
    char buf[32];
    snprintf(buf, sizeof buf, "%.17g", lim.max_weights_ratio);
    o << "max_weights_ratio=" << buf << "\n";
  }
  if (lim.max_code_bytes > 0) o << "max_code_bytes=" << lim.max_code_bytes << "\n";
  for (auto [key, r] : {std::pair{"max_arena_ratio", lim.max_arena_ratio}, {"max_code_ratio", lim.max_code_ratio}})
    if (r > 0) {
      char buf[32];
      snprintf(buf, sizeof buf, "%.17g", r);
      o << key << "=" << buf << "\n";
    }
  if (opt.check_addresses) o << "check_addresses=1\n";
  if (opt.serial_step_ops >= 0) o << "serial_step_ops=" << opt.serial_step_ops << "\n";
  if (opt.quantize == Quantize::Dynamic) o << "quantize=dynamic\n";
  if (opt.quantize != Quantize::None && opt.weight_bits != 8) o << "weight_bits=" << opt.weight_bits << "\n";
  if (opt.quantize == Quantize::Static) {
    o << "quantize=static\n";
    char buf[64];
    for (const auto &kv : opt.calibration) {
      snprintf(buf, sizeof buf, "%.9g,%.9g", kv.second.first, kv.second.second);
      o << "range=" << c_string(kv.first) << "=" << buf << "\n";
    }
  }
  return o.str();
}

namespace {

std::string make_header(const Artifact &a) {
  std::string N = upper(a.name);
  std::ostringstream h;
  h << "/* " << a.name << ".h — generated by tinyrt-compile for target " << a.target.name << ". Do not edit. */\n"
    << "#ifndef TINYRT_MODEL_" << N << "_H_\n#define TINYRT_MODEL_" << N << "_H_\n\n"
    << "#include \"tinyrt.h\"\n\n#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n"
    << "/* The model descriptor; pass &" << a.name << "_model to tinyrt_session_init(). */\n"
    << "extern const tinyrt_model " << a.name << "_model;\n\n"
    << "/* Bytes of arena the session needs (align it to TINYRT_ARENA_ALIGN). */\n"
    << "#define " << N << "_ARENA_BYTES " << a.stats.arena_bytes << "u\n"
    << "#define " << N << "_NUM_INPUTS " << a.inputs.size() << "\n"
    << "#define " << N << "_NUM_OUTPUTS " << a.outputs.size() << "\n\n"
    << "/* Integrity, FNV-1a 64 (docs/ABI.md): the model hash identifies the ONNX\n"
    << " * file and the compile options; tinyrt_session_verify() recomputes the\n"
    << " * weights checksum. */\n"
    << "#define " << N << "_MODEL_HASH UINT64_C(" << hex64(a.model_hash) << ")\n"
    << "#define " << N << "_SOURCE_CHECKSUM UINT64_C(" << hex64(a.source_checksum) << ")\n"
    << "#define " << N << "_OPTIONS_HASH UINT64_C(" << hex64(a.options_hash) << ")\n"
    << "#define " << N << "_WEIGHTS_BYTES " << a.weights_bytes << "u\n"
    << "#define " << N << "_WEIGHTS_CHECKSUM UINT64_C(" << hex64(a.weights_checksum) << ")\n";
  auto tensors = [&](const std::vector<TensorInfo> &ts, const char *kind) {
    for (size_t i = 0; i < ts.size(); ++i) {
      const TensorInfo &t = ts[i];
      std::string p = N + "_" + kind + "_" + std::to_string(i);
      h << "\n#define " << p << "_NAME " << c_string(t.name) << "\n"
        << "#define " << p << "_DTYPE " << dtype_macro(t.dtype) << "\n"
        << "#define " << p << "_RANK " << t.shape.size() << "\n"
        << "#define " << p << "_DIMS {";
      for (size_t k = 0; k < t.shape.size(); ++k) h << (k ? ", " : "") << t.shape[k];
      if (t.shape.empty()) h << "1";
      h << "}\n#define " << p << "_ELEMENTS " << shape_numel(t.shape) << "\n"
        << "#define " << p << "_BYTES " << t.bytes << "\n";
      // Run-time dimensions: DIMS, ELEMENTS and BYTES are the upper bounds.
      if (t.dynamic()) {
        h << "#define " << p << "_DIMS_MIN {";
        for (size_t k = 0; k < t.min.size(); ++k) h << (k ? ", " : "") << t.min[k];
        h << "}\n";
        for (size_t k = 0; k < t.min.size(); ++k)
          if (!t.dim_names[k].empty())
            h << "/* axis " << k << ": the run-time dimension " << t.dim_names[k] << " */\n"
              << "#define " << p << "_DIM" << k << "_MIN " << t.min[k] << "\n"
              << "#define " << p << "_DIM" << k << "_MAX " << t.shape[k] << "\n";
      }
    }
  };
  tensors(a.inputs, "INPUT");
  tensors(a.outputs, "OUTPUT");
  h << "\n#ifdef __cplusplus\n}\n#endif\n\n#endif\n";
  return h.str();
}

// The instructions an int8 GEMM forms its products with (JSON
// fusion_groups[].int8_products; docs/QUANTIZATION.md): on x86 without VNNI
// the layer's MaddForm: "vpmaddubsw" (bytes), "vpsignb+vpmaddubsw" (signed
// bytes) or "vpmaddwd" (widened, about the throughput of float FMAs).
const char *int8_products(const Target &t, const GemmSpec &s) {
  if (s.i16)  // int16 pairs (Winograd's product; a widened input, w8)
    return t.dot_i8 == DotI8::X86Vnni ? "vpdpwssd" : t.dot_i8 == DotI8::X86Madd ? "vpmaddwd" : "smull";
  switch (t.dot_i8) {
    case DotI8::X86Vnni: return "vpdpbusd";
    case DotI8::NeonSdot: return "sdot";
    case DotI8::NeonPairs: return "smull";
    case DotI8::X86Madd: break;
  }
  switch (s.madd) {
    case MaddForm::Bytes: return "vpmaddubsw";
    case MaddForm::SignedBytes: return "vpsignb+vpmaddubsw";
    case MaddForm::Widened: break;
  }
  return "vpmaddwd";
}

// A weights budget given (--max-weights-bytes) against the weights as
// emitted. The Winograd choices keep within it; what is left above it is
// the smallest plan, or forms forced with --winograd.
void check_weights_budget(const Program &p, int64_t weights) {
  const Limits &lim = p.graph.limits;
  if (!lim.weights_budget_given() || weights <= lim.given_weights_budget()) return;
  const bool traded =
      std::any_of(p.kernels.begin(), p.kernels.end(), [](const Kernel &k) { return is_winograd(k.kind); });
  char ratio[64] = "";
  if (lim.model_weights_bytes > 0)
    snprintf(ratio, sizeof ratio, " (%.3fx the model's weights)", (double)weights / (double)lim.model_weights_bytes);
  fail_cap("the weights take " + std::to_string(weights) + " bytes, more than the budget of " +
           std::to_string(lim.given_weights_budget()) + " (--max-weights-bytes)" +
           (traded ? "; forced Winograd forms add " + std::to_string(p.budgets.traded_weights) +
                         " bytes of them (--winograd auto keeps within the budget)"
                   : "; no plan takes fewer: the smallest budget that fits is " + std::to_string(weights) + " bytes" +
                         ratio));
}

// The code budget (--max-code-bytes): the Winograd layers to keep direct
// so that the code shrinks by at least `excess` bytes, by their transforms'
// code (a direct convolution's GEMM is about the grouped GEMM's), least
// estimated gain per byte first; none when no layer is left.
std::vector<std::string> code_budget_drops(const Program &p, const ModuleResult &mr, int64_t excess) {
  std::map<std::string, int64_t> code;
  for (size_t i = 0; i < p.kernels.size(); ++i)
    if ((is_winograd(p.kernels[i].kind) || p.kernels[i].kind == KernelKind::WinogradWeights) &&
        !p.kernels[i].nodes.empty())
      code[p.kernels[i].nodes.front()] += mr.kernel_code_bytes.at(i);
  std::vector<std::tuple<double, std::string, int64_t>> layers;  // (gain per byte, node, bytes)
  for (const auto &[node, bytes] : code) {
    double gain = 0;
    for (const MemoryTrade &t : p.trades)
      if (t.kind == "winograd" && t.node == node) gain = t.gain;
    layers.push_back({gain / (double)std::max<int64_t>(1, bytes), node, bytes});
  }
  std::sort(layers.begin(), layers.end());
  std::vector<std::string> drop;
  int64_t saved = 0;
  for (const auto &[per_byte, node, bytes] : layers) {
    if (saved >= excess) break;
    drop.push_back(node);
    saved += bytes;
  }
  return drop;
}

[[noreturn]] void fail_code_budget(int64_t code, int64_t budget, size_t dropped) {
  fail_cap("the code takes " + std::to_string(code) + " bytes, more than the budget of " + std::to_string(budget) +
           " (--max-code-bytes)" +
           (dropped ? " with " + std::to_string(dropped) + " Winograd layer(s) kept direct for it" : std::string()) +
           "; no plan takes less: the smallest budget that fits is " + std::to_string(code) + " bytes");
}

std::string make_json(const Artifact &a, const Program &p, const ModuleResult &mr) {
  const std::vector<int64_t> &tasks = mr.tasks;
  using nlohmann::json;
  json j;
  j["name"] = a.name;
  j["target"] = a.target.name;
  j["triple"] = a.target.triple;
  j["arena_bytes"] = a.stats.arena_bytes;
  j["arena_lower_bound_bytes"] = a.stats.lower_bound_bytes;
  j["weights_bytes"] = a.weights_bytes;
  // The layers the serial-step choice averages over (tinyrt-perf's
  // mean_step_ops, which tinyrt-tune reads).
  j["layers"] = mr.layers;
  // Of them, the float weights stored as half (--weights fp16).
  int64_t half_bytes = 0;
  std::set<int> counted;  // (kernels sharing a weight: a Winograd layer's bands and chunks)
  for (const Kernel &k : p.kernels) {
    // (An rt Winograd form's 3x3 weights: the WinogradWeights kernels' input.)
    int v = k.kind == KernelKind::WinogradWeights ? k.ins[0] : packed_weights_of(k);
    if (v >= 0 && p.graph.v(v).dtype == DType::F16 && p.graph.v(v).is_const() && counted.insert(v).second)
      half_bytes += (int64_t)p.graph.v(v).data->bytes.size();
  }
  j["weights_half_bytes"] = half_bytes;
  // Of the float GEMMs, those computing their products in half (--precision
  // fp16: fusion_groups[].half).
  int half_gemms = 0, half_depthwise = 0;
  for (const Kernel &k : p.kernels) {
    half_gemms += k.kind == KernelKind::Gemm && k.gemm.half;
    half_depthwise += k.kind == KernelKind::Depthwise && k.gemm.half;
  }
  j["half_gemms"] = half_gemms;
  // ... the depthwise convolutions doing so, and the intermediate tensors
  // stored as half for them (half_inputs).
  j["half_depthwise"] = half_depthwise;
  int64_t half_tensor_bytes = 0;
  std::set<int> half_inputs;
  for (const Kernel &k : p.kernels)
    if (is_scheduled(k.kind) && k.gemm.half && p.graph.v(k.ins[0]).dtype == DType::F16 &&
        half_inputs.insert(k.ins[0]).second)
      half_tensor_bytes += p.graph.v(k.ins[0]).numel() * 2;
  j["half_tensor_bytes"] = half_tensor_bytes;
  j["code_bytes"] = a.code_bytes;
  // 64-bit hashes as "0x..." strings (JSON numbers lose bits past 2^53).
  j["model_hash"] = hex64(a.model_hash);
  j["source_checksum"] = hex64(a.source_checksum);
  j["options_hash"] = hex64(a.options_hash);
  j["compile_options"] = a.options_text;
  j["weights_checksum"] = hex64(a.weights_checksum);
  // Budgets, and each choice that traded memory for speed with its bytes
  // and estimated gain (vector instructions saved at the bounds).
  const Limits &lim = p.graph.limits;
  j["budgets"] = {
      {"weights_budget_bytes", p.budgets.weights},         {"weights_given", lim.weights_budget_given()},
      {"model_weights_bytes", lim.model_weights_bytes},    {"weights_before_trades_bytes", p.budgets.base_weights},
      {"traded_weights_bytes", p.budgets.traded_weights},  {"arena_budget_bytes", p.budgets.arena},
      {"arena_before_trades_bytes", p.budgets.base_arena}, {"code_budget_bytes", p.budgets.code},
      {"code_all_direct_bytes", p.budgets.base_code}};
  json trades = json::array();
  for (const MemoryTrade &t : p.trades)
    trades.push_back({{"kind", t.kind},
                      {"label", t.label},
                      {"node", t.node},
                      {"wanted", t.wanted},
                      {"taken", t.taken},
                      {"bytes", t.bytes},
                      {"estimated_gain", t.gain},
                      {"wanted_bytes", t.wanted_bytes},
                      {"wanted_estimated_gain", t.wanted_gain},
                      {"bands", t.bands},
                      {"chunk_channels", t.chunk},
                      {"arena_bytes", t.arena_bytes}});
  j["memory_trades"] = trades;
  // The memory plan: each arena buffer, its value and live steps (step 0
  // writes the inputs, kernel i runs at step i + 1, the last step reads the
  // outputs).
  json bufs = json::array();
  for (const PlannedBuffer &b : p.stats.buffers)
    bufs.push_back({{"value", p.graph.v(b.value).name},
                    {"offset", b.offset},
                    {"bytes", b.bytes},
                    {"first_step", b.first},
                    {"last_step", b.last}});
  j["memory_plan"] = {{"steps", p.kernels.size() + 2}, {"buffers", bufs}};
  j["compile_seconds"] = a.compile_seconds;
  auto tinfo = [](const std::vector<TensorInfo> &ts) {
    json arr = json::array();
    for (auto &t : ts) {
      arr.push_back({{"name", t.name},
                     {"dtype", dtype_name(t.dtype)},
                     {"shape", t.shape},
                     {"arena_offset", t.offset},
                     {"bytes", t.bytes}});
      if (t.dynamic()) {  // run-time dimensions: shape holds the upper bounds
        arr.back()["shape_min"] = t.min;
        arr.back()["dim_names"] = t.dim_names;
      }
    }
    return arr;
  };
  j["inputs"] = tinfo(a.inputs);
  j["outputs"] = tinfo(a.outputs);
  json ops = json::array();
  json groups = json::array();
  for (size_t i = 0; i < p.kernels.size(); ++i) {
    const Kernel &k = p.kernels[i];
    for (auto &n : k.nodes) ops.push_back({{"node", n}, {"kernel", i}});
    json gj = {{"kernel", i},
               {"label", k.label},
               {"family", kernel_family(k.kind)},
               {"nodes", k.nodes},
               {"tasks", tasks[i]},
               {"serial", (bool)mr.serial[i]},
               {"ops", mr.ops[i]},
               {"output", p.graph.v(k.out).name},
               {"output_shape", p.graph.v(k.out).shape}};
    if (is_scheduled(k.kind)) gj["tile"] = {{"mr", k.gemm.mr}, {"nr", k.gemm.nr}};
    if (k.kind == KernelKind::QGemm) {
      gj["int8_products"] = int8_products(a.target, k.gemm);
      // Its form's measured time over a float GEMM's (Target::int8_over_float; int16 pairs: Winograd's
      // grouped GEMM, Target::i16_over_float; null: not measured, as int16 pairs over int8 weights).
      const double r = k.gemm.w8    ? 0
                       : k.gemm.i16 ? a.target.i16_over_float
                                    : a.target.int8_time_over_float(k.gemm.madd, k.gemm.pair16);
      gj["int8_over_float"] = r > 0 ? json(r) : json(nullptr);
    }
    if (is_int8_depthwise(p, k)) {
      const double r = a.target.depthwise_int8_over_float;
      gj["int8_over_float"] = r > 0 ? json(r) : json(nullptr);
    }
    if (k.kind == KernelKind::Gemm || k.kind == KernelKind::Depthwise) gj["half"] = k.gemm.half;
    if (k.kind == KernelKind::Gemm || k.kind == KernelKind::QGemm) {
      GemmTileShape ts = gemm_tile_shape(k.gemm);
      const Target::TileClass tc = gemm_tile_class(k);
      gj["gemm"] = {{"oc_per_group", ts.oc},
                    {"ic_per_group", ts.ic},
                    {"row", ts.row},
                    {"linear", ts.linear},
                    {"span", ts.span},
                    // rule, or the tuned or forced split (ir/task_split.h)
                    {"task_split", task_split_text(k.gemm.split)},
                    {"k_run", k.gemm.k_run},
                    // Target::gemm_tile's arguments (the key of a tuned tile or split)
                    {"tile_class",
                     {{"oc", tc.oc},
                      {"row", tc.row},
                      {"ic", tc.ic},
                      {"linear", tc.linear},
                      {"kind", Target::tile_kind_name(tc.kind)}}}};
    }
    // A convolution the winograd pass may rewrite (direct, or its
    // Winograd input transform): the geometry tinyrt-tune keys Winograd
    // forms by (Target::tuned_winograd).
    const GemmSpec &cs = k.gemm;
    if ((k.kind == KernelKind::Gemm && winograd_eligible(p, k)) || k.kind == KernelKind::WinogradIn)
      gj["winograd_class"] = {
          {"ic", cs.in_c}, {"oc", cs.out_c}, {"out_h", cs.out_h}, {"out_w", cs.out_w}, {"batch", cs.batch}};
    if (is_winograd(k.kind)) {
      gj["winograd"] = {{"m", k.wino.m}, {"tiles", k.gemm.batch * k.wino.tiles_h * k.wino.tiles_w}};
      if (k.wino.rows > 0) gj["winograd"]["band_tile_rows"] = {k.wino.row0, k.wino.row0 + k.wino.rows};
    }
    if (k.kind == KernelKind::Call) gj["call"] = {{"symbol", k.call.symbol}, {"op", k.call.op}};
    if (is_data_dependent(k.kind)) gj["count"] = p.graph.v(k.count).name;
    if (k.guard >= 0) {
      const Guard &gd = p.graph.guards[k.guard];
      gj["branch"] = {{"of", gd.what}, {"condition", p.graph.v(gd.eff).name}, {"runs_when", gd.eff_expect}};
    }
    if (k.kind == KernelKind::Fail) gj["branch_error"] = k.message;
    if (kernel_flops(k) >= 0) gj["flops"] = kernel_flops(k);
    if (mr.accesses[i]) gj["addresses"] = {{"accesses", mr.accesses[i]}, {"unproved", mr.accesses_unproved[i]}};
    if (mr.address_checks[i])
      gj["address_checks"] = {{"tested", mr.address_checks[i]}, {"not_proved", mr.address_checks_left[i]}};
    groups.push_back(gj);
  }
  // A model with run-time dimensions ends with the step writing its
  // outputs' actual dimensions.
  for (size_t i = p.kernels.size(); i < tasks.size(); ++i)
    groups.push_back({{"kernel", i},
                      {"label", "output dims"},
                      {"family", "output_dims"},
                      {"nodes", json::array()},
                      {"tasks", tasks[i]},
                      {"serial", false},
                      {"ops", 0}});
  j["ops"] = ops;
  j["fusion_groups"] = groups;
  // The int8 GEMMs and depthwise convolutions whose form this target was
  // measured to run slower than float (Target::int8_over_float,
  // depthwise_int8_over_float; -v says so too).
  int slower = 0;
  for (const json &g : groups)
    slower +=
        g.contains("int8_over_float") && g["int8_over_float"].is_number() && g["int8_over_float"].get<double>() > 1;
  j["int8_slower_than_float"] = slower;
  j["warnings"] = a.warnings;
  j["addresses"] = {{"accesses", a.accesses}, {"unproved", a.accesses_unproved}};
  if (a.address_checks) j["address_checks"] = {{"tested", a.address_checks}, {"not_proved", a.address_checks_left}};
  // Names are arbitrary bytes: invalid UTF-8 becomes U+FFFD, never an
  // exception or invalid JSON.
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

void write_file(const fs::path &path, const std::string &data) {
  std::ofstream f(path, std::ios::binary);
  if (!f) fail_usage("cannot write " + path.string());
  f.write(data.data(), (std::streamsize)data.size());
  if (!f) fail_usage("error writing " + path.string());
}

// A value's shape with its run-time extents: [1,T<=64,40].
std::string dims_str(const Graph &g, const Value &v) {
  if (!v.is_dynamic()) return shape_str(v.shape);
  std::string s = "[";
  for (int a = 0; a < v.rank(); ++a) {
    s += a ? "," : "";
    s += v.dim(a) >= 0 ? g.syms[(size_t)v.dim(a)].name + "<=" + std::to_string(v.shape[(size_t)a])
                       : std::to_string(v.shape[(size_t)a]);
  }
  return s + "]";
}

void dump_kernels(const Program &p, const std::string &path) {
  std::ostringstream o;
  for (size_t s = 0; s < p.graph.syms.size(); ++s) {
    const DimSym &d = p.graph.syms[s];
    o << "run-time dimension " << d.name << " in " << d.lo << ":" << d.hi;
    if (d.def) o << " = " << to_string(d.def);
    if (d.produced) o << " (data-dependent: computed by a kernel)";
    if (s < p.stats.sym_offsets.size() && p.stats.sym_offsets[s] >= 0)
      o << " (int64 at arena offset " << p.stats.sym_offsets[s] << ")";
    o << "\n";
  }
  for (size_t i = 0; i < p.kernels.size(); ++i) {
    const Kernel &k = p.kernels[i];
    const Value &out = p.graph.v(k.out);
    o << "kernel " << i << " " << k.label << " [" << kernel_family(k.kind) << "]\n"
      << "  out " << out.name << " " << dtype_name(out.dtype) << dims_str(p.graph, out) << " perm=";
    for (int a : p.perm_of(k.out)) o << a;
    o << " offset=" << p.storage[k.out].offset << "\n";
    for (size_t s = 0; s < k.ins.size(); ++s)
      o << "  in" << s << " " << p.graph.v(k.ins[s]).name << dims_str(p.graph, p.graph.v(k.ins[s])) << "\n";
    if (k.guard >= 0) {
      const Guard &gd = p.graph.guards[k.guard];
      o << "  runs only in the " << gd.what << ": when '" << p.graph.v(gd.eff).name << "' (arena offset "
        << p.storage[gd.eff].offset << ") is " << (gd.eff_expect ? "true" : "false") << "\n";
    }
    if (k.kind == KernelKind::Fail) {
      o << "  stops the run: " << k.message << "\n";
      continue;
    }
    if (k.kind == KernelKind::Call) {
      for (size_t s = 1; s < k.call.outs.size(); ++s)
        o << "  out" << s << " " << p.graph.v(k.call.outs[s]).name << shape_str(p.graph.v(k.call.outs[s]).shape)
          << " offset=" << p.storage[k.call.outs[s]].offset << "\n";
      o << "  call " << k.call.symbol << " (custom op " << k.call.op << "), status at arena offset "
        << p.stats.call_status_offset << "\n";
      continue;
    }
    if (is_data_dependent(k.kind)) {
      o << "  count to " << p.graph.v(k.count).name << " (int64 at arena offset " << p.storage[k.count].offset << ")";
      if (k.kind == KernelKind::Nms)
        o << "; boxes " << (k.nms.center_point_box ? "[xc, yc, w, h]" : "[y1, x1, y2, x2]") << ", max per class "
          << (k.nms.max_slot >= 0 ? "in" + std::to_string(k.nms.max_slot) : std::to_string(k.nms.max_out))
          << ", IoU threshold "
          << (k.nms.iou_slot >= 0 ? "in" + std::to_string(k.nms.iou_slot) : std::to_string(k.nms.iou))
          << ", score threshold "
          << (!k.nms.has_score        ? std::string("none")
              : k.nms.score_slot >= 0 ? "in" + std::to_string(k.nms.score_slot)
                                      : std::to_string(k.nms.score));
      o << "\n";
      continue;
    }
    if (k.kind == KernelKind::TopK) {
      o << "  select along axis " << k.topk.axis << ", " << (k.topk.largest ? "largest" : "smallest")
        << " first (a heap of the best per slice)\n";
      continue;
    }
    if (k.kind == KernelKind::Recurrent) {
      const RecurrentSpec &r = k.rnn;
      o << "  cell "
        << (r.cell == CellKind::LSTM  ? "LSTM"
            : r.cell == CellKind::GRU ? "GRU"
                                      : "RNN")
        << " T=" << r.T << " B=" << r.B << " H=" << r.H << " directions=" << r.D << " state width=" << r.width << "\n";
      continue;
    }
    if (is_winograd(k.kind))
      o << "  winograd F(" << k.wino.m << "x" << k.wino.m << ", 3x3) " << k.wino.tiles_h << "x" << k.wino.tiles_w
        << " tiles per image, " << k.wino.channels << " channels"
        << (k.wino.rows > 0 ? ", tile rows " + std::to_string(k.wino.row0) + "-" +
                                  std::to_string(k.wino.row0 + k.wino.rows - 1) + " of the batch's"
                            : std::string())
        << "\n";
    if (k.kind == KernelKind::WinogradIn || k.kind == KernelKind::WinogradWeights) continue;
    bool epi = is_scheduled(k.kind) || k.kind == KernelKind::WinogradOut;
    std::string e = to_string(epi ? k.gemm.epilogue : k.expr);
    if (e.size() > 2000) e = e.substr(0, 2000) + "...";
    o << "  " << (epi ? "epilogue " : "expr ") << e << "\n";
    if (is_scheduled(k.kind))
      o << "  tile mr=" << k.gemm.mr << " nr=" << k.gemm.nr << " groups=" << k.gemm.groups << " k=" << k.gemm.k_h << "x"
        << k.gemm.k_w << "\n";
  }
  o << "arena " << p.stats.arena_bytes << " lower bound " << p.stats.lower_bound_bytes << "\n";
  write_file(path, o.str());
}

// The passes' options from the compile options.
PassOptions pass_options(const CompileOptions &opt) {
  PassOptions po;
  po.infer_and_fold.prefer_function_bodies = opt.prefer_function_bodies;
  po.quantize.mode = opt.quantize;
  po.quantize.ranges = &opt.calibration;
  po.quantize.weight_max = opt.weight_bits == 7 ? 63 : 127;
  po.winograd.mode = opt.winograd;
  po.winograd.bands = opt.winograd_bands;
  po.winograd.weights = po.pack.weights = stored_weights(opt);
  po.pack.precision = po.winograd.precision = opt.precision;
  po.pack.float_recurrent = po.winograd.float_recurrent =
      opt.precision == Precision::F16 && opt.weights == WeightStorage::F32;
  return po;
}

// Every pass of the pipeline, each followed by verify_program; `direct`:
// the convolutions the code budget keeps direct.
void run_passes(Program &p, const Target &t, const CompileOptions &opt,
                const std::function<void(const std::string &)> &report, const std::set<std::string> &direct = {}) {
  PassContext ctx{p, t, opt.log};
  auto ps = std::chrono::steady_clock::now();
  PassOptions po = pass_options(opt);
  po.winograd.direct = direct;
  run_pipeline(ctx, po, "", [&](const char *name, bool done) {
    if (!done) {
      report(std::string("pass ") + name);
      ps = std::chrono::steady_clock::now();
    } else if (opt.log) {
      *opt.log << "  " << name << ": " << std::chrono::duration<double>(std::chrono::steady_clock::now() - ps).count()
               << " s\n";
    }
  });
}

}  // namespace

Target compile_target(const CompileOptions &opt) {
  Target t = resolve_target(opt.target);
  if (!opt.tuning.empty()) {
    std::ifstream f(opt.tuning, std::ios::binary);
    if (!f) fail_usage("--tuning " + opt.tuning + ": cannot read the file");
    std::ostringstream text;
    text << f.rdbuf();
    apply_tuning(text.str(), opt.tuning, t, opt.weights, opt.precision);
  }
  if (opt.precision == Precision::F16) {
    if (!t.half_arith)
      fail_usage("--precision fp16 needs half-precision arithmetic, which target " + t.name +
                 " does not have: use aarch64-neon-fp16 (Armv8.2 FP16: Cortex-A55/A76, Raspberry Pi 5), or "
                 "--weights fp16 for half weights computed in float");
    t.use_half_tiles();
  }
  if (!opt.gemm_tile.empty()) {
    t.tuned_tiles.clear();
    int mr = 0, nv = 0, unroll = t.gemm_unroll;
    char extra = 0;
    int got = sscanf(opt.gemm_tile.c_str(), "%d,%d,%d%c", &mr, &nv, &unroll, &extra);
    if (got < 2 || got > 3 || mr < 1 || mr > 32 || nv < 1 || nv > 8 || unroll < 1 || unroll > 16)
      fail_usage("--gemm-tile '" + opt.gemm_tile + "': expected MR,NV[,UNROLL] with MR 1-32, NV 1-8, UNROLL 1-16");
    t.gemm_tiles = t.qgemm_tiles = t.qgemm_byte_tiles = t.qgemm_i16_tiles = t.qgemm_signed_tiles =
        t.qgemm_w8_tiles = {{mr, nv}};
    t.gemm_tile_table.clear();
    t.tile_nv_step = 1;  // (--precision fp16: a tile of an odd count computes in float)
    t.gemm_unroll = unroll;
    t.tiles_forced = true;
  }
  if (!opt.task_split.empty()) {
    if (!parse_task_split(opt.task_split, &t.forced_split))
      fail_usage("--task-split '" + opt.task_split +
                 "': expected ORDER[,TASKS] with ORDER pixels, channels, serial or rule (TASKS 1-4096, with pixels "
                 "or channels only)");
    t.split_forced = true;
    t.tuned_splits.clear();
  }
  return t;
}

Program plan_model(const std::string &onnx_bytes, const CompileOptions &opt) {
  Target t = compile_target(opt);
  Program p;
  p.graph = import_onnx_bytes(onnx_bytes, opt.import).graph;
  p.custom_ops = opt.custom_ops;
  run_passes(p, t, opt, [](const std::string &) {});
  return p;
}

std::vector<std::string> calibration_tensors(const std::string &onnx_path, const CompileOptions &opt) {
  Target t = compile_target(opt);
  Program p;
  p.graph = import_onnx_file(onnx_path, opt.import).graph;
  p.custom_ops = opt.custom_ops;
  PassContext ctx{p, t, nullptr};
  infer_and_fold(ctx, pass_options(opt).infer_and_fold);
  std::vector<std::string> names;
  for (int v : static_quantization_tensors(p.graph)) names.push_back(p.graph.v(v).name);
  return names;
}

std::string quantized_onnx(const std::string &onnx_path, const CompileOptions &opt) {
  if (opt.quantize == Quantize::None) fail_usage("--emit-qdq needs --quantize dynamic or static");
  Target t = compile_target(opt);
  Program p;
  p.graph = import_onnx_file(onnx_path, opt.import).graph;
  p.custom_ops = opt.custom_ops;
  PassContext ctx{p, t, opt.log};
  run_pipeline(ctx, pass_options(opt), "quantize_static");
  for (const Guard &gd : p.graph.guards)
    if (!gd.failure.empty())
      fail_unsupported("--emit-qdq: the " + gd.what + " cannot be compiled for the model's input shapes (" +
                       gd.failure + "), and an ONNX file cannot say so");
  // The file declares one opset per domain: nodes the quantization added
  // (per-axis DequantizeLinear, opset 13) cannot sit in an older model.
  for (const Node &n : p.graph.nodes)
    if (n.domain.empty() && n.opset > p.graph.opset)
      fail_unsupported("--emit-qdq needs a model of opset 13 or newer (the model imports opset " +
                       std::to_string(p.graph.opset) + "; per-channel DequantizeLinear is opset 13)");
  return export_onnx_model(p.graph);
}

// The model's C name: --name, or the file's name. A reserved name
// (reserved_name_reason) is refused with --name and prefixed with "model_"
// when it comes from the file name.
static std::string model_name(const std::string &onnx_path, const CompileOptions &opt,
                              std::vector<std::string> *warnings) {
  std::string name = sanitize_identifier(opt.name.empty() ? fs::path(onnx_path).stem().string() : opt.name);
  std::string why = reserved_name_reason(name);
  if (why.empty()) return name;
  if (!opt.name.empty()) fail_usage("--name " + opt.name + " is reserved: " + why + "; choose another name");
  warnings->push_back("the file name gives the reserved name '" + name + "' (" + why + "); the model is named 'model_" +
                      name + "' (--name chooses another)");
  return "model_" + name;
}

Artifact compile_model(const std::string &onnx_path, const CompileOptions &opt) {
  auto t0 = std::chrono::steady_clock::now();
  Artifact a;
  a.target = compile_target(opt);
  a.name = model_name(onnx_path, opt, &a.warnings);
  if (opt.log) *opt.log << "tinyrt-compile: " << onnx_path << " -> " << a.name << " for " << a.target.name << "\n";
  ImportResult imp = import_onnx_file(onnx_path, opt.import);
  Program p;
  p.graph = std::move(imp.graph);
  p.custom_ops = opt.custom_ops;
  // Progress: quiet for the first two seconds, then at most twice a second.
  auto last_report = t0;
  auto report = [&](const std::string &what) {
    auto now = std::chrono::steady_clock::now();
    double elapsed = std::chrono::duration<double>(now - t0).count();
    if (opt.log && what.rfind("codegen", 0) == 0) *opt.log << "  " << what << " (" << elapsed << " s)\n";
    if (!opt.progress || elapsed < 2 || std::chrono::duration<double>(now - last_report).count() < 0.5) return;
    last_report = now;
    char buf[32];
    snprintf(buf, sizeof buf, " (%.1f s)", elapsed);
    opt.progress(what + buf);
  };
  // The code budget may compile again with fewer Winograd layers: from
  // the imported graph, kept.
  int64_t code_budget = p.graph.limits.max_code_bytes;
  const double code_ratio = p.graph.limits.max_code_ratio;
  Graph imported;
  if (code_budget > 0 || code_ratio > 0) imported = p.graph;
  run_passes(p, a.target, opt, report);
  {
    // FNV-1a 64 of the file, read again in blocks (the import frees its
    // bytes as soon as they are parsed).
    std::ifstream f(onnx_path, std::ios::binary);
    std::vector<char> buf(1 << 16);
    a.source_checksum = kFnv1a64Offset;
    while (f.read(buf.data(), (std::streamsize)buf.size()) || f.gcount() > 0)
      a.source_checksum = fnv1a64_update(a.source_checksum, buf.data(), (size_t)f.gcount());
  }
  a.options_text = compile_options_text(a.target, a.name, opt);
  a.options_hash = fnv1a64_update(kFnv1a64Offset, a.options_text.data(), a.options_text.size());
  // FNV-1a is a stream: continuing the file's hash over the text hashes both.
  a.model_hash = fnv1a64_update(a.source_checksum, a.options_text.data(), a.options_text.size());
  ModuleOptions mo;
  mo.model_name = a.name;
  mo.checksum = a.source_checksum;
  mo.options_hash = a.options_hash;
  mo.model_hash = a.model_hash;
  mo.want_ir = mo.want_asm = !opt.dump_dir.empty();
  mo.progress = report;
  mo.check_addresses = opt.check_addresses;
  mo.require_proof = opt.require_proof;
  mo.serial_step_ops = opt.serial_step_ops;
  auto cs = std::chrono::steady_clock::now();
  ModuleResult mr = emit_module(p, a.target, mo);
  if (opt.log)
    *opt.log << "  codegen: " << std::chrono::duration<double>(std::chrono::steady_clock::now() - cs).count() << " s, "
             << mr.code_bytes << " bytes of code\n";
  int64_t base_code = 0;
  if (code_ratio > 0) {
    // A ratio of the smallest plan's code: every Winograd layer direct,
    // compiled to measure it (unless none is Winograd).
    std::set<std::string> all;
    for (const MemoryTrade &t : p.trades)
      if (t.kind == "winograd" && t.taken != "direct" && !t.node.empty()) all.insert(t.node);
    base_code = mr.code_bytes;
    if (!all.empty()) {
      report("code budget: compiling with every Winograd layer direct to measure the smallest plan's code");
      Program q;
      q.graph = imported;
      q.custom_ops = opt.custom_ops;
      run_passes(q, a.target, opt, report, all);
      base_code = emit_module(q, a.target, mo).code_bytes;
    }
    code_budget = (int64_t)(code_ratio * (double)base_code);
    if (opt.log)
      *opt.log << "  code budget " << code_budget << " bytes (--max-code-bytes " << code_ratio << "x of " << base_code
               << " bytes with every Winograd layer direct)\n";
  }
  std::set<std::string> direct;
  while (code_budget > 0 && mr.code_bytes > code_budget) {
    std::vector<std::string> drop = code_budget_drops(p, mr, mr.code_bytes - code_budget);
    if (drop.empty()) fail_code_budget(mr.code_bytes, code_budget, direct.size());
    for (const std::string &n : drop) direct.insert(n);
    if (opt.log)
      *opt.log << "  code budget " << code_budget << " bytes: " << mr.code_bytes << " over it; " << drop.size()
               << " more Winograd layer(s) kept direct, compiling again\n";
    report("code budget: compiling again with " + std::to_string(direct.size()) + " Winograd layer(s) direct");
    p = Program();
    p.graph = imported;
    p.custom_ops = opt.custom_ops;
    run_passes(p, a.target, opt, report, direct);
    mr = emit_module(p, a.target, mo);
  }
  p.budgets.code = code_budget;
  p.budgets.base_code = base_code;
  a.object = std::move(mr.object);
  a.code_bytes = mr.code_bytes;
  a.weights_bytes = mr.weights_bytes;
  a.weights_checksum = mr.weights_checksum;
  check_weights_budget(p, a.weights_bytes);
  for (size_t i = 0; i < mr.address_checks.size(); ++i) {
    a.address_checks += mr.address_checks[i];
    a.address_checks_left += mr.address_checks_left[i];
  }
  for (size_t i = 0; i < mr.accesses.size(); ++i) {
    a.accesses += mr.accesses[i];
    a.accesses_unproved += mr.accesses_unproved[i];
  }
  a.stats = p.stats;
  a.stats.weights_bytes = mr.weights_bytes;
  auto info = [&](int v) {
    const Value &val = p.graph.v(v);
    TensorInfo t{val.name, val.dtype, val.shape, p.storage[v].offset, val.numel() * dtype_bytes(val.dtype), {}, {}};
    if (val.is_dynamic())
      for (int k = 0; k < val.rank(); ++k) {
        int d = val.dim(k);
        t.min.push_back(d >= 0 ? p.graph.syms[(size_t)d].lo : val.shape[(size_t)k]);
        t.dim_names.push_back(d >= 0 ? p.graph.syms[(size_t)d].name : std::string());
      }
    return t;
  };
  for (int v : p.graph.inputs) a.inputs.push_back(info(v));
  for (int v : p.graph.outputs) a.outputs.push_back(info(v));
  for (const Kernel &k : p.kernels)
    if (k.kind == KernelKind::Fail)
      a.warnings.push_back(p.graph.guards[k.guard].what + " is not compiled (" + p.graph.guards[k.guard].failure +
                           "): taking it at run time stops the run with TINYRT_ERR_BRANCH");
  a.compile_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  a.header = make_header(a);
  a.json = make_json(a, p, mr);
  if (!opt.dump_dir.empty()) {
    fs::create_directories(opt.dump_dir);
    dump_kernels(p, (fs::path(opt.dump_dir) / (a.name + ".kernels.txt")).string());
    write_file(fs::path(opt.dump_dir) / (a.name + ".unoptimized.ll"), mr.ir_unoptimized);
    write_file(fs::path(opt.dump_dir) / (a.name + ".unproved.txt"), mr.unproved_notes);
    write_file(fs::path(opt.dump_dir) / (a.name + ".ll"), mr.ir);
    write_file(fs::path(opt.dump_dir) / (a.name + ".s"), mr.assembly);
  }
  return a;
}

bool link_shared(const Target &t, const std::string &obj, const std::string &so, std::string *message) {
  std::string cc = host_tools(t).cc;
  if (!program_exists(cc)) {
    if (message) *message = cc + " is not installed";
    return false;
  }
  // No C library: the model needs none. libgcc (static) supplies the
  // arithmetic helpers some targets use (armv7's 64-bit division).
  ProcessResult r = run_process({cc, "-shared", "-nostdlib", "-o", so, obj, "-lgcc"});
  if (r.exit_code != 0) {
    if (message) *message = r.output;
    return false;
  }
  return true;
}

std::vector<std::string> write_artifact(const Artifact &a, const std::string &outdir, std::ostream *log) {
  fs::create_directories(outdir);
  std::vector<std::string> written;
  fs::path base = fs::path(outdir) / a.name;
  write_file(base.string() + ".o", a.object);
  write_file(base.string() + ".h", a.header);
  write_file(base.string() + ".json", a.json);
  written = {base.string() + ".o", base.string() + ".h", base.string() + ".json"};
  std::string msg;
  if (link_shared(a.target, base.string() + ".o", base.string() + ".so", &msg)) {
    written.push_back(base.string() + ".so");
  } else if (log) {
    *log << "tinyrt-compile: warning: no " << a.name << ".so: " << msg << "\n";
  }
  return written;
}

// LLVM calls these from anywhere (it is built without exceptions, so
// nothing can unwind through it): write the message with write(2), which
// allocates nothing, and leave at once.
static const char *g_tool = "tinyrt";

static void write_err(const char *s) {
  size_t n = strlen(s);
  while (n > 0) {
    ssize_t w = write(2, s, n);
    if (w <= 0) return;
    s += w;
    n -= (size_t)w;
  }
}

static void on_llvm_fatal(void *, const char *reason, bool) {
  write_err(g_tool);
  write_err(": error: LLVM cannot compile this model: ");
  write_err(reason ? reason : "(no reason given)");
  write_err("\n");
  _exit(1);
}

static void on_llvm_bad_alloc(void *, const char *reason, bool) {
  write_err(g_tool);
  write_err(": error: out of memory inside LLVM (");
  write_err(reason ? reason : "allocation failed");
  write_err(
      "): the model's code or weights are too large for this machine; lower --max-weights-bytes to refuse "
      "such models before code generation\n");
  _exit(1);
}

void install_llvm_error_handlers(const char *tool) {
  g_tool = tool;
  llvm::install_fatal_error_handler(on_llvm_fatal, nullptr);
  llvm::install_bad_alloc_error_handler(on_llvm_bad_alloc, nullptr);
}

}  // namespace tinyrt
