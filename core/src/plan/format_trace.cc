// Chrome trace-event JSON of a simulation, for Perfetto / chrome://tracing.
#include <string>

#include "baton/plan/chrome_trace.h"
#include "baton/plan/format.h"

namespace baton {
namespace {

constexpr double kMicrosecondsPerCostUnit = 1000.0;

const char* category(ActionType type) {
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

TraceEvent event_of(const TimelineEntry& entry) {
  const Action& action = entry.action;
  TraceEvent event;
  event.rank = entry.rank;
  // A gradient all-reduce runs beside the compute, like a transfer.
  event.lane = is_comm(action.type) || action.type == ActionType::kReduceGrad ? TraceLane::kComms
                                                                              : TraceLane::kCompute;
  event.name = to_string(action);
  event.category = category(action.type);
  event.start_us = entry.start * kMicrosecondsPerCostUnit;
  event.duration_us = (entry.end - entry.start) * kMicrosecondsPerCostUnit;
  event.args.emplace_back("timestep", entry.step);
  if (action.type != ActionType::kOverlapForwardBackward) {
    event.args.emplace_back("stage", action.stage);
    if (action.microbatch >= 0) event.args.emplace_back("microbatch", action.microbatch);
  }
  if (is_compute(action.type)) add_kept_args(entry.kept, &event);
  return event;
}

}  // namespace

std::vector<TraceEvent> simulation_trace_events(const SimulationResult& result) {
  std::vector<TraceEvent> events;
  events.reserve(result.timeline.size());
  for (const TimelineEntry& entry : result.timeline) events.push_back(event_of(entry));
  return events;
}

std::string format_chrome_trace(const SimulationResult& result) {
  return write_chrome_trace(simulation_trace_events(result), result.num_ranks,
                            result.schedule_name);
}

}  // namespace baton
