// ShardCollectiveTransport for gloo, on the all-reduce's group contexts and threads
// (gloo_all_reduce.cc): reduce-scatter is gloo's halving-doubling algorithm, which leaves
// this member's summed shard at the front of its buffer; all-gather is gloo's allgatherv,
// each member's shard its own count. gloo has no bfloat16 or half sum of its own here: those
// are summed in float32 (PyTorch's ProcessGroupGloo does the same for half types) and
// rounded once, at the end.
#include <ATen/ATen.h>
#include <gloo/allgatherv.h>
#include <gloo/reduce_scatter.h>

#include <algorithm>
#include <functional>

#include "baton/transport_support.h"
#include "gloo_errors.h"
#include "gloo_transport.h"

namespace baton_gloo {
namespace {

bool can_sum(at::ScalarType type) {
  switch (type) {
    case at::kFloat:
    case at::kDouble:
    case at::kHalf:
    case at::kBFloat16:
    case at::kInt:
    case at::kLong:
      return true;
    default:
      return false;
  }
}

template <typename T>
void halving_doubling(const std::shared_ptr<gloo::Context>& context, const at::Tensor& work,
                      const std::vector<int>& shard_sizes) {
  gloo::ReduceScatterHalvingDoubling<T> algorithm(context, {static_cast<T*>(work.data_ptr())},
                                                  static_cast<int>(work.numel()), shard_sizes);
  algorithm.run();
}

// Sums `input` across the group into this member's shard `output`.
void reduce_scatter(const std::shared_ptr<gloo::Context>& context, const at::Tensor& input,
                    const at::Tensor& output, int members) {
  const std::int64_t n = input.numel();
  if (n == 0) return;
  std::vector<int> shard_sizes;
  for (int member = 0; member < members; ++member) {
    shard_sizes.push_back(static_cast<int>(baton::shard_of(n, members, member).size()));
  }
  const bool widened = input.scalar_type() == at::kHalf || input.scalar_type() == at::kBFloat16;
  // The algorithm sums in place: a copy, so the input stays as it was.
  const at::Tensor work = (widened ? input.to(at::kFloat) : input.clone()).reshape({n});
  switch (work.scalar_type()) {
    case at::kFloat:
      halving_doubling<float>(context, work, shard_sizes);
      break;
    case at::kDouble:
      halving_doubling<double>(context, work, shard_sizes);
      break;
    case at::kInt:
      halving_doubling<std::int32_t>(context, work, shard_sizes);
      break;
    case at::kLong:
      halving_doubling<std::int64_t>(context, work, shard_sizes);
      break;
    default:
      return;  // refused when posted
  }
  output.view({-1}).copy_(work.narrow(0, 0, output.numel()));
}

void all_gather(const std::shared_ptr<gloo::Context>& context, const at::Tensor& input,
                const at::Tensor& output, int members, std::chrono::milliseconds timeout) {
  const std::int64_t n = output.numel();
  if (n == 0) return;
  // Bytes, whatever the dtype: an all-gather moves them as they are.
  const auto element = static_cast<size_t>(output.element_size());
  std::vector<size_t> counts;
  for (int member = 0; member < members; ++member) {
    counts.push_back(static_cast<size_t>(baton::shard_of(n, members, member).size()) * element);
  }
  gloo::AllgathervOptions options(context);
  // gloo reads no input of zero elements, but wants a pointer.
  auto* in = static_cast<std::uint8_t*>(input.numel() > 0 ? input.data_ptr() : output.data_ptr());
  options.setInput(in, static_cast<size_t>(input.numel()) * element);
  options.setOutput(static_cast<std::uint8_t*>(output.data_ptr()), counts);
  options.setTimeout(timeout);
  gloo::allgatherv(options);
}

}  // namespace

// Queues one reduce-scatter or all-gather on the group's thread: `run` on its gloo context
// with the group's size (a group of one copies), its errors in the words of
// explain_gloo_error.
std::unique_ptr<baton::Work> GlooTransport::post_shard_collective(baton::ShardCollective kind,
                                                                  int handle,
                                                                  const at::Tensor& whole,
                                                                  const at::Tensor& shard,
                                                                  ShardJob run) {
  Group* group = &groups_.at(handle, baton::rank_prefix(rank_) + "gloo: ");
  const bool reducing = kind == baton::ShardCollective::kReduceScatter;
  if (reducing && whole.defined() && !can_sum(whole.scalar_type())) {
    throw baton::TransportError(
        baton::rank_prefix(rank_) + "reduce-scatter in group " + baton::format_group(group->ranks) +
        ": the input is " + std::string(c10::toString(whole.scalar_type())) +
        "; the gloo transport reduce-scatters float, double, half, bfloat16, int32 and int64");
  }
  std::chrono::milliseconds timeout{0};
  {
    std::lock_guard<std::mutex> lock(mutex_);
    timeout = timeout_;
  }
  std::shared_ptr<gloo::Context> context = group->context;
  const std::vector<int> ranks = group->ranks;
  const int rank = rank_;
  const int members = static_cast<int>(ranks.size());
  const std::string others = other_members(ranks, rank);
  return group->queue->post_named(
      [&](std::uint64_t sequence) {
        return baton::describe_shard_collective(kind, rank, ranks, sequence, whole, shard);
      },
      [context, whole, shard, reducing, timeout, members, others, run = std::move(run)] {
        if (!context) {  // a group of one: its shard is the whole
          (reducing ? shard : whole).view({-1}).copy_((reducing ? whole : shard).reshape({-1}));
          return;
        }
        try {
          run(context, timeout, members);
        } catch (const baton::Error&) {
          throw;
        } catch (const std::exception& error) {
          throw baton::TransportError(explain_gloo_error(error, others));
        }
      });
}

std::unique_ptr<baton::Work> GlooTransport::ireduce_scatter(int handle, const at::Tensor& input,
                                                            const at::Tensor& output) {
  return post_shard_collective(
      baton::ShardCollective::kReduceScatter, handle, input, output,
      [input, output](const std::shared_ptr<gloo::Context>& context, std::chrono::milliseconds,
                      int members) { reduce_scatter(context, input, output, members); });
}

std::unique_ptr<baton::Work> GlooTransport::iall_gather(int handle, const at::Tensor& input,
                                                        const at::Tensor& output) {
  return post_shard_collective(baton::ShardCollective::kAllGather, handle, output, input,
                               [input, output](const std::shared_ptr<gloo::Context>& context,
                                               std::chrono::milliseconds timeout, int members) {
                                 all_gather(context, input, output, members, timeout);
                               });
}

}  // namespace baton_gloo
