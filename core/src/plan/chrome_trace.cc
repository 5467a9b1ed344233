#include "baton/plan/chrome_trace.h"

#include <algorithm>

#include "baton/plan/format.h"
#include "baton/plan/json_text.h"
#include "json_number.h"

namespace baton {
namespace {

using plan_internal::json_number;

std::string metadata_event(const std::string& name, int pid, int tid, const std::string& args) {
  return "{\"name\":" + json_quote(name) + ",\"ph\":\"M\",\"pid\":" + std::to_string(pid) +
         ",\"tid\":" + std::to_string(tid) + ",\"args\":{" + args + "}}";
}

std::string complete_event(const TraceEvent& event) {
  std::string text = "{\"name\":" + json_quote(event.name);
  if (!event.category.empty()) text += ",\"cat\":" + json_quote(event.category);
  text += ",\"ph\":\"X\",\"pid\":" + std::to_string(event.rank) +
          ",\"tid\":" + std::to_string(static_cast<int>(event.lane)) +
          ",\"ts\":" + json_number(event.start_us, 3) +
          ",\"dur\":" + json_number(std::max(0.0, event.duration_us), 3);
  if (!event.args.empty()) {
    text += ",\"args\":{";
    for (std::size_t i = 0; i < event.args.size(); ++i) {
      text += (i ? "," : "") + json_quote(event.args[i].first) + ":" +
              std::to_string(event.args[i].second);
    }
    text += "}";
  }
  return text + "}";
}

}  // namespace

std::string write_chrome_trace(const std::vector<TraceEvent>& events, int ranks,
                               const std::string& schedule, int ranks_per_replica) {
  std::string body;
  auto append = [&body](const std::string& event) {
    body += body.empty() ? "\n  " : ",\n  ";
    body += event;
  };
  for (int rank = 0; rank < ranks; ++rank) {
    std::string name = "Rank " + std::to_string(rank);
    if (ranks_per_replica > 0 && ranks_per_replica < ranks) {
      name += " (replica " + std::to_string(rank / ranks_per_replica) + ")";
    }
    append(metadata_event("process_name", rank, 0, "\"name\":" + json_quote(name)));
    append(metadata_event("process_sort_index", rank, 0, "\"sort_index\":" + std::to_string(rank)));
    append(metadata_event("thread_name", rank, static_cast<int>(TraceLane::kCompute),
                          "\"name\":\"compute\""));
    append(metadata_event("thread_name", rank, static_cast<int>(TraceLane::kComms),
                          "\"name\":\"comms\""));
  }
  for (const TraceEvent& event : events) append(complete_event(event));
  const std::string other =
      schedule.empty() ? "" : "\"otherData\":{\"schedule\":" + json_quote(schedule) + "},";
  return "{\"displayTimeUnit\":\"ms\"," + other + "\"traceEvents\":[" + body + "\n]}\n";
}

}  // namespace baton
