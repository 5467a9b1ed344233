// AllReduceTransport for gloo: every joined group gets a gloo context of its own (a full mesh
// among its members, met through the run's store under a prefix naming the group), and its
// all-reduces are gloo's own algorithm (gloo::allreduce: a ring, in segments of 1 MiB) run
// one at a time on the group's thread, since gloo's call blocks.
#include <ATen/ATen.h>
#include <c10/util/BFloat16.h>
#include <gloo/allreduce.h>
#include <gloo/math.h>
#include <gloo/rendezvous/prefix_store.h>

#include <algorithm>

#include "baton/log.h"
#include "baton/transport_support.h"
#include "gloo_errors.h"
#include "gloo_transport.h"
#include "store_adapter.h"

namespace baton_gloo {
namespace {

// gloo has no bfloat16: sum through float, as PyTorch's ProcessGroupGloo does for half types.
void sum_bfloat16(void* out, const void* a, const void* b, size_t n) {
  auto* c = static_cast<c10::BFloat16*>(out);
  const auto* x = static_cast<const c10::BFloat16*>(a);
  const auto* y = static_cast<const c10::BFloat16*>(b);
  for (size_t i = 0; i < n; ++i) c[i] = static_cast<float>(x[i]) + static_cast<float>(y[i]);
}

// gloo::sum<T> is overloaded (typed and untyped pointers); this is the untyped one.
template <typename T>
void sum_of(void* out, const void* a, const void* b, size_t n) {
  gloo::sum<T>(out, a, b, n);
}

template <typename T>
void reduce_with(const std::shared_ptr<gloo::Context>& context, const at::Tensor& tensor,
                 gloo::AllreduceOptions::Func sum, std::chrono::milliseconds timeout) {
  gloo::AllreduceOptions options(context);
  options.setOutput(static_cast<T*>(tensor.data_ptr()), static_cast<size_t>(tensor.numel()));
  options.setReduceFunction(std::move(sum));
  options.setTimeout(timeout);
  gloo::allreduce(options);
}

bool can_reduce(at::ScalarType type) {
  switch (type) {
    case at::kFloat:
    case at::kDouble:
    case at::kHalf:
    case at::kBFloat16:
    case at::kInt:
    case at::kLong:
    case at::kChar:
    case at::kByte:
      return true;
    default:
      return false;
  }
}

void reduce_tensor(const std::shared_ptr<gloo::Context>& context, const at::Tensor& tensor,
                   std::chrono::milliseconds timeout) {
  if (tensor.numel() == 0) return;
  switch (tensor.scalar_type()) {
    case at::kFloat:
      return reduce_with<float>(context, tensor, &sum_of<float>, timeout);
    case at::kDouble:
      return reduce_with<double>(context, tensor, &sum_of<double>, timeout);
    case at::kHalf:
      return reduce_with<gloo::float16>(context, tensor, &sum_of<gloo::float16>, timeout);
    case at::kBFloat16:
      return reduce_with<c10::BFloat16>(context, tensor, &sum_bfloat16, timeout);
    case at::kInt:
      return reduce_with<std::int32_t>(context, tensor, &sum_of<std::int32_t>, timeout);
    case at::kLong:
      return reduce_with<std::int64_t>(context, tensor, &sum_of<std::int64_t>, timeout);
    case at::kChar:
      return reduce_with<std::int8_t>(context, tensor, &sum_of<std::int8_t>, timeout);
    case at::kByte:
      return reduce_with<std::uint8_t>(context, tensor, &sum_of<std::uint8_t>, timeout);
    default:
      break;  // refused when posted
  }
}

}  // namespace

int GlooTransport::join_group(const std::vector<int>& ranks) {
  int occurrence = 0;
  std::chrono::milliseconds timeout{0};
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (context_ == nullptr) throw baton::TransportError("gloo: join_group() before connect()");
    baton::check_group(ranks, rank_, world_size_);
    if (aborted_) {
      throw baton::TransportError(baton::rank_prefix(rank_) + "joining group " +
                                  baton::format_group(ranks) +
                                  ": the transport was aborted: " + abort_reason_);
    }
    timeout = timeout_;
  }
  occurrence = groups_.next_occurrence(ranks);
  auto group = std::make_unique<Group>();
  group->ranks = ranks;
  const int index = static_cast<int>(std::find(ranks.begin(), ranks.end(), rank_) - ranks.begin());
  if (ranks.size() > 1) {
    group->context =
        std::make_shared<gloo::rendezvous::Context>(index, static_cast<int>(ranks.size()));
    // As in connect(): gloo waits five times the pair timeout for a first connect.
    const std::chrono::milliseconds connect_timeout =
        options_.connect_timeout.count() > 0 ? options_.connect_timeout : timeout;
    group->context->setTimeout(std::max(std::chrono::milliseconds(1), connect_timeout / 5));
    StoreAdapter store(store_, connect_timeout);
    gloo::rendezvous::PrefixStore prefixed(baton::group_key(ranks, occurrence), store);
    try {
      group->context->connectFullMesh(prefixed, device_);
    } catch (const std::exception& error) {
      throw baton::TransportError(
          baton::rank_prefix(rank_) + "gloo: joining group " + baton::format_group(ranks) +
          " failed: " + explain_gloo_error(error, other_members(ranks, rank_)));
    }
    group->context->setTimeout(timeout);
  }
  group->queue = std::make_unique<baton::CollectiveQueue>(rank_, ranks, abort_handle_);
  BATON_LOG_DEBUG("gloo", "joined group " << baton::format_group(ranks));
  std::lock_guard<std::mutex> lock(mutex_);
  if (aborted_ || closing_) {
    group->queue->fail_all(aborted_ ? "the transport was aborted: " + abort_reason_
                                    : "the transport is shutting down");
  }
  return groups_.add(std::move(group));
}

std::unique_ptr<baton::Work> GlooTransport::iallreduce(int handle,
                                                       const std::vector<at::Tensor>& tensors) {
  Group* group = &groups_.at(handle, baton::rank_prefix(rank_) + "gloo: ");
  std::chrono::milliseconds timeout{0};
  {
    std::lock_guard<std::mutex> lock(mutex_);
    timeout = timeout_;
  }
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    if (tensors[i].defined() && !can_reduce(tensors[i].scalar_type())) {
      throw baton::TransportError(
          baton::rank_prefix(rank_) + "all-reduce in group " + baton::format_group(group->ranks) +
          ": tensor " + std::to_string(i) + " is " +
          std::string(c10::toString(tensors[i].scalar_type())) +
          "; the gloo transport sums float, double, half, bfloat16, int8, uint8, int32 and int64");
    }
  }
  std::shared_ptr<gloo::Context> context = group->context;
  const std::string others = other_members(group->ranks, rank_);
  return group->queue->post(tensors, [context, tensors, timeout, others] {
    if (!context) return;  // a group of one: the sum is the tensor
    try {
      for (const at::Tensor& tensor : tensors) reduce_tensor(context, tensor, timeout);
    } catch (const baton::Error&) {
      throw;
    } catch (const std::exception& error) {
      throw baton::TransportError(explain_gloo_error(error, others));
    }
  });
}

void GlooTransport::stop_groups(const std::string& reason) {
  // The groups' connections stay open: gloo's allreduce wakes when a peer closes its side,
  // not when this rank closes its own, so closing here would leave a running one waiting for
  // its timeout. The peers hear of the abort from the transport's own connections, which
  // abort() closes, and close theirs when they abort in turn.
  groups_.for_each([&reason](Group& group) { group.queue->fail_all(reason); });
}

}  // namespace baton_gloo
