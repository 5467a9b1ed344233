#include "rank_launcher.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

extern char** environ;

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

std::string read_all(const std::string& path) {
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

pid_t spawn_rank(const std::vector<std::string>& settings, const std::string& log_path) {
  std::vector<std::string> environment;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    if (std::strncmp(*entry, "BATON_TRANSPORT_TEST_", 21) != 0) environment.emplace_back(*entry);
  }
  environment.insert(environment.end(), settings.begin(), settings.end());
  std::vector<char*> envp;
  for (auto& entry : environment) envp.push_back(entry.data());
  envp.push_back(nullptr);

  std::string program = "/proc/self/exe";
  std::vector<char*> argv = {program.data(), nullptr};

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log_path.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  pid_t pid = 0;
  const int error = posix_spawn(&pid, program.c_str(), &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  if (error != 0) throw std::runtime_error(std::string("posix_spawn: ") + std::strerror(error));
  return pid;
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

  const auto start = std::chrono::steady_clock::now();
  JobResult result;
  std::vector<pid_t> pids;
  for (int rank = 0; rank < job.world_size; ++rank) {
    std::vector<std::string> settings = common;
    settings.push_back(std::string(kEnvRank) + "=" + std::to_string(rank));
    RankOutcome outcome;
    outcome.rank = rank;
    result.ranks.push_back(outcome);
    pids.push_back(spawn_rank(settings, folder + "/rank" + std::to_string(rank) + ".log"));
  }

  std::size_t running = pids.size();
  std::vector<bool> done(pids.size(), false);
  const auto deadline = start + job.deadline;
  while (running > 0) {
    for (std::size_t i = 0; i < pids.size(); ++i) {
      if (done[i]) continue;
      int status = 0;
      if (::waitpid(pids[i], &status, WNOHANG) != pids[i]) continue;
      done[i] = true;
      --running;
      RankOutcome& outcome = result.ranks[i];
      outcome.exited = WIFEXITED(status);
      outcome.exit_code = outcome.exited ? WEXITSTATUS(status) : -1;
      outcome.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
    }
    if (running == 0) break;
    if (std::chrono::steady_clock::now() >= deadline) {
      for (std::size_t i = 0; i < pids.size(); ++i) {
        if (done[i]) continue;
        ::kill(pids[i], SIGKILL);
        int status = 0;
        ::waitpid(pids[i], &status, 0);
        result.ranks[i].hung = true;
        result.ranks[i].signal = SIGKILL;
      }
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  result.elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - start);
  for (RankOutcome& outcome : result.ranks) {
    outcome.output = read_all(folder + "/rank" + std::to_string(outcome.rank) + ".log");
  }
  remove_folder(folder);
  return result;
}

}  // namespace baton_test
