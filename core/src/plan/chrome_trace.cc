#include "baton/plan/chrome_trace.h"

#include <algorithm>
#include <string>

#include "json_number.h"

namespace baton {
namespace {

using Json = nlohmann::ordered_json;
using plan_internal::json_number_value;

std::string dumped(const Json& json) {
  return json.dump(-1, ' ', false, Json::error_handler_t::replace);
}

Json metadata_event(const std::string& name, int pid, int tid, Json args) {
  return {{"name", name}, {"ph", "M"}, {"pid", pid}, {"tid", tid}, {"args", std::move(args)}};
}

Json complete_event(const TraceEvent& event) {
  Json json = {{"name", event.name}};
  if (!event.category.empty()) json["cat"] = event.category;
  json["ph"] = "X";
  json["pid"] = event.rank;
  json["tid"] = static_cast<int>(event.lane);
  json["ts"] = json_number_value(event.start_us, 3);
  json["dur"] = json_number_value(std::max(0.0, event.duration_us), 3);
  if (!event.args.empty()) {
    Json args = Json::object();
    for (const auto& [key, value] : event.args) args[key] = value;
    json["args"] = std::move(args);
  }
  return json;
}

}  // namespace

void add_kept_args(const KeptTally& kept, TraceEvent* event) {
  for (Kept what : {Kept::kGraph, Kept::kInputs, Kept::kWeightGraph}) {
    event->args.emplace_back(std::string("kept ") + kept_name(what), kept[what]);
  }
}

// One event per line, so that a trace reads (and diffs) line by line.
std::string write_chrome_trace(const std::vector<TraceEvent>& events, int ranks,
                               const std::string& schedule, int ranks_per_replica) {
  std::string body;
  auto append = [&body](const Json& event) {
    body += body.empty() ? "\n  " : ",\n  ";
    body += dumped(event);
  };
  for (int rank = 0; rank < ranks; ++rank) {
    std::string name = "Rank " + std::to_string(rank);
    if (ranks_per_replica > 0 && ranks_per_replica < ranks) {
      name += " (replica " + std::to_string(rank / ranks_per_replica) + ")";
    }
    append(metadata_event("process_name", rank, 0, {{"name", name}}));
    append(metadata_event("process_sort_index", rank, 0, {{"sort_index", rank}}));
    append(metadata_event("thread_name", rank, static_cast<int>(TraceLane::kCompute),
                          {{"name", "compute"}}));
    append(metadata_event("thread_name", rank, static_cast<int>(TraceLane::kComms),
                          {{"name", "comms"}}));
  }
  for (const TraceEvent& event : events) append(complete_event(event));
  Json head = {{"displayTimeUnit", "ms"}};
  if (!schedule.empty()) head["otherData"] = {{"schedule", schedule}};
  std::string text = dumped(head);
  text.pop_back();  // the closing brace: the events follow
  return text + ",\"traceEvents\":[" + body + "\n]}\n";
}

}  // namespace baton
