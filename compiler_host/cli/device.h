// device.h — running a compiled model on a device (tinyrt-perf and
// tinyrt-tune --device CMD): CMD is a command prefix that runs its one
// argument, a shell command line, on the device, as `ssh pi@raspberrypi`
// does. The model, the runner built for its target and the files the
// runner reads are copied into a fresh directory there (CMD 'mktemp -d',
// CMD 'cat > FILE' fed the file), the runner runs there, and the directory
// is removed at the end.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "tool_common.h"

namespace tinyrt {

class Device {
 public:
  // Makes the directory on the device and copies the runner for `t` and
  // the model into it; a usage error naming the command and what it
  // printed when the device cannot be reached or the copy fails.
  Device(const std::string &command, const Target &t, const BuiltModel &m);
  ~Device();  // removes the directory (errors ignored)
  Device(const Device &) = delete;
  Device &operator=(const Device &) = delete;
  // The runner on the model with `args`; an argument naming a local file
  // is copied to the device once and named by its copy there.
  ProcessResult run(const std::vector<std::string> &args, double timeout_seconds = 900);

 private:
  ProcessResult remote(const std::string &line, const std::string &stdin_file = "", double timeout = 300) const;
  std::string copy(const std::string &local, const std::string &name);
  std::string command_, dir_, runner_, model_, symbol_;
  std::map<std::string, std::string> copied_;  // local path -> its copy on the device
};

}  // namespace tinyrt
