#include "run_trace.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <thread>

#include "baton/error.h"
#include "baton/files.h"
#include "baton/plan/chrome_trace.h"
#include "baton/plan/format.h"
#include "baton/plan/measured_costs.h"
#include "baton/plan/simulate.h"
#include "baton/store_keys.h"
#include "owned_outputs.h"
#include "store_count.h"
#include "xml_escape.h"

namespace baton_app {
namespace {

namespace fs = std::filesystem;

std::string parent_of(const std::string& path) {
  const fs::path parent = fs::path(path).parent_path();
  return parent.empty() ? "." : parent.string();
}

std::string with_extension(const std::string& path, const std::string& extension) {
  return (fs::path(path).replace_extension(extension)).string();
}

// Colors by what the action does: forward, backward, input/weight gradient, comms.
const char* color_of(const baton::TraceEvent& bar) {
  if (bar.lane == baton::TraceLane::kComms) {
    return bar.name.rfind("wait", 0) == 0 ? "#d9d9d9" : "#a6a6a6";
  }
  if (bar.name.find("OVERLAP") != std::string::npos) return "#9467bd";
  for (char c : bar.name) {
    if (c == 'F') return "#4c8bd6";
    if (c == 'B') return "#5ab45a";
    if (c == 'I') return "#e0a030";
    if (c == 'W') return "#d0605e";
  }
  return "#888888";
}

// A rank's file is ours, but read defensively: no event carries more args than this.
constexpr std::size_t kMaxArgs = 16;

}  // namespace

std::string render_timeline_svg(const std::vector<baton::TraceEvent>& bars, int ranks,
                                const std::string& title) {
  const double width = 1200, left = 70, lane_height = 16, row_gap = 10, top = 40;
  double end = 1;
  for (const auto& bar : bars) end = std::max(end, bar.start_us + bar.duration_us);
  const double scale = (width - left - 20) / end;
  const double height = top + ranks * (2 * lane_height + row_gap) + 30;
  std::ostringstream svg;
  svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height
      << "\" font-family=\"sans-serif\" font-size=\"10\">\n"
      << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      << "<text x=\"" << left << "\" y=\"18\" font-size=\"13\">" << escape_xml(title)
      << "</text>\n";
  for (int rank = 0; rank < ranks; ++rank) {
    const double y = top + rank * (2 * lane_height + row_gap);
    svg << "<text x=\"4\" y=\"" << y + lane_height << "\">Rank " << rank << "</text>\n";
  }
  for (const auto& bar : bars) {
    const int lane = static_cast<int>(bar.lane);
    const double y = top + bar.rank * (2 * lane_height + row_gap) + lane * lane_height;
    const double x = left + bar.start_us * scale;
    const double w = std::max(0.5, bar.duration_us * scale);
    svg << "<rect x=\"" << x << "\" y=\"" << y << "\" width=\"" << w << "\" height=\""
        << lane_height - 2 << "\" fill=\"" << color_of(bar) << "\"><title>" << escape_xml(bar.name)
        << "</title></rect>\n";
    if (w > 28 && bar.lane == baton::TraceLane::kCompute) {
      svg << "<text x=\"" << x + 2 << "\" y=\"" << y + lane_height - 5 << "\" fill=\"white\">"
          << escape_xml(bar.name) << "</text>\n";
    }
  }
  const double axis_y = top + ranks * (2 * lane_height + row_gap) + 12;
  for (int tick = 0; tick <= 10; ++tick) {
    const double t = end * tick / 10;
    svg << "<text x=\"" << left + t * scale << "\" y=\"" << axis_y << "\">" << std::fixed;
    svg.precision(1);
    svg << t / 1000 << " ms</text>\n";
  }
  svg << "</svg>\n";
  return svg.str();
}

RunTrace::RunTrace(const TraceSettings& settings, int rank, int world_size,
                   std::shared_ptr<baton::Store> store, std::chrono::milliseconds timeout,
                   int pipeline_ranks)
    : enabled_(settings.enabled),
      steps_(settings.steps),
      rank_(rank),
      world_size_(world_size),
      pipeline_ranks_(pipeline_ranks),
      store_(std::move(store)),
      timeout_(timeout),
      path_(settings.path) {}

void RunTrace::begin_step(int step) {
  recording_ = enabled_ && recorded_ < steps_;
  if (!recording_) return;
  ++recorded_;
  step_ = step;
}

void RunTrace::step_started(int /*training_step*/) {
  wall_start_us_ =
      std::chrono::duration<double, std::micro>(std::chrono::system_clock::now().time_since_epoch())
          .count();
}

void RunTrace::span(const baton::StepSpan& span) {
  const bool compute = baton::is_compute_span(span.kind);
  baton::TraceEvent event;
  event.rank = rank_;
  event.lane = compute ? baton::TraceLane::kCompute : baton::TraceLane::kComms;
  event.category = compute ? "compute" : "comms";
  event.name =
      baton::describe_span(span) + (compute ? " (step " + std::to_string(step_) + ")" : "");
  event.start_us = wall_start_us_ + span.start * 1e6;
  event.duration_us = (span.end - span.start) * 1e6;
  if (compute) {
    event.args.emplace_back("timestep", span.timestep);
    baton::add_kept_args(span.kept, &event);
  }
  // What a post moved, as it crossed (precision.wire's dtype).
  if (span.bytes_sent > 0) event.args.emplace_back("bytes_sent", span.bytes_sent);
  if (span.bytes_received > 0) event.args.emplace_back("bytes_received", span.bytes_received);
  events_.push_back(std::move(event));
}

namespace {

// A rank's events for rank 0, one line each: lane, start, end, the args (count, then
// name=value each), name: the name goes last, it is the only field with spaces.
std::string trace_part_text(const std::vector<baton::TraceEvent>& events) {
  std::ostringstream text;
  text.precision(17);
  for (const auto& event : events) {
    text << static_cast<int>(event.lane) << '\t' << event.start_us << '\t'
         << event.start_us + event.duration_us << '\t' << event.args.size();
    for (const auto& [key, value] : event.args) text << '\t' << key << '=' << value;
    text << '\t' << event.name << '\n';
  }
  return text.str();
}

// trace_part_text's lines back into rank `rank`'s events.
std::vector<baton::TraceEvent> parse_trace_part(const std::string& text, int rank) {
  std::vector<baton::TraceEvent> events;
  std::istringstream file(text);
  for (std::string line; std::getline(file, line);) {
    std::istringstream fields(line);
    baton::TraceEvent event;
    event.rank = rank;
    int lane = 0;
    double end_us = 0;
    std::size_t args = 0;
    fields >> lane >> event.start_us >> end_us >> args;
    fields.get();
    for (std::size_t i = 0; i < args && i < kMaxArgs; ++i) {
      std::string arg;
      std::getline(fields, arg, '\t');
      const std::size_t equals = arg.rfind('=');
      if (equals == std::string::npos) continue;
      event.args.emplace_back(arg.substr(0, equals),
                              std::strtoll(arg.c_str() + equals + 1, nullptr, 10));
    }
    std::getline(fields, event.name);
    const bool compute = lane == static_cast<int>(baton::TraceLane::kCompute);
    event.lane = compute ? baton::TraceLane::kCompute : baton::TraceLane::kComms;
    event.category = compute ? "compute" : "comms";
    event.duration_us = end_us - event.start_us;
    events.push_back(std::move(event));
  }
  return events;
}

}  // namespace

std::string RunTrace::finish(const baton::Plan& lowered_plan,
                             const std::set<int>& recompute_stages) {
  if (!enabled_) return "";
  const std::string dir = parent_of(path_);
  const std::string parts = dir + "/trace-ranks";
  baton::make_folders(parts, "trace");
  baton::write_file_atomically(rank_file(parts, rank_, ".tsv"), trace_part_text(events_));
  if (store_) store_->add(baton::store_keys::kTraceWritten, 1);
  if (rank_ != 0) return "";

  if (store_) {
    wait_for_count(*store_, baton::store_keys::kTraceWritten, world_size_, timeout_,
                   "rank 0: the trace");
  }
  std::vector<baton::TraceEvent> events;
  for (int rank = 0; rank < world_size_; ++rank) {
    const std::vector<baton::TraceEvent> part =
        parse_trace_part(baton::read_file(rank_file(parts, rank, ".tsv"),
                                          "rank " + std::to_string(rank) + "'s trace part"),
                         rank);
    events.insert(events.end(), part.begin(), part.end());
  }
  double origin = events.empty() ? 0 : events.front().start_us;
  for (const auto& event : events) origin = std::min(origin, event.start_us);
  for (auto& event : events) event.start_us -= origin;
  baton::write_file_atomically(path_,
                               baton::write_chrome_trace(events, world_size_, {}, pipeline_ranks_));
  baton::write_file_atomically(
      with_extension(path_, ".svg"),
      render_timeline_svg(events, world_size_,
                          "baton run: " + lowered_plan.schedule_name + ", " +
                              std::to_string(world_size_) + " ranks, first " +
                              std::to_string(recorded_) + " steps (measured)"));

  // The simulated plan beside it (one cost unit = 1 ms, as in `baton plan --format trace`),
  // its stages recomputing as the run's do.
  baton::MeasuredCosts costs;
  for (int stage = 0; stage < lowered_plan.num_stages; ++stage) {
    costs.stages.push_back(costs.uniform_stage());
    costs.stages.back().recompute = recompute_stages.count(stage) > 0;
  }
  const baton::SimulationResult simulated = baton::simulate(lowered_plan, costs);
  const std::string plan_path = dir + "/plan_trace.json";
  baton::write_file_atomically(plan_path, baton::format_chrome_trace(simulated));
  baton::write_file_atomically(
      dir + "/plan_trace.svg",
      render_timeline_svg(baton::simulation_trace_events(simulated), world_size_,
                          "plan: " + lowered_plan.schedule_name + " (simulated, F=1 B=2 units)"));
  return path_;
}

}  // namespace baton_app
