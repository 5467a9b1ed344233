// Runs a scenario on N real processes: the test binary re-executes itself (no fork() after
// LibTorch or gloo started threads), one process per rank, told its rank and scenario
// through environment variables (see child_main in rank_context.h). Every process has a hard
// deadline: past it the launcher kills the remaining ranks and reports them as hung.
#pragma once

#include <chrono>
#include <map>
#include <string>
#include <vector>

namespace baton_test {

struct RankJob {
  std::string transport;  // plugin name
  std::string scenario;   // see scenarios.h
  int world_size = 2;
  std::string rendezvous = "file";  // "file" (fresh temp folder) or "tcp" (free loopback port)
  std::chrono::milliseconds deadline{100000};
};

struct RankOutcome {
  int rank = 0;
  bool exited = false;  // exited normally, with `exit_code`
  int exit_code = -1;
  int signal = 0;      // killed by this signal (SIGKILL when the launcher killed it)
  bool hung = false;   // still running at the deadline
  std::string output;  // stdout and stderr
};

struct JobResult {
  std::vector<RankOutcome> ranks;
  std::chrono::milliseconds elapsed{0};

  // Every rank exited with 0.
  bool all_succeeded() const;
  // A readable account of every rank, for failure messages.
  std::string report() const;
};

JobResult run_ranks(const RankJob& job);

// Names of the environment variables a child reads.
extern const char* const kEnvScenario;
extern const char* const kEnvTransport;
extern const char* const kEnvRank;
extern const char* const kEnvWorldSize;
extern const char* const kEnvRendezvous;
extern const char* const kEnvStoreFolder;
extern const char* const kEnvStorePort;
extern const char* const kEnvRunId;

}  // namespace baton_test
