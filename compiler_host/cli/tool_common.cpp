#include "tool_common.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <iterator>
#include <map>

#include "tinyrt_artifact.h"
#include "tool_paths.h"

namespace tinyrt {

namespace fs = std::filesystem;

namespace {

// The installation prefix when this tool runs from an installed bin/
// directory (it has the lib/tinyrt tree beside it), else empty.
fs::path installed_prefix() {
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return {};
  fs::path prefix = exe.parent_path().parent_path();
  return fs::is_directory(prefix / TINYRT_INSTALLED_LIBDIR / "tinyrt") ? prefix : fs::path();
}

// A file of the installed lib/tinyrt tree, or empty.
std::string installed_file(const std::string &relative_to_libdir) {
  fs::path prefix = installed_prefix();
  if (prefix.empty()) return {};
  fs::path p = prefix / TINYRT_INSTALLED_LIBDIR / "tinyrt" / relative_to_libdir;
  return fs::exists(p) ? p.string() : std::string();
}

// The ABI headers for compiling custom op sources: installed, else the
// source tree's abi/.
std::string abi_include_dir() {
  fs::path prefix = installed_prefix();
  if (!prefix.empty() && fs::exists(prefix / "include" / "tinyrt" / "tinyrt.h"))
    return (prefix / "include" / "tinyrt").string();
  return TINYRT_ABI_SOURCE_DIR;
}

// Compiles the custom ops' C sources with the target's C compiler and links
// them into the model's .so beside its object (no C library, like the
// model: the sources may use what libgcc and the compiler's builtins give).
void link_custom_ops(BuiltModel &m, const std::vector<std::string> &sources) {
  const std::string cc = host_tools(m.artifact.target).cc;
  std::vector<std::string> link = {cc,   "-shared", "-nostdlib",
                                   "-o", m.so_path, (fs::path(m.dir) / (m.artifact.name + ".o")).string()};
  for (size_t i = 0; i < sources.size(); ++i) {
    std::string obj = (fs::path(m.dir) / ("custom_op" + std::to_string(i) + ".o")).string();
    ProcessResult r = run_process(
        {cc, "-std=c99", "-O2", "-fPIC", "-ffreestanding", "-I", abi_include_dir(), "-c", sources[i], "-o", obj});
    if (r.exit_code != 0)
      fail_usage("cannot compile --custom-op-source " + sources[i] + " with " + cc + ": " + r.output);
    link.push_back(obj);
  }
  link.push_back("-lgcc");
  ProcessResult r = run_process(link);
  if (r.exit_code != 0) fail_usage("cannot link " + m.so_path + " with the custom op sources: " + r.output);
}

}  // namespace

std::string icount_plugin_path() {
  std::string p = installed_file("libtinyrt_icount.so");
  return p.empty() ? TINYRT_ICOUNT_PLUGIN : p;
}

std::string runner_path(const Target &t) {
  std::string env = "TINYRT_RUNNER_";
  for (char ch : t.name) env += ch == '-' ? '_' : (char)toupper((unsigned char)ch);
  if (const char *e = getenv(env.c_str())) return e;
  if (t.arch == TINYRT_ARCH_ARMV7 || t.arch == TINYRT_ARCH_AARCH64) {
    std::string inst = installed_file(t.name + "/tinyrt-runner");
    if (!inst.empty()) return inst;
  } else if (!installed_prefix().empty()) {
    fs::path host = fs::read_symlink("/proc/self/exe").parent_path() / "tinyrt-runner";
    if (fs::exists(host)) return host.string();
  }
  std::string p = t.arch == TINYRT_ARCH_ARMV7     ? TINYRT_RUNNER_ARMV7
                  : t.arch == TINYRT_ARCH_AARCH64 ? TINYRT_RUNNER_AARCH64
                                                  : TINYRT_RUNNER_HOST;
  if (!fs::exists(p))
    fail_usage("no tinyrt-runner for " + t.name + " at " + p + " (build with -DTINYRT_CROSS=ON, or set " + env + ")");
  return p;
}

BuiltModel build_model(const std::string &onnx, const CompileOptions &opt, const std::string &dir) {
  BuiltModel m;
  m.artifact = compile_model(onnx, opt);
  m.dir = dir;
  write_artifact(m.artifact, dir, nullptr);
  m.so_path = (fs::path(dir) / (m.artifact.name + ".so")).string();
  m.symbol = m.artifact.name + "_model";
  if (!fs::exists(m.so_path)) {
    std::string msg;
    if (!link_shared(m.artifact.target, (fs::path(dir) / (m.artifact.name + ".o")).string(), m.so_path, &msg))
      fail_usage("cannot link " + m.so_path + ": " + msg);
  }
  if (!opt.link_sources.empty()) link_custom_ops(m, opt.link_sources);
  return m;
}

ProcessResult run_runner(const Target &t, const BuiltModel &m, const std::vector<std::string> &args,
                         const std::vector<std::string> &emulator_args, double timeout) {
  std::vector<std::string> argv = host_tools(t).emulator;
  argv.insert(argv.end(), emulator_args.begin(), emulator_args.end());
  argv.push_back(runner_path(t));
  argv.push_back(m.so_path);
  argv.push_back(m.symbol);
  argv.insert(argv.end(), args.begin(), args.end());
  return run_process(argv, timeout);
}

std::string make_temp_dir(const std::string &prefix) {
  std::string tmpl = (fs::temp_directory_path() / (prefix + "-XXXXXX")).string();
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  if (!mkdtemp(buf.data())) fail_usage("cannot create a temporary directory");
  return buf.data();
}

namespace {

// input_*.pb files of one set, by the number after the prefix.
std::vector<fs::path> input_files(const fs::path &set) {
  std::vector<fs::path> r;
  for (auto &e : fs::directory_iterator(set)) {
    std::string n = e.path().filename().string();
    if (n.rfind("input_", 0) == 0 && e.path().extension() == ".pb") r.push_back(e.path());
  }
  auto num = [](const fs::path &p) { return strtol(p.stem().string().substr(6).c_str(), nullptr, 10); };
  std::sort(r.begin(), r.end(), [&](const fs::path &a, const fs::path &b) { return num(a) < num(b); });
  return r;
}

// The values a tensor took: its extremes and, for percentiles, a sample
// (every k-th value of a set, at most kSample per set).
struct Observed {
  double lo = INFINITY, hi = -INFINITY;
  std::vector<float> sample;
};
constexpr int64_t kSample = 1 << 18;

void observe(std::map<std::string, Observed> &obs, const std::string &name, const ConstData &t, bool sample) {
  Observed &o = obs[name];
  int64_t n = shape_numel(t.shape), step = std::max<int64_t>(1, (n + kSample - 1) / kSample);
  for (int64_t i = 0; i < n; ++i) {
    double v = t.get_f(i);
    if (!std::isfinite(v)) continue;
    o.lo = std::min(o.lo, v);
    o.hi = std::max(o.hi, v);
    if (sample && i % step == 0) o.sample.push_back((float)v);
  }
}

}  // namespace

CalibrationRanges calibrate(const std::string &onnx, const CompileOptions &opt, const std::string &dir,
                            double percentile, std::ostream *log) {
  if (!(percentile > 50 && percentile <= 100)) fail_usage("--calibration-percentile must be above 50 and at most 100");
  if (dir.empty()) fail_usage("--quantize static needs --calibration DIR (input sets in the ONNX test layout)");
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) fail_usage("--calibration '" + dir + "' is not a directory");
  std::vector<fs::path> sets;
  for (auto &e : fs::directory_iterator(dir))
    if (e.is_directory() && e.path().filename().string().rfind("test_data_set_", 0) == 0 &&
        !fs::exists(e.path() / "expected_error.txt"))  // (a set whose run must fail is no calibration data)
      sets.push_back(e.path());
  std::sort(sets.begin(), sets.end());
  if (sets.empty() && !input_files(dir).empty()) sets.push_back(dir);
  if (sets.empty())
    fail_usage("--calibration '" + dir + "' holds no input sets (test_data_set_*/input_*.pb or input_*.pb)");
  std::vector<std::string> names = calibration_tensors(onnx, opt);
  CompileOptions co = opt;
  co.target = "host";
  co.quantize = Quantize::None;
  co.calibration.clear();
  co.import.extra_outputs = names;
  co.name = "calibrate";
  co.dump_dir.clear();
  co.log = nullptr;
  co.progress = nullptr;
  std::string work = make_temp_dir("tinyrt-calibrate");
  std::map<std::string, Observed> obs;
  bool sample = percentile < 100;
  try {
    BuiltModel m = build_model(onnx, co, work);
    const Artifact &a = m.artifact;
    for (size_t si = 0; si < sets.size(); ++si) {
      std::vector<fs::path> files = input_files(sets[si]);
      std::vector<std::pair<std::string, ConstP>> given;
      for (auto &f : files) {
        std::string name;
        ConstP t = read_tensor_file(f.string(), &name);
        given.push_back({name, t});
      }
      std::string in = (fs::path(work) / "in.bin").string(), out = (fs::path(work) / "out.bin").string();
      // A model compiled for ranges takes each set at its own shape.
      bool dynamic = false;
      std::vector<Shape> shapes;
      {
        std::ofstream f(in, std::ios::binary);
        for (size_t k = 0; k < a.inputs.size(); ++k) {
          const TensorInfo &ti = a.inputs[k];
          ConstP t;
          for (auto &g : given)
            if (g.first == ti.name) t = g.second;
          if (!t && k < given.size()) t = given[k].second;
          if (!t) fail_usage("calibration set " + sets[si].string() + " has no input '" + ti.name + "'");
          if (!ti.accepts(t->dtype, t->shape))
            fail_usage("calibration set " + sets[si].string() + ": input '" + ti.name + "' is " + dtype_name(t->dtype) +
                       shape_str(t->shape) + ", the model expects " + ti.takes());
          dynamic = dynamic || ti.dynamic();
          shapes.push_back(t->shape);
          f.write(reinterpret_cast<const char *>(t->bytes.data()), (std::streamsize)t->bytes.size());
          if (std::find(names.begin(), names.end(), ti.name) != names.end()) observe(obs, ti.name, *t, sample);
        }
      }
      for (const TensorInfo &ti : a.outputs) dynamic = dynamic || ti.dynamic();
      std::vector<std::string> args = {"--in", in, "--out", out};
      if (dynamic) args.insert(args.end(), {"--dims", runner_dims(shapes)});
      ProcessResult pr = run_runner(a.target, m, args);
      if (pr.exit_code != 0) fail_usage("calibration run failed: " + pr.output);
      std::map<size_t, Shape> out_dims = runner_output_dims(pr.output);
      std::ifstream f(out, std::ios::binary);
      std::string got((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
      size_t off = 0;
      for (size_t k = 0; k < a.outputs.size(); ++k) {
        const TensorInfo &ti = a.outputs[k];
        Shape shape = out_dims.count(k) ? out_dims[k] : ti.shape;  // the run's (dense) or the fixed ones
        const size_t bytes = (size_t)shape_numel(shape) * (size_t)dtype_bytes(ti.dtype);
        if (got.size() < off + bytes) fail_usage("calibration run wrote too few output bytes");
        if (ti.dtype == DType::F32 && std::find(names.begin(), names.end(), ti.name) != names.end()) {
          ConstData t;
          t.dtype = ti.dtype;
          t.shape = shape;
          t.bytes.assign(got.begin() + (long)off, got.begin() + (long)(off + bytes));
          observe(obs, ti.name, t, sample);
        }
        off += bytes;
      }
      if (log)
        *log << "calibration: set " << si + 1 << "/" << sets.size() << " (" << sets[si].filename().string() << ")\n";
    }
  } catch (...) {
    fs::remove_all(work, ec);
    throw;
  }
  fs::remove_all(work, ec);
  // min/max, or the percentile's values at both ends (within min/max).
  CalibrationRanges ranges;
  for (auto &kv : obs) {
    Observed &o = kv.second;
    if (!(o.lo <= o.hi)) continue;  // no finite value seen
    double lo = o.lo, hi = o.hi;
    if (sample && !o.sample.empty()) {
      auto at = [&](double q) {
        size_t k = std::min(o.sample.size() - 1, (size_t)std::floor(q * (double)(o.sample.size() - 1)));
        std::nth_element(o.sample.begin(), o.sample.begin() + (long)k, o.sample.end());
        return (double)o.sample[k];
      };
      lo = std::max(lo, at(1 - percentile / 100));
      hi = std::min(hi, at(percentile / 100));
    }
    ranges[kv.first] = {lo, hi};
  }
  return ranges;
}

std::map<size_t, Shape> runner_output_dims(const std::string &output) {
  std::map<size_t, Shape> dims;
  std::istringstream lines(output);
  std::string line;
  while (std::getline(lines, line)) {
    unsigned k = 0;
    int at = 0;
    if (sscanf(line.c_str(), "dims %u:%n", &k, &at) != 1 || at == 0) continue;
    Shape sh;
    std::stringstream ds(line.substr((size_t)at));
    std::string tok;
    while (std::getline(ds, tok, ',')) sh.push_back(strtoll(tok.c_str(), nullptr, 10));
    dims[k] = sh;
  }
  return dims;
}

std::string runner_dims(const std::vector<Shape> &shapes) {
  std::string r;
  for (size_t i = 0; i < shapes.size(); ++i) {
    r += i ? ";" : "";
    for (size_t k = 0; k < shapes[i].size(); ++k) r += (k ? "," : "") + std::to_string(shapes[i][k]);
  }
  return r;
}

}  // namespace tinyrt
