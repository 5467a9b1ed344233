#include "pipeline_analysis.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>

#include <nlohmann/json.hpp>

#include "baton/plan/action.h"
#include "baton/plan/format.h"
#include "baton/plan/measured_costs.h"
#include "baton/plan/simulate.h"
#include "median.h"
#include "number_format.h"

namespace baton_app {
namespace {

std::string type_letter(baton::ActionType type) {
  switch (type) {
    case baton::ActionType::kForward:
      return "F";
    case baton::ActionType::kBackward:
      return "B";
    case baton::ActionType::kBackwardInput:
      return "I";
    case baton::ActionType::kBackwardWeight:
      return "W";
    default:
      return "";
  }
}

// A post of sends alone: what one send costs to post, without receives mixed in.
bool only_sends(const std::vector<baton::Action>& transfers) {
  for (const baton::Action& transfer : transfers) {
    if (transfer.type != baton::ActionType::kSendForward &&
        transfer.type != baton::ActionType::kSendBackward) {
      return false;
    }
  }
  return !transfers.empty();
}

// Where one span of a rank's step goes: its breakdown column, and the samples behind the
// prediction (each compute action's cost by stage and type, the cost of posting).
using CostSamples = std::map<std::pair<int, std::string>, std::vector<double>>;

void count_span(const baton::StepSpan& span, double ms, int receives, RankBreakdown* breakdown,
                CostSamples* costs, std::vector<double>* send_posts,
                std::vector<double>* receive_posts) {
  switch (span.kind) {
    case baton::SpanKind::kCompute: {
      breakdown->compute_ms += ms;
      ++breakdown->actions;
      const std::string letter = type_letter(span.action.type);
      if (!letter.empty()) (*costs)[{span.action.stage, letter}].push_back(ms);
      break;
    }
    case baton::SpanKind::kPostTransfers:
      breakdown->post_ms += ms;
      if (only_sends(span.transfers)) send_posts->push_back(ms);
      break;
    case baton::SpanKind::kPostReceives:
      breakdown->post_ms += ms;
      if (receives > 0) receive_posts->push_back(ms / receives);
      break;
    case baton::SpanKind::kPostReduction:
      breakdown->post_ms += ms;
      break;
    case baton::SpanKind::kWaitSends:
      breakdown->wait_sends_ms += ms;
      break;
    case baton::SpanKind::kWaitReductions:
      breakdown->wait_reduce_ms += ms;
      break;
    case baton::SpanKind::kWaitReceive:
      if (span.action.type == baton::ActionType::kRecvForward) {
        breakdown->wait_recv_forward_ms += ms;
      } else {
        breakdown->wait_recv_backward_ms += ms;
      }
      break;
    case baton::SpanKind::kReduction:
      break;  // beside the rank's work, counted by the caller
  }
}

}  // namespace

std::vector<double> step_intervals_ms(const std::vector<PipelineRecord>& records, int warmup) {
  // The interval between rank 0's step starts is what the whole pipeline sustains.
  std::vector<double> intervals;
  const auto& first = records.at(0).steps;
  for (std::size_t i = 0; i < first.size(); ++i) {
    if (first[i].step <= warmup) continue;
    if (i + 1 < first.size()) {
      intervals.push_back((first[i + 1].started_s - first[i].started_s) * 1000);
    }
  }
  if (intervals.empty()) {
    for (const auto& step : first) {
      if (step.step > warmup) intervals.push_back(step.seconds * 1000);
    }
  }
  return intervals;
}

double real_step_ms(const std::vector<PipelineRecord>& records, int warmup) {
  return median_of(step_intervals_ms(records, warmup));
}

namespace {

// The RECVs of rank `rank`'s column of the plan: what its "post receives" posts each step.
int plan_receives(const baton::Plan& plan, std::size_t rank) {
  int receives = 0;
  if (rank >= plan.rank_steps.size()) return 0;
  for (const baton::PlanSlot& slot : plan.rank_steps[rank]) {
    receives += slot && (slot->type == baton::ActionType::kRecvForward ||
                         slot->type == baton::ActionType::kRecvBackward);
  }
  return receives;
}

// One rank's measured steps (after the warm-up), as ms per step, with each action's cost and
// each post's added to the run's samples.
RankBreakdown rank_breakdown(const PipelineRecord& record, int receives, int warmup,
                             CostSamples* costs, std::vector<double>* send_posts,
                             std::vector<double>* receive_posts) {
  RankBreakdown breakdown;
  int counted = 0;
  for (std::size_t i = 0; i < record.steps.size(); ++i) {
    const RecordedStep& step = record.steps[i];
    if (step.step <= warmup) continue;
    ++counted;
    double spanned = 0;
    for (const baton::StepSpan& span : step.spans) {
      const double ms = (span.end - span.start) * 1000;
      if (span.kind == baton::SpanKind::kReduction) {
        // Beside the rank's work, not part of its step's spans: one stage's all-reduce.
        (*costs)[{span.action.stage, "R"}].push_back(ms);
        continue;
      }
      spanned += ms;
      count_span(span, ms, receives, &breakdown, costs, send_posts, receive_posts);
    }
    breakdown.executor_other_ms += std::max(0.0, step.executor_seconds * 1000 - spanned);
    const double whole =
        i + 1 < record.steps.size() ? record.steps[i + 1].started_s - step.started_s : step.seconds;
    breakdown.between_steps_ms += std::max(0.0, (whole - step.executor_seconds) * 1000);
  }
  if (counted > 0) {
    for (double* value : {&breakdown.compute_ms, &breakdown.actions, &breakdown.post_ms,
                          &breakdown.wait_recv_forward_ms, &breakdown.wait_recv_backward_ms,
                          &breakdown.wait_sends_ms, &breakdown.executor_other_ms,
                          &breakdown.between_steps_ms, &breakdown.wait_reduce_ms}) {
      *value /= counted;
    }
  }
  return breakdown;
}

// Predicted: the plan replayed with what each action really cost in this run (each action's
// median also goes into `figures->action_costs`).
double predicted_ms(const baton::Plan& plan, const CostSamples& costs, PipelineFigures* figures) {
  baton::MeasuredCosts measured;
  measured.stages.resize(static_cast<std::size_t>(plan.num_stages));
  for (auto& stage : measured.stages) stage = {0, 0, 0, 0};
  for (const auto& entry : costs) {
    const int stage = entry.first.first;
    const std::string& type = entry.first.second;
    const double ms = median_of(entry.second);
    figures->action_costs.push_back({stage, type, ms, static_cast<int>(entry.second.size())});
    if (stage < 0 || stage >= plan.num_stages) continue;
    baton::StageCosts& target = measured.stages[static_cast<std::size_t>(stage)];
    if (type == "F") target.forward = ms;
    if (type == "B") target.backward = ms;
    if (type == "I") target.backward_input = ms;
    if (type == "W") target.backward_weight = ms;
    if (type == "R") target.reduce_grad = ms;
  }
  measured.transfer_time = figures->transfer_ms;
  measured.send_overhead = figures->send_post_ms;
  measured.recv_overhead = figures->recv_post_ms;
  return baton::simulate(plan, measured).makespan;
}

// The schedule's ideal: balanced stages (F = 1/v, B = 2/v), free transfers; makespan over the
// busiest rank's work.
double ideal_ratio(const baton::Plan& plan, int ranks) {
  const int per_rank = std::max(1, plan.num_stages / std::max(1, ranks));
  baton::SimulationCosts ideal;
  ideal.forward = 1.0 / per_rank;
  ideal.backward = 2.0 / per_rank;
  ideal.backward_input = 1.0 / per_rank;
  ideal.backward_weight = 1.0 / per_rank;
  const baton::SimulationResult simulated = baton::simulate(plan, ideal);
  double busiest = 0;
  for (const auto& rank : simulated.ranks) busiest = std::max(busiest, rank.busy_time);
  return busiest > 0 ? simulated.makespan / busiest : 1.0;
}

}  // namespace

void analyse_pipeline(const std::vector<PipelineRecord>& records, int warmup,
                      const baton::Plan& plan, PipelineFigures* figures) {
  figures->ranks = static_cast<int>(records.size());
  figures->stages = plan.num_stages;
  figures->microbatches = plan.num_microbatches;
  figures->schedule = plan.schedule_name;
  for (const RecordedStep& step : records.at(0).steps) {
    if (step.step > warmup) ++figures->measured_steps;
  }
  figures->real_ms = real_step_ms(records, warmup);

  CostSamples costs;
  std::vector<double> send_posts;
  std::vector<double> receive_posts;  // per receive: a step's "post receives" over its count
  for (std::size_t rank = 0; rank < records.size(); ++rank) {
    const PipelineRecord& record = records[rank];
    figures->ranks_breakdown.push_back(rank_breakdown(record, plan_receives(plan, rank), warmup,
                                                      &costs, &send_posts, &receive_posts));
    if (record.probe_one_way_s >= 0) {
      figures->transfer_ms = record.probe_one_way_s * 1000;
      figures->transfer_bytes = record.probe_bytes;
    }
    std::vector<double> added;
    for (const RecordedStep& step : record.steps) {
      if (step.step > warmup) {
        added.push_back(static_cast<double>(step.peak_heap_bytes - step.start_heap_bytes));
      }
    }
    figures->activations_peak_bytes =
        std::max(figures->activations_peak_bytes, static_cast<std::int64_t>(median_of(added)));
  }
  figures->send_post_ms = median_of(send_posts);
  figures->recv_post_ms = median_of(receive_posts);
  figures->predicted_ms = predicted_ms(plan, costs, figures);
  figures->ideal_ratio = ideal_ratio(plan, figures->ranks);
}

std::string format_pipeline_table(const PipelineFigures& f) {
  std::ostringstream out;
  out << "pipeline step: " << f.schedule << ", " << f.ranks << " ranks, " << f.stages << " stages, "
      << f.microbatches << " microbatches; medians over " << f.measured_steps
      << " steps after warm-up\n\n";
  out << "  real_ms                    " << fixed(f.real_ms) << "\n"
      << "  predicted_ms               " << fixed(f.predicted_ms)
      << "   (plan simulator, measured action and transfer costs)\n"
      << "  bound_ms                   " << fixed(f.bound_ms)
      << "   (the schedule's ideal: balanced stages, free transfers, this machine)\n"
      << "  unpipelined_ms             " << fixed(f.unpipelined_ms) << "   (one process)\n"
      << "  unpipelined_concurrent_ms  " << fixed(f.unpipelined_concurrent_ms) << "   (" << f.ranks
      << " copies at once)\n"
      << "  efficiency                 " << fixed(f.efficiency, 3) << "   (predicted / real)\n"
      << "  speedup                    " << fixed(f.speedup, 3) << "   (unpipelined / real; "
      << "real = " << fixed(f.speedup > 0 ? 1 / f.speedup : 0, 3) << " x unpipelined)\n\n";
  out << "  action costs (ms, median):";
  for (const auto& cost : f.action_costs) {
    out << "  " << cost.stage << cost.type << " " << fixed(cost.ms);
  }
  out << "\n  activations: " << fixed(static_cast<double>(f.activations_peak_bytes) / (1 << 20), 2)
      << " MiB at a step's peak (heap added since the step began, median, busiest rank)";
  out << "\n  transfer: " << f.transfer_bytes << " bytes one way " << fixed(f.transfer_ms, 3)
      << " ms; posting a send " << fixed(f.send_post_ms, 3) << " ms, a receive "
      << fixed(f.recv_post_ms, 3) << " ms\n"
      << "  validators: " << fixed(f.validator_check_us, 2) << " us per check, "
      << fixed(100 * f.validator_share, 2) << "% of the real step\n\n";
  out << "  per rank, ms per step   compute   posting  wait F   wait B   wait sends  "
         "executor other  between steps  us per action\n";
  for (std::size_t r = 0; r < f.ranks_breakdown.size(); ++r) {
    const RankBreakdown& b = f.ranks_breakdown[r];
    char line[200];
    std::snprintf(line, sizeof(line),
                  "  rank %-3zu                %8.2f  %8.3f %8.2f %8.2f %8.2f    %8.3f        "
                  "%8.2f  %10.1f\n",
                  r, b.compute_ms, b.post_ms, b.wait_recv_forward_ms, b.wait_recv_backward_ms,
                  b.wait_sends_ms, b.executor_other_ms, b.between_steps_ms, b.per_action_us());
    out << line;
  }
  std::string reduce_waits;
  for (std::size_t r = 0; r < f.ranks_breakdown.size(); ++r) {
    if (f.ranks_breakdown[r].wait_reduce_ms <= 0) continue;
    reduce_waits +=
        "  rank " + std::to_string(r) + " " + fixed(f.ranks_breakdown[r].wait_reduce_ms, 2);
  }
  if (!reduce_waits.empty()) {
    // The prediction above costs each stage's REDUCE_GRAD with its measured all-reduce (R).
    out << "  gradient all-reduce left to wait for at the step's end, ms per step:" << reduce_waits
        << "\n";
  }
  return out.str();
}

std::string format_pipeline_json(const PipelineFigures& f) {
  nlohmann::ordered_json costs = nlohmann::ordered_json::array();
  for (const ActionCost& cost : f.action_costs) {
    costs.push_back({{"stage", cost.stage},
                     {"type", cost.type},
                     {"ms", rounded(cost.ms, 4)},
                     {"samples", cost.samples}});
  }
  nlohmann::ordered_json breakdown = nlohmann::ordered_json::array();
  for (std::size_t r = 0; r < f.ranks_breakdown.size(); ++r) {
    const RankBreakdown& b = f.ranks_breakdown[r];
    breakdown.push_back({{"rank", r},
                         {"compute_ms", rounded(b.compute_ms, 3)},
                         {"post_ms", rounded(b.post_ms, 3)},
                         {"wait_recv_forward_ms", rounded(b.wait_recv_forward_ms, 3)},
                         {"wait_recv_backward_ms", rounded(b.wait_recv_backward_ms, 3)},
                         {"wait_sends_ms", rounded(b.wait_sends_ms, 3)},
                         {"wait_reduce_ms", rounded(b.wait_reduce_ms, 3)},
                         {"executor_other_ms", rounded(b.executor_other_ms, 3)},
                         {"between_steps_ms", rounded(b.between_steps_ms, 3)},
                         {"actions", rounded(b.actions, 1)},
                         {"per_action_us", rounded(b.per_action_us(), 2)}});
  }
  const nlohmann::ordered_json figures = {
      {"schedule", f.schedule},
      {"ranks", f.ranks},
      {"stages", f.stages},
      {"microbatches", f.microbatches},
      {"measured_steps", f.measured_steps},
      {"real_ms", rounded(f.real_ms, 3)},
      {"predicted_ms", rounded(f.predicted_ms, 3)},
      {"unpipelined_ms", rounded(f.unpipelined_ms, 3)},
      {"unpipelined_concurrent_ms", rounded(f.unpipelined_concurrent_ms, 3)},
      {"efficiency", rounded(f.efficiency, 4)},
      {"speedup", rounded(f.speedup, 4)},
      {"bound_ms", rounded(f.bound_ms, 3)},
      {"transfer_ms", rounded(f.transfer_ms, 4)},
      {"transfer_bytes", f.transfer_bytes},
      {"activations_peak_bytes", f.activations_peak_bytes},
      {"send_post_ms", rounded(f.send_post_ms, 4)},
      {"recv_post_ms", rounded(f.recv_post_ms, 4)},
      {"validator_check_us", rounded(f.validator_check_us, 3)},
      {"validator_share", rounded(f.validator_share, 5)},
      {"action_costs", std::move(costs)},
      {"breakdown", std::move(breakdown)}};
  return figures.dump() + "\n";
}

namespace {

// The headline figures a comparison puts side by side: name, value.
std::vector<std::pair<std::string, double>> headline(const PipelineFigures& f) {
  return {{"real_ms", f.real_ms},
          {"predicted_ms", f.predicted_ms},
          {"unpipelined_ms", f.unpipelined_ms},
          {"unpipelined_concurrent_ms", f.unpipelined_concurrent_ms},
          {"speedup", f.speedup},
          {"activations_peak_mib", static_cast<double>(f.activations_peak_bytes) / (1 << 20)},
          {"transfer_bytes", static_cast<double>(f.transfer_bytes)}};
}

std::string joined(const std::vector<std::string>& words) {
  std::string text;
  for (const std::string& word : words) text += (text.empty() ? "" : " ") + word;
  return text;
}

}  // namespace

std::string format_comparison_table(const PipelineFigures& measured,
                                    const PipelineFigures& baseline,
                                    const std::vector<std::string>& changes) {
  std::ostringstream out;
  out << "against the baseline (" << joined(changes) << "), measured first in the same run:\n\n"
      << "                              measured    baseline       ratio\n";
  const auto ours = headline(measured), theirs = headline(baseline);
  for (std::size_t i = 0; i < ours.size(); ++i) {
    char line[160];
    std::snprintf(line, sizeof(line), "  %-26s %11.2f %11.2f %11.3f\n", ours[i].first.c_str(),
                  ours[i].second, theirs[i].second,
                  theirs[i].second != 0 ? ours[i].second / theirs[i].second : 0.0);
    out << line;
  }
  out << "\n" << format_pipeline_table(measured);
  return out.str();
}

std::string format_comparison_json(const PipelineFigures& measured, const PipelineFigures& baseline,
                                   const std::vector<std::string>& changes) {
  nlohmann::ordered_json ratios = nlohmann::ordered_json::object();
  const auto ours = headline(measured), theirs = headline(baseline);
  for (std::size_t i = 0; i < ours.size(); ++i) {
    ratios[ours[i].first] =
        rounded(theirs[i].second != 0 ? ours[i].second / theirs[i].second : 0.0, 4);
  }
  const nlohmann::ordered_json comparison = {
      {"baseline_settings", changes},
      {"ratio", ratios},
      {"measured", nlohmann::ordered_json::parse(format_pipeline_json(measured))},
      {"baseline", nlohmann::ordered_json::parse(format_pipeline_json(baseline))}};
  return comparison.dump(2) + "\n";
}

}  // namespace baton_app
