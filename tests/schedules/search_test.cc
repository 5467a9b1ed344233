// The schedule search (apps/tuning) on synthetic profiles, with the real schedule plugins:
// a memory limit that excludes GPipe, a plugin that refuses the shape, an unbalanced model
// whose balanced cuts beat parameter-count cuts, and the profile file's own checks.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "baton-bench/tune/rank_correlation.h"
#include "baton/config.h"
#include "baton/error.h"
#include "baton/plan/compile.h"
#include "baton/plugin_loader.h"
#include "baton/schedule.h"
#include "error_of.h"
#include "training/config_sections.h"
#include "tuning/model_profile.h"
#include "tuning/schedule_search.h"

namespace {

[[maybe_unused]] const bool kAppSections = (baton_app::add_app_config_sections(), true);

using baton_app::Candidate;
using baton_app::ModelProfile;
using baton_app::SearchSpace;
using testing::HasSubstr;

// `units` units of equal cost (forward 1 ms, backward 2 ms at 1 sample; linear in the
// microbatch size), each keeping `saved` bytes per sample for its backward.
ModelProfile uniform_profile(int units, int batch, double saved = 1000) {
  ModelProfile profile;
  profile.model = "synthetic";
  profile.fingerprint = "synthetic-" + std::to_string(units);
  profile.batch_size = batch;
  for (int size = 1; size <= batch; ++size) {
    if (batch % size != 0) continue;
    baton_app::MicrobatchProfile measured;
    measured.microbatch_size = size;
    measured.input_bytes = 64.0 * size;
    for (int u = 0; u < units; ++u) {
      baton_app::UnitProfile unit;
      unit.name = "unit" + std::to_string(u);
      unit.forward_s = 1e-3 * size;
      unit.backward_s = 2e-3 * size;
      unit.backward_input_s = 1e-3 * size;
      unit.backward_weight_s = 1e-3 * size;
      unit.output_bytes = 64.0 * size;
      unit.saved_bytes = saved * size;
      unit.parameter_bytes = 4096;
      measured.units.push_back(unit);
    }
    profile.sizes.push_back(measured);
  }
  return profile;
}

// 1F1B alone, one stage per rank on 2 ranks, a batch of 8 in 4 microbatches.
SearchSpace one_f_one_b_on_two_ranks() {
  SearchSpace space;
  space.ranks = 2;
  space.batch_size = 8;
  space.microbatches = 4;
  space.stages_per_rank = 1;
  space.schedules = {"1f1b"};
  return space;
}

const baton::PluginLoader& loader() {
  static const baton::PluginLoader instance;
  return instance;
}

TEST(ScheduleSearch, RanksEveryShapeThePluginsAcceptFastestFirst) {
  SearchSpace space;
  space.ranks = 2;
  space.batch_size = 8;
  space.schedules = {"gpipe", "1f1b", "interleaved_1f1b"};
  const ModelProfile profile = uniform_profile(8, 8);
  const auto result = baton_app::search_schedules(loader(), profile, space);
  ASSERT_FALSE(result.ranked.empty());
  for (std::size_t i = 1; i < result.ranked.size(); ++i) {
    EXPECT_LE(result.ranked[i - 1].predicted_step_s, result.ranked[i].predicted_step_s);
  }
  // Each rank's simulated compute (what bench tune sets against the measured): together, every
  // unit's F and B for every microbatch; each within the step.
  for (const Candidate& c : result.ranked) {
    ASSERT_EQ(c.predicted_compute_s.size(), 2u) << c.schedule;
    double work = 0;
    for (const auto& unit : profile.at(8 / c.microbatches, "test").units) {
      work += c.microbatches * (unit.forward_s + unit.backward_s);
    }
    EXPECT_NEAR(c.predicted_compute_s[0] + c.predicted_compute_s[1], work, 1e-9 * work)
        << c.schedule;
    for (const double compute : c.predicted_compute_s) {
      EXPECT_LE(compute, c.predicted_step_s + 1e-12) << c.schedule;
    }
  }
  // 8 equal units on 2 ranks x 1 stage: 4 and 4.
  for (const Candidate& c : result.ranked) {
    if (c.stages_per_rank == 1) {
      EXPECT_EQ(c.bounds, (std::vector<int>{0, 4, 8})) << c.schedule;
    }
  }
  // More microbatches, smaller bubble: the winner uses the most the batch allows.
  EXPECT_EQ(result.ranked.front().microbatches, 8);
  // 1f1b and gpipe refuse 2 or more stages per rank, in their own words; interleaved_1f1b
  // runs them.
  bool one_f_one_b_refused_two = false;
  for (const auto& refusal : result.refused) {
    if (refusal.schedule == "1f1b" && refusal.stages_per_rank == 2) {
      one_f_one_b_refused_two = refusal.reason.find("stages_per_rank == 1") != std::string::npos;
    }
  }
  EXPECT_TRUE(one_f_one_b_refused_two);
  bool interleaved_ran_two = false;
  for (const Candidate& c : result.ranked) {
    interleaved_ran_two |= c.schedule == "interleaved_1f1b" && c.stages_per_rank == 2;
  }
  EXPECT_TRUE(interleaved_ran_two);
  const std::string table = baton_app::format_search_table(result, 5);
  EXPECT_THAT(table, HasSubstr("chosen: " + result.ranked.front().schedule));
  EXPECT_THAT(table, HasSubstr("plans simulated"));
}

// With replicas every plan reduces each stage's gradients, costed as a ring all-reduce over
// the profiled transfers: 2(D-1) messages of 1/D of the stage's 2 x 4096 gradient bytes. In
// 1F1B with one stage per rank, rank 0's reduction starts when its last backward ends, the
// step's end without replicas, and nothing hides it: the step grows by exactly that.
TEST(ScheduleSearch, DataParallelAddsEachStagesReductionToThePrediction) {
  ModelProfile profile = uniform_profile(4, 8);
  profile.transfer.latency_s = 1e-3;
  profile.transfer.seconds_per_byte = 1e-6;
  SearchSpace space = one_f_one_b_on_two_ranks();
  const auto alone = baton_app::search_schedules(loader(), profile, space);
  space.data_parallel = 2;
  const auto replicated = baton_app::search_schedules(loader(), profile, space);
  ASSERT_EQ(alone.ranked.size(), 1u);
  ASSERT_EQ(replicated.ranked.size(), 1u);
  const double reduction = 2 * (1e-3 + 2 * 4096 / 2 * 1e-6);
  EXPECT_NEAR(replicated.ranked.front().predicted_step_s - alone.ranked.front().predicted_step_s,
              reduction, 1e-9);
}

// With one microbatch and one stage per rank every schedule that keeps the backward whole
// runs F0 then B0 on each rank: GPipe, interleaved 1F1B and looped BFS compile to the same
// plan, which is one candidate, simulated and measured once, naming the others. Zero bubble
// splits the backward: a plan of its own.
TEST(ScheduleSearch, SchedulesThatCompileToTheSamePlanAreOneCandidate) {
  SearchSpace space;
  space.ranks = 2;
  space.batch_size = 8;
  space.microbatches = 1;
  space.stages_per_rank = 1;
  space.schedules = {"gpipe", "interleaved_1f1b", "looped_bfs", "zero_bubble"};
  const auto result = baton_app::search_schedules(loader(), uniform_profile(4, 8), space);
  ASSERT_EQ(result.ranked.size(), 2u);
  EXPECT_EQ(result.simulated, 2);
  const Candidate* gpipe = nullptr;
  for (const Candidate& c : result.ranked) {
    if (c.schedule == "gpipe") gpipe = &c;
    if (c.schedule == "zero_bubble") {
      EXPECT_TRUE(c.same_plan.empty());
    }
  }
  ASSERT_NE(gpipe, nullptr);
  EXPECT_EQ(gpipe->same_plan, (std::vector<std::string>{"interleaved_1f1b", "looped_bfs"}));
  EXPECT_THAT(baton_app::format_search_table(result, 5),
              HasSubstr("also the plan of interleaved_1f1b, looped_bfs for this shape"));
  EXPECT_THAT(baton_app::format_search_json(result), HasSubstr("\"same_plan\""));
  // With four microbatches their orders differ: three candidates again.
  space.microbatches = 4;
  space.schedules = {"gpipe", "interleaved_1f1b", "looped_bfs"};
  EXPECT_EQ(baton_app::search_schedules(loader(), uniform_profile(4, 8), space).ranked.size(), 3u);
}

// The profile's cost of posting a receive reaches the prediction: each rank posts its four
// receives (1F1B, 2 ranks, 4 microbatches) at its first RECV. With 10 s a receive, rank 1's
// first RECV posts for 40 s from time 0, where it would otherwise have waited for rank 0's
// first forward (2 units x 2 samples x 1 ms = 4 ms); rank 0's posting ends before rank 1's
// first gradient arrives. So the step grows by 40 s less at most those 4 ms.
TEST(ScheduleSearch, PostingReceivesIsPartOfThePrediction) {
  ModelProfile profile = uniform_profile(4, 8);
  SearchSpace space = one_f_one_b_on_two_ranks();
  const double alone =
      baton_app::search_schedules(loader(), profile, space).ranked.front().predicted_step_s;
  profile.transfer.recv_overhead_s = 10.0;
  const double posting =
      baton_app::search_schedules(loader(), profile, space).ranked.front().predicted_step_s;
  EXPECT_LE(posting - alone, 40.0 + 1e-9);
  EXPECT_GE(posting - alone, 40.0 - 4e-3 - 1e-9);
}

TEST(ScheduleSearch, AMemoryLimitExcludesGPipe) {
  // GPipe keeps all 8 microbatches' activations alive on rank 0; 1F1B at most 2.
  SearchSpace space;
  space.ranks = 2;
  space.batch_size = 8;
  space.microbatches = 8;
  space.schedules = {"gpipe", "1f1b"};
  space.may_recompute = false;  // (RecomputationIsChosenOnlyWhenNothingFitsWithout)
  const ModelProfile profile = uniform_profile(4, 8, /*saved=*/1 << 20);
  const auto unlimited = baton_app::search_schedules(loader(), profile, space);
  double gpipe_peak = 0, one_f_one_b_peak = 0;
  for (const Candidate& c : unlimited.ranked) {
    (c.schedule == "gpipe" ? gpipe_peak : one_f_one_b_peak) = c.peak_memory_bytes;
  }
  ASSERT_GT(gpipe_peak, one_f_one_b_peak);
  space.memory_limit_bytes = (gpipe_peak + one_f_one_b_peak) / 2;
  const auto limited = baton_app::search_schedules(loader(), profile, space);
  ASSERT_EQ(limited.ranked.size(), 1u);
  EXPECT_EQ(limited.ranked.front().schedule, "1f1b");
  ASSERT_EQ(limited.over_memory.size(), 1u);
  EXPECT_EQ(limited.over_memory.front().schedule, "gpipe");
  // A limit nothing fits names the smallest candidate's need.
  space.memory_limit_bytes = 1024;
  try {
    baton_app::search_schedules(loader(), profile, space);
    ADD_FAILURE() << "a limit nothing fits was accepted";
  } catch (const baton::ConfigError& error) {
    EXPECT_THAT(error.what(), HasSubstr("no plan fits schedule.memory_limit_mb (0.0 MiB per "
                                        "rank): the smallest, 1f1b"));
  }
}

// A plan over the memory limit is tried again recomputing every stage (model.recompute: on):
// only its inputs (64 B a sample) held between F and B instead of 1 MiB. With a limit 1F1B
// fits, it wins without recomputation and GPipe joins the ranking recomputing, slower; with a
// limit below 1F1B's plain need, the fastest plan that fits recomputes. With model.recompute
// set by the user (may_recompute false) nothing is tried again.
TEST(ScheduleSearch, RecomputationIsChosenOnlyWhenNothingFitsWithout) {
  SearchSpace space;
  space.ranks = 2;
  space.batch_size = 8;
  space.microbatches = 8;
  space.schedules = {"gpipe", "1f1b"};
  const ModelProfile profile = uniform_profile(4, 8, /*saved=*/1 << 20);
  const auto unlimited = baton_app::search_schedules(loader(), profile, space);
  double one_f_one_b_peak = 0, one_f_one_b_step = 0;
  for (const Candidate& c : unlimited.ranked) {
    EXPECT_FALSE(c.recompute) << c.schedule;  // no limit: never recomputes
    if (c.schedule == "1f1b")
      one_f_one_b_peak = c.peak_memory_bytes, one_f_one_b_step = c.predicted_step_s;
  }
  space.memory_limit_bytes = one_f_one_b_peak;
  const auto fits = baton_app::search_schedules(loader(), profile, space);
  ASSERT_EQ(fits.ranked.size(), 2u);
  EXPECT_EQ(fits.ranked[0].schedule, "1f1b");
  EXPECT_FALSE(fits.ranked[0].recompute);
  EXPECT_EQ(fits.ranked[1].schedule, "gpipe");
  EXPECT_TRUE(fits.ranked[1].recompute);
  EXPECT_LE(fits.ranked[1].peak_memory_bytes, space.memory_limit_bytes);

  space.memory_limit_bytes = one_f_one_b_peak - 1;
  const auto tight = baton_app::search_schedules(loader(), profile, space);
  ASSERT_FALSE(tight.ranked.empty());
  EXPECT_TRUE(tight.ranked.front().recompute);
  EXPECT_GT(tight.ranked.front().predicted_step_s, one_f_one_b_step);  // one more forward
  EXPECT_THAT(baton_app::format_search_table(tight, 5),
              HasSubstr("recomputing every stage (model.recompute: on)"));

  space.may_recompute = false;
  EXPECT_THROW(baton_app::search_schedules(loader(), profile, space), baton::ConfigError);
}

TEST(ScheduleSearch, APluginThatRefusesTheShapeIsSkippedWithItsReason) {
  SearchSpace space;
  space.ranks = 2;
  space.batch_size = 4;
  space.stages_per_rank = 2;  // fixed: 1f1b refuses it, interleaved_1f1b takes it
  space.schedules = {"1f1b", "interleaved_1f1b"};
  const auto result = baton_app::search_schedules(loader(), uniform_profile(8, 4), space);
  for (const Candidate& c : result.ranked) {
    EXPECT_EQ(c.schedule, "interleaved_1f1b");
    EXPECT_EQ(c.stages_per_rank, 2);
  }
  ASSERT_FALSE(result.refused.empty());
  EXPECT_EQ(result.refused.front().schedule, "1f1b");
  EXPECT_THAT(result.refused.front().reason, HasSubstr("stages_per_rank == 1"));
  // Nothing at all can run: every refusal is named.
  space.schedules = {"1f1b"};
  try {
    baton_app::search_schedules(loader(), uniform_profile(8, 4), space);
    ADD_FAILURE() << "a search where nothing runs succeeded";
  } catch (const baton::ConfigError& error) {
    EXPECT_THAT(error.what(), HasSubstr("no schedule can run 2 ranks with a batch of 4:"));
    EXPECT_THAT(error.what(), HasSubstr("1f1b (2 per rank, 4 microbatches): "));
  }
}

TEST(ScheduleSearch, BalancedCutsBeatParameterCountCuts) {
  // Four units: the first two are cheap but hold most parameters (an embedding), the last
  // two are expensive. Cutting by parameters puts units 0 | 1, 2, 3 (rank 1 does 3 expensive
  // units' worth); balancing on measured time cuts 0, 1, 2 | 3.
  ModelProfile profile = uniform_profile(4, 4);
  for (auto& measured : profile.sizes) {
    const double size = measured.microbatch_size;
    const double forward[] = {0.1e-3, 0.1e-3, 2e-3, 2e-3};
    const double parameters[] = {1 << 24, 1 << 22, 1 << 12, 1 << 12};
    for (std::size_t u = 0; u < 4; ++u) {
      measured.units[u].forward_s = forward[u] * size;
      measured.units[u].backward_s = 2 * forward[u] * size;
      measured.units[u].backward_input_s = forward[u] * size;
      measured.units[u].backward_weight_s = forward[u] * size;
      measured.units[u].parameter_bytes = parameters[u];
    }
  }
  SearchSpace space;
  space.ranks = 2;
  space.batch_size = 4;
  space.microbatches = 4;
  space.schedules = {"1f1b"};
  const auto result = baton_app::search_schedules(loader(), profile, space);
  ASSERT_EQ(result.ranked.size(), 1u);
  const Candidate& chosen = result.ranked.front();
  EXPECT_EQ(chosen.bounds, (std::vector<int>{0, 3, 4}));

  // The same plan, cut by parameter count, is predicted slower.
  const auto plugin = loader().load(baton::PluginKind::kSchedule, "1f1b");
  const auto schedule = plugin->create_as<baton::Schedule>(baton::resolve_params(
      {}, plugin->descriptor().params, plugin->descriptor().num_params, "1f1b"));
  const auto compiled = baton::compile_schedule(*schedule, {2, 1, 4}, "1f1b");
  const auto by_parameters = baton::simulate(
      compiled.lowered,
      baton_app::simulation_costs(profile.at(1, "test"), {0, 1, 4}, profile.transfer, {}));
  EXPECT_LT(chosen.predicted_step_s, by_parameters.makespan);
}

// Stage costs are the sums of their units', except the split backward of the first stage:
// its inputs need no gradient, so W does all of its backward and I only what the model's
// first unit's I measured (sorting the graph). Worked by hand on three units.
TEST(ScheduleSearch, TheFirstStagesSplitBackwardIsAllWeightGradient) {
  baton_app::MicrobatchProfile measured;
  measured.microbatch_size = 1;
  measured.input_bytes = 64;
  const double forward[] = {1e-3, 2e-3, 3e-3}, backward[] = {2e-3, 4e-3, 6e-3};
  const double input_grad[] = {0.1e-3, 1.5e-3, 2.5e-3}, weight_grad[] = {1.9e-3, 2.5e-3, 3.5e-3};
  for (int u = 0; u < 3; ++u) {
    baton_app::UnitProfile unit;
    unit.forward_s = forward[u];
    unit.backward_s = backward[u];
    unit.backward_input_s = input_grad[u];
    unit.backward_weight_s = weight_grad[u];
    unit.output_bytes = 64;
    measured.units.push_back(unit);
  }
  const baton::MeasuredCosts costs =
      baton_app::simulation_costs(measured, {0, 2, 3}, baton_app::TransferProfile{}, {});
  ASSERT_EQ(costs.stages.size(), 2u);
  // Stage 0 = units 0 and 1: F and B summed; I is unit 0's, W the rest of B (6 - 0.1 ms).
  EXPECT_DOUBLE_EQ(costs.stages[0].forward, 3e-3);
  EXPECT_DOUBLE_EQ(costs.stages[0].backward, 6e-3);
  EXPECT_DOUBLE_EQ(costs.stages[0].backward_input, 0.1e-3);
  EXPECT_DOUBLE_EQ(costs.stages[0].backward_weight, 5.9e-3);
  // Stage 1 = unit 2: its own I and W.
  EXPECT_DOUBLE_EQ(costs.stages[1].backward_input, 2.5e-3);
  EXPECT_DOUBLE_EQ(costs.stages[1].backward_weight, 3.5e-3);

  // The profile's split-backward factor scales every stage's I and W, and nothing else.
  const baton::MeasuredCosts scaled = baton_app::simulation_costs(
      measured, {0, 2, 3}, baton_app::TransferProfile{}, {}, 1, /*split_backward_factor=*/1.1);
  EXPECT_DOUBLE_EQ(scaled.stages[0].forward, 3e-3);
  EXPECT_DOUBLE_EQ(scaled.stages[0].backward, 6e-3);
  EXPECT_DOUBLE_EQ(scaled.stages[0].backward_input, 0.1e-3 * 1.1);
  EXPECT_DOUBLE_EQ(scaled.stages[0].backward_weight, 5.9e-3 * 1.1);
  EXPECT_DOUBLE_EQ(scaled.stages[1].backward, 6e-3);
  EXPECT_DOUBLE_EQ(scaled.stages[1].backward_input, 2.5e-3 * 1.1);
  EXPECT_DOUBLE_EQ(scaled.stages[1].backward_weight, 3.5e-3 * 1.1);
}

// A send occupies its rank for the fixed overhead (send_overhead, the same for every send)
// plus its message's bytes at the profile's rate (the stage's own part), on four units cut
// into three stages.
TEST(ScheduleSearch, ASendsOverheadGrowsWithItsMessage) {
  baton_app::MicrobatchProfile measured;
  measured.microbatch_size = 1;
  measured.input_bytes = 64;
  const double output_bytes[] = {1000, 4000, 500, 16};
  for (int u = 0; u < 4; ++u) {
    baton_app::UnitProfile unit;
    unit.forward_s = 1e-3;
    unit.backward_s = 2e-3;
    unit.output_bytes = output_bytes[u];
    measured.units.push_back(unit);
  }
  baton_app::TransferProfile transfer;
  transfer.send_overhead_s = 5e-5;
  transfer.send_overhead_per_byte = 1e-9;
  const baton::MeasuredCosts costs =
      baton_app::simulation_costs(measured, {0, 2, 3, 4}, transfer, {});
  ASSERT_EQ(costs.stages.size(), 3u);
  EXPECT_DOUBLE_EQ(costs.send_overhead, 5e-5);
  // Stage 0 (units 0, 1) sends unit 1's 4000 B forward; stage 1 (unit 2) sends its 500 B
  // forward and its input's gradient, the 4000 B it received, back; stage 2 (unit 3) sends
  // back the gradient of unit 2's 500 B output.
  EXPECT_DOUBLE_EQ(costs.stages[0].forward_send_overhead, 4000e-9);
  EXPECT_DOUBLE_EQ(costs.stages[1].forward_send_overhead, 500e-9);
  EXPECT_DOUBLE_EQ(costs.stages[1].backward_send_overhead, 4000e-9);
  EXPECT_DOUBLE_EQ(costs.stages[2].backward_send_overhead, 500e-9);
}

TEST(ModelProfile, RoundTripsAndRefusesDamagedOrForeignFiles) {
  const std::string dir = testing::TempDir() + "/profile-test";
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/profile.json";
  ModelProfile written = uniform_profile(3, 4);
  written.transfer.latency_s = 1e-4;
  written.transfer.send_overhead_s = 8e-5;
  written.transfer.send_overhead_per_byte = 2e-9;
  written.transfer.recv_overhead_s = 3e-5;
  written.split_backward_factor = 1.07;
  baton_app::write_profile(path, written);
  const ModelProfile read = baton_app::read_profile(path, written.fingerprint);
  ASSERT_EQ(read.sizes.size(), written.sizes.size());
  EXPECT_DOUBLE_EQ(read.split_backward_factor, 1.07);
  EXPECT_DOUBLE_EQ(read.transfer.latency_s, 1e-4);
  EXPECT_DOUBLE_EQ(read.transfer.send_overhead_s, 8e-5);
  EXPECT_DOUBLE_EQ(read.transfer.send_overhead_per_byte, 2e-9);
  EXPECT_DOUBLE_EQ(read.transfer.recv_overhead_s, 3e-5);
  EXPECT_EQ(read.sizes[1].units[2].name, "unit2");
  EXPECT_DOUBLE_EQ(read.sizes[1].units[2].saved_bytes, written.sizes[1].units[2].saved_bytes);
  // Another model's profile: both fingerprints named.
  try {
    baton_app::read_profile(path, "gpt-other");
    ADD_FAILURE() << "a foreign profile was accepted";
  } catch (const baton::ConfigError& error) {
    EXPECT_THAT(error.what(), HasSubstr("it says \"synthetic-3\", this run is \"gpt-other\""));
  }
  // Truncated: refused naming the file.
  std::string text = baton_app::profile_to_json(written);
  {
    std::ofstream out(path, std::ios::trunc);
    out << text.substr(0, text.size() / 2);
  }
  try {
    baton_app::read_profile(path);
    ADD_FAILURE() << "a truncated profile was accepted";
  } catch (const baton::ConfigError& error) {
    EXPECT_THAT(error.what(), HasSubstr("profile '" + path + "': not a whole JSON document"));
  }
  // Damaged in place: `key` (its first occurrence, quoted) replaced by `by`, then read; the
  // error it is refused with, or "(accepted)".
  const auto refusal_of = [](std::string json, const std::string& key, const std::string& by) {
    const auto at = json.find(key);
    if (at == std::string::npos) return "(" + key + " not written)";
    json.replace(at, key.size(), by);
    try {
      baton_app::profile_from_json(json, "p.json");
    } catch (const baton::ConfigError& error) {
      return std::string(error.what());
    }
    return std::string("(accepted)");
  };
  // A negative time is refused naming where.
  EXPECT_THAT(refusal_of(text, "\"forward_s\": ", "\"forward_s\": -"),
              HasSubstr("p.json: sizes[0].units[0]: 'forward_s' is"));
  // A profile without the split-backward factor (format 3 had none) is refused naming it.
  EXPECT_THAT(refusal_of(text, "\"split_backward_factor\"", "\"unknown\""),
              HasSubstr("p.json: 'split_backward_factor' is missing"));
  // A value of another JSON type (issue 35: "format": 7 gave a raw json type_error) is a
  // damaged profile like any other: measured again by schedule: auto.
  const std::string format =
      text.substr(text.find("\"format\": "),
                  text.find(',', text.find("\"format\": ")) - text.find("\"format\": "));
  EXPECT_THAT(refusal_of(text, format, "\"format\": 7"), HasSubstr("p.json: "));
  EXPECT_THAT(refusal_of(text, format, "\"format\": 7"), testing::Not(HasSubstr("(accepted)")));
  EXPECT_THAT(refusal_of(text, "\"model\": ", "\"model\": 5, \"x\": "),
              HasSubstr("p.json: damaged ("));
  EXPECT_THAT(
      baton_test::error_of<baton::ConfigError>([&] { read.at(3, "test"); }),
      ::testing::HasSubstr(
          "test: the profile has no measurements for microbatches of 3 samples (it has 1, 2, 4)"));
  std::filesystem::remove_all(dir);
}

// The figure `baton bench tune` judges the search by; known values worked by hand.
TEST(RankCorrelation, OrdersAlikeReversedAndTied) {
  using baton_app::rank_correlation;
  EXPECT_DOUBLE_EQ(rank_correlation({1, 2, 3, 4}, {10, 20, 30, 40}), 1.0);
  EXPECT_DOUBLE_EQ(rank_correlation({1, 2, 3, 4}, {9, 7, 5, 1}), -1.0);
  // Ranks (1, 2, 3, 4) against (2, 1, 4, 3): d^2 sums to 4, so 1 - 6*4/(4*15) = 0.6.
  EXPECT_NEAR(rank_correlation({1, 2, 3, 4}, {5, 4, 8, 7}), 0.6, 1e-12);
  // Ties share their mean rank: (1, 2.5, 2.5, 4) against (1, 2, 3, 4): 0.9487 (Pearson of ranks).
  EXPECT_NEAR(rank_correlation({1, 5, 5, 9}, {1, 2, 3, 4}), 0.9486832980505138, 1e-12);
  EXPECT_EQ(rank_correlation({1}, {1}), 0.0);
  EXPECT_EQ(rank_correlation({1, 2}, {1, 2, 3}), 0.0);
  EXPECT_EQ(rank_correlation({3, 3, 3}, {1, 2, 3}), 0.0);
}

}  // namespace

namespace {

baton_app::ParameterBytes parameter_bytes_of(const std::vector<std::string>& set) {
  baton::ConfigOverrides overrides;
  overrides.set = set;
  overrides.use_environment = false;
  return baton_app::parameter_bytes_from_config(
      baton::load_config_text("world: {data_parallel: 2}\n", "run.yaml", overrides));
}

}  // namespace

// What a parameter byte (a float32 master's) costs a stage, from the configuration: weights,
// gradients and AdamW's two moments are 16 bytes per parameter; bf16 weights add their own
// 2 (Megatron's 18); SGD keeps 1 moment with momentum and none without. precision.reduce:
// bf16 halves the bytes of the replicas' all-reduce, and so its transfer time, and nothing
// else. Worked by hand on one unit of 1000 parameter bytes.
TEST(ScheduleSearch, ParameterMemoryAndTheAllReduceFollowThePrecision) {
  const auto adamw = parameter_bytes_of({"optimizer.name=adamw"});
  EXPECT_DOUBLE_EQ(adamw.held_per_byte(), 16.0 / 4);
  const auto bf16_weights = parameter_bytes_of(
      {"optimizer.name=adamw", "precision.compute=bf16", "precision.params=bf16"});
  EXPECT_DOUBLE_EQ(bf16_weights.held_per_byte(), 18.0 / 4);
  EXPECT_DOUBLE_EQ(
      parameter_bytes_of({"optimizer.name=sgd", "optimizer.momentum=0.9"}).held_per_byte(),
      12.0 / 4);
  EXPECT_DOUBLE_EQ(
      parameter_bytes_of({"optimizer.name=sgd", "optimizer.momentum=0"}).held_per_byte(), 8.0 / 4);
  const auto bf16_reduce = parameter_bytes_of({"precision.reduce=bf16"});
  EXPECT_DOUBLE_EQ(bf16_reduce.reduced, 0.5);
  EXPECT_DOUBLE_EQ(bf16_reduce.held_per_byte(), adamw.held_per_byte());

  baton_app::MicrobatchProfile measured;
  measured.microbatch_size = 1;
  measured.input_bytes = 64;
  baton_app::UnitProfile unit;
  unit.forward_s = 1e-3;
  unit.backward_s = 2e-3;
  unit.output_bytes = 64;
  unit.parameter_bytes = 1000;
  measured.units = {unit, unit};
  baton_app::TransferProfile transfer;
  transfer.latency_s = 1e-5;
  transfer.seconds_per_byte = 1e-9;
  const auto costs_of = [&](const baton_app::ParameterBytes& bytes) {
    return baton_app::simulation_costs(measured, {0, 1, 2}, transfer, bytes, /*data_parallel=*/2);
  };
  const baton::MeasuredCosts fp32 = costs_of(adamw), weights = costs_of(bf16_weights),
                             reduce = costs_of(bf16_reduce);
  EXPECT_DOUBLE_EQ(fp32.stages[0].static_bytes, 4000);
  EXPECT_DOUBLE_EQ(weights.stages[0].static_bytes, 4500);
  EXPECT_DOUBLE_EQ(reduce.stages[0].static_bytes, 4000);
  // A ring all-reduce over D = 2: 2 messages of half the gradients, 500 B each in float32.
  EXPECT_DOUBLE_EQ(fp32.stages[0].reduce_grad, 2 * (1e-5 + 500e-9));
  EXPECT_DOUBLE_EQ(reduce.stages[0].reduce_grad, 2 * (1e-5 + 250e-9));
  EXPECT_DOUBLE_EQ(weights.stages[0].reduce_grad, fp32.stages[0].reduce_grad);
}
