// process.h — running host tools (the target's C compiler, qemu) and
// capturing what they print.
#pragma once

#include <string>
#include <vector>

namespace tinyrt {

struct ProcessResult {
  int exit_code = -1;  // -1: could not start; 128 + n: killed by signal n
  std::string output;  // stdout and stderr, interleaved
};

ProcessResult run_process(const std::vector<std::string> &argv, double timeout_seconds = 0);
bool program_exists(const std::string &name);
// One shell word, single-quoted (its quotes spelled '\''), safe for any
// shell line, as --device sends lines to a device's shell.
std::string shell_word(const std::string &s);
// A command line for messages and logs: words of only letters, digits and
// _-./,:=+@% as they are, others as shell_word quotes them.
std::string shell_quote(const std::vector<std::string> &argv);

}  // namespace tinyrt
