#include "gradient_reducer.h"

#include <ATen/ATen.h>

#include "baton/all_reduce.h"
#include "baton/log.h"
#include "baton/plan/gradient_reduction.h"
#include "baton/wait_notice.h"

namespace baton {

GradientReducer::GradientReducer(int pipeline_rank, int pipeline_ranks, int replica, int replicas,
                                 std::int64_t bucket_bytes, std::chrono::milliseconds timeout,
                                 StepSpans& spans)
    : pipeline_rank_(pipeline_rank),
      pipeline_ranks_(pipeline_ranks),
      replica_(replica),
      replicas_(replicas),
      bucket_bytes_(bucket_bytes),
      timeout_(timeout),
      spans_(spans) {}

GradientReducer::~GradientReducer() = default;

void GradientReducer::join(Transport* transport, const Plan& plan,
                           const std::map<int, std::shared_ptr<Stage>>& stages) {
  if (replicas_ <= 1 || !reduces_gradients(plan)) return;
  auto* reducer = dynamic_cast<AllReduceTransport*>(transport);
  if (reducer == nullptr) {
    throw Error("the plan reduces gradients across " + std::to_string(replicas_) +
                " replicas, but the transport cannot all-reduce (it is no "
                "baton::AllReduceTransport); use gloo, ucx or nccl, or one replica");
  }
  // The replicas of this pipeline rank: one per replica, the same column of each.
  std::vector<int> group;
  for (int replica = 0; replica < replicas_; ++replica) {
    group.push_back(replica * pipeline_ranks_ + pipeline_rank_);
  }
  {
    const WaitNotice notice("runtime", "the other replicas of pipeline rank " +
                                           std::to_string(pipeline_rank_) + " to join group " +
                                           format_group(group));
    group_ = reducer->join_group(group);
  }
  transport_ = reducer;
  allocate_buckets(stages);
  std::int64_t bucket_count = 0, bytes = 0;
  for (const auto& entry : buckets_) {
    for (const Bucket& bucket : entry.second) {
      ++bucket_count;
      bytes += bucket.flat.numel() * static_cast<std::int64_t>(bucket.flat.element_size());
    }
  }
  BATON_LOG_INFO("runtime", "gradients reduced with group " << format_group(group) << " in "
                                                            << bucket_count << " buckets ("
                                                            << bytes / 1024 << " KiB)");
}

// Buckets of each local stage's parameters: in their order, a new bucket at a change of
// dtype or when the next gradient would pass bucket_bytes (a larger one gets its own).
void GradientReducer::allocate_buckets(const std::map<int, std::shared_ptr<Stage>>& stages) {
  for (const auto& entry : stages) {
    std::vector<Bucket>& stage_buckets = buckets_[entry.first];
    std::int64_t bytes = 0;
    for (const auto& named : entry.second->named_parameters()) {
      const at::Tensor& param = named.second;
      const std::int64_t param_bytes =
          param.numel() * static_cast<std::int64_t>(param.element_size());
      if (stage_buckets.empty() ||
          stage_buckets.back().params.front().scalar_type() != param.scalar_type() ||
          bytes + param_bytes > bucket_bytes_) {
        stage_buckets.emplace_back();
        bytes = 0;
      }
      Bucket& bucket = stage_buckets.back();
      bucket.offsets.push_back(
          bucket.params.empty() ? 0 : bucket.offsets.back() + bucket.params.back().numel());
      bucket.params.push_back(param);
      bytes += param_bytes;
    }
    for (Bucket& bucket : stage_buckets) {
      const at::Tensor& last = bucket.params.back();
      bucket.flat = at::empty({bucket.offsets.back() + last.numel()}, last.options());
    }
  }
}

void GradientReducer::begin_step() {
  pending_.clear();
}

void GradientReducer::post(int stage, int timestep) {
  if (replicas_ <= 1) return;  // one replica: its gradients are the sum already
  if (transport_ == nullptr) throw Error("the plan reduces gradients but setup() joined no group");
  for (Bucket& bucket : buckets_.at(stage)) {
    for (std::size_t i = 0; i < bucket.params.size(); ++i) {
      const at::Tensor& grad = bucket.params[i].grad();
      at::Tensor slot = bucket.flat.narrow(0, bucket.offsets[i], bucket.params[i].numel());
      // A parameter the loss does not reach has no gradient on any replica: zeros keep the
      // buckets the same everywhere, and it keeps no gradient afterwards.
      if (grad.defined()) {
        slot.copy_(grad.reshape({-1}));
      } else {
        slot.zero_();
      }
    }
    pending_.push_back({&bucket, transport_->iallreduce(group_, {bucket.flat}), stage, timestep,
                        spans_.now(), -1.0});
  }
}

// A test() is a lock and a flag: cheap enough after every compute action while observed, so
// that a reduction span shows how long the all-reduce really took, not only what was left of
// it at the step's end.
void GradientReducer::poll() {
  for (Pending& pending : pending_) {
    if (pending.completed_at < 0 && pending.work->test()) pending.completed_at = spans_.now();
  }
}

double GradientReducer::finish() {
  if (pending_.empty()) return 0.0;
  const double waiting_since = spans_.now();
  for (Pending& pending : pending_) {
    try {
      const WaitNotice notice("runtime", "the gradient all-reduce of stage " +
                                             std::to_string(pending.stage) + " across " +
                                             std::to_string(replicas_) + " replicas");
      pending.work->wait(timeout_);
      if (pending.completed_at < 0) pending.completed_at = spans_.now();
    } catch (const std::exception& error) {
      throw ReductionFailure(pending.timestep,
                             "the all-reduce of stage " + std::to_string(pending.stage) +
                                 "'s gradients across the replicas failed: " + error.what());
    }
  }
  const double waited_until = spans_.now();
  spans_.add(SpanKind::kWaitReductions, waiting_since, waited_until);
  if (spans_.observed()) {
    for (const Pending& pending : pending_) {
      spans_.add(SpanKind::kReduction, pending.posted_at, pending.completed_at,
                 Action{pending.stage, ActionType::kReduceGrad, -1, {}});
    }
  }
  const double scale = 1.0 / replicas_;
  for (Pending& pending : pending_) {
    Bucket& bucket = *pending.bucket;
    bucket.flat.mul_(scale);
    for (std::size_t i = 0; i < bucket.params.size(); ++i) {
      at::Tensor grad = bucket.params[i].mutable_grad();
      if (!grad.defined()) continue;
      grad.copy_(
          bucket.flat.narrow(0, bucket.offsets[i], bucket.params[i].numel()).view(grad.sizes()));
    }
  }
  pending_.clear();
  return waited_until - waiting_since;
}

double GradientReducer::average_loss(double loss) {
  at::Tensor sum = at::full({1}, loss, at::kDouble);
  transport_->iallreduce(group_, {sum})->wait(timeout_);
  return sum.item<double>() / replicas_;
}

}  // namespace baton
