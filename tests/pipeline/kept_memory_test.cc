// What each rank keeps, step by step: the simulator and a real run follow the same table
// (baton/plan/action_rules.h), so after every compute action of a step they say the same
// thing about every rank — how many microbatches keep their autograd graph, only their inputs
// (recomputing stages), or what W still reads. The run's count is read from its tensors, the
// simulator's from the plan; both reach the run's trace (trace.json, plan_trace.json), which
// is what this test compares, on every schedule, recomputing or not.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <tuple>
#include <vector>

#include "launch_run.h"
#include "read_text.h"

namespace {

const std::string kBaton = BATON_BINARY;

struct Layout {
  std::string name;
  std::string schedule;
  int ranks;
  int stages_per_rank;
  bool split_backward;  // the schedule runs I and W
};

void PrintTo(const Layout& layout, std::ostream* out) {
  *out << layout.schedule << " on " << layout.ranks << " ranks";
}

// What a trace says one rank keeps after its compute action at one timestep.
struct KeptAfter {
  std::string action;
  int graph = 0, inputs = 0, weight_graph = 0;
  bool operator==(const KeptAfter& other) const {
    return std::tie(action, graph, inputs, weight_graph) ==
           std::tie(other.action, other.graph, other.inputs, other.weight_graph);
  }
};

std::string describe(const KeptAfter& kept) {
  return kept.action + ": graph " + std::to_string(kept.graph) + ", inputs " +
         std::to_string(kept.inputs) + ", weight graph " + std::to_string(kept.weight_graph);
}

// (rank, timestep) -> what the trace's compute event says. A measured event's name carries
// its training step, "1F3 (step 1)"; the simulated plan's is the action alone.
std::map<std::pair<int, int>, KeptAfter> kept_by_timestep(const std::string& path) {
  const nlohmann::json trace = nlohmann::json::parse(baton_test::read_text(path), nullptr, false);
  std::map<std::pair<int, int>, KeptAfter> kept;
  if (!trace.is_object() || !trace["traceEvents"].is_array()) return kept;
  for (const auto& event : trace["traceEvents"]) {
    if (event.value("ph", "") != "X" || event.value("tid", -1) != 0) continue;
    const auto& args = event["args"];
    if (!args.is_object() || !args.contains("timestep")) continue;
    std::string name = event["name"].get<std::string>();
    name = name.substr(0, name.find(' '));
    kept[{event["pid"].get<int>(), args["timestep"].get<int>()}] = {
        name, args.value("kept graph", -1), args.value("kept inputs", -1),
        args.value("kept weight graph", -1)};
  }
  return kept;
}

class KeptMemory : public testing::TestWithParam<Layout> {};

TEST_P(KeptMemory, TheRunKeepsWhatTheSimulatorSaysAfterEveryAction) {
  const Layout& layout = GetParam();
  const int stages = layout.ranks * layout.stages_per_rank;
  for (const std::string recompute : {"off", "on", "[1]"}) {
    SCOPED_TRACE("model.recompute: " + recompute);
    const std::string name = "kept-" + layout.name + "-" + std::to_string(recompute.size());
    const auto run = baton_test::launch(
        kBaton, layout.ranks,
        {"model.name=mlp", "model.params.in_features=8", "model.params.hidden=16",
         "model.params.layers=" + std::to_string(stages), "model.params.out_features=3",
         "data.source=synthetic", "data.batch_size=12", "schedule.name=" + layout.schedule,
         "schedule.stages_per_rank=" + std::to_string(layout.stages_per_rank),
         "schedule.microbatches=6", "model.recompute=" + recompute, "run.steps=2", "run.name=kept",
         "trace.steps=1", "checkpoint.enabled=false", "world.timeout_s=60"},
        name);
    ASSERT_EQ(run.command.exit_code, 0) << run.command.output;
    const std::string folder = run.dump_dir + "/runs/kept/";
    const auto measured = kept_by_timestep(folder + "trace.json");
    const auto simulated = kept_by_timestep(folder + "plan_trace.json");
    // Every compute action of the step: 6 microbatches, F and a backward (B, or I and W) per
    // stage; an OVERLAP_F_B, "(0F7;7B3)OVERLAP_F_B", runs two.
    std::size_t parts = 0;
    for (const auto& entry : measured) {
      const std::string& action = entry.second.action;
      parts += action.find("OVERLAP") == std::string::npos ? 1 : 2;
    }
    ASSERT_GE(parts, static_cast<std::size_t>(2 * 6 * stages));
    ASSERT_EQ(measured.size(), simulated.size());
    int differences = 0, graphs = 0, inputs = 0, weight_graphs = 0;
    for (const auto& [where, kept] : measured) {
      const auto found = simulated.find(where);
      ASSERT_NE(found, simulated.end())
          << "rank " << where.first << ", timestep " << where.second << " ran " << kept.action
          << " but the plan has no compute action there";
      if (!(kept == found->second) && ++differences <= 5) {
        ADD_FAILURE() << "rank " << where.first << ", timestep " << where.second
                      << ": the run keeps " << describe(kept) << "; the simulator says "
                      << describe(found->second);
      }
      graphs += kept.graph;
      inputs += kept.inputs;
      weight_graphs += kept.weight_graph;
    }
    EXPECT_EQ(differences, 0);
    // Not a comparison of nothing with nothing: what each setting must show.
    // (Every stage recomputing: after F only inputs are kept, and B lets go of the graph it
    // built again.)
    EXPECT_EQ(graphs > 0, recompute != "on") << "graphs kept " << graphs;
    EXPECT_EQ(inputs > 0, recompute != "off") << "inputs kept " << inputs;
    EXPECT_EQ(weight_graphs > 0, layout.split_backward) << "weight graphs kept " << weight_graphs;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Schedules, KeptMemory,
    testing::Values(Layout{"gpipe", "gpipe", 2, 1, false}, Layout{"1f1b", "1f1b", 3, 1, false},
                    Layout{"zero_bubble", "zero_bubble", 2, 1, true},
                    Layout{"interleaved", "interleaved_1f1b", 2, 2, false},
                    Layout{"looped_bfs", "looped_bfs", 2, 2, false},
                    Layout{"zbv", "zbv", 2, 2, true}, Layout{"dualpipev", "dualpipev", 2, 2, true},
                    Layout{"v_half", "v_half", 3, 2, true}, Layout{"v_min", "v_min", 3, 2, true}),
    [](const testing::TestParamInfo<Layout>& info) { return info.param.name; });

}  // namespace
