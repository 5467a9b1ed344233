#include "pipeline_record.h"

#include <sys/resource.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "baton/error.h"
#include "baton/files.h"

namespace baton_app {

void PipelineRecorder::attach(TrainOptions* options) {
  options->record_timeline = true;
  options->sample_heap = true;
  options->on_step = [this](int step, double started_s, double seconds,
                            const baton::StepResult& result) {
    RecordedStep recorded{step,
                          started_s,
                          seconds,
                          result.step_seconds,
                          result.peak_activations,
                          result.peak_heap_bytes,
                          {}};
    for (const auto& span : result.timeline) {
      recorded.spans.push_back({static_cast<int>(span.kind), span.name, span.start, span.end});
    }
    record_.steps.push_back(std::move(recorded));
  };
  options->on_transfer_probe = [this](std::int64_t bytes, double seconds) {
    record_.probe_bytes = bytes;
    record_.probe_one_way_s = seconds;
  };
}

void PipelineRecorder::write() const {
  std::ostringstream out;
  char line[160];
  for (const auto& step : record_.steps) {
    std::snprintf(line, sizeof(line), "step %d %.9f %.9f %.9f %d %lld\n", step.step, step.started_s,
                  step.seconds, step.executor_seconds, step.peak_activations,
                  static_cast<long long>(step.peak_heap_bytes));
    out << line;
    for (const auto& span : step.spans) {
      std::snprintf(line, sizeof(line), "span %d %.9f %.9f ", span.kind, span.start, span.end);
      out << line << span.name << "\n";
    }
  }
  if (record_.probe_one_way_s >= 0) {
    std::snprintf(line, sizeof(line), "probe %lld %.9f\n",
                  static_cast<long long>(record_.probe_bytes), record_.probe_one_way_s);
    out << line;
  }
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  out << "rss " << static_cast<long long>(usage.ru_maxrss) * 1024 << "\n";  // ru_maxrss: KiB
  baton::write_file_atomically(path_, out.str());
}

PipelineRecord read_pipeline_record(const std::string& path) {
  std::ifstream file(path);
  if (!file) throw baton::Error("bench pipeline: a rank wrote no record to '" + path + "'");
  PipelineRecord record;
  int number = 0;
  for (std::string line; std::getline(file, line);) {
    ++number;
    std::istringstream in(line);
    std::string word;
    in >> word;
    bool ok = true;
    if (word == "step") {
      RecordedStep step;
      long long heap = 0;
      ok = static_cast<bool>(in >> step.step >> step.started_s >> step.seconds >>
                             step.executor_seconds >> step.peak_activations >> heap);
      step.peak_heap_bytes = heap;
      record.steps.push_back(step);
    } else if (word == "span" && !record.steps.empty()) {
      RecordedSpan span;
      ok = static_cast<bool>(in >> span.kind >> span.start >> span.end);
      in.get();  // the space before the name
      std::getline(in, span.name);
      record.steps.back().spans.push_back(span);
    } else if (word == "rss") {
      long long bytes = 0;
      ok = static_cast<bool>(in >> bytes);
      record.peak_rss_bytes = bytes;
    } else if (word == "probe") {
      long long bytes = 0;
      ok = static_cast<bool>(in >> bytes >> record.probe_one_way_s);
      record.probe_bytes = bytes;
    } else {
      ok = false;
    }
    if (!ok) {
      throw baton::Error("bench pipeline: '" + path + "' line " + std::to_string(number) +
                         " is malformed: " + line);
    }
  }
  return record;
}

}  // namespace baton_app
