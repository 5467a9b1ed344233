#include "gradient_norm.h"

#include <ATen/ATen.h>

#include <cmath>
#include <set>
#include <vector>

#include "baton/all_reduce.h"
#include "baton/error.h"
#include "baton/wait_notice.h"

namespace baton {

GradientNorm::GradientNorm(const Topology& topology, int replica, int pipeline_rank,
                           std::chrono::milliseconds timeout)
    : topology_(topology), replica_(replica), pipeline_rank_(pipeline_rank), timeout_(timeout) {}

GradientNorm::~GradientNorm() = default;

void GradientNorm::join(AllReduceTransport* all_reduce,
                        const std::map<int, std::shared_ptr<Stage>>& stages,
                        const std::set<std::string>& counted_elsewhere) {
  // A tensor two local stages share (a tie within this rank) is counted once.
  std::set<const void*> seen;
  for (const auto& entry : stages) {
    for (const auto& [name, param] : entry.second->named_parameters()) {
      if (counted_elsewhere.count(name) > 0) continue;
      if (seen.insert(param.unsafeGetTensorImpl()).second) counted_.push_back(param);
    }
  }
  if (topology_.pipeline_ranks <= 1) return;
  if (all_reduce == nullptr) {
    throw Error(
        "optimizer.clip_grad_norm needs the norm of the whole model's gradient, summed over "
        "the pipeline's " +
        std::to_string(topology_.pipeline_ranks) +
        " ranks, but the transport cannot all-reduce (its plugin does not list "
        "baton.all_reduce); use gloo, ucx or nccl, or turn clipping off");
  }
  const std::vector<int> group = topology_.pipeline_of(replica_);
  const WaitNotice notice("runtime", "the other ranks of pipeline rank " +
                                         std::to_string(pipeline_rank_) + "'s pipeline to join " +
                                         format_group(group) + " (the gradient's norm)");
  group_ = all_reduce->join_group(group);
  transport_ = all_reduce;
}

double GradientNorm::measure() {
  // Each tensor's norm in its own dtype, as clip_grad_norm_ takes them (no copy of a
  // gradient, one kernel launch for all); their squares added in double.
  std::vector<at::Tensor> grads;
  for (const at::Tensor& param : counted_) {
    if (param.grad().defined()) grads.push_back(param.grad());
  }
  double squares = 0.0;
  if (!grads.empty()) {
    squares = at::stack(at::_foreach_norm(grads, 2)).to(at::kDouble).pow(2).sum().item<double>();
  }
  at::Tensor sum = at::full({1}, squares, at::kDouble);
  if (transport_ != nullptr) transport_->iallreduce(group_, {sum})->wait(timeout_);
  return std::sqrt(sum.item<double>());
}

}  // namespace baton
