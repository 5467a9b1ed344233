// GradientSync keeps every tensor of the synchronisation on the rank's device: NCCL refuses a
// CPU tensor, so a CPU scalar anywhere in the path (the norm's sum, the loss's average, the
// token count, a tie's checksum) would stop clipping, data parallelism and tied weights on a
// GPU. Here the device is LibTorch's lazy device on its TorchScript backend — not the CPU, so
// a CPU tensor is told apart, yet computed on the CPU, so it runs on any machine — and the
// all-reduce is a device-only one among four threads (PP2 x DP2) that refuses CPU tensors as
// NCCL does. What the sync computes is checked against the numbers worked out by hand.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <torch/csrc/lazy/ts_backend/ts_backend_impl.h>
#include <torch/torch.h>

#include <chrono>
#include <cmath>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "baton/all_reduce.h"
#include "baton/error.h"
#include "baton/plan/gradient_reduction.h"
#include "baton/plan/lower.h"
#include "baton/runtime/gradient_sync.h"
#include "baton/runtime/step_spans.h"
#include "baton/stage.h"
#include "plan_builders.h"

namespace {

using testing::HasSubstr;

c10::Device lazy_device() {
  static const bool ready = [] {
    torch::lazy::InitTorchScriptBackend();
    return true;
  }();
  (void)ready;
  return c10::Device(c10::kLazy);
}

class DoneWork : public baton::Work {
 public:
  void wait(std::chrono::milliseconds) override {}
  bool test() override { return true; }
};

// All-reduce among threads of one process, for tensors on one non-CPU device only.
class DeviceOnlyAllReduce {
 public:
  explicit DeviceOnlyAllReduce(c10::Device device) : device_(device) {}

  // Everyone joining `ranks` gets the same handle: the list's position among the lists joined.
  int join(const std::vector<int>& ranks) {
    std::lock_guard<std::mutex> lock(mutex_);
    for (std::size_t g = 0; g < groups_.size(); ++g) {
      if (groups_[g] == ranks) return static_cast<int>(g);
    }
    groups_.push_back(ranks);
    return static_cast<int>(groups_.size()) - 1;
  }

  void sum(int rank, int group, std::uint64_t sequence, const std::vector<at::Tensor>& tensors) {
    for (const at::Tensor& tensor : tensors) {
      if (tensor.device().type() != device_.type()) {
        throw baton::Error("rank " + std::to_string(rank) + " handed the all-reduce a tensor on " +
                           tensor.device().str() + "; this transport moves " + device_.str() +
                           " tensors only");
      }
    }
    std::unique_lock<std::mutex> lock(mutex_);
    Round& round = rounds_[{group, sequence}];
    if (round.sums.empty()) {
      for (const at::Tensor& tensor : tensors) round.sums.push_back(tensor.cpu().clone());
    } else {
      for (std::size_t i = 0; i < tensors.size(); ++i) round.sums[i] += tensors[i].cpu();
    }
    const std::size_t members = groups_.at(static_cast<std::size_t>(group)).size();
    ++round.arrived;
    changed_.notify_all();
    if (!changed_.wait_for(lock, std::chrono::seconds(60),
                           [&] { return round.arrived == members; })) {
      throw baton::Error("the all-reduce's other members never came");
    }
    for (std::size_t i = 0; i < tensors.size(); ++i) {
      at::Tensor target = tensors[i];
      target.copy_(round.sums[i].to(device_));
    }
  }

 private:
  struct Round {
    std::vector<at::Tensor> sums;
    std::size_t arrived = 0;
  };
  c10::Device device_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<std::vector<int>> groups_;
  std::map<std::pair<int, std::uint64_t>, Round> rounds_;
};

// One rank's view of the shared all-reduce.
class RankAllReduce : public baton::AllReduceTransport {
 public:
  RankAllReduce(DeviceOnlyAllReduce& shared, int rank) : shared_(shared), rank_(rank) {}
  int join_group(const std::vector<int>& ranks) override {
    const int group = shared_.join(ranks);
    sequences_[group] = 0;
    return group;
  }
  std::unique_ptr<baton::Work> iallreduce(int group,
                                          const std::vector<at::Tensor>& tensors) override {
    shared_.sum(rank_, group, ++sequences_[group], tensors);
    return std::make_unique<DoneWork>();
  }

 private:
  DeviceOnlyAllReduce& shared_;
  int rank_;
  std::map<int, std::uint64_t> sequences_;
};

// A stage that only holds parameters (the sync reads nothing else).
class ParameterStage : public baton::Stage {
 public:
  ParameterStage(int index, std::vector<std::pair<std::string, at::Tensor>> params)
      : index_(index), params_(std::move(params)) {}
  int index() const override { return index_; }
  std::string describe() const override { return "stage " + std::to_string(index_); }
  std::vector<at::Tensor> forward(const std::vector<at::Tensor>& inputs) override { return inputs; }
  std::vector<std::pair<std::string, at::Tensor>> named_parameters() const override {
    return params_;
  }
  void set_training(bool) override {}

 private:
  int index_;
  std::vector<std::pair<std::string, at::Tensor>> params_;
};

at::Tensor parameter(std::vector<std::int64_t> shape, c10::Device device) {
  return torch::zeros(shape, torch::TensorOptions().device(device)).requires_grad_(true);
}

struct RankOutcome {
  std::string error;
  baton::SyncResult result;
  std::int64_t targets = 0;
  std::map<std::string, at::Tensor> grads;  // on the CPU, after the step
};

// Rank `rank` of PP2 x DP2: stage p holds layer<p>.weight; stage 0 the embedding, stage 1 the
// head tied to it. Each parameter's gradient is (replica + 1) x (p + 1) everywhere; the tied
// copies' are that of their stage.
RankOutcome run_rank(DeviceOnlyAllReduce& shared, int rank, c10::Device device) {
  RankOutcome outcome;
  try {
    const baton::Topology topology{2, 2};
    const int replica = topology.replica_of(rank), p = topology.pipeline_rank_of(rank);
    const baton::Plan plan =
        baton::add_gradient_reduction(baton::lower(baton::testing::gpipe_plan(2, 2)));
    const std::string tied = p == 0 ? "embed.weight" : "head.weight";
    std::vector<std::pair<std::string, at::Tensor>> params = {
        {"layer" + std::to_string(p) + ".weight", parameter({3, 4}, device)},
        {tied, parameter({4}, device)}};
    std::map<int, std::shared_ptr<baton::Stage>> stages = {
        {p, std::make_shared<ParameterStage>(p, params)}};

    RankAllReduce all_reduce(shared, rank);
    baton::GradientSyncOptions options;
    options.all_reduce = &all_reduce;
    options.measure_norm = true;
    options.tied_parameters = {{{"embed.weight", "head.weight"}, {0, 1}}};
    baton::StepSpans spans({});
    baton::GradientSync sync(
        baton::SyncPlace{topology, replica, p, device, std::chrono::seconds(60)}, options, spans);
    sync.join(plan, stages);
    sync.begin_step();
    outcome.targets = sync.sum_targets(5 + replica);

    // The rank's column: its last backward hands the gradients over from their accumulators'
    // hooks, REDUCE_GRAD starts what is left.
    const double value = (replica + 1) * (p + 1);
    const auto& column = plan.rank_steps.at(static_cast<std::size_t>(p));
    int last = 0, last_backward = -1;
    for (std::size_t t = 0; t < column.size(); ++t) {
      if (column[t] && column[t]->type == baton::ActionType::kBackward) {
        last_backward = static_cast<int>(t);
      }
    }
    for (std::size_t t = 0; t < column.size(); ++t) {
      if (!column[t]) continue;
      last = static_cast<int>(t);
      if (column[t]->type == baton::ActionType::kReduceGrad) {
        sync.post(column[t]->stage, static_cast<int>(t));
      } else if (static_cast<int>(t) == last_backward) {
        sync.before_compute(static_cast<int>(t));
        at::Tensor loss = torch::zeros({}, torch::TensorOptions().device(device));
        for (const auto& named : params) loss = loss + (named.second * value).sum();
        loss.backward();
        sync.after_compute();
      }
    }
    outcome.result =
        sync.finish(last, p == 1 ? std::optional<double>(replica + 1.0) : std::nullopt);
    for (const auto& named : params) outcome.grads[named.first] = named.second.grad().cpu();
    sync.check_tied_copies();
  } catch (const std::exception& error) {
    outcome.error = error.what();
  }
  return outcome;
}

std::vector<RankOutcome> run_world(c10::Device device) {
  DeviceOnlyAllReduce shared(device);
  std::vector<RankOutcome> outcomes(4);
  std::vector<std::thread> threads;
  for (int rank = 0; rank < 4; ++rank) {
    threads.emplace_back([&, rank] { outcomes[rank] = run_rank(shared, rank, device); });
  }
  for (std::thread& thread : threads) thread.join();
  return outcomes;
}

TEST(GradientSyncOnADevice, EveryCollectiveTensorIsOnTheRanksDeviceAndTheSumsAreRight) {
  const std::vector<RankOutcome> outcomes = run_world(lazy_device());
  // After the replicas' average: stage p's weight (1.5 x (p + 1)); the tie: both holders' sum.
  const double tie = 1.5 * 1 + 1.5 * 2;
  // The norm counts layer0 (12 x 1.5), layer1 (12 x 3) and the tie once (4 x 4.5).
  const double norm = std::sqrt(12 * 1.5 * 1.5 + 12 * 3.0 * 3.0 + 4 * tie * tie);
  for (int rank = 0; rank < 4; ++rank) {
    const RankOutcome& outcome = outcomes[rank];
    ASSERT_EQ(outcome.error, "") << "rank " << rank;
    const int p = rank % 2;
    EXPECT_EQ(outcome.targets, 5 + 6) << "rank " << rank;
    ASSERT_TRUE(outcome.result.has_norm);
    // Each tensor's norm is taken in float32, its gradients' dtype (as clip_grad_norm_ does):
    // a sum of at most 12 squares, each step rounding by 2^-24, bounds it well within 1e-6.
    EXPECT_NEAR(outcome.result.norm, norm, 1e-6 * norm) << "rank " << rank;
    if (p == 1) {
      EXPECT_DOUBLE_EQ(outcome.result.loss, 1.5) << "rank " << rank;
    }
    const at::Tensor layer = outcome.grads.at("layer" + std::to_string(p) + ".weight");
    EXPECT_TRUE(torch::equal(layer, torch::full({3, 4}, 1.5 * (p + 1)))) << "rank " << rank;
    const at::Tensor copy = outcome.grads.at(p == 0 ? "embed.weight" : "head.weight");
    EXPECT_TRUE(torch::equal(copy, torch::full({4}, tie))) << "rank " << rank;
  }
}

// The fake itself: a CPU tensor is refused, so a sync that made one would fail above.
TEST(GradientSyncOnADevice, TheDeviceOnlyAllReduceRefusesCpuTensors) {
  DeviceOnlyAllReduce shared(lazy_device());
  RankAllReduce all_reduce(shared, 0);
  const int group = all_reduce.join_group({0});
  try {
    all_reduce.iallreduce(group, {torch::zeros({1})});
    FAIL() << "a CPU tensor was summed";
  } catch (const baton::Error& error) {
    EXPECT_THAT(error.what(), HasSubstr("a tensor on cpu; this transport moves lazy"));
  }
}

}  // namespace
