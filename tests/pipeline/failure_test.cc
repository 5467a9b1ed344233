// A failure inside one action is reported on its rank with the rank, step, action and the
// marked plan; the other ranks fail with a clear error instead of hanging; the launcher
// names the first failure. Validators fire on purpose-made bad runs.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include "free_port.h"
#include "launch_run.h"

namespace {

using testing::HasSubstr;
using testing::Not;

const std::string kBaton = BATON_BINARY;

std::string file_text(const std::string& path);  // below

// Launches `ranks` ranks with BATON_INJECT_FAILURE set to `failure` (which rank fails, at
// which step and action, and how), under a 60 s guard: a run that only a timeout would end
// fails the test.
auto launch_failing(const std::string& failure, int ranks, const std::vector<std::string>& settings,
                    const std::string& name) {
  setenv("BATON_INJECT_FAILURE", failure.c_str(), 1);
  auto result = baton_test::launch(kBaton, ranks, settings, name, /*timeout_s=*/60);
  unsetenv("BATON_INJECT_FAILURE");
  return result;
}

std::vector<std::string> small_mlp_run(const std::string& schedule) {
  return {"model.name=mlp",
          "model.params.in_features=8",
          "model.params.hidden=8",
          "model.params.layers=2",
          "model.params.out_features=3",
          "data.source=synthetic",
          "data.batch_size=8",
          "schedule.name=" + schedule,
          "schedule.microbatches=4",
          "run.steps=3"};
}

TEST(PipelineFailure, InjectedFailureIsAnnotatedAndStopsEveryRank) {
  // world.timeout_s is 120 s but the launch is killed after 60 s (a hang guard, not a timed
  // assertion): only an abort that reaches rank 0 lets this run end in time, and rank 0's
  // error must name that cause, not a timeout.
  auto settings = small_mlp_run("1f1b");
  settings.push_back("world.timeout_s=120");
  const auto result = launch_failing("rank=1,step=2,action=1B2", 2, settings, "inject");
  const std::string& out = result.command.output;
  EXPECT_EQ(result.command.exit_code, 1) << out;
  // The failing rank's own report.
  EXPECT_THAT(out, HasSubstr("[rank 1] rank 1 failed: rank 1, training step 2, timestep"));
  EXPECT_THAT(out, HasSubstr("of schedule '1f1b', action 1B2: injected failure"));
  EXPECT_THAT(
      out, testing::ContainsRegex("\\[rank 1\\] Step [0-9]+:.*1B2 +<-- ERROR HERE \\(rank 1\\)"));
  // The other rank fails because its peer went away, with its own annotated error.
  const std::size_t rank0 = out.find("[rank 0] rank 0 failed: rank 0, training step 2, timestep");
  ASSERT_NE(rank0, std::string::npos) << out;
  const std::string rank0_error = out.substr(rank0, out.find('\n', rank0) - rank0);
  EXPECT_THAT(rank0_error, HasSubstr("peer rank 1 closed the connection")) << rank0_error;
  EXPECT_THAT(out, testing::Not(HasSubstr("timed out")));
  EXPECT_THAT(out, HasSubstr("launch: rank 1 failed first (exit code 1)"));
  // --dump-dir keeps each failing rank's whole error, the plan with its marked step included.
  const std::string kept = file_text(result.dump_dir + "/rank1.error");
  EXPECT_THAT(kept, HasSubstr("action 1B2: injected failure")) << kept;
  EXPECT_THAT(kept, testing::ContainsRegex("1B2 +<-- ERROR HERE \\(rank 1\\)")) << kept;
}

TEST(PipelineFailure, FiniteValidatorNamesStageAndMicrobatch) {
  auto settings = small_mlp_run("gpipe");
  settings.push_back("world.timeout_s=20");
  settings.push_back("validation.validators=[shape_dtype, finite]");
  settings.push_back("optimizer.name=sgd");
  settings.push_back("optimizer.lr=1e30");  // the first update blows the weights up
  const auto result = baton_test::launch(kBaton, 2, settings, "finite");
  const std::string& out = result.command.output;
  EXPECT_EQ(result.command.exit_code, 1) << out;
  EXPECT_THAT(out, testing::ContainsRegex(
                       "stage [01] (forward output|gradient of input) 0 "
                       "\\(microbatch [0-9]\\): [0-9]+ of [0-9]+ values are not finite"));
  EXPECT_THAT(out, HasSubstr("training step 2"));
}

std::string file_text(const std::string& path) {
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

// Processes whose environment says they are ranks of launcher `launcher_pid`.
// The processes whose environment holds `entry` ("NAME=value").
std::vector<std::string> pids_with_environment(const std::string& entry) {
  std::vector<std::string> pids;
  for (const auto& process : std::filesystem::directory_iterator("/proc")) {
    const std::string name = process.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    const std::string environment = file_text(process.path().string() + "/environ");
    if (environment.find(entry + std::string(1, '\0')) != std::string::npos) {
      pids.push_back(name);
    }
  }
  return pids;
}

std::vector<std::string> rank_pids(pid_t launcher_pid) {
  return pids_with_environment("BATON_LAUNCH_PID=" + std::to_string(launcher_pid));
}

// One TCP socket of `ss -Htanp`'s output: state, local and peer address, and the line, whose
// users:(…) lists every process holding it.
struct TcpSocket {
  std::string state, local, peer, line;

  // The first of `pids` that holds this socket, or "".
  std::string holder(const std::vector<std::string>& pids) const {
    for (const auto& pid : pids) {
      if (line.find("pid=" + pid + ",") != std::string::npos) return pid;
    }
    return "";
  }
};

std::vector<TcpSocket> tcp_sockets(const std::string& ss_output) {
  std::vector<TcpSocket> sockets;
  std::istringstream lines(ss_output);
  for (std::string line; std::getline(lines, line);) {
    TcpSocket socket;
    std::istringstream fields(line);
    std::string receive_queue, send_queue;
    fields >> socket.state >> receive_queue >> send_queue >> socket.local >> socket.peer;
    socket.line = line;
    sockets.push_back(socket);
  }
  return sockets;
}

// The local addresses `pids` listen on, from the output of `ss -Hltnp`, each with its line.
std::vector<std::pair<std::string, std::string>> listening_addresses(
    const std::string& sockets, const std::vector<std::string>& pids) {
  std::vector<std::pair<std::string, std::string>> addresses;
  for (const TcpSocket& socket : tcp_sockets(sockets)) {
    if (!socket.holder(pids).empty()) addresses.emplace_back(socket.local, socket.line);
  }
  return addresses;
}

bool is_loopback(const std::string& local) {
  return local.rfind("127.0.0.1:", 0) == 0 || local.rfind("[::1]:", 0) == 0;
}

// Starts `baton launch` in the background on a long run; returns its pid once both ranks
// are training, or -1.
pid_t launch_in_background(const std::string& output, const std::string& extra = "") {
  const std::string command =
      "(" + kBaton +
      " launch -n 2 --no-env --set run.steps=100000 --set checkpoint.enabled=false --set "
      "trace.enabled=false --set model.name=mlp --set data.source=synthetic " +
      // A run folder of its own: tests run in parallel, and a folder belongs to one run.
      "--set run.output_dir='" + output + ".runs' " + extra + " > '" + output +
      "' 2>&1; echo \"exit $?\" >> '" + output + "') > /dev/null 2>&1 & echo $!";
  const auto started = baton_test::run_command(command);
  // $! is the subshell; the launcher is its only child.
  const pid_t shell = std::atoi(started.output.c_str());
  for (int i = 0; i < 600; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    if (file_text(output).find("step 1") != std::string::npos) {
      const std::string children = file_text("/proc/" + std::to_string(shell) + "/task/" +
                                             std::to_string(shell) + "/children");
      return std::atoi(children.c_str());
    }
  }
  return -1;
}

// A process that has exited (a zombie counts: it runs nothing) or never existed.
bool exited(const std::string& pid) {
  const std::string stat = file_text("/proc/" + pid + "/stat");
  const auto after_name = stat.rfind(") ");
  return stat.empty() || (after_name != std::string::npos && stat[after_name + 2] == 'Z');
}

// Waits for every one of `pids` to exit. The deadline is a hang guard only, far above the time
// stopping takes (well under a second): the test asserts that they go, not how fast.
bool all_exited(const std::vector<std::string>& pids) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(90);
  while (std::chrono::steady_clock::now() < deadline) {
    if (std::all_of(pids.begin(), pids.end(), exited)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

// Waits (with the same hang guard) until `text` appears in the file `path`.
bool file_shows(const std::string& path, const std::string& text) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(90);
  while (file_text(path).find(text) == std::string::npos) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return true;
}

// SIGTERM (and Ctrl-C) to the launcher: it says so, stops its ranks and exits 128 + signal.
TEST(PipelineFailure, ASignalledLauncherSaysSoAndStopsItsRanks) {
  const std::string output = ::testing::TempDir() + "/launcher-sigterm.out";
  const pid_t launcher = launch_in_background(output);
  ASSERT_GT(launcher, 0) << file_text(output);
  const std::vector<std::string> ranks = rank_pids(launcher);
  ASSERT_EQ(ranks.size(), 2u) << file_text(output);
  kill(launcher, SIGTERM);
  EXPECT_TRUE(all_exited(ranks)) << file_text(output);
  EXPECT_TRUE(file_shows(output, "exit ")) << file_text(output);
  const std::string text = file_text(output);
  EXPECT_THAT(text, HasSubstr("launch: Terminated received; stopping the 2 ranks"));
  EXPECT_THAT(text, HasSubstr("exit 143"));
}

// SIGKILL to the launcher, which can then do nothing: the ranks die with it.
TEST(PipelineFailure, RanksDieWithAKilledLauncher) {
  const std::string output = ::testing::TempDir() + "/launcher-sigkill.out";
  const pid_t launcher = launch_in_background(output);
  ASSERT_GT(launcher, 0) << file_text(output);
  // The ranks' own pids: once the launcher is gone it has no children to ask about.
  const std::vector<std::string> ranks = rank_pids(launcher);
  ASSERT_EQ(ranks.size(), 2u) << file_text(output);
  kill(launcher, SIGKILL);
  EXPECT_TRUE(all_exited(ranks)) << file_text(output);
}

// Nothing of a `baton launch` run listens beyond loopback: not the store (the launcher's),
// not gloo, not UCX (whose TCP transport listens on every network device unless told
// otherwise: net_devices: auto keeps it on lo for ranks that all run here). By default UCX's
// ranks on one machine share memory and have no TCP socket at all.
TEST(PipelineFailure, ALaunchedRunListensOnLoopbackOnly) {
  for (const std::string transport : {"gloo", "ucx"}) {
    const std::string output = ::testing::TempDir() + "/listeners-" + transport + ".out";
    const pid_t launcher = launch_in_background(output, "--set transport.name=" + transport);
    ASSERT_GT(launcher, 0) << file_text(output);
    const std::vector<std::string> ranks = rank_pids(launcher);
    const auto listing = baton_test::run_command("ss -Htanp");
    kill(launcher, SIGTERM);
    all_exited(ranks);
    ASSERT_EQ(listing.exit_code, 0) << "ss (iproute2) is needed: " << listing.output;
    ASSERT_EQ(ranks.size(), 2u) << file_text(output);
    const std::string launcher_pid = std::to_string(launcher);
    const std::vector<TcpSocket> sockets = tcp_sockets(listing.output);
    std::map<std::string, int> store_listeners, transport_sockets;
    std::set<std::string> rank_addresses;
    for (const auto& socket : sockets) {
      if (!socket.holder(ranks).empty()) rank_addresses.insert(socket.local);
    }
    for (const auto& socket : sockets) {
      const std::string rank = socket.holder(ranks);
      const std::string holder = rank.empty() ? socket.holder({launcher_pid}) : rank;
      if (holder.empty()) continue;
      if (socket.state == "LISTEN") {
        EXPECT_TRUE(is_loopback(socket.local))
            << transport << ": listening on " << socket.local << "\n"
            << socket.line;
        ++(rank.empty() ? store_listeners : transport_sockets)[holder];
      } else if (!rank.empty() && rank_addresses.count(socket.peer)) {
        // A connection between the two ranks: gloo closes its listener once its pairs have
        // connected, so this is what remains of its transport to look at.
        EXPECT_TRUE(is_loopback(socket.local) && is_loopback(socket.peer)) << socket.line;
        ++transport_sockets[rank];
      }
    }
    // Every process was seen (the launcher's store, each rank's transport): a check that
    // found only the store would say nothing of the transports.
    EXPECT_EQ(store_listeners[launcher_pid], 1) << listing.output;
    for (const auto& pid : ranks) {
      if (transport == "ucx") {
        EXPECT_EQ(transport_sockets[pid], 0)
            << "ucx: rank process " << pid << " uses TCP, not shared memory\n"
            << listing.output;
      } else {
        EXPECT_GE(transport_sockets[pid], 1)
            << transport << ": rank process " << pid << " has no transport socket\n"
            << listing.output;
      }
    }
  }
}

// Two `baton run` ranks with torchrun's variables (no launcher to stop the others when one
// dies), each a long MLP run over UCX in the background with `extra` settings, marked in its
// environment by `mark` and its rank; DIR/rank<r>.out holds its output and, last, "exit
// <status>". True once rank 0 trains.
bool start_torchrun_ucx_ranks(const std::string& dir, const std::string& mark,
                              const std::string& extra) {
  baton_test::run_command("rm -rf '" + dir + "' && mkdir -p '" + dir + "'");
  const std::string port = std::to_string(baton_test::unused_loopback_port());
  for (int rank = 0; rank < 2; ++rank) {
    const std::string out = dir + "/rank" + std::to_string(rank) + ".out";
    baton_test::run_command(
        "(env " + mark + std::to_string(rank) + " RANK=" + std::to_string(rank) +
        " WORLD_SIZE=2 LOCAL_WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=" + port +
        " timeout -k 5 120 " + kBaton + " run --no-env --set transport.name=ucx" + extra +
        " --set run.steps=100000 --set checkpoint.enabled=false --set trace.enabled=false" +
        " --set model.name=mlp --set data.source=synthetic --set run.output_dir=" + dir +
        "/runs > '" + out + "' 2>&1; echo \"exit $?\" >> '" + out + "') > /dev/null 2>&1 &");
  }
  for (int i = 0; i < 600; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    if (file_text(dir + "/rank0.out").find("step 1") != std::string::npos) return true;
  }
  return false;
}

// Ranks another launcher started (torchrun's variables) that meet on a loopback address all
// run here: UCX listens on loopback too (it listened on every device before), and the store
// only on the address it was given. With UCX's default (peer failure detection, by watching
// the peers' processes) the ranks talk over shared memory and UCX opens no TCP listener at
// all; without detection UCX keeps TCP too, on loopback.
TEST(PipelineFailure, RanksMeetingOnLoopbackUnderAnotherLauncherListenOnLoopbackOnly) {
  struct Case {
    std::string name, extra;
    std::size_t listeners;  // the store's, and UCX's on each rank
  };
  for (const Case& c :
       {Case{"default", "", 1},
        Case{"no-detection", " --set transport.params.peer_failure_detection=false", 3}}) {
    SCOPED_TRACE(c.name);
    const std::string dir = ::testing::TempDir() + "/torchrun-listeners-" + c.name;
    const std::string mark =
        "BATON_TEST_MARK=" + std::to_string(::getpid()) + "-listeners-" + c.name + "-";
    const bool training = start_torchrun_ucx_ranks(dir, mark, c.extra);
    std::vector<std::string> pids = pids_with_environment(mark + "0");
    for (const auto& pid : pids_with_environment(mark + "1")) pids.push_back(pid);
    const auto sockets = baton_test::run_command("ss -Hltnp");
    for (const auto& pid : pids) ::kill(std::atoi(pid.c_str()), SIGKILL);
    ASSERT_TRUE(training) << file_text(dir + "/rank0.out") << file_text(dir + "/rank1.out");
    ASSERT_EQ(sockets.exit_code, 0) << "ss (iproute2) is needed: " << sockets.output;
    const auto ours = listening_addresses(sockets.output, pids);
    for (const auto& [local, line] : ours) {
      EXPECT_TRUE(is_loopback(local)) << "listening on " << local << "\n" << line;
    }
    EXPECT_EQ(ours.size(), c.listeners) << sockets.output;
  }
}

// Under a launcher that does not stop the others when a rank dies (torchrun's variables, one
// `baton run` per rank), with the heartbeat off and a transfer timeout of ten minutes, the one
// thing that can stop the survivor is its transport seeing the peer go: UCX's default keeps
// local ranks on shared memory and watches the peer's process instead of the network.
TEST(PipelineFailure, UcxOnSharedMemoryStopsTheSurvivorWhenItsPeerIsKilled) {
  const std::string dir = ::testing::TempDir() + "/ucx-shm-peer-killed";
  const std::string mark = "BATON_TEST_MARK=" + std::to_string(::getpid()) + "-shm-killed-";
  const bool training =
      start_torchrun_ucx_ranks(dir, mark, " --set world.heartbeat_s=0 --set world.timeout_s=600");
  // The rank itself, not the `timeout` that started it (which carries the mark too).
  std::string victim, survivor;
  for (int rank = 0; rank < 2; ++rank) {
    for (const auto& pid : pids_with_environment(mark + std::to_string(rank))) {
      if (file_text("/proc/" + pid + "/comm").rfind("baton", 0) == 0) {
        (rank == 0 ? survivor : victim) = pid;
      }
    }
  }
  ASSERT_TRUE(training) << file_text(dir + "/rank0.out") << file_text(dir + "/rank1.out");
  ASSERT_FALSE(victim.empty() || survivor.empty());
  ::kill(std::atoi(victim.c_str()), SIGKILL);
  const bool stopped = all_exited({survivor});
  if (!stopped) ::kill(std::atoi(survivor.c_str()), SIGKILL);
  ASSERT_TRUE(stopped) << "rank 0 still runs 90 s after its peer was killed\n"
                       << file_text(dir + "/rank0.out");
  // Its last line ("exit N") is written as it exits: waited for under a 60 s hang guard, so
  // the checks below read the whole output, never a part of it.
  for (int i = 0; i < 600 && file_text(dir + "/rank0.out").find("exit ") == std::string::npos;
       ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  const std::string output = file_text(dir + "/rank0.out");
  ASSERT_THAT(output, HasSubstr("exit ")) << output;
  EXPECT_THAT(output, HasSubstr("peer rank 1 closed the connection: its process (pid " + victim +
                                ") exited"));
  EXPECT_THAT(output, Not(HasSubstr("exit 0\n")));
}

// A store beyond loopback guarded by nothing but the run id (which is no secret) is refused:
// rank 0 says how to set a token before it listens anywhere.
TEST(PipelineFailure, AStoreBeyondLoopbackWithoutATokenIsRefused) {
  const auto result = baton_test::run_command(
      "env -u BATON_STORE_TOKEN RANK=0 WORLD_SIZE=2 MASTER_ADDR=0.0.0.0 MASTER_PORT=29599 "
      "timeout -k 5 60 " +
      kBaton + " run --no-env --set model.name=mlp " +
      "--set data.source=synthetic --set run.output_dir=" + ::testing::TempDir() +
      "/no-token-runs");
  EXPECT_NE(result.exit_code, 0) << result.output;
  EXPECT_THAT(result.output, HasSubstr("rank 0 would host the store on 0.0.0.0, beyond loopback, "
                                       "guarded only by the run id; set BATON_STORE_TOKEN"));
}

// A hung rank (SIGSTOPped) is found by its neighbours' heartbeat, not only at the next
// transfer's timeout: with world.timeout_s 120 and world.heartbeat_s 3, the run ends under a
// 60 s guard, and rank 0's error names the hung rank.
TEST(PipelineFailure, AHungRankIsFoundByTheHeartbeatBeforeTheTimeout) {
  auto settings = small_mlp_run("1f1b");
  settings.push_back("run.steps=6");
  settings.push_back("world.timeout_s=120");
  settings.push_back("world.heartbeat_s=3");
  const auto result = launch_failing("rank=1,step=2,action=stop", 2, settings, "heartbeat");
  const std::string& out = result.command.output;
  EXPECT_EQ(result.command.exit_code, 1) << out;
  EXPECT_THAT(out, HasSubstr("rank 1 has sent no heartbeat for 3 s (world.heartbeat_s): it is "
                             "hung"));
  EXPECT_THAT(out, HasSubstr("launch: rank 1 failed first (it hung: stopped by"));
}

// Data parallelism: a failure at a REDUCE_GRAD is annotated like any action, naming the
// replica, and a rank killed there stops every rank, its replica peer naming the reduction
// and the closed connection, not a timeout (world.timeout_s 120 under a 60 s guard).
std::vector<std::string> data_parallel_run() {
  auto settings = small_mlp_run("1f1b");
  settings.insert(settings.end(),
                  {"world.data_parallel=2", "data.batch_size=16", "world.timeout_s=120"});
  return settings;
}

TEST(PipelineFailure, AFailureAtAGradientReductionNamesTheReplicaAndTheAction) {
  const auto result =
      launch_failing("rank=3,step=2,action=1REDUCE_GRAD", 4, data_parallel_run(), "dp-inject");
  const std::string& out = result.command.output;
  EXPECT_EQ(result.command.exit_code, 1) << out;
  EXPECT_THAT(out, HasSubstr("[rank 3] rank 3 failed: rank 3 (replica 1 of 2, pipeline rank 1), "
                             "training step 2, timestep"));
  EXPECT_THAT(out, HasSubstr("of schedule '1f1b', action 1REDUCE_GRAD: injected failure"));
  EXPECT_THAT(out, testing::ContainsRegex(
                       "\\[rank 3\\] Step [0-9]+:.*1REDUCE_GRAD +<-- ERROR HERE \\(rank 1\\)"));
  EXPECT_THAT(out, testing::Not(HasSubstr("timed out")));
  EXPECT_THAT(out, HasSubstr("launch: rank 3 failed first (exit code 1)"));
}

TEST(PipelineFailure, ARankKilledAtItsGradientReductionStopsEveryRank) {
  const auto result = launch_failing("rank=3,step=2,action=1REDUCE_GRAD,by=kill", 4,
                                     data_parallel_run(), "dp-kill");
  const std::string& out = result.command.output;
  EXPECT_EQ(result.command.exit_code, 1) << out;
  // Its replica peer (rank 1, pipeline rank 1 of replica 0) was reducing with it.
  const std::size_t rank1 = out.find(
      "[rank 1] rank 1 failed: rank 1 (replica 0 of 2, pipeline "
      "rank 1), training step 2");
  ASSERT_NE(rank1, std::string::npos) << out;
  const std::string rank1_error = out.substr(rank1, out.find('\n', rank1) - rank1);
  // Its one bucket started as its last backward (1B3) finished the gradients, so that
  // all-reduce fails, or — when rank 3 had done its part before it was killed — the next
  // collective with rank 3 does: averaging the loss at the step's end.
  const bool gradients = rank1_error.find(
                             "action 1B3: the all-reduce of stage 1's gradients (bucket 1 of 1, "
                             "started in the stage's last backward) across the replicas "
                             "failed") != std::string::npos;
  const bool loss = rank1_error.find(
                        "action 1REDUCE_GRAD: averaging the loss across the "
                        "replicas") != std::string::npos;
  EXPECT_TRUE(gradients || loss) << rank1_error;
  EXPECT_THAT(rank1_error, HasSubstr("peer rank 3 closed the connection")) << rank1_error;
  EXPECT_THAT(out, testing::Not(HasSubstr("timed out")));
  EXPECT_THAT(out, HasSubstr("launch: rank 3 failed first (killed by signal"));
}

}  // namespace
