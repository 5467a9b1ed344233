// Internal: tensors the model holds under several names — tied weights, such as GPT-2's
// output head and token embedding — kept identical on every rank that holds one of the names.
// Every holder keeps its own copy (a pipeline puts the embedding on the first stage and the
// head on the last); after the step's backward, each copy's gradient is summed with the other
// holders' and averaged with the replicas' in one all-reduce over the tie's group (the
// holders' pipeline ranks in every replica), so every copy takes the same update and stays
// bit-identical. The replicas' bucketed reduction leaves these tensors to it. One of
// GradientSync's parts.
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "baton/plan/plan.h"
#include "baton/runtime/gradient_sync.h"
#include "baton/stage.h"
#include "baton/topology.h"
#include "main_gradients.h"
#include "sync_groups.h"

namespace baton {

class TiedGradients {
 public:
  // This rank is `pipeline_rank` of replica `replica` in `topology`.
  TiedGradients(const Topology& topology, int replica, int pipeline_rank, SyncGroups& groups);

  // Set up, on every rank (before the gradient norm's group): finds this rank's copy of each
  // tie in `holders` (the tensor keeping each stage parameter's gradient) and joins the group of
  // every tie whose copies are on several ranks or replicas, in the order of `ties` (the same on
  // every rank). Throws Error when a tie names a parameter its stage does not have, or the
  // transport cannot all-reduce.
  void join(const Plan& plan, const GradientHolders& holders,
            const std::vector<TiedParameter>& ties);

  // The names of this rank's tied parameters whose gradient synchronise() combines: the
  // replicas' reduction leaves them out.
  const std::set<std::string>& synchronised_names() const { return synchronised_names_; }
  // The names of this rank's tied parameters another rank of the pipeline counts in the
  // gradient's norm (each tie is counted by its lowest pipeline rank).
  const std::set<std::string>& counted_elsewhere() const { return counted_elsewhere_; }

  // At the step's end: every copy's gradient becomes the holders' sum averaged over the
  // replicas. Throws TransportError when an all-reduce fails.
  void synchronise();
  // Every holder's copy has the same bytes (a checksum of each, compared over the tie's
  // group); throws Error naming the tensor, its names and the checksums otherwise.
  void check_copies();

 private:
  struct Copy {
    std::string names;       // "embed.tokens.weight = head.weight", for messages
    at::Tensor tensor;       // this rank's copy
    std::vector<int> group;  // transport ranks holding a copy (with the replicas')
    int handle = -1;         // the joined group
  };

  Topology topology_;
  int replica_;
  int pipeline_rank_;
  SyncGroups& groups_;
  std::vector<Copy> copies_;
  std::set<std::string> synchronised_names_;
  std::set<std::string> counted_elsewhere_;
};

}  // namespace baton
