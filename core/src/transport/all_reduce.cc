#include "baton/all_reduce.h"

#include "baton/transport_support.h"

namespace baton {

AllReduceTransport::~AllReduceTransport() = default;

std::string format_group(const std::vector<int>& ranks) {
  std::string text = "[";
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    text += (i == 0 ? "" : ", ") + std::to_string(ranks[i]);
  }
  return text + "]";
}

std::string CollectiveDescription::str() const {
  return "all-reduce #" + std::to_string(sequence) + " in group " + format_group(group) + " (" +
         std::to_string(tensors) + (tensors == 1 ? " tensor, " : " tensors, ") +
         std::to_string(bytes) + " bytes)";
}

std::string group_key(const std::vector<int>& ranks, int occurrence) {
  std::string key = "group/";
  for (const int rank : ranks) key += std::to_string(rank) + ",";
  return key + "#" + std::to_string(occurrence);
}

void check_group(const std::vector<int>& ranks, int rank, int world_size) {
  const std::string what = rank_prefix(rank) + "group " + format_group(ranks);
  if (ranks.empty()) throw TransportError(rank_prefix(rank) + "a group needs at least one rank");
  bool member = false;
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    if (ranks[i] < 0 || ranks[i] >= world_size) {
      throw TransportError(what + ": rank " + std::to_string(ranks[i]) + " is outside a world of " +
                           std::to_string(world_size) + " ranks");
    }
    if (i > 0 && ranks[i] <= ranks[i - 1]) {
      throw TransportError(what + ": list the ranks in ascending order, each once");
    }
    member = member || ranks[i] == rank;
  }
  if (!member) {
    throw TransportError(what + ": this rank is not a member; only members join a group");
  }
}

CollectiveDescription describe_all_reduce(int rank, const std::vector<int>& group,
                                          std::uint64_t sequence,
                                          const std::vector<at::Tensor>& tensors,
                                          bool allow_non_cpu) {
  CollectiveDescription what{group, sequence, tensors.size(), 0};
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    const at::Tensor& tensor = tensors[i];
    const auto refuse = [&](const std::string& why) {
      return TransportError(rank_prefix(rank) + what.str() + ": tensor " + std::to_string(i) + " " +
                            why);
    };
    if (!tensor.defined()) throw refuse("is undefined");
    if (!allow_non_cpu && !tensor.is_cpu()) {
      throw refuse("is on " + tensor.device().str() + "; this transport reduces CPU tensors");
    }
    if (!tensor.is_contiguous()) throw refuse("is not contiguous; call .contiguous() first");
    if (tensor.scalar_type() == at::kBool) throw refuse("is Bool, which has no sum");
    what.bytes += tensor_bytes(tensor);
  }
  return what;
}

}  // namespace baton
