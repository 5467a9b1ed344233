#include "schedule_search.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>

#include <nlohmann/json.hpp>

#include "baton/config.h"
#include "baton/error.h"
#include "baton/plan/action.h"
#include "baton/plan/balanced_cuts.h"
#include "baton/plan/compile.h"
#include "baton/plan/gradient_reduction.h"
#include "baton/schedule.h"

namespace baton_app {
namespace {

constexpr int kMaxStagesPerRank = 8;  // beyond this the per-stage overheads dominate

std::vector<int> divisors(int value) {
  std::vector<int> found;
  for (int d = 1; d <= value; ++d) {
    if (value % d == 0) found.push_back(d);
  }
  return found;
}

// A unit's cost for cutting: its whole compute (forward and the full backward; a split
// backward costs about the same in all).
std::vector<double> unit_costs(const MicrobatchProfile& measured) {
  std::vector<double> costs;
  for (const UnitProfile& unit : measured.units) costs.push_back(unit.forward_s + unit.backward_s);
  return costs;
}

std::string mib(double bytes) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f MiB", bytes / (1024.0 * 1024.0));
  return text;
}

std::vector<std::string> installed_schedules(const baton::PluginLoader& loader) {
  std::vector<std::string> names;
  for (const baton::PluginListing& listing : loader.discover()) {
    if (listing.loaded && listing.plugin &&
        listing.plugin->descriptor().kind == baton::PluginKind::kSchedule) {
      names.push_back(listing.plugin->name());
    }
  }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  // csv replays a file of its own, it does not schedule.
  names.erase(std::remove(names.begin(), names.end(), "csv"), names.end());
  return names;
}

bool set_by_user(const baton::ParamValue& value) {
  return value.origin().description != "default";
}

// What the runtime executes of a plan, as text: where each stage lives and each rank's
// actions in order (idle steps only align the printed table).
std::string execution_key(const baton::Plan& plan) {
  std::string key;
  for (int rank : plan.stage_to_rank) key += std::to_string(rank) + ",";
  for (const std::vector<baton::PlanSlot>& steps : plan.rank_steps) {
    key += "|";
    for (const baton::PlanSlot& slot : steps) {
      if (slot) key += baton::to_string(*slot) + " ";
    }
  }
  return key;
}

}  // namespace

ParameterBytes parameter_bytes_from_config(const baton::Config& config) {
  ParameterBytes bytes;
  const baton::ParamValues& optimizer = config.section("optimizer");
  const std::string name = optimizer.get_string("name");
  if (name == "adam" || name == "adamw") {
    bytes.optimizer_state = 2.0;  // two moments per parameter
  } else {
    bytes.optimizer_state = optimizer.get_float("momentum") > 0 ? 1.0 : 0.0;
  }
  const baton::ParamValues& precision = config.section("precision");
  if (precision.get_string("params") == "bf16") bytes.low_precision_copy = 0.5;
  if (precision.get_string("reduce") == "bf16") bytes.reduced = 0.5;
  return bytes;
}

std::vector<int> balanced_cuts(const MicrobatchProfile& measured, int num_stages) {
  return baton::balanced_boundaries(unit_costs(measured), num_stages);
}

SearchSpace search_space_from_config(const baton::Config& config, int ranks, int batch_size) {
  const baton::ParamValues& schedule = config.section("schedule");
  SearchSpace space;
  // With data parallelism every replica is a pipeline of ranks / D on batch_size / D rows
  // (the configuration checked both divide).
  space.data_parallel = static_cast<int>(config.section("world").get_int("data_parallel"));
  space.ranks = ranks / space.data_parallel;
  space.batch_size = batch_size / space.data_parallel;
  if (!baton::schedule_chosen_at_start(config)) space.schedules = {schedule.get_string("name")};
  if (set_by_user(schedule.at("microbatches"))) {
    space.microbatches = static_cast<int>(schedule.get_int("microbatches"));
  }
  if (set_by_user(schedule.at("stages_per_rank"))) {
    space.stages_per_rank = static_cast<int>(schedule.get_int("stages_per_rank"));
  }
  // Stage files (model.stages) are the stages: every candidate has exactly that many.
  const auto stage_files = config.section("model").at("stages").as_string_list();
  if (!stage_files.empty() && space.ranks > 0) {
    space.stages_per_rank = static_cast<int>(stage_files.size()) / space.ranks;
  }
  const double limit_mb = schedule.get_float("memory_limit_mb");
  if (!(limit_mb >= 0)) {
    throw baton::ConfigError(schedule.at("memory_limit_mb").origin().description +
                             ": schedule.memory_limit_mb must be 0 (no limit) or more, got " +
                             schedule.at("memory_limit_mb").text());
  }
  space.memory_limit_bytes = limit_mb * 1024.0 * 1024.0;
  space.parameter_bytes = parameter_bytes_from_config(config);
  space.may_recompute = config.section("model").at("recompute").origin().description == "default";
  return space;
}

baton::MeasuredCosts simulation_costs(const MicrobatchProfile& measured,
                                      const std::vector<int>& bounds,
                                      const TransferProfile& transfer,
                                      const ParameterBytes& parameters, int data_parallel,
                                      double split_backward_factor) {
  baton::MeasuredCosts costs;
  costs.transfer_time = transfer.latency_s;
  costs.send_overhead = transfer.send_overhead_s;
  costs.recv_overhead = transfer.recv_overhead_s;
  const std::size_t stages = bounds.size() - 1;
  costs.stages.resize(stages);
  for (std::size_t s = 0; s < stages; ++s) {
    baton::StageCosts& stage = costs.stages[s];
    stage = {0, 0, 0, 0};
    for (int u = bounds[s]; u < bounds[s + 1]; ++u) {
      const UnitProfile& unit = measured.units[static_cast<std::size_t>(u)];
      stage.forward += unit.forward_s;
      stage.backward += unit.backward_s;
      stage.backward_input += unit.backward_input_s;
      stage.backward_weight += unit.backward_weight_s;
      stage.activation_bytes += unit.saved_bytes;
      stage.static_bytes += unit.parameter_bytes * parameters.held_per_byte();
    }
    if (bounds[s] == 0) {
      // The first stage's inputs need no gradient, so its split backward has no input
      // gradient to compute: W runs the whole backward (the gradients between its units
      // included) and I only sorts the graph, as the first unit's I does (timed with the
      // model's own input), as a run's trace shows.
      stage.backward_input = measured.units[static_cast<std::size_t>(bounds[s])].backward_input_s;
      stage.backward_weight = std::max(0.0, stage.backward - stage.backward_input);
    }
    stage.backward_input *= split_backward_factor;
    stage.backward_weight *= split_backward_factor;
    const UnitProfile& last = measured.units[static_cast<std::size_t>(bounds[s + 1] - 1)];
    stage.forward_transfer = last.output_bytes * transfer.seconds_per_byte;
    stage.forward_send_overhead = last.output_bytes * transfer.send_overhead_per_byte;
    // The gradient sent back has the shape of the stage's input.
    const double input_bytes =
        bounds[s] == 0 ? measured.input_bytes
                       : measured.units[static_cast<std::size_t>(bounds[s] - 1)].output_bytes;
    stage.backward_transfer = input_bytes * transfer.seconds_per_byte;
    stage.input_bytes = input_bytes;  // what a recomputing stage keeps between F and B
    stage.backward_send_overhead = input_bytes * transfer.send_overhead_per_byte;
    if (data_parallel > 1) {
      double gradient_bytes = 0;
      for (int u = bounds[s]; u < bounds[s + 1]; ++u) {
        gradient_bytes += measured.units[static_cast<std::size_t>(u)].parameter_bytes;
      }
      gradient_bytes *= parameters.reduced;
      const double steps = 2.0 * (data_parallel - 1);
      stage.reduce_grad =
          steps * (transfer.latency_s + gradient_bytes / data_parallel * transfer.seconds_per_byte);
    }
  }
  return costs;
}

namespace {

// The stages per rank and microbatch counts the space asks for, or every one that can be.
std::vector<int> stage_counts_to_try(const SearchSpace& space, int units) {
  if (space.stages_per_rank > 0) return {space.stages_per_rank};
  std::vector<int> counts;
  for (int v = 1; v <= std::min(kMaxStagesPerRank, units / std::max(1, space.ranks)); ++v) {
    counts.push_back(v);
  }
  return counts;
}

// Why `schedule` cannot run `shape` on this model and batch; empty when it can.
std::string why_refused(const baton::Schedule& schedule, const baton::ScheduleShape& shape,
                        const SearchSpace& space, int units) {
  if (space.batch_size % shape.microbatches != 0) {
    return "the batch of " + std::to_string(space.batch_size) + " does not split into " +
           std::to_string(shape.microbatches) + " microbatches";
  }
  if (shape.num_stages() > units) {
    return "the model has " + std::to_string(units) + " units, fewer than " +
           std::to_string(shape.num_stages()) + " stages";
  }
  try {
    baton::check_shape_limits(shape);
    schedule.check(shape);
  } catch (const baton::Error& error) {
    return error.what();
  }
  return "";
}

// `candidate`'s plan simulated with `costs`: its predicted step, bubble, compute per rank and
// peak memory filled in. Returns whether it fits the space's memory limit.
bool simulate_into(Candidate& candidate, const baton::Plan& plan, const baton::MeasuredCosts& costs,
                   const SearchSpace& space, SearchResult& result) {
  baton::SimulationOptions totals_only;
  totals_only.timeline = false;
  totals_only.keep_plan = false;
  const baton::SimulationResult simulated = baton::simulate(plan, costs, totals_only);
  ++result.simulated;
  candidate.predicted_step_s = simulated.makespan;
  candidate.bubble = simulated.bubble_fraction;
  for (std::size_t rank = 0; rank < simulated.ranks.size(); ++rank) {
    candidate.predicted_compute_s.push_back(simulated.ranks[rank].busy_time);
    if (simulated.ranks[rank].peak_memory_bytes() > candidate.peak_memory_bytes) {
      candidate.peak_memory_bytes = simulated.ranks[rank].peak_memory_bytes();
      candidate.peak_memory_rank = static_cast<int>(rank);
    }
  }
  return !(space.memory_limit_bytes > 0 && candidate.peak_memory_bytes > space.memory_limit_bytes);
}

// Ranks the candidates (fastest first; over the limit, smallest first) and refuses a search
// that found nothing to run, saying why.
void rank_candidates(SearchResult& result, const SearchSpace& space) {
  auto faster = [](const Candidate& a, const Candidate& b) {
    if (a.predicted_step_s != b.predicted_step_s) return a.predicted_step_s < b.predicted_step_s;
    return a.peak_memory_bytes < b.peak_memory_bytes;
  };
  std::stable_sort(result.ranked.begin(), result.ranked.end(), faster);
  std::stable_sort(result.over_memory.begin(), result.over_memory.end(),
                   [](const Candidate& a, const Candidate& b) {
                     return a.peak_memory_bytes < b.peak_memory_bytes;
                   });
  if (result.ranked.empty() && !result.over_memory.empty()) {
    const Candidate& smallest = result.over_memory.front();
    throw baton::ConfigError(
        "no plan fits schedule.memory_limit_mb (" + mib(space.memory_limit_bytes) +
        " per rank): the smallest, " + smallest.schedule + " with " +
        std::to_string(smallest.stages_per_rank) + " stage(s) per rank and " +
        std::to_string(smallest.microbatches) + " microbatches, needs " +
        mib(smallest.peak_memory_bytes) + " on rank " + std::to_string(smallest.peak_memory_rank) +
        "; raise the limit or use more ranks");
  }
  if (result.ranked.empty()) {
    std::string why;
    for (const Refusal& refusal : result.refused) {
      why += "\n  " + refusal.schedule + " (" + std::to_string(refusal.stages_per_rank) +
             " per rank, " + std::to_string(refusal.microbatches) +
             " microbatches): " + refusal.reason;
    }
    throw baton::ConfigError("no schedule can run " + std::to_string(space.ranks) +
                             " ranks with a batch of " + std::to_string(space.batch_size) + ":" +
                             (why.empty() ? std::string(" no schedule plugin was found") : why));
  }
}

}  // namespace

SearchResult search_schedules(const baton::PluginLoader& loader, const ModelProfile& profile,
                              const SearchSpace& space) {
  if (profile.sizes.empty()) throw baton::ConfigError("the profile has no measurements");
  const int units = static_cast<int>(profile.sizes.front().units.size());
  const std::vector<std::string> names =
      space.schedules.empty() ? installed_schedules(loader) : space.schedules;
  const std::vector<int> stage_counts = stage_counts_to_try(space, units);
  const std::vector<int> microbatch_counts =
      space.microbatches > 0 ? std::vector<int>{space.microbatches} : divisors(space.batch_size);

  SearchResult result;
  // Plans already simulated, by microbatches, cuts and execution_key: a schedule that compiles
  // to one of them joins that candidate's same_plan instead of being measured twice.
  struct Seen {
    bool ranked;
    std::size_t index;
  };
  std::map<std::string, Seen> seen;
  for (const std::string& name : names) {
    const auto plugin = loader.load(baton::PluginKind::kSchedule, name);
    const baton::PluginDescriptor& descriptor = plugin->descriptor();
    const baton::ParamValues params = baton::resolve_params(
        {}, descriptor.params, descriptor.num_params, "schedule plugin '" + plugin->name() + "'");
    const auto schedule = plugin->create_as<baton::Schedule>(params);
    for (int stages_per_rank : stage_counts) {
      for (int microbatches : microbatch_counts) {
        const baton::ScheduleShape shape{space.ranks, stages_per_rank, microbatches};
        const std::string refused = why_refused(*schedule, shape, space, units);
        if (!refused.empty()) {
          result.refused.push_back({plugin->name(), stages_per_rank, microbatches, refused});
          continue;
        }
        const MicrobatchProfile& measured =
            profile.at(space.batch_size / microbatches, "the search");
        Candidate candidate;
        candidate.schedule = plugin->name();
        candidate.stages_per_rank = stages_per_rank;
        candidate.microbatches = microbatches;
        candidate.bounds = balanced_cuts(measured, shape.num_stages());
        baton::CompiledPlan compiled = baton::compile_schedule(*schedule, shape, plugin->name());
        if (space.data_parallel > 1) compiled = baton::with_gradient_reduction(compiled);
        const std::string key = std::to_string(microbatches) + " " + cuts_text(candidate.bounds) +
                                " " + execution_key(compiled.lowered);
        if (const auto same = seen.find(key); same != seen.end()) {
          std::vector<Candidate>& list = same->second.ranked ? result.ranked : result.over_memory;
          list[same->second.index].same_plan.push_back(plugin->name());
          continue;
        }
        baton::MeasuredCosts costs =
            simulation_costs(measured, candidate.bounds, profile.transfer, space.parameter_bytes,
                             space.data_parallel, profile.split_backward_factor);
        const Candidate unsimulated = candidate;
        bool ranked = simulate_into(candidate, compiled.lowered, costs, space, result);
        if (!ranked && space.may_recompute) {
          // Over the limit: recomputing every stage is slower but may fit; the faster plan
          // that fits wins (a plan that fits without recomputation never recomputes).
          Candidate recomputing = unsimulated;
          recomputing.recompute = true;
          for (baton::StageCosts& stage : costs.stages) stage.recompute = true;
          if (simulate_into(recomputing, compiled.lowered, costs, space, result)) {
            result.over_memory.push_back(candidate);
            candidate = recomputing;
            ranked = true;
          }
        }
        std::vector<Candidate>& list = ranked ? result.ranked : result.over_memory;
        seen.emplace(key, Seen{ranked, list.size()});
        list.push_back(candidate);
      }
    }
  }
  rank_candidates(result, space);
  return result;
}

std::string cuts_text(const std::vector<int>& bounds) {
  std::string text;
  for (std::size_t s = 1; s + 1 < bounds.size(); ++s) {
    text += (s > 1 ? ", " : "") + std::to_string(bounds[s]);
  }
  return "[" + text + "]";
}

std::string format_search_table(const SearchResult& result, std::size_t top) {
  std::ostringstream out;
  char line[256];
  std::snprintf(line, sizeof(line), "%-4s %-18s %9s %12s %-16s %14s %7s %16s %9s\n", "#",
                "schedule", "stages/rk", "microbatches", "cuts", "predicted ms", "bubble",
                "peak mem/rank", "recompute");
  out << line;
  const std::size_t rows = top == 0 ? result.ranked.size() : std::min(top, result.ranked.size());
  for (std::size_t i = 0; i < rows; ++i) {
    const Candidate& c = result.ranked[i];
    std::snprintf(line, sizeof(line), "%-4zu %-18s %9d %12d %-16s %14.3f %6.1f%% %16s %9s\n", i + 1,
                  c.schedule.c_str(), c.stages_per_rank, c.microbatches,
                  cuts_text(c.bounds).c_str(), 1e3 * c.predicted_step_s, 100.0 * c.bubble,
                  mib(c.peak_memory_bytes).c_str(), c.recompute ? "on" : "off");
    out << line;
  }
  for (std::size_t i = 0; i < rows; ++i) {
    const std::vector<std::string>& same = result.ranked[i].same_plan;
    if (same.empty()) continue;
    std::string names;
    for (const std::string& name : same) names += (names.empty() ? "" : ", ") + name;
    out << "  " << i + 1 << ": also the plan of " << names
        << " for this shape (the same actions on every rank, measured once)\n";
  }
  const Candidate& best = result.ranked.front();
  out << "\nchosen: " << best.schedule << ", " << best.stages_per_rank << " stage(s) per rank, "
      << best.microbatches << " microbatches, cuts " << cuts_text(best.bounds)
      << (best.recompute ? ", recomputing every stage (model.recompute: on)" : "")
      << ": the fastest predicted step" << (best.recompute ? " that fits" : "");
  if (result.ranked.size() > 1) {
    const Candidate& next = result.ranked[1];
    std::snprintf(line, sizeof(line),
                  "; the next (%s, %d per rank, %d microbatches) is %.1f%% slower",
                  next.schedule.c_str(), next.stages_per_rank, next.microbatches,
                  100.0 * (next.predicted_step_s / best.predicted_step_s - 1.0));
    out << line;
  }
  out << " (" << result.simulated << " plans simulated)\n";
  if (!result.over_memory.empty()) {
    out << result.over_memory.size() << " over the memory limit, e.g. "
        << result.over_memory.front().schedule << " with "
        << result.over_memory.front().microbatches << " microbatches needs "
        << mib(result.over_memory.front().peak_memory_bytes) << "\n";
  }
  if (!result.refused.empty()) {
    out << result.refused.size() << " shapes refused, e.g. " << result.refused.front().schedule
        << " (" << result.refused.front().stages_per_rank << " per rank, "
        << result.refused.front().microbatches
        << " microbatches): " << result.refused.front().reason << "\n";
  }
  return out.str();
}

std::string format_search_json(const SearchResult& result) {
  auto candidate_json = [](const Candidate& c) {
    return nlohmann::json{{"schedule", c.schedule},
                          {"stages_per_rank", c.stages_per_rank},
                          {"microbatches", c.microbatches},
                          {"bounds", c.bounds},
                          {"recompute", c.recompute},
                          {"predicted_step_s", c.predicted_step_s},
                          {"bubble", c.bubble},
                          {"peak_memory_bytes", c.peak_memory_bytes},
                          {"peak_memory_rank", c.peak_memory_rank},
                          {"same_plan", c.same_plan}};
  };
  nlohmann::json out;
  out["ranked"] = nlohmann::json::array();
  for (const Candidate& c : result.ranked) out["ranked"].push_back(candidate_json(c));
  out["over_memory"] = nlohmann::json::array();
  for (const Candidate& c : result.over_memory) out["over_memory"].push_back(candidate_json(c));
  out["refused"] = nlohmann::json::array();
  for (const Refusal& r : result.refused) {
    out["refused"].push_back({{"schedule", r.schedule},
                              {"stages_per_rank", r.stages_per_rank},
                              {"microbatches", r.microbatches},
                              {"reason", r.reason}});
  }
  out["simulated"] = result.simulated;
  return out.dump(2) + "\n";
}

}  // namespace baton_app
