// `baton launch -n N CONFIG`: runs N ranks on this machine, like torchrun. It hosts the
// rendezvous store, starts `baton-runtime run` once per rank with the rank in its environment,
// prefixes every line a rank prints with "[rank i]", and when a rank fails stops the others
// and exits non-zero with a summary naming the first failure.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include <algorithm>

#include <chrono>
#include <cstring>
#include <iostream>
#include <memory>
#include <random>

#include "baton/error.h"
#include "baton/store_keys.h"
#include "baton/stores.h"
#include "commands.h"
#include "process_group.h"
#include "run_check.h"
#include "run_options.h"
#include "training/config_sections.h"
#include "training/world_info.h"

namespace baton_app {
namespace {

// How long the other ranks get to report a failure themselves before they are stopped.
constexpr std::chrono::seconds kStopGrace(3);

struct RankProcess {
  int rank = 0;
  std::size_t child = 0;   // its index in the launcher's ProcessGroup
  int output_fd = -1;      // stdout and stderr of the rank, merged
  std::string pending;     // a partial line
  std::string last_lines;  // the tail of what it printed, for the summary
  bool running = true;
  bool stopped_by_launcher = false;  // it was signalled by us while still running
  int stopped_by = 0;                // the signal that stopped (SIGSTOP, SIGTSTP) it, if any
  int status = 0;
};

// The rank whose failure the store recorded first (ranks record the order before aborting),
// or -1 when none did (a rank died before writing).
int first_recorded_failure(baton::Store& store, const std::string& run_id, int world_size) {
  try {
    baton::PrefixStore run_store(baton::store_keys::run_prefix(run_id),
                                 std::shared_ptr<baton::Store>(&store, [](baton::Store*) {}));
    const auto first =
        run_store.get(baton::store_keys::failure(1), std::chrono::milliseconds(2000));
    const int rank = std::stoi(std::string(first.begin(), first.end()));
    return rank >= 0 && rank < world_size ? rank : -1;
  } catch (const std::exception&) {
    return -1;
  }
}

// SIGINT, SIGTERM and SIGHUP reach the launcher's loop through this pipe (a handler may
// only write()), which then stops the ranks and says so.
int g_signal_pipe[2] = {-1, -1};

void forward_signal(int signal_number) {
  const unsigned char byte = static_cast<unsigned char>(signal_number);
  [[maybe_unused]] const ssize_t written = write(g_signal_pipe[1], &byte, 1);
}

void catch_stop_signals() {
  if (pipe2(g_signal_pipe, O_CLOEXEC | O_NONBLOCK) != 0) {
    throw baton::Error(std::string("pipe failed: ") + std::strerror(errno));
  }
  struct sigaction action {};
  action.sa_handler = forward_signal;
  sigemptyset(&action.sa_mask);
  for (const int signal_number : {SIGINT, SIGTERM, SIGHUP})
    sigaction(signal_number, &action, nullptr);
}

// The signal that asked the launcher to stop, or 0.
int stop_signal_received() {
  unsigned char byte = 0;
  return read(g_signal_pipe[0], &byte, 1) == 1 ? byte : 0;
}

// `bytes` random bytes from the kernel, as hex.
std::string random_hex(std::size_t bytes) {
  std::random_device source;  // /dev/urandom on Linux
  static const char kHex[] = "0123456789abcdef";
  std::string text;
  for (std::size_t i = 0; i < bytes; ++i) {
    const unsigned value = source() & 0xffu;
    text += kHex[value >> 4];
    text += kHex[value & 0xf];
  }
  return text;
}

RankProcess spawn_rank(ProcessGroup& group, int rank, int world_size, const std::string& program,
                       const std::vector<std::string>& run_args, int store_port,
                       const std::string& run_id, const std::string& store_token) {
  // Close-on-exec: no other rank inherits this rank's pipe (the child gets the write end as
  // its stdout and stderr, which dup2 leaves open across exec).
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) {
    throw baton::Error(std::string("pipe failed: ") + std::strerror(errno));
  }
  std::vector<std::string> argv{program};
  argv.insert(argv.end(), run_args.begin(), run_args.end());
  RankProcess process;
  try {
    process.child = group.spawn(
        "rank " + std::to_string(rank), argv, ChildOutput::to_descriptor(pipe_fds[1]),
        {std::string(kLaunchRank) + "=" + std::to_string(rank),
         std::string(kLaunchWorldSize) + "=" + std::to_string(world_size),
         std::string(kLaunchStoreAddress) + "=127.0.0.1",
         std::string(kLaunchStorePort) + "=" + std::to_string(store_port),
         std::string(kLaunchRunId) + "=" + run_id, std::string(kStoreToken) + "=" + store_token,
         // The rank asks the kernel to kill it if the launcher dies.
         std::string(kLaunchPid) + "=" + std::to_string(getpid()),
         // Every line is prefixed "[rank i]" here; the rank need not repeat it.
         "BATON_LOG_PREFIXED=1"});
  } catch (...) {
    close(pipe_fds[0]);
    close(pipe_fds[1]);
    throw;
  }
  close(pipe_fds[1]);
  process.rank = rank;
  process.output_fd = pipe_fds[0];
  return process;
}

void print_line(RankProcess& process, const std::string& line) {
  std::cout << "[rank " << process.rank << "] " << line << "\n" << std::flush;
  process.last_lines += line + "\n";
  if (process.last_lines.size() > 8000)
    process.last_lines.erase(0, process.last_lines.size() - 8000);
}

// Reads what is available; returns false at end of output.
bool drain(RankProcess& process) {
  char buffer[4096];
  const ssize_t n = read(process.output_fd, buffer, sizeof(buffer));
  if (n <= 0) {
    if (!process.pending.empty()) print_line(process, process.pending);
    process.pending.clear();
    close(process.output_fd);
    process.output_fd = -1;
    return false;
  }
  process.pending.append(buffer, static_cast<std::size_t>(n));
  std::size_t newline;
  while ((newline = process.pending.find_first_of("\n\r")) != std::string::npos) {
    const std::string line = process.pending.substr(0, newline);
    process.pending.erase(0, newline + 1);
    if (!line.empty()) print_line(process, line);
  }
  return true;
}

std::string describe_exit(int status) {
  if (WIFEXITED(status)) return "exit code " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return std::string("killed by signal ") + strsignal(WTERMSIG(status));
  return "unknown status";
}

// The line that says why it failed ("rank 1 failed: …"), and where its report is: the rank
// printed it above, with the plan and the failing step marked, so it is not repeated.
std::string failure_excerpt(const RankProcess& process) {
  const auto at = process.last_lines.find("failed: ");
  if (at == std::string::npos) {
    return process.last_lines.empty() ? "(no output)" : process.last_lines;
  }
  const auto line_start = process.last_lines.rfind('\n', at);
  const std::size_t start = line_start == std::string::npos ? 0 : line_start + 1;
  const std::size_t end = process.last_lines.find('\n', at);
  const std::string line = process.last_lines.substr(start, end - start);
  const bool more = end != std::string::npos && end + 1 < process.last_lines.size();
  return line + (more ? "\n(its whole report is above, in the lines of [rank " +
                            std::to_string(process.rank) + "])"
                      : "");
}

// The words every rank's `baton-runtime run` gets.
std::vector<std::string> rank_arguments(const RunOptions& run, int world_size) {
  std::vector<std::string> words{"run"};
  if (!run.config.empty()) words.push_back(run.config);
  words.insert(words.end(), {"--set", "world.ranks=" + std::to_string(world_size), "--set",
                             "world.rendezvous=tcp"});
  for (const auto& assignment : run.sets) words.insert(words.end(), {"--set", assignment});
  if (!run.dump_dir.empty()) words.insert(words.end(), {"--dump-dir", run.dump_dir});
  if (run.no_env) words.push_back("--no-env");
  if (run.resume) words.push_back("--resume");
  if (run.overwrite) words.push_back("--overwrite");
  return words;
}

// Where the supervision of the ranks stands.
struct Supervision {
  int first_failure = -1;  // the first rank seen to fail; -1: none yet
  int interrupted_by = 0;  // the signal that stopped the launcher; 0: none
  bool stopped = false;    // the launcher sent SIGTERM to the ranks still running
  std::chrono::steady_clock::time_point stop_at = std::chrono::steady_clock::time_point::max();
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
};

// One look at every rank: a stopped one is named, an exited one recorded (the first failure
// starts the countdown to stopping the others). Whether any still runs.
bool check_ranks(ProcessGroup& group, std::vector<RankProcess>& ranks, Supervision& supervision) {
  bool any_running = false;
  for (auto& process : ranks) {
    if (!process.running) continue;
    const ChildState state = group.check(process.child);
    if (state.running && state.stopped_by != 0) {
      // Alive but silent: its peers will time out waiting for it. It is the cause of what
      // follows, so it is named now and first in the summary.
      if (process.stopped_by == 0) {
        process.stopped_by = state.stopped_by;
        std::cerr << "launch: rank " << process.rank << " is stopped ("
                  << strsignal(process.stopped_by)
                  << "): it answers no one, and its peers will time out waiting for it"
                  << std::endl;
      }
      any_running = true;
      continue;
    }
    if (state.running) {
      any_running = true;
      continue;
    }
    process.status = state.wait_status;
    process.running = false;
    const bool ok = WIFEXITED(process.status) && WEXITSTATUS(process.status) == 0;
    if (!ok && supervision.first_failure < 0) {
      supervision.first_failure = process.rank;
      // The others were aborted by the failing rank and usually fail on their own at once,
      // with their own annotated error: give them a moment to say it, then stop them
      // (SIGTERM), and kill what still runs 10 s later.
      supervision.stop_at = std::chrono::steady_clock::now() + kStopGrace;
      supervision.deadline = supervision.stop_at + std::chrono::seconds(10);
    }
  }
  return any_running;
}

// Relays the ranks' output and watches them until none runs and their outputs are closed:
// after a failure or a stop signal the rest get SIGTERM, then SIGKILL 10 s later.
void supervise(ProcessGroup& group, std::vector<RankProcess>& ranks, Supervision& supervision) {
  for (;;) {
    if (supervision.interrupted_by == 0) supervision.interrupted_by = stop_signal_received();
    if (supervision.interrupted_by != 0 && !supervision.stopped) {
      std::cerr << "\nlaunch: " << strsignal(supervision.interrupted_by)
                << " received; stopping the " << ranks.size()
                << " ranks (SIGTERM, then SIGKILL after 10 s)" << std::endl;
      supervision.stop_at = std::chrono::steady_clock::now();
      supervision.deadline = supervision.stop_at + std::chrono::seconds(10);
    }
    std::vector<pollfd> fds;
    fds.push_back({g_signal_pipe[0], POLLIN, 0});
    for (auto& process : ranks) {
      if (process.output_fd >= 0) fds.push_back({process.output_fd, POLLIN, 0});
    }
    poll(fds.data(), fds.size(), 200);
    for (auto& process : ranks) {
      if (process.output_fd < 0) continue;
      pollfd check{process.output_fd, POLLIN, 0};
      if (poll(&check, 1, 0) > 0) drain(process);
    }
    if (!check_ranks(group, ranks, supervision)) {
      bool outputs_open = false;
      for (auto& process : ranks) {
        while (process.output_fd >= 0 && drain(process)) {
        }
        outputs_open |= process.output_fd >= 0;
      }
      if (!outputs_open) return;
    }
    if (!supervision.stopped && std::chrono::steady_clock::now() > supervision.stop_at) {
      supervision.stopped = true;
      for (auto& other : ranks) {
        if (!other.running) continue;
        other.stopped_by_launcher = true;
        group.signal(other.child, SIGTERM);
        group.signal(other.child, SIGCONT);  // a stopped rank acts on SIGTERM only once it runs
      }
    }
    if (std::chrono::steady_clock::now() > supervision.deadline) {
      for (auto& process : ranks) {
        if (process.running) group.signal(process.child, SIGKILL);
      }
    }
  }
}

// The launcher's summary and exit code, once no rank runs.
int report_outcome(const std::vector<RankProcess>& ranks, const Supervision& supervision,
                   baton::TcpStore& store, const std::string& run_id) {
  const int world_size = static_cast<int>(ranks.size());
  if (supervision.interrupted_by != 0) {
    std::cerr << "launch: stopped by " << strsignal(supervision.interrupted_by)
              << "; no rank is left running" << std::endl;
    return 128 + supervision.interrupted_by;
  }
  if (supervision.first_failure < 0) {
    std::cout << "launch: all " << world_size << " ranks finished" << std::endl;
    return 0;
  }
  // The rank that failed first. A rank killed by a signal we did not send (a crash, the OOM
  // killer) could not say so, and its peers' errors follow from it: it comes first.
  // Otherwise the order the ranks recorded in the store before aborting, which may differ
  // from the order they exited in.
  int first_failure = supervision.first_failure;
  const auto crashed = std::find_if(ranks.begin(), ranks.end(), [](const RankProcess& process) {
    return WIFSIGNALED(process.status) && !process.stopped_by_launcher;
  });
  const auto hung = std::find_if(ranks.begin(), ranks.end(), [](const RankProcess& process) {
    return process.stopped_by != 0;
  });
  if (crashed != ranks.end()) {
    first_failure = crashed->rank;
  } else if (hung != ranks.end()) {
    first_failure = hung->rank;
  } else {
    const int recorded = first_recorded_failure(store, run_id, world_size);
    if (recorded >= 0) first_failure = recorded;
  }
  const RankProcess& failed = ranks[static_cast<std::size_t>(first_failure)];
  const std::string how = failed.stopped_by != 0
                              ? std::string("it hung: stopped by ") + strsignal(failed.stopped_by) +
                                    ", it answered no one until the launcher ended it"
                              : describe_exit(failed.status);
  std::cerr << "\nlaunch: rank " << first_failure << " failed first (" << how
            << "); the other ranks failed or were stopped after it:\n";
  for (const auto& process : ranks) {
    if (process.rank == first_failure) continue;
    std::cerr << "launch: rank " << process.rank << ": " << describe_exit(process.status) << "\n";
  }
  if (failed.stopped_by == 0) std::cerr << failure_excerpt(failed) << "\n";
  std::cerr << std::flush;
  return 1;
}

int launch(const RunOptions& run, int world_size) {
  const std::vector<std::string> run_args = rank_arguments(run, world_size);
  // The configuration is checked once here, before any rank starts (each rank reads it
  // again, with its own environment), with the world size the ranks will be given: checks
  // such as world.data_parallel's and model.cuts' depend on it.
  RunOptions checked = run;
  checked.sets.insert(checked.sets.begin(), "world.ranks=" + std::to_string(world_size));
  baton::Config config = load_run_config(checked);
  check_run_before_start(config);
  // The store lives in the launcher, on loopback, for as long as the ranks run: on
  // world.port when the configuration sets one, else on a free port.
  const baton::ParamValue& port = config.section("world").at("port");
  baton::TcpStoreOptions store_options;
  store_options.host = "127.0.0.1";
  store_options.port = port.origin().description == "default" ? 0 : static_cast<int>(port.as_int());
  store_options.is_server = true;
  // Only the ranks started here know it: nothing else on this machine can use the store.
  store_options.token = random_hex(16);
  baton::TcpStore store(store_options);
  const std::string run_id = "launch-" + std::to_string(getpid()) + "-" + random_hex(4);

  const std::string program = sibling_program("baton-runtime");
  catch_stop_signals();
  // The ranks, supervised as every child process is (process_group.h): whatever still runs
  // if the launcher fails is killed, and none outlives it.
  ProcessGroup group;
  std::vector<RankProcess> ranks;
  for (int rank = 0; rank < world_size; ++rank) {
    ranks.push_back(spawn_rank(group, rank, world_size, program, run_args, store.port(), run_id,
                               store_options.token));
  }
  Supervision supervision;
  supervise(group, ranks, supervision);
  return report_outcome(ranks, supervision, store, run_id);
}

}  // namespace

void add_launch_command(CommandLine& command_line) {
  struct Options {
    RunOptions run;
    int world_size = 0;
  };
  auto options = std::make_shared<Options>();
  CLI::App& launch_command = command_line.add_command(
      command_line.root(), "launch",
      "train: run N ranks on this machine, like torchrun (Gloo on loopback by default); every "
      "line a rank prints is prefixed with its rank",
      [options] { return launch(options->run, options->world_size); });
  launch_command.group("Commands");
  add_app_config_sections();
  launch_command.add_option("-n,--nproc", options->world_size, "the number of ranks")
      ->required()
      // Two counts (`-n 2 -n 3`) are a mistake to point out, not an override to take.
      ->multi_option_policy(CLI::MultiOptionPolicy::Throw)
      ->check(integer_in(1, 256));
  add_run_options(launch_command, options->run);
}

}  // namespace baton_app
