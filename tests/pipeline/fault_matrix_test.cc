// The fault matrix (docs/reliability.md): for each transport, schedule family and fault — a
// rank that raises in a forward, a backward or while waiting for a transfer, is SIGKILLed
// (at a step's start, mid-wait, or while writing a checkpoint), or is SIGSTOPped (hung, at a
// step's start or mid-wait) — every rank stops, `launch` names the rank that had the fault first,
// and exits 1. For raises and kills world.timeout_s is 120 s and the launch is cut at 60 s (a hang
// guard, not a timed assertion): only a failure that reaches every rank ends the run in time. A
// stopped rank answers no one, so its peers end at their timeout (5 s here). Each case prints how
// long the whole launch took (set-up included) for the table in docs/reliability.md.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <iostream>

#include "launch_run.h"

namespace {

using testing::HasSubstr;

struct Cell {
  std::string transport;
  std::string schedule;
  int stages_per_rank;
  int ranks;
  int faulty_rank;
  // "forward", "backward", "wait" (raises), "kill", "stop" (at the step's start),
  // "wait_kill", "wait_stop" (while waiting for a transfer), "checkpoint_kill".
  std::string fault;
};

bool killed(const Cell& cell) {
  return cell.fault == "kill" || cell.fault == "wait_kill" || cell.fault == "checkpoint_kill";
}
bool stopped(const Cell& cell) {
  return cell.fault == "stop" || cell.fault == "wait_stop";
}

std::string name_of(const Cell& cell) {
  return cell.transport + "_" + cell.schedule + "_" + std::to_string(cell.ranks) + "ranks_" +
         cell.fault;
}

std::string name_of(const testing::TestParamInfo<Cell>& info) {
  return name_of(info.param);
}

// How CTest lists a case: its name, not its bytes.
void PrintTo(const Cell& cell, std::ostream* out) {
  *out << name_of(cell);
}

// BATON_INJECT_FAILURE's action for the cell: the faulty rank's own stage, microbatch 1
// (for a wait: that stage's receive of microbatch 1's activations from the rank before).
std::string injected_action(const Cell& cell) {
  if (cell.fault == "kill" || cell.fault == "stop") return cell.fault;
  if (cell.fault == "checkpoint_kill") return "kill_in_checkpoint";
  const std::string stage = std::to_string(cell.faulty_rank);
  if (cell.fault == "forward") return stage + "F1";
  if (cell.fault == "wait") return stage + "RECV_F1";
  if (cell.fault == "wait_kill") return stage + "RECV_F1,by=kill";
  if (cell.fault == "wait_stop") return stage + "RECV_F1,by=stop";
  return stage + (cell.schedule == "zbv" ? "I1" : "B1");  // ZB-V splits the backward
}

class FaultMatrix : public testing::TestWithParam<Cell> {};

TEST_P(FaultMatrix, EveryRankStopsAndTheLauncherNamesTheFaultyRank) {
  const Cell& cell = GetParam();
  const bool hung = stopped(cell);
  const bool checkpoints = cell.fault == "checkpoint_kill";
  const std::vector<std::string> settings = {
      "model.name=mlp",
      "model.params.in_features=8",
      "model.params.hidden=8",
      "model.params.layers=4",
      "model.params.out_features=3",
      "data.source=synthetic",
      "data.batch_size=8",
      "schedule.name=" + cell.schedule,
      "schedule.stages_per_rank=" + std::to_string(cell.stages_per_rank),
      "schedule.microbatches=4",
      "transport.name=" + cell.transport,
      "run.steps=4",
      std::string("checkpoint.enabled=") + (checkpoints ? "true" : "false"),
      "checkpoint.every=1",
      "trace.enabled=false",
      std::string("world.timeout_s=") + (hung ? "5" : "120")};
  setenv("BATON_INJECT_FAILURE",
         ("rank=" + std::to_string(cell.faulty_rank) + ",step=2,action=" + injected_action(cell))
             .c_str(),
         1);
  const auto started = std::chrono::steady_clock::now();
  const auto result = baton_test::launch(BATON_BINARY, cell.ranks, settings,
                                         "fault-" + name_of(cell), /*timeout_s=*/60);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  unsetenv("BATON_INJECT_FAILURE");
  const std::string& out = result.command.output;
  std::cout << "fault matrix: " << name_of(cell) << ": launch ended after " << seconds << " s\n";
  RecordProperty("seconds_to_stop", std::to_string(seconds));
  ASSERT_EQ(result.command.exit_code, 1) << out;
  const std::string faulty = std::to_string(cell.faulty_rank);
  EXPECT_THAT(out, HasSubstr("launch: rank " + faulty + " failed first")) << out;
  if (cell.fault == "forward" || cell.fault == "backward") {
    EXPECT_THAT(out, HasSubstr("[rank " + faulty + "] rank " + faulty + " failed: rank " + faulty +
                               ", training step 2"));
    EXPECT_THAT(out, HasSubstr("action " + injected_action(cell) + ": injected failure"));
  } else if (cell.fault == "wait") {
    // Named at the forward that waits, with the receive it was waiting for.
    EXPECT_THAT(out, HasSubstr("[rank " + faulty + "] rank " + faulty + " failed: rank " + faulty +
                               ", training step 2"));
    EXPECT_THAT(out, HasSubstr("action " + faulty +
                               "F1: injected failure (BATON_INJECT_FAILURE) "
                               "at the wait for " +
                               faulty + "RECV_F1"));
  } else if (killed(cell)) {
    EXPECT_THAT(out, HasSubstr("failed first (killed by signal Killed)"));
  } else {
    EXPECT_THAT(out, HasSubstr("launch: rank " + faulty + " is stopped"));
    EXPECT_THAT(out, HasSubstr("it hung: stopped by"));
  }
  // Every other rank stopped with an error of its own (or was stopped by the launcher).
  for (int rank = 0; rank < cell.ranks; ++rank) {
    if (rank == cell.faulty_rank) continue;
    EXPECT_THAT(out, testing::ContainsRegex("launch: rank " + std::to_string(rank) +
                                            ": (exit code 1|killed by signal Terminated)"))
        << out;
  }
}

std::vector<Cell> cells() {
  std::vector<Cell> all;
  for (const std::string transport : {"gloo", "ucx"}) {
    for (const auto& [schedule, stages_per_rank] : std::vector<std::pair<std::string, int>>{
             {"1f1b", 1}, {"interleaved_1f1b", 2}, {"zbv", 2}}) {
      for (const std::string fault : {"forward", "backward", "wait", "kill"}) {
        all.push_back({transport, schedule, stages_per_rank, 2, 1, fault});
      }
    }
    for (const std::string fault : {"wait_kill", "checkpoint_kill", "stop", "wait_stop"}) {
      all.push_back({transport, "1f1b", 1, 2, 1, fault});
    }
    all.push_back({transport, "1f1b", 1, 4, 2, "backward"});
    all.push_back({transport, "1f1b", 1, 4, 2, "wait"});
    all.push_back({transport, "1f1b", 1, 4, 2, "kill"});
  }
  return all;
}

INSTANTIATE_TEST_SUITE_P(Faults, FaultMatrix, testing::ValuesIn(cells()),
                         [](const testing::TestParamInfo<Cell>& info) { return name_of(info); });

}  // namespace
