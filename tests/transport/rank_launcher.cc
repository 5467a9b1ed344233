#include "rank_launcher.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <sstream>
#include <stdexcept>

#include "process_group.h"
#include "rank_context.h"

namespace baton_test {

const char* const kEnvScenario = "BATON_TRANSPORT_TEST_SCENARIO";
const char* const kEnvTransport = "BATON_TRANSPORT_TEST_TRANSPORT";
const char* const kEnvRank = "BATON_TRANSPORT_TEST_RANK";
const char* const kEnvWorldSize = "BATON_TRANSPORT_TEST_WORLD_SIZE";
const char* const kEnvRendezvous = "BATON_TRANSPORT_TEST_RENDEZVOUS";
const char* const kEnvStoreFolder = "BATON_TRANSPORT_TEST_STORE_FOLDER";
const char* const kEnvStorePort = "BATON_TRANSPORT_TEST_STORE_PORT";
const char* const kEnvRunId = "BATON_TRANSPORT_TEST_RUN_ID";

namespace {

std::string make_temp_folder() {
  const char* base = std::getenv("TMPDIR");
  std::string pattern = std::string(base != nullptr ? base : "/tmp") + "/baton-transport-XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) {
    throw std::runtime_error("mkdtemp(" + pattern + "): " + std::strerror(errno));
  }
  return pattern;
}

// True when this process runs one thread: a fork() of it is then a whole process, with no
// lock held by a thread that the child would not have.
bool single_threaded() {
  std::error_code error;
  std::size_t threads = 0;
  for (std::filesystem::directory_iterator it("/proc/self/task", error), end; !error && it != end;
       it.increment(error)) {
    ++threads;
  }
  return !error && threads == 1;
}

// Rank `settings` of `scenario` as a fork() of this process, its output to `log_path`; -1 when
// it cannot fork. Re-executing the test binary loads LibTorch again, about half a second of
// CPU a rank; a fork of a process that loaded it already, and runs one thread, costs
// milliseconds and is the same program in the same state.
pid_t fork_rank(const std::string& scenario, const std::string& log_path,
                const std::vector<std::string>& settings) {
  std::fflush(nullptr);  // nothing this process buffered is written twice
  const pid_t pid = ::fork();
  if (pid != 0) return pid;
  const int fd = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) ::_exit(126);
  ::dup2(fd, STDOUT_FILENO);
  ::dup2(fd, STDERR_FILENO);
  ::close(fd);
  for (const std::string& setting : settings) {
    const std::size_t equals = setting.find('=');
    ::setenv(setting.substr(0, equals).c_str(), setting.substr(equals + 1).c_str(), 1);
  }
  // As main() would end after child_main: static destructors and atexit handlers run.
  std::exit(child_main(scenario));
}

void remove_folder(const std::string& path) {
  std::error_code ignored;  // a leftover temp folder does not change the result
  std::filesystem::remove_all(path, ignored);
}

// A port nobody listens on right now (rank 0 binds it a moment later).
int free_loopback_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw std::runtime_error(std::string("socket: ") + std::strerror(errno));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;
  socklen_t length = sizeof(address);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    const std::string why = std::strerror(errno);
    ::close(fd);
    throw std::runtime_error("cannot find a free port: " + why);
  }
  ::close(fd);
  return ntohs(address.sin_port);
}

}  // namespace

bool JobResult::all_succeeded() const {
  for (const RankOutcome& rank : ranks) {
    if (!rank.exited || rank.exit_code != 0) return false;
  }
  return !ranks.empty();
}

std::string JobResult::report() const {
  std::ostringstream out;
  out << "after " << elapsed.count() << " ms:\n";
  for (const RankOutcome& rank : ranks) {
    out << "--- rank " << rank.rank << ": ";
    if (rank.hung) {
      out << "HUNG (killed at the deadline)";
    } else if (rank.exited) {
      out << "exit code " << rank.exit_code;
    } else {
      out << "killed by signal " << rank.signal << " (" << strsignal(rank.signal) << ")";
    }
    out << "\n" << rank.output;
    if (!rank.output.empty() && rank.output.back() != '\n') out << "\n";
  }
  return out.str();
}

JobResult run_ranks(const RankJob& job) {
  const std::string folder = make_temp_folder();
  static int job_counter = 0;
  const std::string run_id =
      job.scenario + "-" + std::to_string(::getpid()) + "-" + std::to_string(++job_counter);
  std::vector<std::string> common = {
      std::string(kEnvScenario) + "=" + job.scenario,
      std::string(kEnvTransport) + "=" + job.transport,
      std::string(kEnvWorldSize) + "=" + std::to_string(job.world_size),
      std::string(kEnvRendezvous) + "=" + job.rendezvous,
      std::string(kEnvStoreFolder) + "=" + folder + "/store",
      std::string(kEnvRunId) + "=" + run_id,
  };
  if (job.rendezvous == "tcp") {
    common.push_back(std::string(kEnvStorePort) + "=" + std::to_string(free_loopback_port()));
  }

  // The same process group `baton launch` and the benches use: a hard deadline, nothing
  // left running. A failing rank does not stop the others here (the grace lasts to the
  // deadline): the tests look at how every rank ends. Ranks are forks of this process while
  // it runs one thread (the usual case: a test that only loaded a plugin), else the test
  // binary re-executed with posix_spawn.
  const auto start = std::chrono::steady_clock::now();
  baton_app::ProcessGroup group;
  for (int rank = 0; rank < job.world_size; ++rank) {
    std::vector<std::string> settings = common;
    settings.push_back(std::string(kEnvRank) + "=" + std::to_string(rank));
    const std::string name = "rank " + std::to_string(rank);
    const std::string log = folder + "/rank" + std::to_string(rank) + ".log";
    const pid_t forked = single_threaded() ? fork_rank(job.scenario, log, settings) : -1;
    if (forked > 0) {
      group.adopt(name, forked);
    } else {
      group.spawn(name, {"/proc/self/exe"}, log, settings);
    }
  }
  const std::vector<baton_app::ProcessOutcome> outcomes =
      group.wait_all(start + job.deadline, job.deadline);
  JobResult result;
  result.elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - start);
  for (int rank = 0; rank < job.world_size; ++rank) {
    const baton_app::ProcessOutcome& process = outcomes.at(static_cast<std::size_t>(rank));
    RankOutcome outcome;
    outcome.rank = rank;
    outcome.exited = process.exited;
    outcome.exit_code = process.exit_code;
    outcome.signal = process.signal;
    outcome.hung = process.timed_out;
    outcome.output = baton_app::read_child_output(folder + "/rank" + std::to_string(rank) + ".log");
    result.ranks.push_back(outcome);
  }
  remove_folder(folder);
  return result;
}

}  // namespace baton_test
