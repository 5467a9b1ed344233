#include "baton/runtime/step_observer.h"

#include <array>
#include <utility>

#include "baton/error.h"

namespace baton {
namespace {

constexpr std::array<std::pair<SpanKind, const char*>, 8> kSpanKindNames{{
    {SpanKind::kCompute, "compute"},
    {SpanKind::kPostTransfers, "post_transfers"},
    {SpanKind::kPostReceives, "post_receives"},
    {SpanKind::kPostReduction, "post_reduction"},
    {SpanKind::kWaitReceive, "wait_receive"},
    {SpanKind::kWaitSends, "wait_sends"},
    {SpanKind::kWaitReductions, "wait_reductions"},
    {SpanKind::kReduction, "reduction"},
}};

}  // namespace

StepObserver::~StepObserver() = default;

const char* span_kind_name(SpanKind kind) {
  for (const auto& [known, name] : kSpanKindNames) {
    if (known == kind) return name;
  }
  return "unknown";
}

SpanKind span_kind_from_name(const std::string& name) {
  std::string known_names;
  for (const auto& [kind, known] : kSpanKindNames) {
    if (name == known) return kind;
    known_names += std::string(known_names.empty() ? "" : ", ") + known;
  }
  throw Error("unknown span kind '" + name + "' (known: " + known_names + ")");
}

std::string describe_span(const StepSpan& span) {
  switch (span.kind) {
    case SpanKind::kCompute:
    case SpanKind::kPostReduction:
    case SpanKind::kReduction:
      return to_string(span.action);
    case SpanKind::kPostTransfers: {
      std::string names;
      for (const Action& transfer : span.transfers) {
        names += (names.empty() ? "" : " ") + to_string(transfer);
      }
      return names;
    }
    case SpanKind::kPostReceives:
      return "post receives";
    case SpanKind::kWaitReceive:
      return "wait " + to_string(span.action);
    case SpanKind::kWaitSends:
      return "wait sends";
    case SpanKind::kWaitReductions:
      return "wait REDUCE_GRAD";
  }
  return "";
}

}  // namespace baton
