#include "pipeline_record.h"

#include <sys/resource.h>

#include <algorithm>
#include <sstream>
#include <tuple>
#include <utility>

#include <nlohmann/json.hpp>

#include "baton/error.h"
#include "baton/files.h"
#include "baton/runtime/transfer_probe.h"
#include "heap_in_use.h"
#include "training/rank_pipeline.h"

namespace baton_app {

namespace {

nlohmann::json span_json(const baton::StepSpan& span) {
  nlohmann::json json = {
      {"kind", baton::span_kind_name(span.kind)}, {"start", span.start}, {"end", span.end}};
  if (!span.transfers.empty()) {
    nlohmann::json transfers = nlohmann::json::array();
    for (const baton::Action& transfer : span.transfers) {
      transfers.push_back(baton::to_string(transfer));
    }
    json["transfers"] = std::move(transfers);
  } else if (span.kind != baton::SpanKind::kWaitSends &&
             span.kind != baton::SpanKind::kWaitReductions) {
    json["action"] = baton::to_string(span.action);
  }
  return json;
}

baton::StepSpan span_from_json(const nlohmann::json& json) {
  baton::StepSpan span;
  span.kind = baton::span_kind_from_name(json.at("kind").get<std::string>());
  span.start = json.at("start").get<double>();
  span.end = json.at("end").get<double>();
  if (json.contains("action")) span.action = baton::parse_action(json["action"].get<std::string>());
  if (json.contains("transfers")) {
    for (const auto& transfer : json["transfers"]) {
      span.transfers.push_back(baton::parse_action(transfer.get<std::string>()));
    }
  }
  return span;
}

}  // namespace

// Gathers the executor's spans of the step under way, and samples the heap after each
// compute action (the point where a step holds the most). The spans' storage is reused from
// step to step: the record keeps each step as text, one block, because thousands of small
// blocks kept from every step of a run (a span's transfers) would split the heap's free space
// between the steps' large tensors, and the heap (so the resident memory the bench reports)
// would grow every step.
class PipelineRecorder::SpanCollector : public baton::StepObserver {
 public:
  void step_started(int /*training_step*/) override {
    spans_.clear();
    peak_heap_bytes_ = 0;
    start_heap_bytes_ = heap_bytes_in_use();
  }
  void span(const baton::StepSpan& span) override {
    if (span.kind == baton::SpanKind::kCompute) {
      peak_heap_bytes_ = std::max(peak_heap_bytes_, heap_bytes_in_use());
    }
    spans_.push_back(span);
  }
  const std::vector<baton::StepSpan>& spans() const { return spans_; }
  std::int64_t peak_heap_bytes() const { return peak_heap_bytes_; }
  std::int64_t start_heap_bytes() const { return start_heap_bytes_; }

 private:
  std::vector<baton::StepSpan> spans_;
  std::int64_t peak_heap_bytes_ = 0;
  std::int64_t start_heap_bytes_ = 0;
};

// One stage-boundary message (stage 0's output, which stage 1 on rank 1 receives), timed as
// a ping-pong between ranks 0 and 1 (pipeline ranks 0 and 1 of replica 0, whatever the
// replicas) over the run's transport; -1 where this rank takes no part.
static std::pair<std::int64_t, double> probe_stage_boundary(const TrainedRank& trained) {
  const baton::Plan& plan = trained.pipeline.plan.plan();
  const int rank = trained.world.rank;
  baton::Transport* transport = trained.pipeline.transport.get();
  if (!transport || rank > 1 || plan.num_stages < 2 || plan.stage_to_rank.at(1) != 1) {
    return {0, -1.0};
  }
  const baton::PipelineExecutor& executor = *trained.pipeline.executor;
  std::int64_t bytes = 0;
  for (const auto& meta : rank == 0 ? executor.output_metas(0) : executor.input_metas(1)) {
    std::int64_t elements = 1;
    for (const std::int64_t size : meta.shape) elements *= size;
    // As it crosses: precision.wire's dtype for a floating tensor.
    const at::ScalarType crossing = trained.pipeline.wire && c10::isFloatingType(meta.dtype)
                                        ? *trained.pipeline.wire
                                        : meta.dtype;
    bytes += elements * static_cast<std::int64_t>(c10::elementSize(crossing));
  }
  const double seconds =
      baton::probe_one_way_seconds(*transport, 1 - rank, rank == 0, bytes, 50, trained.timeout);
  return {bytes, rank == 0 ? seconds : -1.0};
}

class PipelineRecorder::LoopListener : public TrainingObserver {
 public:
  explicit LoopListener(PipelineRecorder& recorder) : recorder_(recorder) {}

  void step_ended(int step, double started_s, double seconds,
                  const baton::StepResult& result) override {
    nlohmann::json spans = nlohmann::json::array();
    for (const baton::StepSpan& span : recorder_.collector_->spans()) {
      spans.push_back(span_json(span));
    }
    const nlohmann::json recorded = {{"step", step},
                                     {"started_s", started_s},
                                     {"seconds", seconds},
                                     {"executor_seconds", result.step_seconds},
                                     {"peak_activations", result.peak_activations},
                                     {"peak_heap_bytes", recorder_.collector_->peak_heap_bytes()},
                                     {"start_heap_bytes", recorder_.collector_->start_heap_bytes()},
                                     {"spans", std::move(spans)}};
    if (!recorder_.steps_text_.empty()) recorder_.steps_text_ += ',';
    recorder_.steps_text_ += recorded.dump();
  }

  void trained(const TrainedRank& rank) override {
    std::tie(recorder_.probe_bytes_, recorder_.probe_one_way_s_) = probe_stage_boundary(rank);
  }

 private:
  PipelineRecorder& recorder_;
};

PipelineRecorder::PipelineRecorder(std::string path)
    : path_(std::move(path)),
      collector_(std::make_shared<SpanCollector>()),
      listener_(std::make_shared<LoopListener>(*this)) {}

PipelineRecorder::~PipelineRecorder() = default;

void PipelineRecorder::attach(TrainOptions* options) {
  options->step_observers.push_back(collector_);
  options->training_observers.push_back(listener_);
}

void PipelineRecorder::write() const {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  nlohmann::json tail = {// ru_maxrss is in KiB
                         {"peak_rss_bytes", static_cast<std::int64_t>(usage.ru_maxrss) * 1024}};
  if (probe_one_way_s_ >= 0) {
    tail["probe"] = {{"bytes", probe_bytes_}, {"one_way_s", probe_one_way_s_}};
  }
  // {"steps": [...], <tail's members>}
  const std::string members = tail.dump();
  baton::write_file_atomically(path_,
                               "{\"steps\":[" + steps_text_ + "]," + members.substr(1) + "\n");
}

PipelineRecord read_pipeline_record(const std::string& path) {
  const auto text = baton::read_file_if_present(path, "bench pipeline: a rank's record");
  if (!text) throw baton::Error("bench pipeline: a rank wrote no record to '" + path + "'");
  PipelineRecord record;
  try {
    const nlohmann::json json = nlohmann::json::parse(*text);
    for (const auto& entry : json.at("steps")) {
      RecordedStep step;
      step.step = entry.at("step").get<int>();
      step.started_s = entry.at("started_s").get<double>();
      step.seconds = entry.at("seconds").get<double>();
      step.executor_seconds = entry.at("executor_seconds").get<double>();
      step.peak_activations = entry.at("peak_activations").get<int>();
      step.peak_heap_bytes = entry.at("peak_heap_bytes").get<std::int64_t>();
      step.start_heap_bytes = entry.at("start_heap_bytes").get<std::int64_t>();
      for (const auto& span : entry.at("spans")) step.spans.push_back(span_from_json(span));
      record.steps.push_back(std::move(step));
    }
    record.peak_rss_bytes = json.at("peak_rss_bytes").get<std::int64_t>();
    if (json.contains("probe")) {
      record.probe_bytes = json["probe"].at("bytes").get<std::int64_t>();
      record.probe_one_way_s = json["probe"].at("one_way_s").get<double>();
    }
  } catch (const std::exception& error) {
    throw baton::Error("bench pipeline: '" + path + "' is not a rank's record: " + error.what());
  }
  return record;
}

}  // namespace baton_app
