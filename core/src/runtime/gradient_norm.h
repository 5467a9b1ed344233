// Internal: the L2 norm of the whole model's gradient, for clipping it as
// torch.nn.utils.clip_grad_norm_ does on the unpipelined model. The model is spread over the
// pipeline's ranks, so each rank sums the squares of its own stages' gradients (after the
// replicas' average: every replica then holds the same), the pipeline's ranks add their sums
// with one all-reduce of a single double on the device, and every rank takes the square root
// — so every rank clips by the same factor. A tensor held by several ranks (a tied weight's
// copies) is counted by one of them only. One of GradientSync's parts.
#pragma once

#include <ATen/core/Tensor.h>

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "baton/stage.h"
#include "baton/topology.h"
#include "main_gradients.h"
#include "sync_groups.h"

namespace baton {

class GradientNorm {
 public:
  // This rank is `pipeline_rank` of replica `replica` in `topology`.
  GradientNorm(const Topology& topology, int replica, SyncGroups& groups);

  // Set up (every rank of the pipeline calls it, after the replicas' group): joins the
  // pipeline's group when it has several ranks and notes the gradients to count: every
  // parameter's gradient `holders` keep but those named in `counted_elsewhere`.
  void join(const GradientHolders& holders, const std::set<std::string>& counted_elsewhere);

  // The norm of this step's gradients over the whole pipeline (a parameter without a
  // gradient counts 0). Throws TransportError when the all-reduce fails.
  double measure();

 private:
  Topology topology_;
  int replica_;
  SyncGroups& groups_;
  int group_ = -1;  // -1: the pipeline is this rank alone
  std::vector<at::Tensor> counted_;
};

}  // namespace baton
