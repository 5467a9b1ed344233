#include "progress.h"

#include <fcntl.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "baton/error.h"
#include "baton/files.h"
#include "baton/store.h"
#include "baton/store_keys.h"
#include "run_curves.h"

namespace baton_app {
namespace {

std::string format_duration(double seconds) {
  const long total = static_cast<long>(std::lround(seconds));
  char text[32];
  std::snprintf(text, sizeof(text), "%ld:%02ld", total / 60, total % 60);
  return text;
}

std::vector<std::uint8_t> encode(const std::vector<double>& values) {
  std::vector<std::uint8_t> bytes(values.size() * sizeof(double));
  if (!values.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

std::vector<double> decode(const std::vector<std::uint8_t>& bytes) {
  std::vector<double> values(bytes.size() / sizeof(double));
  if (!values.empty()) std::memcpy(values.data(), bytes.data(), values.size() * sizeof(double));
  return values;
}

constexpr std::chrono::milliseconds kGatherTimeout(60000);

}  // namespace

Progress::Progress(const ProgressSettings& settings, const WorldInfo& world,
                   std::shared_ptr<baton::Store> store, int steps, const baton::Plan& plan,
                   std::string header_json)
    : world_(world),
      store_(std::move(store)),
      steps_(steps),
      log_every_(settings.log_every),
      last_stage_here_(plan.stage_to_rank.back() == world.pipeline_rank),
      terminal_(::isatty(STDOUT_FILENO) != 0),
      header_(std::move(header_json)) {
  if (world_.rank == 0) {
    baton::make_folders(settings.run_dir, "run");
    metrics_path_ = settings.run_dir + "/metrics.jsonl";
  }
  worker_ = std::thread([this] { work(); });
}

Progress::~Progress() {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    closing_ = true;
    abandoned_ = true;
  }
  wake_.notify_all();
  if (worker_.joinable()) worker_.join();
  if (metrics_fd_ >= 0) ::close(metrics_fd_);
}

void Progress::resume_after(int step) {
  if (world_.rank != 0 || step <= 0) return;
  const auto earlier = baton::read_file_if_present(metrics_path_, "the run's metrics");
  if (!earlier) return;
  std::istringstream file(*earlier);
  // Lines of the steps already done are kept; a damaged line (a run killed mid-write) or a
  // later step's is dropped.
  for (std::string line; std::getline(file, line);) {
    const nlohmann::json record = nlohmann::json::parse(line, nullptr, false);
    if (record.is_object() && record.contains("step") && record["step"].is_number_integer() &&
        record["step"].get<int>() <= step) {
      earlier_metrics_ += line + "\n";
    }
  }
}

std::vector<std::uint8_t> Progress::wait_for_key(const std::string& key) {
  // In short slices, so that a run that fails (the destructor without finish()) does not
  // wait out the whole timeout for a rank that will never report.
  const auto deadline = std::chrono::steady_clock::now() + kGatherTimeout;
  for (;;) {
    try {
      return store_->get(key, std::chrono::milliseconds(200));
    } catch (const baton::StoreError&) {
      if (std::chrono::steady_clock::now() >= deadline || abandoned_) throw;
    }
  }
}

std::vector<Progress::RankTime> Progress::gather_on_rank0(const Report& report, double* loss,
                                                          double* counted_targets,
                                                          double* eval_loss) {
  const std::string prefix = baton::store_keys::progress_prefix(report.step);
  if (world_.rank != 0) {
    if (store_) {
      store_->set(
          prefix + std::to_string(world_.rank),
          encode({report.compute, report.comm, report.executor_seconds, report.exposed_reduce,
                  report.loss, report.counted_targets, report.eval_loss}));
    }
    return {};
  }
  *loss = report.loss;
  *counted_targets = report.counted_targets;
  *eval_loss = report.eval_loss;
  std::vector<RankTime> times(static_cast<std::size_t>(world_.world_size));
  times[0] = {report.compute, report.comm, report.executor_seconds, report.exposed_reduce};
  for (int rank = 1; rank < world_.world_size && store_; ++rank) {
    const auto values = decode(wait_for_key(prefix + std::to_string(rank)));
    // Read once: a long run's per-step keys must not pile up in the store.
    store_->remove(prefix + std::to_string(rank));
    if (values.size() != 7) continue;
    times[static_cast<std::size_t>(rank)] = {values[0], values[1], values[2], values[3]};
    if (std::isnan(*loss)) *loss = values[4];
    if (std::isnan(*counted_targets)) *counted_targets = values[5];
    if (std::isnan(*eval_loss)) *eval_loss = values[6];
  }
  return times;
}

void Progress::step_done(int step, const baton::StepResult& result, double seconds,
                         std::int64_t samples, std::int64_t tokens, double lr, double eval_loss,
                         const LossScaleReport& loss_scale) {
  // The loss slot is NaN unless this rank computed the loss (it holds the last stage).
  const bool holds_loss = last_stage_here_ && result.has_loss;
  const double loss = holds_loss ? result.loss : NAN;
  const double counted =
      holds_loss && result.counted_targets > 0 ? static_cast<double>(result.counted_targets) : NAN;
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (failure_) std::rethrow_exception(failure_);
    queue_.push_back({step, result.compute_seconds, result.comm_seconds, result.step_seconds,
                      result.exposed_reduce_seconds, loss, seconds, samples, tokens, lr,
                      result.has_grad_norm ? result.grad_norm : NAN, counted,
                      last_stage_here_ ? eval_loss : NAN, loss_scale});
  }
  wake_.notify_one();
}

void Progress::work() {
  for (;;) {
    Report report{};
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [this] { return closing_ || !queue_.empty(); });
      if (queue_.empty()) return;
      report = queue_.front();
      queue_.pop_front();
      if (failure_) continue;  // drain: nothing more is reported after a failure
    }
    try {
      handle(report);
    } catch (...) {
      const std::lock_guard<std::mutex> lock(mutex_);
      failure_ = std::current_exception();
    }
  }
}

void Progress::handle(const Report& report) {
  double loss = NAN;
  double counted_targets = NAN;
  double eval_loss = NAN;
  std::vector<RankTime> times = gather_on_rank0(report, &loss, &counted_targets, &eval_loss);
  if (world_.rank != 0) return;
  const int step = report.step;
  const double seconds = report.seconds;
  elapsed_ += seconds;
  double compute = 0, slowest = 0;
  for (const auto& time : times) {
    compute += time.compute;
    slowest = std::max(slowest, time.step);
  }
  const double bubble =
      slowest > 0 ? std::max(0.0, 1.0 - compute / (slowest * static_cast<double>(times.size())))
                  : 0.0;
  lines_.push_back({step, loss, report.lr, report.grad_norm, counted_targets, eval_loss, seconds,
                    report.samples / std::max(seconds, 1e-9),
                    report.tokens / std::max(seconds, 1e-9), bubble, std::move(times),
                    report.loss_scale});
  append_metrics(lines_.back());
  const double eta = elapsed_ / static_cast<double>(lines_.size()) * (steps_ - step);
  char text[288];
  const Line& line = lines_.back();
  const double rate = line.tokens_per_second > 0 ? line.tokens_per_second : line.samples_per_second;
  // The recipe's figures: the step's lr, and the gradient's norm where it is measured.
  char recipe[160] = "";
  if (std::isfinite(line.lr)) std::snprintf(recipe, sizeof(recipe), "  lr %.3g", line.lr);
  if (std::isfinite(line.grad_norm)) {
    const std::size_t used = std::strlen(recipe);
    std::snprintf(recipe + used, sizeof(recipe) - used, "  grad norm %.3g", line.grad_norm);
  }
  if (std::isfinite(line.eval_loss)) {
    const std::size_t used = std::strlen(recipe);
    std::snprintf(recipe + used, sizeof(recipe) - used, "  eval loss %.4f", line.eval_loss);
  }
  if (line.loss_scale.enabled) {
    const std::size_t used = std::strlen(recipe);
    std::snprintf(recipe + used, sizeof(recipe) - used, "  loss scale %g%s", line.loss_scale.scale,
                  line.loss_scale.skipped ? " (overflow: skipped)" : "");
  }
  std::snprintf(text, sizeof(text), "step %d/%d  loss %.4f%s  %.1f %s/s  bubble %.0f%%  eta %s",
                step, steps_, loss, recipe, rate, line.tokens_per_second > 0 ? "tokens" : "samples",
                100 * bubble, format_duration(eta).c_str());
  if (terminal_) {
    const int width = 24;
    const int filled = width * step / steps_;
    std::cout << "\r[" << std::string(filled, '#') << std::string(width - filled, '.') << "] "
              << text << std::flush;
  } else if (step % log_every_ == 0 || step == steps_ || step == 1 ||
             std::isfinite(line.eval_loss) || line.loss_scale.skipped) {
    std::cout << text << std::endl;
  }
}

void Progress::rethrow_failure() {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    closing_ = true;
  }
  wake_.notify_all();
  if (worker_.joinable()) worker_.join();
  if (failure_) std::rethrow_exception(failure_);
}

void Progress::finish(const std::string& trace_path) {
  rethrow_failure();
  if (world_.rank != 0) return;
  if (terminal_) std::cout << "\n";
  if (!lines_.empty()) {
    std::cout << "done: " << lines_.size() << (lines_.size() == 1 ? " step" : " steps") << " in "
              << format_duration(elapsed_) << ", loss " << lines_.front().loss << " -> "
              << lines_.back().loss;
    const LossScaleReport& scaling = lines_.back().loss_scale;
    if (scaling.enabled && scaling.skipped_steps > 0) {
      std::cout << ", " << scaling.skipped_steps << " step"
                << (scaling.skipped_steps == 1 ? "" : "s") << " skipped (a gradient overflowed)";
    }
    std::cout << "; metrics: " << metrics_path_ << std::endl;
  }
  // The run read from its curves; a figure that cannot be drawn does not fail the run.
  try {
    const std::string run_dir = metrics_path_.substr(0, metrics_path_.find_last_of('/'));
    std::cout << "curves: " << write_run_curves(run_dir) << std::endl;
  } catch (const std::exception& error) {
    std::cerr << "warning: no curves.svg: " << error.what() << std::endl;
  }
  if (!trace_path.empty()) {
    std::cout << "trace: " << trace_path << " (open in https://ui.perfetto.dev), picture: "
              << std::filesystem::path(trace_path).replace_extension(".svg").string() << std::endl;
  }
}

void Progress::append_metrics(const Line& line) {
  if (metrics_fd_ < 0) {
    std::string start = header_.empty() ? std::string() : header_ + "\n";
    baton::write_file_atomically(metrics_path_, start + earlier_metrics_);
    metrics_fd_ = ::open(metrics_path_.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
    if (metrics_fd_ < 0) {
      throw baton::Error("cannot append to '" + metrics_path_ + "': " + std::strerror(errno));
    }
  }
  nlohmann::ordered_json ranks = nlohmann::ordered_json::array();
  for (std::size_t r = 0; r < line.ranks.size(); ++r) {
    const RankTime& time = line.ranks[r];
    nlohmann::ordered_json entry = {
        {"rank", r},
        {"compute_s", time.compute},
        {"comm_s", time.comm},
        {"idle_s", std::max(0.0, time.step - time.compute - time.comm)},
        // The rank's own step time, which the bubble is computed from: idle_s alone cannot
        // give it back where posting overlapped compute and idle shows as 0.
        {"step_s", time.step}};
    if (world_.replicas > 1) {
      // Which replica, and how long it waited for the gradient all-reduces at the step's end.
      entry["replica"] = world_.topology().replica_of(static_cast<int>(r));
      entry["exposed_reduce_s"] = time.exposed_reduce;
    }
    ranks.push_back(std::move(entry));
  }
  nlohmann::ordered_json record = {{"step", line.step}};
  record["loss"] = std::isfinite(line.loss) ? nlohmann::ordered_json(line.loss) : nullptr;
  if (std::isfinite(line.lr)) record["lr"] = line.lr;
  if (std::isfinite(line.grad_norm)) record["grad_norm"] = line.grad_norm;
  if (std::isfinite(line.eval_loss)) record["eval_loss"] = line.eval_loss;
  if (line.loss_scale.enabled) {
    record["loss_scale"] = line.loss_scale.scale;
    record["skipped"] = line.loss_scale.skipped;
    record["skipped_steps"] = line.loss_scale.skipped_steps;
  }
  if (std::isfinite(line.counted_targets)) {
    record["counted_targets"] = static_cast<std::int64_t>(line.counted_targets);
  }
  record["step_time_s"] = line.seconds;
  record["samples_per_s"] = line.samples_per_second;
  if (line.tokens_per_second > 0) record["tokens_per_s"] = line.tokens_per_second;
  record["bubble"] = line.bubble;
  record["ranks"] = std::move(ranks);
  // One write() per line with O_APPEND: a crash leaves at most a partial last line, which a
  // resumed run drops (resume_after).
  if (!baton::write_fully(metrics_fd_, record.dump() + "\n")) {
    throw baton::Error("cannot append to '" + metrics_path_ + "': " + std::strerror(errno));
  }
}

}  // namespace baton_app
