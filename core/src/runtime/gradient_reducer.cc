#include "gradient_reducer.h"

#include <ATen/ATen.h>

#include <algorithm>

#include "baton/all_reduce.h"
#include "baton/log.h"
#include "baton/plan/gradient_reduction.h"
#include "baton/wait_notice.h"

namespace baton {
namespace {

// As DDP: the first bucket of a stage is small, so the reduction starts soon after the
// backward reaches the stage's last parameters.
constexpr std::int64_t kFirstBucketBytes = std::int64_t{1} << 20;

bool computes_gradients(ActionType type) {
  return type == ActionType::kBackward || type == ActionType::kBackwardInput ||
         type == ActionType::kBackwardWeight;
}

}  // namespace

GradientReducer::GradientReducer(int pipeline_rank, int replicas, std::int64_t bucket_bytes,
                                 std::optional<c10::ScalarType> reduce_dtype, SyncGroups& groups,
                                 StepSpans& spans)
    : pipeline_rank_(pipeline_rank),
      replicas_(replicas),
      bucket_bytes_(bucket_bytes),
      reduce_dtype_(reduce_dtype),
      groups_(groups),
      spans_(spans) {}

GradientReducer::~GradientReducer() = default;

c10::ScalarType GradientReducer::travelling_dtype(c10::ScalarType gradient) const {
  return reduce_dtype_ && c10::isFloatingType(gradient) ? *reduce_dtype_ : gradient;
}

void GradientReducer::join(int replicas_group, const Plan& plan, const GradientHolders& holders,
                           const std::set<std::string>& left_out) {
  left_out_ = left_out;
  group_ = replicas_group;
  allocate_buckets(holders);
  find_last_backwards(plan);
  std::int64_t bucket_count = 0, bytes = 0;
  for (const auto& entry : buckets_) {
    for (const Bucket& bucket : entry.second) {
      ++bucket_count;
      bytes += bucket.flat.numel() * static_cast<std::int64_t>(bucket.flat.element_size());
    }
  }
  BATON_LOG_INFO("runtime",
                 "gradients of pipeline rank "
                     << pipeline_rank_ << " averaged over " << replicas_ << " replicas in "
                     << bucket_count << " buckets (" << bytes / 1024 << " KiB"
                     << (reduce_dtype_ ? std::string(", summed in ") + c10::toString(*reduce_dtype_)
                                       : std::string())
                     << ")");
}

// Buckets of each local stage's parameters, in reverse order (the backward finishes the last
// layers first): a new bucket at a change of dtype or when the next gradient would pass the
// bucket's size (a larger one gets its own); the first bucket takes at most 1 MiB.
void GradientReducer::allocate_buckets(const GradientHolders& holders) {
  for (const auto& entry : holders) {
    std::vector<Bucket>& stage_buckets = buckets_[entry.first];
    const auto& named = entry.second;
    std::vector<Slot>& slots = slots_[entry.first];
    slots.resize(named.size());
    std::int64_t bytes = 0;
    for (std::size_t k = named.size(); k-- > 0;) {
      if (left_out_.count(named[k].first) > 0) {
        slots[k] = Slot{kLeftOut, 0};
        continue;
      }
      const at::Tensor& param = named[k].second;
      // Bucket sizes count the bytes that travel.
      const std::int64_t param_bytes =
          param.numel() *
          static_cast<std::int64_t>(c10::elementSize(travelling_dtype(param.scalar_type())));
      const std::int64_t limit =
          stage_buckets.size() == 1 ? std::min(kFirstBucketBytes, bucket_bytes_) : bucket_bytes_;
      if (stage_buckets.empty() ||
          stage_buckets.back().params.front().scalar_type() != param.scalar_type() ||
          bytes + param_bytes > limit) {
        stage_buckets.emplace_back();
        bytes = 0;
      }
      Bucket& bucket = stage_buckets.back();
      slots[k] = Slot{stage_buckets.size() - 1, bucket.params.size()};
      bucket.offsets.push_back(
          bucket.params.empty() ? 0 : bucket.offsets.back() + bucket.params.back().numel());
      bucket.params.push_back(param);
      bytes += param_bytes;
    }
    for (Bucket& bucket : stage_buckets) {
      const at::Tensor& last = bucket.params.back();
      // Zeros: a frozen parameter's slot is never copied into and must sum to zero.
      bucket.flat = at::zeros({bucket.offsets.back() + last.numel()},
                              last.options().dtype(travelling_dtype(last.scalar_type())));
      for (const at::Tensor& param : bucket.params) {
        bucket.frozen.push_back(!param.requires_grad());
        bucket.frozen_count += bucket.frozen.back() ? 1 : 0;
      }
    }
  }
}

void GradientReducer::find_last_backwards(const Plan& plan) {
  const auto& steps = plan.rank_steps.at(static_cast<std::size_t>(pipeline_rank_));
  std::map<int, int> last;  // by stage: the latest backward seen so far
  for (std::size_t t = 0; t < steps.size(); ++t) {
    if (!steps[t]) continue;
    const Action& action = *steps[t];
    if (action.type == ActionType::kReduceGrad) {
      auto found = last.find(action.stage);
      if (found != last.end()) last_backward_of_[found->second].push_back(action.stage);
      last.erase(action.stage);
      continue;
    }
    if (computes_gradients(action.type)) last[action.stage] = static_cast<int>(t);
    for (const Action& part : action.sub_actions) {
      if (computes_gradients(part.type)) last[part.stage] = static_cast<int>(t);
    }
  }
}

void GradientReducer::begin_step() {
  pending_.clear();
  for (auto& entry : buckets_) {
    for (Bucket& bucket : entry.second) {
      // A frozen parameter counts as copied: it must not hold its bucket, and every later
      // one, back until REDUCE_GRAD.
      bucket.copied = bucket.frozen;
      bucket.copied_count = bucket.frozen_count;
      bucket.started = false;
    }
    next_bucket_[entry.first] = 0;
  }
}

void GradientReducer::before_compute(int timestep) {
  if (!active()) return;
  auto found = last_backward_of_.find(timestep);
  if (found == last_backward_of_.end()) return;
  listening_.insert(found->second.begin(), found->second.end());
  listening_timestep_ = timestep;
}

void GradientReducer::after_compute() {
  listening_.clear();
}

void GradientReducer::gradient_final(int stage, std::size_t param_index) {
  if (!listening_.count(stage)) return;
  const Slot& slot = slots_.at(stage).at(param_index);
  if (slot.bucket == kLeftOut) return;
  Bucket& bucket = buckets_.at(stage)[slot.bucket];
  if (bucket.started || bucket.copied[slot.index]) return;
  copy_gradient(bucket, slot.index);
  if (bucket.copied_count == bucket.params.size()) start_complete_buckets(stage);
}

void GradientReducer::copy_gradient(Bucket& bucket, std::size_t index) {
  const at::Tensor& param = bucket.params[index];
  const at::Tensor& grad = param.grad();
  at::Tensor slot = bucket.flat.narrow(0, bucket.offsets[index], param.numel());
  // A parameter the loss does not reach has no gradient on any replica: zeros keep the
  // buckets the same everywhere, and it keeps no gradient afterwards.
  if (grad.defined()) {
    slot.copy_(grad.reshape({-1}));
  } else {
    slot.zero_();
  }
  bucket.copied[index] = true;
  ++bucket.copied_count;
}

void GradientReducer::start(int stage, Bucket& bucket, int timestep, bool at_reduce_grad) {
  std::unique_ptr<Work> work;
  try {
    work = groups_.start(group_, {bucket.flat});
  } catch (const std::exception& error) {
    // Possibly inside the backward (an accumulator's hook): say what was being started.
    throw Error("starting the all-reduce of " + bucket_text(stage, bucket) +
                ") across the replicas failed: " + error.what());
  }
  pending_.push_back(
      {&bucket, std::move(work), stage, timestep, at_reduce_grad, spans_.now(), -1.0});
  bucket.started = true;
}

std::string GradientReducer::bucket_text(int stage, const Bucket& bucket) const {
  const std::vector<Bucket>& stage_buckets = buckets_.at(stage);
  return "stage " + std::to_string(stage) + "'s gradients (bucket " +
         std::to_string(static_cast<std::size_t>(&bucket - stage_buckets.data()) + 1) + " of " +
         std::to_string(stage_buckets.size());
}

void GradientReducer::start_complete_buckets(int stage) {
  std::vector<Bucket>& stage_buckets = buckets_.at(stage);
  std::size_t& next = next_bucket_[stage];
  while (next < stage_buckets.size() &&
         stage_buckets[next].copied_count == stage_buckets[next].params.size()) {
    start(stage, stage_buckets[next++], listening_timestep_, false);
  }
}

void GradientReducer::post(int stage, int timestep) {
  if (replicas_ <= 1) return;  // one replica: its gradients are the sum already
  if (!active()) throw Error("the plan reduces gradients but setup() joined no group");
  std::vector<Bucket>& stage_buckets = buckets_.at(stage);
  for (std::size_t& next = next_bucket_[stage]; next < stage_buckets.size(); ++next) {
    Bucket& bucket = stage_buckets[next];
    for (std::size_t i = 0; i < bucket.params.size(); ++i) {
      if (!bucket.copied[i]) copy_gradient(bucket, i);
    }
    start(stage, bucket, timestep, true);
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
      pending.work->wait(groups_.timeout());
      if (pending.completed_at < 0) pending.completed_at = spans_.now();
    } catch (const std::exception& error) {
      throw SyncFailure(pending.timestep,
                        "the all-reduce of " + bucket_text(pending.stage, *pending.bucket) +
                            (pending.at_reduce_grad ? ", started at REDUCE_GRAD"
                                                    : ", started in the stage's last backward") +
                            ") across the replicas failed: " + error.what());
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
  // The average written straight into each gradient: one pass over the bucket, not two.
  const at::Tensor scale = at::scalar_tensor(1.0 / replicas_, groups_.options(at::kDouble));
  for (Pending& pending : pending_) {
    Bucket& bucket = *pending.bucket;
    for (std::size_t i = 0; i < bucket.params.size(); ++i) {
      at::Tensor grad = bucket.params[i].mutable_grad();
      if (!grad.defined()) continue;
      const at::Tensor summed =
          bucket.flat.narrow(0, bucket.offsets[i], bucket.params[i].numel()).view(grad.sizes());
      if (summed.scalar_type() == grad.scalar_type()) {
        at::mul_out(grad, summed, scale);
      } else {
        // A bf16 sum: back into the gradient's dtype first, then the average taken there.
        grad.copy_(summed);
        grad.mul_(scale);
      }
    }
  }
  pending_.clear();
  return waited_until - waiting_since;
}

}  // namespace baton
