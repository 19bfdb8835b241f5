#include "device.h"

#include <filesystem>

#include "ir/error.h"

namespace tinyrt {

namespace {

// The device's shell gets every word quoted (a path may hold anything).
std::string quote_line(const std::vector<std::string> &words) {
  std::string line;
  for (const std::string &w : words) line += (line.empty() ? "" : " ") + shell_word(w);
  return line;
}

}  // namespace

// The device's command line `line`, run by the local shell as CMD 'line'
// with stdin from `stdin_file` (default /dev/null: ssh would read the
// terminal).
ProcessResult Device::remote(const std::string &line, const std::string &stdin_file, double timeout) const {
  const std::string local = command_ + " " + shell_word(line) + " < " +
                            shell_word(stdin_file.empty() ? std::string("/dev/null") : stdin_file);
  return run_process({"/bin/sh", "-c", local}, timeout);
}

std::string Device::copy(const std::string &local, const std::string &name) {
  const std::string there = dir_ + "/" + name;
  ProcessResult r = remote("cat > " + shell_word(there) + " && chmod +x " + shell_word(there), local);
  if (r.exit_code != 0)
    fail_usage("--device '" + command_ + "': cannot copy " + local + " to " + there + ": " + r.output);
  return there;
}

Device::Device(const std::string &command, const Target &t, const BuiltModel &m)
    : command_(command), symbol_(m.symbol) {
  ProcessResult r = remote("mktemp -d /tmp/tinyrt.XXXXXX");
  // Its last line (a login banner or warnings may come first).
  std::string out = r.output;
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  dir_ = out.substr(out.find_last_of('\n') == std::string::npos ? 0 : out.find_last_of('\n') + 1);
  if (r.exit_code != 0 || dir_.rfind("/tmp/tinyrt.", 0) != 0)
    fail_usage("--device '" + command_ + "': cannot make a directory there with mktemp -d (exit " +
               std::to_string(r.exit_code) + "): " + r.output);
  try {
    runner_ = copy(runner_path(t), "tinyrt-runner");
    model_ = copy(m.so_path, std::filesystem::path(m.so_path).filename().string());
  } catch (...) {
    remote("rm -rf " + shell_word(dir_));
    throw;
  }
}

Device::~Device() { remote("rm -rf " + shell_word(dir_)); }

ProcessResult Device::run(const std::vector<std::string> &args, double timeout_seconds) {
  std::vector<std::string> words = {runner_, model_, symbol_};
  for (const std::string &a : args) {
    std::error_code ec;
    if (!a.empty() && a[0] == '/' && std::filesystem::is_regular_file(a, ec)) {
      auto it = copied_.find(a);
      if (it == copied_.end()) it = copied_.emplace(a, copy(a, "file" + std::to_string(copied_.size()))).first;
      words.push_back(it->second);
    } else {
      words.push_back(a);
    }
  }
  return remote(quote_line(words), "", timeout_seconds);
}

}  // namespace tinyrt
