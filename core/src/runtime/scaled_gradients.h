// Internal: the gradients of a loss-scaled step (fp16 loss scaling, torch.cuda.amp.GradScaler):
// the backward started from the loss times the step's scale, so every gradient arrives
// multiplied by it. After the replicas' and the ties' sums (linear, so they commute with the
// scale) each gradient is multiplied by 1/scale — exact for a power of two, as GradScaler's
// unscale_ is — and checked for non-finite values. The check is agreed by every rank of the
// world in one all-reduce of one number (Megatron's found_inf over the model-parallel group,
// here over the replicas too, so a sharded optimizer, which sees only its shard, agrees as
// well): every rank then skips the step together. One of GradientSync's parts.
#pragma once

#include <ATen/core/Tensor.h>

#include <vector>

#include "baton/topology.h"
#include "main_gradients.h"
#include "sync_groups.h"

namespace baton {

class ScaledGradients {
 public:
  ScaledGradients(const Topology& topology, SyncGroups& groups);

  // Set up, on every rank that computes gradients, after the other parts' groups (the same
  // order everywhere): notes every tensor `holders` keep a gradient in (a tensor two local
  // stages share, once) and joins the world's group when it has several ranks.
  void join(const GradientHolders& holders);

  // Multiplies every gradient by 1 / `scale` and returns whether any gradient of any rank of
  // the world holds an inf or a nan. Throws TransportError when the all-reduce fails.
  bool unscale(double scale);

 private:
  Topology topology_;
  SyncGroups& groups_;
  int group_ = -1;  // -1: the world is this rank alone
  std::vector<at::Tensor> held_;
};

}  // namespace baton
