// Child processes of the bench (its two ranks, ucx_perftest's server and client) under a
// hard deadline: whatever still runs when the deadline passes, when a sibling fails, or when
// the owner goes away (an exception), is killed — the bench never hangs and never leaves a
// process behind.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

namespace baton_app {

using BenchClock = std::chrono::steady_clock;

// This program's path, so that the bench's processes run exactly this binary.
std::string own_program();

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

  // True while process `index` has not exited (it is reaped if it just did).
  bool running(std::size_t index);

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
    ProcessOutcome outcome;
  };
  bool reap(Child& child, bool block);

  std::vector<Child> children_;
};

}  // namespace baton_app
