// Child processes, started one way for everything that starts them (`baton launch`'s ranks,
// the bench's ranks, ucx_perftest's server and client): posix_spawn with an environment built
// before the child exists (nothing runs in the child between fork and exec, so a launcher
// with threads, like the one hosting the rendezvous store, is safe). ProcessGroup adds a
// hard deadline: whatever still runs when the deadline passes, when a sibling fails, or when
// the owner goes away (an exception), is killed — nothing hangs and nothing is left behind.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

namespace baton_app {

using BenchClock = std::chrono::steady_clock;

// This program's path, so that child processes run exactly this binary.
std::string own_program();

// The path of `name` in this program's folder: baton, baton-runtime and baton-bench are
// installed side by side.
std::string sibling_program(const std::string& name);

// Where a child's stdout and stderr go: this process's stderr (keeping our stdout for
// results), a file (created or truncated), or a descriptor such as a pipe's write end.
struct ChildOutput {
  static ChildOutput to_stderr() { return {}; }
  static ChildOutput to_file(std::string path) { return {std::move(path), -1}; }
  static ChildOutput to_descriptor(int fd) { return {{}, fd}; }
  std::string path;
  int fd = -1;
};

// Starts argv[0] with `argv` and this process's environment, in which each "NAME=value" of
// `environment` replaces the variable of that name. Returns the child's pid; throws
// baton::Error naming `name` and the program when it cannot start.
pid_t spawn_process(const std::string& name, const std::vector<std::string>& argv,
                    const ChildOutput& output, const std::vector<std::string>& environment = {});

// The whole of a file a child wrote (its figures, its output); empty when there is none.
std::string read_child_output(const std::string& path);

struct ProcessOutcome {
  std::string name;
  bool exited = false;  // exited by itself with `exit_code`
  int exit_code = -1;
  int signal = 0;          // the signal that ended it
  bool timed_out = false;  // killed at the deadline
  bool stopped = false;    // killed because a sibling failed
  bool succeeded() const { return exited && exit_code == 0; }
  // "rank 1 exited with code 1", "rank 0 was killed at the deadline", …
  std::string describe() const;
};

// What a look at one child found, without waiting.
struct ChildState {
  bool running = true;
  int stopped_by = 0;   // the signal that stopped it (SIGSTOP, SIGTSTP): alive, answering no one
  int wait_status = 0;  // once it ended: waitpid's status (WIFEXITED, WTERMSIG, ...)
};

class ProcessGroup {
 public:
  ProcessGroup() = default;
  ~ProcessGroup();  // kills and reaps whatever still runs
  ProcessGroup(const ProcessGroup&) = delete;
  ProcessGroup& operator=(const ProcessGroup&) = delete;

  // Starts `argv` (argv[0] is the program's path). `output_path` empty: the child writes to
  // this process's stderr (its stdout too, keeping this process's stdout for results);
  // otherwise both go to that file. Returns the index of the process. Throws baton::Error.
  // `environment`: "NAME=value" entries set for the child (over this process's own).
  std::size_t spawn(const std::string& name, const std::vector<std::string>& argv,
                    const std::string& output_path = {},
                    const std::vector<std::string>& environment = {});

  // The same, with the child's output going to `output` (a file, a pipe's write end).
  std::size_t spawn(const std::string& name, const std::vector<std::string>& argv,
                    const ChildOutput& output, const std::vector<std::string>& environment);

  // Takes on a child this process started itself (fork()), as if spawn had started it.
  std::size_t adopt(const std::string& name, pid_t pid);
  // True while process `index` has not exited (it is reaped if it just did).
  bool running(std::size_t index);

  // Process `index` now: running, stopped by a signal, or ended (and reaped). Never waits.
  ChildState check(std::size_t index);

  // Sends `signal` to process `index` if it has not ended.
  void signal(std::size_t index, int signal);

  // Waits for every process. When one fails, the others get `grace` to exit on their own
  // (they usually report the failure themselves) and are then killed; at `deadline`
  // everything still running is killed.
  std::vector<ProcessOutcome> wait_all(BenchClock::time_point deadline,
                                       std::chrono::milliseconds grace);

  // Kills (SIGKILL) and reaps every process still running.
  void kill_all();

 private:
  struct Child {
    pid_t pid = -1;
    bool done = false;
    int wait_status = 0;
    ProcessOutcome outcome;
  };
  bool reap(Child& child, bool block);
  static void record_end(Child& child, int status);

  std::vector<Child> children_;
};

}  // namespace baton_app
