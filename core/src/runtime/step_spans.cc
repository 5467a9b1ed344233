#include "baton/runtime/step_spans.h"

namespace baton {

void StepSpans::start(int training_step) {
  compute_seconds_ = 0.0;
  comm_seconds_ = 0.0;
  listening_.clear();
  for (const auto& observer : observers_) {
    if (observer->listens()) listening_.push_back(observer.get());
  }
  for (StepObserver* observer : listening_) observer->step_started(training_step);
  start_ = std::chrono::steady_clock::now();
}

StepSpan StepSpans::make_span(SpanKind kind, double start, double end) {
  StepSpan span;
  span.kind = kind;
  span.start = start;
  span.end = end;
  return span;
}

void StepSpans::count(SpanKind kind, double seconds) {
  if (kind == SpanKind::kCompute) {
    compute_seconds_ += seconds;
  } else if (kind != SpanKind::kReduction) {  // beside the rank's work, not part of it
    comm_seconds_ += seconds;
  }
}

void StepSpans::tell(const StepSpan& span) const {
  for (StepObserver* observer : listening_) observer->span(span);
}

void StepSpans::add(SpanKind kind, double start, double end, const Action& action) {
  count(kind, end - start);
  if (!observed()) return;
  StepSpan span = make_span(kind, start, end);
  span.action = action;
  tell(span);
}

void StepSpans::add(SpanKind kind, double start, double end) {
  count(kind, end - start);
  if (observed()) tell(make_span(kind, start, end));
}

void StepSpans::add(SpanKind kind, double start, double end, const std::vector<Action>& transfers,
                    std::int64_t bytes_sent, std::int64_t bytes_received) {
  count(kind, end - start);
  if (!observed()) return;
  StepSpan span = make_span(kind, start, end);
  span.transfers = transfers;
  span.bytes_sent = bytes_sent;
  span.bytes_received = bytes_received;
  tell(span);
}

}  // namespace baton
