#include "baton/shard_collectives.h"

#include <algorithm>

#include "baton/transport_support.h"

namespace baton {

ShardCollectiveTransport::~ShardCollectiveTransport() = default;

ShardRange shard_of(std::int64_t numel, int members, int index) {
  if (members < 1 || index < 0 || index >= members || numel < 0) return {};
  const std::int64_t size = (numel + members - 1) / members;
  ShardRange range;
  range.begin = std::min(numel, size * index);
  range.end = std::min(numel, range.begin + size);
  return range;
}

std::string describe_shard_collective(ShardCollective kind, int rank, const std::vector<int>& group,
                                      std::uint64_t sequence, const at::Tensor& whole,
                                      const at::Tensor& shard, bool allow_non_cpu) {
  const bool reducing = kind == ShardCollective::kReduceScatter;
  const std::string name = std::string(reducing ? "reduce-scatter" : "all-gather") + " #" +
                           std::to_string(sequence) + " in group " + format_group(group);
  const auto refuse = [&](const char* which, const std::string& why) {
    return TransportError(rank_prefix(rank) + name + ": the " + which + " " + why);
  };
  // The whole tensor is the reduce-scatter's input and the all-gather's output.
  const char* whole_role = reducing ? "input" : "output";
  const char* shard_role = reducing ? "output" : "input";
  for (const auto& [tensor, role] :
       {std::pair<const at::Tensor&, const char*>{whole, whole_role},
        std::pair<const at::Tensor&, const char*>{shard, shard_role}}) {
    if (!tensor.defined()) throw refuse(role, "is undefined");
    if (!allow_non_cpu && !tensor.is_cpu()) {
      throw refuse(role, "is on " + tensor.device().str() + "; this transport moves CPU tensors");
    }
    if (!tensor.is_contiguous()) throw refuse(role, "is not contiguous; call .contiguous() first");
  }
  if (whole.scalar_type() != shard.scalar_type()) {
    throw refuse(shard_role, std::string("is ") + c10::toString(shard.scalar_type()) + " and the " +
                                 whole_role + " " + c10::toString(whole.scalar_type()) +
                                 "; give both one dtype");
  }
  if (reducing && whole.scalar_type() == at::kBool)
    throw refuse("input", "is Bool, which has no sum");
  const auto me = std::find(group.begin(), group.end(), rank);
  const int index = static_cast<int>(me - group.begin());
  const ShardRange range = shard_of(whole.numel(), static_cast<int>(group.size()), index);
  if (shard.numel() != range.size()) {
    throw refuse(shard_role, "holds " + std::to_string(shard.numel()) +
                                 " elements, but this member's shard of " +
                                 std::to_string(whole.numel()) + " over " +
                                 std::to_string(group.size()) + " members is [" +
                                 std::to_string(range.begin) + ", " + std::to_string(range.end) +
                                 "): " + std::to_string(range.size()) + " (baton::shard_of)");
  }
  return name + " (" + std::to_string(tensor_bytes(whole)) + " bytes, this member's shard " +
         std::to_string(tensor_bytes(shard)) + ")";
}

}  // namespace baton
