#include "sync_groups.h"

#include <ATen/ATen.h>

#include "baton/all_reduce.h"
#include "baton/error.h"
#include "baton/wait_notice.h"

namespace baton {

SyncGroups::SyncGroups(AllReduceTransport* all_reduce, c10::Device device,
                       std::chrono::milliseconds timeout)
    : all_reduce_(all_reduce), device_(device), timeout_(timeout) {}

int SyncGroups::join(const std::vector<int>& ranks, const std::string& purpose) {
  if (all_reduce_ == nullptr) {
    throw Error("summing " + purpose + " needs an all-reduce among ranks " + format_group(ranks) +
                ", but the transport cannot all-reduce (its plugin does not list "
                "baton.all_reduce); choose a transport whose plugin does (`baton plugins` "
                "lists each one's interfaces)");
  }
  const WaitNotice notice("runtime",
                          "ranks " + format_group(ranks) + " to join the group for " + purpose);
  return all_reduce_->join_group(ranks);
}

std::unique_ptr<Work> SyncGroups::start(int group, const std::vector<at::Tensor>& tensors) {
  return all_reduce_->iallreduce(group, tensors);
}

void SyncGroups::sum(int group, const std::vector<at::Tensor>& tensors) {
  start(group, tensors)->wait(timeout_);
}

double SyncGroups::sum(int group, double value) {
  at::Tensor total = at::full({1}, value, options(at::kDouble));
  sum(group, {total});
  return total.item<double>();
}

std::int64_t SyncGroups::sum(int group, std::int64_t value) {
  at::Tensor total = at::full({1}, value, options(at::kLong));
  sum(group, {total});
  return total.item<std::int64_t>();
}

}  // namespace baton
