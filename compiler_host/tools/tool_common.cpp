#include "tool_common.h"

#include <cstdlib>
#include <filesystem>

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
  if (!prefix.empty() && fs::exists(prefix / "include" / "tinyrt" / "tinyrt.h")) return (prefix / "include" / "tinyrt").string();
  return TINYRT_ABI_SOURCE_DIR;
}

// Compiles the custom ops' C sources with the target's C compiler and links
// them into the model's .so beside its object (no C library, like the
// model: the sources may use what libgcc and the compiler's builtins give).
void link_custom_ops(BuiltModel &m, const std::vector<std::string> &sources) {
  const Target &t = m.artifact.target;
  std::vector<std::string> link = {t.cc, "-shared", "-nostdlib", "-o", m.so_path,
                                   (fs::path(m.dir) / (m.artifact.name + ".o")).string()};
  for (size_t i = 0; i < sources.size(); ++i) {
    std::string obj = (fs::path(m.dir) / ("custom_op" + std::to_string(i) + ".o")).string();
    ProcessResult r = run_process({t.cc, "-std=c99", "-O2", "-fPIC", "-ffreestanding", "-I", abi_include_dir(), "-c",
                                   sources[i], "-o", obj});
    if (r.exit_code != 0) fail_usage("cannot compile --custom-op-source " + sources[i] + " with " + t.cc + ": " + r.output);
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
  std::string p = t.arch == TINYRT_ARCH_ARMV7 ? TINYRT_RUNNER_ARMV7
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
  std::vector<std::string> argv = t.emulator;
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

}  // namespace tinyrt
