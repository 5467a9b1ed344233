// Chrome trace-event JSON of a simulation, for Perfetto / chrome://tracing.
#include <string>

#include "baton/plan/format.h"
#include "json_number.h"

namespace baton {
namespace {

using plan_internal::json_number;

constexpr double kMicrosecondsPerCostUnit = 1000.0;
constexpr int kComputeThread = 0;
constexpr int kCommsThread = 1;

std::string_view category(ActionType type) {
  switch (type) {
    case ActionType::kForward:
      return "forward";
    case ActionType::kBackward:
    case ActionType::kBackwardInput:
    case ActionType::kBackwardWeight:
      return "backward";
    case ActionType::kOverlapForwardBackward:
      return "overlap";
    case ActionType::kSendForward:
    case ActionType::kSendBackward:
      return "send";
    case ActionType::kRecvForward:
    case ActionType::kRecvBackward:
      return "recv";
    default:
      return "other";
  }
}

std::string metadata_event(std::string_view name, int pid, int tid, std::string_view args) {
  return "{\"name\":" + json_quote(name) + ",\"ph\":\"M\",\"pid\":" + std::to_string(pid) +
         ",\"tid\":" + std::to_string(tid) + ",\"args\":{" + std::string(args) + "}}";
}

std::string complete_event(const TimelineEntry& entry) {
  const Action& action = entry.action;
  const int thread = is_comm(action.type) ? kCommsThread : kComputeThread;
  std::string args = "\"step\":" + std::to_string(entry.step);
  if (action.type != ActionType::kOverlapForwardBackward) {
    args += ",\"stage\":" + std::to_string(action.stage);
    if (action.microbatch >= 0) args += ",\"microbatch\":" + std::to_string(action.microbatch);
  }
  return "{\"name\":" + json_quote(to_string(action)) +
         ",\"cat\":" + json_quote(category(action.type)) +
         ",\"ph\":\"X\",\"pid\":" + std::to_string(entry.rank) +
         ",\"tid\":" + std::to_string(thread) +
         ",\"ts\":" + json_number(entry.start * kMicrosecondsPerCostUnit, 3) +
         ",\"dur\":" + json_number((entry.end - entry.start) * kMicrosecondsPerCostUnit, 3) +
         ",\"args\":{" + args + "}}";
}

}  // namespace

std::string format_chrome_trace(const SimulationResult& result) {
  std::string events;
  auto append = [&events](const std::string& event) {
    events += events.empty() ? "\n  " : ",\n  ";
    events += event;
  };
  for (int rank = 0; rank < result.num_ranks; ++rank) {
    append(metadata_event("process_name", rank, 0,
                          "\"name\":" + json_quote("Rank " + std::to_string(rank))));
    append(metadata_event("process_sort_index", rank, 0, "\"sort_index\":" + std::to_string(rank)));
    append(metadata_event("thread_name", rank, kComputeThread, "\"name\":\"compute\""));
    append(metadata_event("thread_name", rank, kCommsThread, "\"name\":\"comms\""));
  }
  for (const TimelineEntry& entry : result.timeline) append(complete_event(entry));
  return "{\"displayTimeUnit\":\"ms\",\"otherData\":{\"schedule\":" +
         json_quote(result.schedule_name) + "},\"traceEvents\":[" + events + "\n]}\n";
}

}  // namespace baton
