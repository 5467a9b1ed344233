#include "tune_bench.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <memory>
#include <sstream>
#include <utility>

#include <nlohmann/json.hpp>

#include "baton/config_plugins.h"
#include "baton/error.h"
#include "baton/files.h"
#include "chart.h"
#include "measured_order.h"
#include "median.h"
#include "number_format.h"
#include "pipeline_analysis.h"
#include "pipeline_runs.h"
#include "rank_correlation.h"
#include "training/rank_compute.h"
#include "training/resolved_config.h"
#include "training/run_settings.h"
#include "training/world_info.h"
#include "tuning/model_profiler.h"
#include "tuning/schedule_search.h"

namespace baton_app {
namespace {

struct TuneBenchOptions {
  PipelineBenchSettings settings;
  int top = 10;
  int rounds = 0;   // 0: rounds_for's share of kBenchTurns
  std::string out;  // empty: <run dir>/bench-tune
  std::string format = "table";
};

struct Measured {
  Candidate candidate;
  // The median of every counted step of all its turns. The candidates take turns in one set
  // of ranks, a few steps each, round after round (training/candidate_rotation.h), so every
  // candidate's steps sample the same moments of the machine; runs launched one after
  // another each met their own spell, and the machine's speed swings by a fifth within
  // seconds here (docs/auto.md).
  double measured_ms = 0;
  std::vector<double> rounds_ms;  // the median of each round's turn
  std::vector<double> steps_ms;   // every counted step of every turn
  // The same steps split by round parity (even, odd): the measurement against itself.
  std::vector<double> steps_by_parity_ms[2];
  // How far its rounds are apart: (slowest round's median) / (fastest round's median) - 1.
  double spread = 0;
  // Per rank, the mean over its counted steps: the executor's compute, its posting and
  // waiting for transfers, and the simulation's compute for the same rank.
  std::vector<double> compute_ms;
  std::vector<double> comm_ms;
  std::vector<double> predicted_compute_ms;

  // The rest of the simulated step on each rank: what the simulation has it post and wait.
  std::vector<double> predicted_idle_ms() const {
    std::vector<double> idle;
    for (const double compute : predicted_compute_ms) {
      idle.push_back(candidate.predicted_step_s * 1000 - compute);
    }
    return idle;
  }
};

// The simulation's compute of world rank `rank` (replicas repeat the pipeline's ranks).
std::vector<double> predicted_compute_by_rank(const Candidate& candidate, std::size_t ranks) {
  std::vector<double> by_rank;
  const std::size_t pipeline_ranks = candidate.predicted_compute_s.size();
  for (std::size_t rank = 0; rank < ranks && pipeline_ranks > 0; ++rank) {
    by_rank.push_back(candidate.predicted_compute_s[rank % pipeline_ranks] * 1000);
  }
  return by_rank;
}

// One rank's line of "where a step's time went": its compute against the simulation's, its
// transfers beside the rest of the simulated step.
std::string rank_breakdown(const Measured& one, std::size_t rank) {
  const bool predicted = rank < one.predicted_compute_ms.size();
  const double compute = one.compute_ms[rank];
  const std::string ratio =
      predicted && one.predicted_compute_ms[rank] > 0
          ? "x" + fixed(compute / one.predicted_compute_ms[rank], 2) + " predicted"
          : std::string("not predicted");
  const double transfers = rank < one.comm_ms.size() ? one.comm_ms[rank] : 0.0;
  const std::string rest = predicted ? fixed(one.predicted_idle_ms()[rank], 1) : "-";
  return "rank " + std::to_string(rank) + " compute " + fixed(compute, 1) + " (" + ratio +
         "), transfers " + fixed(transfers, 1) + " (the rest of the simulated step " + rest + ")";
}

std::vector<std::string> candidate_sets(const Candidate& candidate) {
  return {"schedule.name=" + candidate.schedule,
          "schedule.stages_per_rank=" + std::to_string(candidate.stages_per_rank),
          "schedule.microbatches=" + std::to_string(candidate.microbatches),
          "model.cuts=" + cuts_text(candidate.bounds)};
}

std::vector<double> rounded_all(std::vector<double> values, int decimals) {
  for (double& value : values) value = rounded(value, decimals);
  return values;
}

std::string label(const Candidate& candidate) {
  return candidate.schedule + " " + std::to_string(candidate.stages_per_rank) + "/rank " +
         std::to_string(candidate.microbatches) + " mb " + cuts_text(candidate.bounds);
}

void write_picture(const std::vector<Measured>& runs, const std::string& path) {
  Chart chart;
  chart.title = "schedule: auto — predicted against measured step time";
  chart.x_label = "predicted step (ms)";
  chart.y_label = "measured step (ms)";
  chart.linear_x = true;
  double top = 0;
  std::vector<std::string> schedules;
  for (const Measured& run : runs) {
    if (std::find(schedules.begin(), schedules.end(), run.candidate.schedule) == schedules.end())
      schedules.push_back(run.candidate.schedule);
    top = std::max({top, run.measured_ms, run.candidate.predicted_step_s * 1000});
  }
  for (std::size_t s = 0; s < schedules.size(); ++s) {
    ChartSeries series;
    series.name = schedules[s];
    series.color = static_cast<int>(s);
    series.points_only = true;
    for (const Measured& run : runs) {
      if (run.candidate.schedule != schedules[s]) continue;
      series.points.emplace_back(run.candidate.predicted_step_s * 1000, run.measured_ms);
    }
    chart.series.push_back(series);
  }
  ChartSeries diagonal;
  diagonal.name = "measured = predicted";
  diagonal.color = 7;
  diagonal.dashed = true;
  diagonal.points = {{0, 0}, {top, top}};
  chart.series.push_back(diagonal);
  baton::write_file_atomically(path, render_chart_svg(chart));
}

// The candidates the search ranks first for this configuration, from the model's profile
// (measured, or reused), as `baton tune` finds them.
struct Searched {
  PipelineBenchSettings base;
  RunSettings run;
  CachedProfile cached;
  SearchResult result;
  std::size_t count = 0;  // the top ones measured
};

Searched search_candidates(const TuneBenchOptions& options) {
  Searched searched;
  searched.base = options.settings;
  PipelineBenchSettings& base = searched.base;
  baton::Config config = load_bench_config(base);
  resolve_run_config(config);
  base.ranks = static_cast<int>(config.section("world").get_int("ranks"));
  if (base.ranks < 2) {
    throw baton::ConfigError("bench tune needs at least 2 ranks (world.ranks is " +
                             std::to_string(base.ranks) + ")");
  }
  if (base.steps < 3) {
    throw baton::ConfigError(
        "bench tune: --steps is the steps of each turn and must be at least 3 "
        "(the first step of a turn is not counted), got " +
        std::to_string(base.steps));
  }
  searched.run = read_run_settings(config);
  // The profile is measured with the threads each rank will have, as `baton tune` does.
  WorldInfo world;
  world.world_size = base.ranks;
  world.local_world_size = base.ranks;
  set_up_compute(searched.run.world, world);
  const std::string profile_path = searched.run.run_dir + "/profile.json";
  searched.cached = cached_or_measured_profile(read_profile_settings(config), profile_path,
                                               BATON_DATA_DIR, searched.run.timeout);
  std::cerr << "bench tune: "
            << (searched.cached.reused ? "reused the profile " : "measured the model into ")
            << profile_path << " (transfers " << searched.cached.profile.transfer.source << ")\n";
  const SearchSpace space =
      search_space_from_config(config, base.ranks, searched.cached.profile.batch_size);
  searched.result =
      search_schedules(baton::plugin_loader_for(config), searched.cached.profile, space);
  searched.count = std::min(searched.result.ranked.size(), static_cast<std::size_t>(options.top));
  return searched;
}

// The top candidates trained side by side in one set of ranks, in turns (candidate_rotation.h),
// and each one's steps gathered: per round, by round parity, per rank.
std::vector<Measured> measure_in_turns(const Searched& searched, int rounds,
                                       BenchClock::time_point deadline,
                                       StepsByRound* steps_by_round) {
  const PipelineBenchSettings& base = searched.base;
  std::vector<Measured> runs;
  RotationPlan rotation;
  rotation.warmup_steps = base.warmup;
  rotation.rounds = rounds;
  rotation.steps_per_turn = base.steps;
  for (std::size_t i = 0; i < searched.count; ++i) {
    Measured one;
    one.candidate = searched.result.ranked[i];
    runs.push_back(one);
    rotation.candidates.push_back(candidate_sets(searched.result.ranked[i]));
  }
  std::cerr << "bench tune: " << searched.count << " candidates set up side by side in "
            << base.ranks << " ranks, " << rounds << " rounds of " << base.steps << " steps each"
            << std::endl;
  const ScratchFolder scratch;
  const RotationResult timings = run_rotation_ranks(base, rotation, scratch, deadline);
  if (timings.intervals_s.size() != searched.count) {
    throw baton::Error("bench tune: rank 0 timed " + std::to_string(timings.intervals_s.size()) +
                       " candidates of " + std::to_string(searched.count));
  }
  steps_by_round->assign(searched.count, {});
  for (std::size_t i = 0; i < searched.count; ++i) {
    Measured& one = runs[i];
    for (std::size_t round = 0; round < timings.intervals_s[i].size(); ++round) {
      std::vector<double> turn_ms;
      for (const double seconds : timings.intervals_s[i][round]) turn_ms.push_back(seconds * 1000);
      (*steps_by_round)[i].push_back(turn_ms);
      one.rounds_ms.push_back(median_of(turn_ms));
      one.steps_ms.insert(one.steps_ms.end(), turn_ms.begin(), turn_ms.end());
      std::vector<double>& half = one.steps_by_parity_ms[round % 2];
      half.insert(half.end(), turn_ms.begin(), turn_ms.end());
    }
    one.measured_ms = median_of(one.steps_ms);
    if (i < timings.compute_ms.size()) one.compute_ms = timings.compute_ms[i];
    if (i < timings.comm_ms.size()) one.comm_ms = timings.comm_ms[i];
    one.predicted_compute_ms =
        predicted_compute_by_rank(one.candidate, static_cast<std::size_t>(base.ranks));
    const auto [fastest, slowest] = std::minmax_element(one.rounds_ms.begin(), one.rounds_ms.end());
    one.spread = *fastest > 0 ? *slowest / *fastest - 1 : 0;
  }
  return runs;
}

// What the measurements say about the prediction, all candidates together.
struct TuneSummary {
  std::vector<double> measured;  // ms, in the predicted order
  double typical_spread = 0;     // the median candidate's rounds, slowest over fastest - 1
  double correlation = 0;        // predicted against measured (Spearman)
  double repeatability = 0;      // even rounds against odd: the measurement against itself
  MeasuredOrder order;           // the pairs the measurement itself orders
  std::vector<std::pair<int, int>> alike;  // of those, the ones the prediction orders alike
  std::size_t best = 0;                    // the fastest measured
  double gap = 0;                          // auto's choice (the first) over the best - 1
};

TuneSummary summarize(const std::vector<Measured>& runs, const StepsByRound& steps_by_round,
                      int rounds) {
  TuneSummary summary;
  std::vector<double> spreads, predicted, odd_rounds, even_rounds;
  for (const Measured& one : runs) {
    spreads.push_back(one.spread);
    predicted.push_back(one.candidate.predicted_step_s * 1000);
    summary.measured.push_back(one.measured_ms);
    even_rounds.push_back(median_of(one.steps_by_parity_ms[0]));
    odd_rounds.push_back(median_of(one.steps_by_parity_ms[1]));
  }
  summary.typical_spread = median_of(spreads);
  summary.correlation = rank_correlation(predicted, summary.measured);
  // A prediction cannot be judged more finely than the measurement repeats.
  summary.repeatability = rounds > 1 ? rank_correlation(even_rounds, odd_rounds) : 0;
  // What the rank correlation means once candidates closer than the noise are set aside.
  summary.order = resolve_measured_order(steps_by_round);
  summary.alike = pairs_predicted_alike(summary.order, predicted);
  const std::vector<double>& measured = summary.measured;
  summary.best = static_cast<std::size_t>(std::min_element(measured.begin(), measured.end()) -
                                          measured.begin());
  summary.gap = measured[summary.best] > 0 ? measured[0] / measured[summary.best] - 1 : 0;
  return summary;
}

void print_json(const Searched& searched, const std::vector<Measured>& runs,
                const TuneSummary& summary, int rounds, const std::string& picture) {
  nlohmann::ordered_json candidates = nlohmann::ordered_json::array();
  for (const Measured& one : runs) {
    candidates.push_back({{"schedule", one.candidate.schedule},
                          {"stages_per_rank", one.candidate.stages_per_rank},
                          {"microbatches", one.candidate.microbatches},
                          {"bounds", one.candidate.bounds},
                          {"predicted_ms", rounded(one.candidate.predicted_step_s * 1000, 3)},
                          {"measured_ms", one.measured_ms},
                          {"rounds_ms", rounded_all(one.rounds_ms, 3)},
                          {"steps_ms", one.steps_ms},
                          {"spread", rounded(one.spread, 4)},
                          {"compute_ms", rounded_all(one.compute_ms, 3)},
                          {"predicted_compute_ms", rounded_all(one.predicted_compute_ms, 3)},
                          {"predicted_idle_ms", rounded_all(one.predicted_idle_ms(), 3)},
                          {"comm_ms", rounded_all(one.comm_ms, 3)},
                          {"same_plan", one.candidate.same_plan}});
  }
  const nlohmann::ordered_json report = {{"candidates", candidates},
                                         {"rank_correlation", rounded(summary.correlation, 3)},
                                         {"rank_correlation_of_a_perfect_prediction",
                                          rounded(summary.order.perfect_prediction_correlation, 3)},
                                         {"rounds", rounds},
                                         {"auto_index", 0},
                                         {"best_measured_index", summary.best},
                                         {"auto_over_best", rounded(summary.gap, 4)},
                                         {"typical_spread", rounded(summary.typical_spread, 4)},
                                         {"repeatability", rounded(summary.repeatability, 3)},
                                         {"pairs", summary.order.pairs},
                                         {"resolved_pairs", summary.order.resolved},
                                         {"resolved_pairs_predicted_alike", summary.alike.size()},
                                         {"searched", searched.result.ranked.size()},
                                         {"transfers", searched.cached.profile.transfer.source},
                                         {"picture", picture}};
  std::cout << report.dump(2) << "\n";
}

// The candidates' table, then where each rank's step went.
void print_candidates(const Searched& searched, const std::vector<Measured>& runs,
                      const TuneSummary& summary, int rounds, std::ostringstream& text) {
  const PipelineBenchSettings& base = searched.base;
  text << "bench tune: the top " << searched.count << " of " << searched.result.ranked.size()
       << " candidates, trained for real side by side in " << base.ranks << " ranks: after "
       << base.warmup << " warm-up steps each, " << rounds
       << " rounds in which every candidate runs " << base.steps
       << " steps (measured: the median of all its steps but each turn's first; spread: its "
          "slowest round's median over its fastest's)\n\n";
  char line[200];
  std::snprintf(line, sizeof(line), "%-4s %-18s %9s %12s %-16s %12s %12s %9s %7s\n", "#",
                "schedule", "stages/rk", "microbatches", "cuts", "predicted ms", "measured ms",
                "meas/pred", "spread");
  text << line;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const Measured& one = runs[i];
    const double predicted_ms = one.candidate.predicted_step_s * 1000;
    const std::string mark =
        std::to_string(i + 1) + (i == 0 ? "a" : "") + (i == summary.best ? "*" : "");
    std::snprintf(line, sizeof(line), "%-4s %-18s %9d %12d %-16s %12.3f %12.3f %9.2f %6.1f%%\n",
                  mark.c_str(), one.candidate.schedule.c_str(), one.candidate.stages_per_rank,
                  one.candidate.microbatches, cuts_text(one.candidate.bounds).c_str(), predicted_ms,
                  one.measured_ms, predicted_ms > 0 ? one.measured_ms / predicted_ms : 0.0,
                  one.spread * 100);
    text << line;
  }
  text << "\n(a: auto's choice, the first predicted; *: the fastest measured)\n\n"
       << "where a step's time went, per rank (ms, the mean over the counted steps): the "
          "executor's compute against the simulation's, and its posting and waiting for "
          "transfers beside the rest of the simulated step\n";
  for (std::size_t i = 0; i < runs.size(); ++i) {
    text << "  " << std::to_string(i + 1) << " " << label(runs[i].candidate) << ":";
    for (std::size_t rank = 0; rank < runs[i].compute_ms.size(); ++rank) {
      text << (rank == 0 ? " " : "; ") << rank_breakdown(runs[i], rank);
    }
    text << "\n";
  }
}

// How well the prediction ordered them, and how far the measurement can tell.
void print_judgement(const std::vector<Measured>& runs, const TuneSummary& summary, int rounds,
                     std::ostringstream& text) {
  const MeasuredOrder& order = summary.order;
  text << "\n"
       << "rank correlation, predicted against measured (Spearman): "
       << fixed(summary.correlation, 3);
  if (!std::isnan(order.perfect_prediction_correlation)) {
    text << " (a prediction that knew every candidate's true step would typically score "
         << fixed(order.perfect_prediction_correlation, 3)
         << " against a measurement this noisy: a bootstrap over rounds)";
  }
  text << "\nauto's choice measured " << fixed(summary.measured[0], 3) << " ms; the best measured ("
       << label(runs[summary.best].candidate) << ") " << fixed(summary.measured[summary.best], 3)
       << " ms: auto is " << fixed(summary.gap * 100, 1) << "% slower\n";
  if (rounds <= 1) return;
  // What a user needs to read the two figures: differences below the machine's own
  // round-to-round spread are noise, whichever way they point.
  const double predicted_range =
      runs.back().candidate.predicted_step_s / runs.front().candidate.predicted_step_s - 1;
  text << "noise: a candidate's rounds spread a median " << fixed(summary.typical_spread * 100, 1)
       << "% from fastest to slowest on this machine; the measurement against itself (even "
          "rounds against odd, Spearman): "
       << fixed(summary.repeatability, 3) << "; the top " << runs.size() << " are predicted within "
       << fixed(predicted_range * 100, 1) << "% of each other\n";
  text << "measured order: the rounds order " << order.resolved.size() << " of the " << order.pairs
       << " pairs of candidates with 95% confidence (a bootstrap over rounds; the others "
          "are closer than the noise); the prediction orders "
       << summary.alike.size() << " of them alike\n";
  for (const auto& [faster, slower] : order.resolved) {
    const auto& alike = summary.alike;
    if (std::find(alike.begin(), alike.end(), std::make_pair(faster, slower)) != alike.end()) {
      continue;
    }
    text << "  predicted the other way: " << faster + 1 << " ("
         << label(runs[static_cast<std::size_t>(faster)].candidate) << ") measured faster than "
         << slower + 1 << " (" << label(runs[static_cast<std::size_t>(slower)].candidate) << ")\n";
  }
}

int run_tune_bench(const TuneBenchOptions& options) {
  const auto deadline = BenchClock::now() + std::chrono::seconds(options.settings.timeout_s);
  const Searched searched = search_candidates(options);
  const int rounds = rounds_for(options.rounds, searched.count);
  StepsByRound steps_by_round;
  const std::vector<Measured> runs = measure_in_turns(searched, rounds, deadline, &steps_by_round);
  const TuneSummary summary = summarize(runs, steps_by_round, rounds);
  const std::string out = options.out.empty() ? searched.run.run_dir + "/bench-tune" : options.out;
  baton::make_folders(out, "bench tune");
  const std::string picture = out + "/predicted_vs_measured.svg";
  write_picture(runs, picture);
  if (options.format == "json") {
    print_json(searched, runs, summary, rounds, picture);
    return 0;
  }
  std::ostringstream text;
  print_candidates(searched, runs, summary, rounds, text);
  print_judgement(runs, summary, rounds, text);
  text << "picture: " << picture << "\n";
  std::cout << text.str();
  return 0;
}

}  // namespace

void add_tune_bench(CommandLine& command_line) {
  auto options = std::make_shared<TuneBenchOptions>();
  options->settings.steps = 5;
  options->settings.warmup = 3;
  options->settings.timeout_s = 1800;
  CLI::App& tune = command_line.add_command(
      command_line.root(), "tune",
      "the schedule search's top candidates, each trained for real: predicted against "
      "measured step time, their rank correlation, and how far auto's choice is from the best",
      [options] { return run_tune_bench(*options); });
  add_bench_settings_options(tune, options->settings);
  tune.add_option("--top", options->top, "how many of the best predicted candidates to run")
      ->check(CLI::Range(1, 100))
      ->capture_default_str();
  tune.add_option("--rounds", options->rounds,
                  "rounds; in each, every candidate runs --steps steps (the first of them not "
                  "counted), every other round in reverse order; 0: " +
                      std::to_string(kBenchTurns) + " turns shared by the candidates, at least " +
                      std::to_string(kFewestRounds) + " rounds")
      ->check(CLI::Range(0, 1000))
      ->capture_default_str();
  tune.add_option("--out", options->out, "where the picture goes (default: <run dir>/bench-tune)")
      ->type_name("DIR");
  add_format_option(tune, options->format, {"table", "json"}, "table or json");
}

}  // namespace baton_app
