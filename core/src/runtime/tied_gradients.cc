#include "tied_gradients.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "baton/error.h"

namespace baton {
namespace {

// FNV-1a over the tensor's bytes, 63 bits (an int64 all-reduce carries it).
std::int64_t checksum(const at::Tensor& tensor) {
  const at::Tensor bytes = tensor.detach().contiguous().cpu();
  const auto* data = static_cast<const unsigned char*>(bytes.data_ptr());
  const std::size_t size = static_cast<std::size_t>(bytes.numel()) * bytes.element_size();
  std::uint64_t hash = 1469598103934665603ull;
  for (std::size_t i = 0; i < size; ++i) {
    hash ^= data[i];
    hash *= 1099511628211ull;
  }
  return static_cast<std::int64_t>(hash >> 1);
}

}  // namespace

TiedGradients::TiedGradients(const Topology& topology, int replica, int pipeline_rank,
                             SyncGroups& groups)
    : topology_(topology), replica_(replica), pipeline_rank_(pipeline_rank), groups_(groups) {}

void TiedGradients::join(const Plan& plan, const GradientHolders& gradient_holders,
                         const std::vector<TiedParameter>& ties) {
  for (const TiedParameter& tie : ties) {
    if (tie.names.size() != tie.stages.size() || tie.names.empty()) {
      throw Error("a tied parameter needs one stage per name");
    }
    std::string joined_names;
    for (const std::string& name : tie.names) {
      joined_names += (joined_names.empty() ? "" : " = ") + name;
    }
    std::vector<int> holders;  // pipeline ranks
    int lowest = topology_.pipeline_ranks;
    Copy copy;
    copy.names = joined_names;
    std::vector<std::string> local_names;
    for (std::size_t i = 0; i < tie.names.size(); ++i) {
      const int stage = tie.stages[i];
      if (stage < 0 || stage >= static_cast<int>(plan.stage_to_rank.size())) {
        throw Error("tied parameter '" + tie.names[i] + "' is said to be on stage " +
                    std::to_string(stage) + ", which the plan does not have");
      }
      const int rank = plan.stage_to_rank[static_cast<std::size_t>(stage)];
      holders.push_back(rank);
      lowest = std::min(lowest, rank);
      if (rank != pipeline_rank_) continue;
      const auto found = gradient_holders.find(stage);
      if (found == gradient_holders.end())
        throw Error("stage " + std::to_string(stage) + " is not here");
      bool present = false;
      for (const auto& [name, param] : found->second) {
        if (name != tie.names[i]) continue;
        present = true;
        copy.tensor = param;
      }
      if (!present) {
        throw Error("tied parameter '" + tie.names[i] + "' is not a parameter of stage " +
                    std::to_string(stage));
      }
      local_names.push_back(tie.names[i]);
    }
    if (local_names.empty()) continue;  // this rank holds no copy
    if (pipeline_rank_ != lowest) {
      counted_elsewhere_.insert(local_names.begin(), local_names.end());
    }
    copy.group = topology_.in_every_replica(holders);
    if (copy.group.size() <= 1) continue;  // one copy, on one rank: autograd sums its uses
    synchronised_names_.insert(local_names.begin(), local_names.end());
    copy.handle = groups_.join(copy.group, "the gradients of tied parameter " + joined_names);
    copies_.push_back(std::move(copy));
  }
}

void TiedGradients::synchronise() {
  for (Copy& copy : copies_) {
    at::Tensor grad = copy.tensor.grad();
    if (!grad.defined()) {
      // A holder whose stages did not use it this step adds nothing, but must still take part.
      grad = at::zeros_like(copy.tensor);
      copy.tensor.mutable_grad() = grad;
    }
    groups_.sum(copy.handle, {grad});
    if (topology_.replicas > 1) grad.div_(topology_.replicas);
  }
}

void TiedGradients::check_copies() {
  for (Copy& copy : copies_) {
    // Each member writes its checksum in its own slot; the sum then holds every member's.
    std::vector<std::int64_t> slots(copy.group.size(), 0);
    const int me = topology_.rank(replica_, pipeline_rank_);
    const auto position = std::find(copy.group.begin(), copy.group.end(), me) - copy.group.begin();
    slots[static_cast<std::size_t>(position)] = checksum(copy.tensor);
    at::Tensor sums = at::tensor(slots, at::kLong).to(groups_.device());
    groups_.sum(copy.handle, {sums});
    const at::Tensor read = sums.cpu();
    const auto* values = read.data_ptr<std::int64_t>();
    for (std::size_t i = 0; i < copy.group.size(); ++i) {
      if (values[i] == values[0]) continue;
      throw Error("the copies of tied parameter " + copy.names + " differ: rank " +
                  std::to_string(copy.group[0]) + "'s has checksum " + std::to_string(values[0]) +
                  ", rank " + std::to_string(copy.group[i]) + "'s " + std::to_string(values[i]) +
                  " (they must take the same update every step; a rank whose copy was changed "
                  "outside training, or a transport that summed their gradients unevenly)");
    }
  }
}

}  // namespace baton
