#include "candidate_rotation.h"

#include <torch/torch.h>

#include <chrono>
#include <iterator>
#include <memory>

#include <nlohmann/json.hpp>

#include "batches.h"
#include "baton/config_plugins.h"
#include "baton/error.h"
#include "baton/files.h"
#include "baton/runtime/executor.h"
#include "baton/store_keys.h"
#include "model_catalog.h"
#include "step_seed.h"
#include "training/master_weights.h"
#include "training/rank_compute.h"
#include "training/rank_connections.h"
#include "training/rank_pipeline.h"
#include "training/resolved_config.h"
#include "training/store_count.h"

namespace baton_app {
namespace {

std::string describe(const std::vector<std::string>& sets) {
  std::string text;
  for (const std::string& set : sets) text += (text.empty() ? "" : " ") + set;
  return text;
}

// One candidate's pipeline on this rank (training/rank_pipeline.h), with the batch every
// one of its steps trains on and what its steps measured.
struct CandidatePipeline {
  std::unique_ptr<RankPipeline> pipeline;
  std::vector<at::Tensor> inputs;  // this replica's slice of the first batch, every step's
  at::Tensor targets;
  int steps_run = 0;
  std::uint64_t seed = 0;
  // This rank's executor time over the counted steps: computing, and posting and waiting for
  // transfers.
  double compute_s = 0;
  double comm_s = 0;
  int counted_steps = 0;

  // One training step as the trainer runs it, less what a benchmark leaves out (progress,
  // metrics, checkpoints): the same batch each time, which costs what any batch costs.
  void step(bool counted) {
    ++steps_run;
    torch::manual_seed(baton_models::step_seed(seed, steps_run));
    clear_gradients(pipeline->local.params);
    const baton::StepResult result = pipeline->executor->run_step(inputs, targets);
    pipeline->optimizer->step();
    if (pipeline->masters) pipeline->masters->after_step();
    if (counted) {
      compute_s += result.compute_seconds;
      comm_s += result.comm_seconds;
      ++counted_steps;
    }
  }

  double mean_ms(double seconds) const {
    return counted_steps > 0 ? seconds * 1000 / counted_steps : 0.0;
  }
};

std::unique_ptr<CandidatePipeline> set_up_candidate(const RunOptions& run,
                                                    const std::vector<std::string>& sets,
                                                    const WorldInfo& world,
                                                    const std::shared_ptr<baton::Store>& store,
                                                    const ConnectedTransport& transport,
                                                    const std::string& data_dir) {
  auto candidate = std::make_unique<CandidatePipeline>();
  RunOptions options = run;
  options.sets.insert(options.sets.end(), sets.begin(), sets.end());
  baton::Config config = load_run_config(options);
  if (baton::schedule_chosen_at_start(config)) {
    throw baton::ConfigError("a candidate names its schedule (schedule.name is auto)");
  }
  baton::ConfiguredPlugins plugins = resolve_run_config(config);
  const RunSettings settings = read_run_settings(config);
  RankPipelineOptions pipeline_options;
  pipeline_options.data_dir = data_dir;
  pipeline_options.shared_transport = transport;
  candidate->seed = settings.seed;
  candidate->pipeline = build_rank_pipeline(plan_rank(config, std::move(plugins), world), world,
                                            store, settings, std::move(pipeline_options));
  baton_models::Batch batch = candidate->pipeline->batches->batch(1);
  candidate->inputs = std::move(batch.inputs);
  candidate->targets = std::move(batch.targets);
  candidate->pipeline->executor->setup(candidate->inputs);
  return candidate;
}

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

void write_rotation_plan(const RotationPlan& plan, const std::string& path) {
  const nlohmann::json json = {{"candidates", plan.candidates},
                               {"warmup_steps", plan.warmup_steps},
                               {"rounds", plan.rounds},
                               {"steps_per_turn", plan.steps_per_turn}};
  baton::write_file_atomically(path, json.dump());
}

namespace {

nlohmann::json read_json(const std::string& path, const std::string& what) {
  const nlohmann::json json =
      nlohmann::json::parse(baton::read_file(path, what), nullptr, /*allow_exceptions=*/false);
  if (!json.is_object()) throw baton::Error(what + " '" + path + "' is not a JSON object");
  return json;
}

}  // namespace

RotationPlan read_rotation_plan(const std::string& path) {
  const nlohmann::json json = read_json(path, "the rotation plan");
  RotationPlan plan;
  try {
    plan.candidates = json.at("candidates").get<std::vector<std::vector<std::string>>>();
    plan.warmup_steps = json.at("warmup_steps").get<int>();
    plan.rounds = json.at("rounds").get<int>();
    plan.steps_per_turn = json.at("steps_per_turn").get<int>();
  } catch (const nlohmann::json::exception& error) {
    throw baton::Error("the rotation plan '" + path + "': " + error.what());
  }
  if (plan.candidates.empty() || plan.warmup_steps < 0 || plan.rounds < 1 ||
      plan.steps_per_turn < 3) {
    throw baton::Error("the rotation plan '" + path +
                       "' needs candidates, warmup_steps >= 0, rounds >= 1 and "
                       "steps_per_turn >= 3");
  }
  return plan;
}

void write_rotation_result(const RotationResult& result, const std::string& path) {
  baton::write_file_atomically(path, nlohmann::json({{"intervals_s", result.intervals_s},
                                                     {"compute_ms", result.compute_ms},
                                                     {"comm_ms", result.comm_ms}})
                                         .dump());
}

RotationResult read_rotation_result(const std::string& path) {
  const nlohmann::json json = read_json(path, "the rotation's timings");
  RotationResult result;
  try {
    result.intervals_s =
        json.at("intervals_s").get<std::vector<std::vector<std::vector<double>>>>();
    result.compute_ms = json.at("compute_ms").get<std::vector<std::vector<double>>>();
    result.comm_ms = json.at("comm_ms").get<std::vector<std::vector<double>>>();
  } catch (const nlohmann::json::exception& error) {
    throw baton::Error("the rotation's timings '" + path + "': " + error.what());
  }
  return result;
}

namespace {

// What rank `rank` published (store_keys::rotation_breakdown): [candidate] = {compute ms,
// comm ms}.
std::vector<std::vector<double>> published_breakdown(baton::Store& store, int rank,
                                                     std::chrono::milliseconds timeout) {
  const std::vector<std::uint8_t> bytes =
      store.get(baton::store_keys::rotation_breakdown(rank), timeout);
  return nlohmann::json::parse(std::string(bytes.begin(), bytes.end()))
      .get<std::vector<std::vector<double>>>();
}

}  // namespace

namespace {

// What every candidate shares: the ranks, their store, and the base configuration's
// transport (the candidates differ in schedule, stages per rank, microbatches and cuts only;
// their messages share it one step at a time, matched in order per tag as every transport
// matches them).
struct SharedWorld {
  WorldInfo world;
  RunSettings settings;
  std::shared_ptr<baton::Store> store;
  ConnectedTransport transport;
};

SharedWorld join_the_rotation(const RunOptions& run) {
  baton::Config base = load_run_config(run);
  const baton::ConfiguredPlugins plugins = resolve_run_config(base);
  SharedWorld shared;
  shared.settings = read_run_settings(base);
  shared.world = with_data_parallel(world_from_environment(), shared.settings.world.data_parallel);
  set_up_logging(shared.settings.world, shared.world);
  check_world_size(shared.settings.world, shared.world);
  set_up_compute(shared.settings.world, shared.world);
  shared.store = meet_the_other_ranks(shared.settings, shared.world);
  shared.transport = connect_transport(shared.settings.connections, plugins, shared.world,
                                       shared.store, shared.settings.timeout);
  return shared;
}

// Every candidate set up and warmed up, then `rounds` turns of each (in alternating order),
// their step intervals into `result`. A failure names the candidate and aborts the transport,
// so that peers blocked on this rank fail fast instead of waiting for their timeout (a
// LibTorch error from inside a model is caught here too).
void time_turns(const RunOptions& run, const RotationPlan& plan, const SharedWorld& shared,
                const std::string& data_dir,
                std::vector<std::unique_ptr<CandidatePipeline>>& pipelines,
                RotationResult& result) {
  std::size_t current = 0;
  result.intervals_s.assign(plan.candidates.size(), std::vector<std::vector<double>>(
                                                        static_cast<std::size_t>(plan.rounds)));
  try {
    for (current = 0; current < plan.candidates.size(); ++current) {
      pipelines.push_back(set_up_candidate(run, plan.candidates[current], shared.world,
                                           shared.store, shared.transport, data_dir));
      for (int step = 0; step < plan.warmup_steps; ++step) pipelines.back()->step(false);
    }
    const std::size_t count = pipelines.size();
    for (int round = 0; round < plan.rounds; ++round) {
      for (std::size_t k = 0; k < count; ++k) {
        current = round % 2 == 0 ? k : count - 1 - k;
        // Rank 0 starts each step as soon as its previous one returns, so the time between
        // two marks is one step as the pipeline paces it; the turn's last step ends at the
        // last mark and counts like the others. Its first does not: it carries the previous
        // candidate's tail on the other ranks.
        std::vector<double> marks = {now_s()};
        for (int step = 0; step < plan.steps_per_turn; ++step) {
          pipelines[current]->step(/*counted=*/step > 0);
          marks.push_back(now_s());
        }
        std::vector<double>& intervals =
            result.intervals_s[current][static_cast<std::size_t>(round)];
        for (std::size_t i = 2; i < marks.size(); ++i) intervals.push_back(marks[i] - marks[i - 1]);
      }
    }
  } catch (const std::exception& error) {
    const baton::Error failure("candidate " + std::to_string(current + 1) + " (" +
                               describe(plan.candidates[current]) + "): " + error.what());
    if (shared.transport.transport) {
      shared.transport.transport->abort("rank " + std::to_string(shared.world.rank) +
                                        " failed: " + failure.what());
    }
    throw failure;
  }
}

// Where each rank's time went, per candidate, gathered on rank 0 into `result`: every rank
// publishes its own means before the barrier, so they are all there after it (and no rank
// closes its connections while a peer may still be finishing the last step).
void gather_breakdown(const SharedWorld& shared,
                      const std::vector<std::unique_ptr<CandidatePipeline>>& pipelines,
                      RotationResult& result) {
  std::vector<std::vector<double>> own;  // [candidate] = {compute ms, comm ms}
  for (const auto& pipeline : pipelines) {
    own.push_back({pipeline->mean_ms(pipeline->compute_s), pipeline->mean_ms(pipeline->comm_s)});
  }
  const WorldInfo& world = shared.world;
  if (shared.store) {
    const std::string text = nlohmann::json(own).dump();
    shared.store->set(baton::store_keys::rotation_breakdown(world.rank),
                      std::vector<std::uint8_t>(text.begin(), text.end()));
    shared.store->add(baton::store_keys::kRotationDone, 1);
    wait_for_count(*shared.store, baton::store_keys::kRotationDone, world.world_size,
                   shared.settings.timeout, "the end of the rotation");
  }
  if (world.rank != 0) return;
  result.compute_ms.assign(pipelines.size(), {});
  result.comm_ms.assign(pipelines.size(), {});
  for (int rank = 0; rank < world.world_size; ++rank) {
    // A world of one has no store and no other rank.
    const std::vector<std::vector<double>> theirs =
        rank == world.rank ? own
                           : published_breakdown(*shared.store, rank, shared.settings.timeout);
    for (std::size_t k = 0; k < pipelines.size() && k < theirs.size(); ++k) {
      result.compute_ms[k].push_back(theirs[k].at(0));
      result.comm_ms[k].push_back(theirs[k].at(1));
    }
  }
}

}  // namespace

RotationResult rotate_candidates(const RunOptions& run, const RotationPlan& plan,
                                 const std::string& data_dir) {
  const SharedWorld shared = join_the_rotation(run);
  std::vector<std::unique_ptr<CandidatePipeline>> pipelines;
  RotationResult result;
  time_turns(run, plan, shared, data_dir, pipelines, result);
  gather_breakdown(shared, pipelines, result);
  if (shared.world.rank != 0) return {};
  return result;
}

}  // namespace baton_app
