#include "process_group.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <sstream>
#include <thread>

#include "baton/error.h"
#include "baton/files.h"

extern char** environ;

namespace baton_app {

std::string own_program() {
  char path[4096];
  const ssize_t length = ::readlink("/proc/self/exe", path, sizeof(path) - 1);
  if (length <= 0) return "/proc/self/exe";
  return std::string(path, static_cast<std::size_t>(length));
}

std::string sibling_program(const std::string& name) {
  const std::string own = own_program();
  return own.substr(0, own.find_last_of('/') + 1) + name;
}

std::string read_child_output(const std::string& path) {
  return baton::read_file_if_present(path, "a child's output").value_or("");
}

std::string ProcessOutcome::describe() const {
  if (timed_out) return name + " was still running at the deadline and was killed";
  if (stopped) return name + " was stopped after another process failed";
  if (exited) return name + " exited with code " + std::to_string(exit_code);
  return name + " was killed by signal " + std::to_string(signal) + " (" + strsignal(signal) + ")";
}

ProcessGroup::~ProcessGroup() {
  kill_all();
}

pid_t spawn_process(const std::string& name, const std::vector<std::string>& argv,
                    const ChildOutput& output, const std::vector<std::string>& environment) {
  std::vector<std::string> arguments = argv;
  std::vector<char*> pointers;
  for (std::string& argument : arguments) pointers.push_back(argument.data());
  pointers.push_back(nullptr);
  // The child's environment: ours, with `environment`'s names replaced.
  std::vector<std::string> variables = environment;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    const std::string text(*entry);
    const std::string key = text.substr(0, text.find('=') + 1);
    bool replaced = false;
    for (const auto& own : environment) replaced = replaced || own.rfind(key, 0) == 0;
    if (!replaced) variables.push_back(text);
  }
  std::vector<char*> variable_pointers;
  for (std::string& variable : variables) variable_pointers.push_back(variable.data());
  variable_pointers.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (output.fd >= 0) {
    posix_spawn_file_actions_adddup2(&actions, output.fd, STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(&actions, output.fd, STDERR_FILENO);
  } else if (!output.path.empty()) {
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, output.path.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  } else {
    posix_spawn_file_actions_adddup2(&actions, STDERR_FILENO, STDOUT_FILENO);
  }
  pid_t pid = -1;
  const int error = posix_spawn(&pid, arguments[0].c_str(), &actions, nullptr, pointers.data(),
                                variable_pointers.data());
  posix_spawn_file_actions_destroy(&actions);
  if (error != 0) {
    throw baton::Error("cannot start " + name + " (" + arguments[0] + "): " + std::strerror(error));
  }
  return pid;
}

std::size_t ProcessGroup::spawn(const std::string& name, const std::vector<std::string>& argv,
                                const std::string& output_path,
                                const std::vector<std::string>& environment) {
  return spawn(name, argv,
               output_path.empty() ? ChildOutput::to_stderr() : ChildOutput::to_file(output_path),
               environment);
}

std::size_t ProcessGroup::spawn(const std::string& name, const std::vector<std::string>& argv,
                                const ChildOutput& output,
                                const std::vector<std::string>& environment) {
  return adopt(name, spawn_process(name, argv, output, environment));
}

std::size_t ProcessGroup::adopt(const std::string& name, pid_t pid) {
  Child child;
  child.pid = pid;
  child.outcome.name = name;
  children_.push_back(child);
  return children_.size() - 1;
}

bool ProcessGroup::reap(Child& child, bool block) {
  if (child.done) return true;
  int status = 0;
  pid_t result = 0;
  do {
    result = ::waitpid(child.pid, &status, block ? 0 : WNOHANG);
  } while (result < 0 && errno == EINTR);
  if (result != child.pid) return false;
  record_end(child, status);
  return true;
}

void ProcessGroup::record_end(Child& child, int status) {
  child.done = true;
  child.wait_status = status;
  child.outcome.exited = WIFEXITED(status);
  child.outcome.exit_code = child.outcome.exited ? WEXITSTATUS(status) : -1;
  child.outcome.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
}

bool ProcessGroup::running(std::size_t index) {
  return !reap(children_.at(index), false);
}

ChildState ProcessGroup::check(std::size_t index) {
  Child& child = children_.at(index);
  if (child.done) return {false, 0, child.wait_status};
  int status = 0;
  pid_t result = 0;
  do {
    result = ::waitpid(child.pid, &status, WNOHANG | WUNTRACED);
  } while (result < 0 && errno == EINTR);
  if (result != child.pid) return {};
  if (WIFSTOPPED(status)) return {true, WSTOPSIG(status), 0};
  record_end(child, status);
  return {false, 0, status};
}

void ProcessGroup::signal(std::size_t index, int signal) {
  const Child& child = children_.at(index);
  if (!child.done) ::kill(child.pid, signal);
}

std::vector<ProcessOutcome> ProcessGroup::wait_all(BenchClock::time_point deadline,
                                                   std::chrono::milliseconds grace) {
  std::optional<BenchClock::time_point> stop_at;
  for (;;) {
    bool all_done = true;
    for (Child& child : children_) {
      if (!reap(child, false)) {
        all_done = false;
      } else if (!child.outcome.succeeded() && !stop_at) {
        stop_at = BenchClock::now() + grace;
      }
    }
    if (all_done) break;
    const auto now = BenchClock::now();
    if (now >= deadline || (stop_at && now >= *stop_at)) {
      for (Child& child : children_) {
        if (child.done) continue;
        ::kill(child.pid, SIGKILL);
        reap(child, true);
        if (now >= deadline) {
          child.outcome.timed_out = true;
        } else {
          child.outcome.stopped = true;
        }
      }
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  std::vector<ProcessOutcome> outcomes;
  for (const Child& child : children_) outcomes.push_back(child.outcome);
  return outcomes;
}

void ProcessGroup::kill_all() {
  for (Child& child : children_) {
    if (child.done) continue;
    ::kill(child.pid, SIGKILL);
    reap(child, true);
  }
}

}  // namespace baton_app
