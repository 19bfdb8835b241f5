#include "util/process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <cstring>

namespace tinyrt {

extern "C" char **environ;

ProcessResult run_process(const std::vector<std::string> &argv, double timeout_seconds) {
  ProcessResult r;
  if (argv.empty()) return r;
  // The tools run processes from several threads at once (tinyrt-onnx-test
  // -j): the pipe is close-on-exec, so no other child inherits its write end
  // (whose reader would then wait for that child too), and posix_spawn runs
  // nothing in the child but the descriptor moves and the exec (a forked
  // child that allocates can block forever on a lock another thread held
  // at the fork: seen under AddressSanitizer).
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return r;
  std::vector<char *> args;
  for (auto &a : argv) args.push_back(const_cast<char *>(a.c_str()));
  args.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 1);  // dup2 clears close-on-exec on 1 and 2
  posix_spawn_file_actions_adddup2(&actions, fds[1], 2);
  pid_t pid = -1;
  int err = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  if (err != 0) {
    close(fds[0]);
    r.exit_code = 127;
    r.output = "cannot run " + argv[0] + ": " + strerror(err) + "\n";
    return r;
  }
  auto start = std::chrono::steady_clock::now();
  char buf[4096];
  bool killed = false;
  for (;;) {
    struct pollfd pfd = {fds[0], POLLIN, 0};
    int rc = poll(&pfd, 1, 100);
    if (rc > 0) {
      ssize_t n = read(fds[0], buf, sizeof buf);
      if (n <= 0) break;
      r.output.append(buf, (size_t)n);
    }
    if (timeout_seconds > 0 && !killed &&
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > timeout_seconds) {
      kill(pid, SIGKILL);
      killed = true;
      r.output += "\n(timed out after " + std::to_string((int)timeout_seconds) + " s)\n";
    }
  }
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (WIFEXITED(status))
    r.exit_code = WEXITSTATUS(status);
  else if (WIFSIGNALED(status))
    r.exit_code = 128 + WTERMSIG(status);
  return r;
}

bool program_exists(const std::string &name) {
  const char *path = getenv("PATH");
  if (!path) return false;
  std::string p = path;
  size_t start = 0;
  while (start <= p.size()) {
    size_t end = p.find(':', start);
    if (end == std::string::npos) end = p.size();
    std::string cand = p.substr(start, end - start) + "/" + name;
    if (access(cand.c_str(), X_OK) == 0) return true;
    start = end + 1;
  }
  return false;
}

std::string shell_word(const std::string &s) {
  std::string q = "'";
  for (char ch : s) q += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return q + "'";
}

std::string shell_quote(const std::vector<std::string> &argv) {
  std::string s;
  for (auto &a : argv) {
    if (!s.empty()) s += ' ';
    bool plain = !a.empty() && std::all_of(a.begin(), a.end(), [](char ch) {
      return isalnum((unsigned char)ch) || strchr("_-./,:=+@%", ch) != nullptr;
    });
    s += plain ? a : shell_word(a);
  }
  return s;
}

}  // namespace tinyrt
