#include "sweep.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <memory>
#include <sstream>

#include <nlohmann/json.hpp>

#include "baton/config.h"
#include "baton/config_plugins.h"
#include "baton/error.h"
#include "baton/files.h"
#include "baton/plan/format.h"
#include "baton/plan/simulate.h"
#include "baton/suggest.h"
#include "chart.h"
#include "median.h"
#include "number_format.h"
#include "pipeline_analysis.h"
#include "pipeline_runs.h"

namespace baton_app {
namespace {

struct ScheduleChoice {
  std::string name;
  int stages_per_rank = 1;
  std::string label() const {
    return stages_per_rank == 1 ? name : name + " (" + std::to_string(stages_per_rank) + "/rank)";
  }
};

struct Point {
  ScheduleChoice schedule;
  int microbatches = 0;
  std::string skipped;  // why this point did not run (the schedule refused the shape)
  double real_ms = 0, predicted_ms = 0;
  std::vector<std::int64_t> peak_rss_bytes;   // per rank, resident (includes what malloc keeps)
  std::vector<std::int64_t> peak_heap_bytes;  // per rank, in use, sampled after every action
  std::vector<int> peak_activations;          // per rank, simulated
  std::vector<int> measured_activations;      // per rank, the executor's own count
};

// "[1, 2, 3]"

std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> parts;
  std::stringstream in(text);
  for (std::string part; std::getline(in, part, ',');) {
    if (!part.empty()) parts.push_back(part);
  }
  return parts;
}

std::vector<ScheduleChoice> parse_schedules(const std::string& text) {
  std::vector<ScheduleChoice> choices;
  for (const auto& part : split(text)) {
    ScheduleChoice choice;
    const std::size_t colon = part.find(':');
    choice.name = part.substr(0, colon);
    if (colon != std::string::npos) {
      char* end = nullptr;
      const long v = std::strtol(part.c_str() + colon + 1, &end, 10);
      if (*end != '\0' || v < 1 || v > 64) {
        throw UsageError("--schedules: '" + part +
                         "' must be NAME or NAME:STAGES_PER_RANK (1 to 64)");
      }
      choice.stages_per_rank = static_cast<int>(v);
    }
    choices.push_back(choice);
  }
  if (choices.empty()) throw UsageError("--schedules is empty");
  return choices;
}

std::vector<int> parse_counts(const std::string& text) {
  std::vector<int> counts;
  for (const auto& part : split(text)) {
    char* end = nullptr;
    const long value = std::strtol(part.c_str(), &end, 10);
    if (*end != '\0' || value < 1 || value > 4096) {
      throw UsageError("--microbatches: '" + part + "' is not a count from 1 to 4096");
    }
    counts.push_back(static_cast<int>(value));
  }
  if (counts.empty()) throw UsageError("--microbatches is empty");
  return counts;
}

// What one activation held costs a rank: among points with the same microbatch count and
// stages per rank (so the same batch and receive buffers), the heap in use of the schedule
// holding the most activations minus that of the one holding the fewest, per activation;
// the median over such pairs. (A regression over every point confounds activations with
// the per-microbatch buffers, which grow with stages per rank too.)
struct Fit {
  double bytes_per_activation = 0;
  int pairs = 0;
};

Fit fit_rank(const std::vector<Point>& points, std::size_t rank) {
  std::vector<double> slopes;
  for (const auto& a : points) {
    if (!a.skipped.empty() || rank >= a.peak_heap_bytes.size()) continue;
    const Point* fewest = &a;
    for (const auto& b : points) {
      if (!b.skipped.empty() || rank >= b.peak_heap_bytes.size() ||
          b.microbatches != a.microbatches ||
          b.schedule.stages_per_rank != a.schedule.stages_per_rank) {
        continue;
      }
      if (b.peak_activations[rank] < fewest->peak_activations[rank]) fewest = &b;
    }
    // A difference of a few activations drowns in allocator noise: pairs that differ by
    // fewer than four are left out.
    const int held = a.peak_activations[rank] - fewest->peak_activations[rank];
    if (held < 4) continue;
    slopes.push_back(static_cast<double>(a.peak_heap_bytes[rank] - fewest->peak_heap_bytes[rank]) /
                     held);
  }
  Fit fit;
  fit.pairs = static_cast<int>(slopes.size());
  fit.bytes_per_activation = median_of(slopes);
  return fit;
}

void write_charts(const std::vector<Point>& points, const std::vector<ScheduleChoice>& schedules,
                  const std::string& dir, const std::string& model) {
  baton::make_folders(dir, "bench sweep");
  Chart time{"Step time against microbatches (" + model + ")",
             "microbatches",
             "step time, ms (solid: real, dashed: predicted)",
             {}};
  Chart memory{"Peak memory against microbatches (" + model + ")",
               "microbatches",
               "MiB, busiest rank (solid: heap in use, dashed: resident)",
               {}};
  int color = 0;
  for (const auto& schedule : schedules) {
    ChartSeries real{schedule.label(), {}, color, false};
    ChartSeries predicted{schedule.label() + " predicted", {}, color, true};
    ChartSeries heap{schedule.label() + " in use", {}, color, false};
    ChartSeries rss{schedule.label() + " resident", {}, color, true};
    for (const auto& point : points) {
      if (point.schedule.label() != schedule.label() || !point.skipped.empty()) continue;
      real.points.emplace_back(point.microbatches, point.real_ms);
      predicted.points.emplace_back(point.microbatches, point.predicted_ms);
      const auto resident =
          *std::max_element(point.peak_rss_bytes.begin(), point.peak_rss_bytes.end());
      const auto in_use =
          *std::max_element(point.peak_heap_bytes.begin(), point.peak_heap_bytes.end());
      rss.points.emplace_back(point.microbatches, static_cast<double>(resident) / (1 << 20));
      heap.points.emplace_back(point.microbatches, static_cast<double>(in_use) / (1 << 20));
    }
    time.series.push_back(real);
    time.series.push_back(predicted);
    memory.series.push_back(heap);
    memory.series.push_back(rss);
    ++color;
  }
  baton::write_file_atomically(dir + "/step_time.svg", render_chart_svg(time));
  baton::write_file_atomically(dir + "/memory.svg", render_chart_svg(memory));
}

struct SweepOptions {
  PipelineBenchSettings settings;
  std::string schedules = "gpipe,1f1b,zbv:2";
  std::string microbatches = "4,8,16,32";
  std::string out;  // empty: run.output_dir/bench-sweep
  std::string format = "table";
};

// One schedule at one microbatch count: its ranks trained for real, against the simulated
// plan; a plan the schedule cannot make is a skipped point that says why.
Point measure_point(const PipelineBenchSettings& base, const ScheduleChoice& schedule, int count,
                    std::int64_t microbatch_size, BenchClock::time_point deadline) {
  Point point;
  point.schedule = schedule;
  point.microbatches = count;
  PipelineBenchSettings settings = base;
  for (const std::string& set :
       {"schedule.name=" + schedule.name,
        "schedule.stages_per_rank=" + std::to_string(schedule.stages_per_rank),
        "schedule.microbatches=" + std::to_string(count),
        "data.batch_size=" + std::to_string(microbatch_size * count)}) {
    settings.sets.push_back(set);
  }
  std::cerr << "bench sweep: " << schedule.label() << ", " << count << " microbatches" << std::endl;
  baton::Config point_config = load_bench_config(settings);
  baton::CompiledPlan plan;
  try {
    const baton::PluginLoader loader = baton::plugin_loader_for(point_config);
    const baton::ConfiguredPlugins plugins = baton::resolve_plugins(point_config, loader);
    plan = baton::compile_configured_plan(point_config, plugins, base.ranks).plan;
  } catch (const baton::ConfigError& error) {
    point.skipped = error.what();
    return point;
  }
  const ScratchFolder run_scratch;
  const auto records = run_pipeline_ranks(settings, run_scratch, deadline);
  PipelineFigures figures;
  analyse_pipeline(records, settings.warmup, plan.lowered, &figures);
  point.real_ms = figures.real_ms;
  point.predicted_ms = figures.predicted_ms;
  const baton::SimulationResult simulated = baton::simulate(plan.lowered);
  for (std::size_t r = 0; r < records.size(); ++r) {
    point.peak_rss_bytes.push_back(records[r].peak_rss_bytes);
    point.peak_activations.push_back(simulated.ranks.at(r).peak_activations);
    int measured = 0;
    std::int64_t heap = 0;
    for (const auto& step : records[r].steps) {
      if (step.step <= settings.warmup) continue;
      measured = std::max(measured, step.peak_activations);
      heap = std::max(heap, step.peak_heap_bytes);
    }
    point.measured_activations.push_back(measured);
    point.peak_heap_bytes.push_back(heap);
  }
  return point;
}

std::string json_report(const std::vector<Point>& points, int ranks, std::int64_t microbatch_size,
                        const std::string& out) {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const Point& p : points) {
    nlohmann::ordered_json point = {{"schedule", p.schedule.name},
                                    {"stages_per_rank", p.schedule.stages_per_rank},
                                    {"microbatches", p.microbatches}};
    if (!p.skipped.empty()) {
      point["skipped"] = p.skipped;
    } else {
      point["real_ms"] = rounded(p.real_ms, 3);
      point["predicted_ms"] = rounded(p.predicted_ms, 3);
      point["peak_rss_bytes"] = p.peak_rss_bytes;
      point["peak_heap_bytes"] = p.peak_heap_bytes;
      point["peak_activations"] = p.peak_activations;
      point["measured_activations"] = p.measured_activations;
    }
    list.push_back(std::move(point));
  }
  nlohmann::ordered_json fits = nlohmann::ordered_json::array();
  for (int r = 0; r < ranks; ++r) {
    const Fit fit = fit_rank(points, static_cast<std::size_t>(r));
    fits.push_back({{"rank", r},
                    {"bytes_per_activation", rounded(fit.bytes_per_activation, 0)},
                    {"pairs", fit.pairs}});
  }
  const nlohmann::ordered_json report = {{"microbatch_size", microbatch_size},
                                         {"points", std::move(list)},
                                         {"fits", std::move(fits)},
                                         {"charts", {out + "/step_time.svg", out + "/memory.svg"}}};
  return report.dump() + "\n";
}

std::string table_report(const std::vector<Point>& points, int ranks, int steps,
                         const std::string& model, const std::string& out) {
  std::ostringstream text;
  text << "bench sweep: " << model << "; medians over " << steps << " steps after warm-up\n\n"
       << "  schedule                  M   real_ms  predicted_ms  efficiency  peak memory per "
          "rank, heap in use / resident (MiB)   activations held per rank: simulated "
          "(measured)\n";
  for (const Point& p : points) {
    char line[160];
    std::snprintf(line, sizeof(line), "  %-24s %3d", p.schedule.label().c_str(), p.microbatches);
    text << line;
    if (!p.skipped.empty()) {
      text << "   skipped: " << p.skipped << "\n";
      continue;
    }
    std::snprintf(line, sizeof(line), "  %8.2f  %12.2f  %10.3f   ", p.real_ms, p.predicted_ms,
                  p.real_ms > 0 ? p.predicted_ms / p.real_ms : 0);
    text << line;
    std::string rss, held;
    for (std::size_t r = 0; r < p.peak_rss_bytes.size(); ++r) {
      rss += (rss.empty() ? "" : ", ") +
             fixed(static_cast<double>(p.peak_heap_bytes[r]) / (1 << 20), 1) + " / " +
             fixed(static_cast<double>(p.peak_rss_bytes[r]) / (1 << 20), 1);
    }
    for (std::size_t r = 0; r < p.peak_activations.size(); ++r) {
      held += (held.empty() ? "" : " / ") + std::to_string(p.peak_activations[r]) + " (" +
              std::to_string(p.measured_activations[r]) + ")";
    }
    std::snprintf(line, sizeof(line), "%-36s %s\n", rss.c_str(), held.c_str());
    text << line;
  }
  text << "\n  heap per activation held (same microbatches and stages per rank, most held "
          "against fewest, median):\n";
  for (int r = 0; r < ranks; ++r) {
    const Fit fit = fit_rank(points, static_cast<std::size_t>(r));
    text << "    rank " << r << ": " << fixed(fit.bytes_per_activation / 1024, 1) << " KiB ("
         << fit.pairs << " pairs)\n";
  }
  text << "\n  pictures: " << out << "/step_time.svg, " << out << "/memory.svg\n";
  return text.str();
}

int run_sweep_bench(const SweepOptions& options) {
  const std::vector<ScheduleChoice> schedules = parse_schedules(options.schedules);
  const std::vector<int> counts = parse_counts(options.microbatches);
  PipelineBenchSettings base = options.settings;
  const auto deadline = BenchClock::now() + std::chrono::seconds(base.timeout_s);

  const baton::Config config = load_bench_config(base);
  base.ranks = static_cast<int>(config.section("world").get_int("ranks"));
  const auto batch = config.section("data").get_int("batch_size");
  const auto configured_microbatches = config.section("schedule").get_int("microbatches");
  if (base.ranks < 2 || batch % configured_microbatches != 0) {
    throw baton::ConfigError(
        "bench sweep needs at least 2 ranks and a data.batch_size that "
        "schedule.microbatches divides (got " +
        std::to_string(base.ranks) + " ranks, batch " + std::to_string(batch) + ", " +
        std::to_string(configured_microbatches) + " microbatches)");
  }
  const std::int64_t microbatch_size = batch / configured_microbatches;
  const std::string out = !options.out.empty()
                              ? options.out
                              : config.section("run").get_string("output_dir") + "/bench-sweep";
  std::vector<Point> points;
  for (const auto& schedule : schedules) {
    for (const int count : counts) {
      points.push_back(measure_point(base, schedule, count, microbatch_size, deadline));
    }
  }
  const std::string model = config.section("model").get_string("name") + ", microbatch of " +
                            std::to_string(microbatch_size);
  write_charts(points, schedules, out, model);
  std::cout << (options.format == "json"
                    ? json_report(points, base.ranks, microbatch_size, out)
                    : table_report(points, base.ranks, base.steps, model, out));
  return 0;
}

}  // namespace

void add_sweep_bench(CommandLine& command_line) {
  auto options = std::make_shared<SweepOptions>();
  options->settings.steps = 8;
  options->settings.warmup = 2;
  options->settings.timeout_s = 1800;
  CLI::App& sweep = command_line.add_command(
      command_line.root(), "sweep",
      "the configured pipeline for every schedule and microbatch count asked for, each a real "
      "run: step time and memory, real and predicted, with SVG pictures",
      [options] { return run_sweep_bench(*options); });
  add_bench_settings_options(sweep, options->settings);
  sweep
      .add_option("--schedules", options->schedules,
                  "schedules to run, NAME or NAME:STAGES_PER_RANK, comma-separated")
      ->capture_default_str();
  sweep.add_option("--microbatches", options->microbatches, "microbatch counts, comma-separated")
      ->capture_default_str();
  sweep
      .add_option("--out", options->out,
                  "where the pictures go (default: run.output_dir/bench-sweep)")
      ->type_name("DIR");
  add_format_option(sweep, options->format, {"table", "json"}, "table or json");
}

}  // namespace baton_app
