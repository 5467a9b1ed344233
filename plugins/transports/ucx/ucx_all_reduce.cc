// AllReduceTransport for UCX, which has no collectives of its own: the ring of
// baton/ring_all_reduce.h over this transport's tagged messages, and its two halves
// (reduce-scatter, all-gather: ShardCollectiveTransport). A group's messages carry the
// collective bit and the group's id (tag_layout.h), so they never match a caller's receive,
// and UCX keeps one sender's messages of one tag in order, which is all the ring needs. Each
// group's all-reduces run one at a time on the group's thread.
#include <algorithm>
#include <string>

#include "baton/log.h"
#include "baton/ring_all_reduce.h"
#include "baton/transport_support.h"
#include "tag_layout.h"
#include "ucx_transport.h"

namespace baton_ucx {
namespace {

std::vector<std::uint8_t> to_bytes(const std::string& text) {
  return {text.begin(), text.end()};
}

}  // namespace

int UcxTransport::join_group(const std::vector<int>& ranks) {
  int rank;
  int world_size;
  {
    auto lock = engine_->caller_lock();
    if (!connected_) throw baton::TransportError("ucx: join_group() before connect()");
    rank = rank_;
    world_size = world_size_;
    if (aborted_) {
      throw baton::TransportError(baton::rank_prefix(rank) + "joining group " +
                                  baton::format_group(ranks) +
                                  ": the transport was aborted: " + abort_reason_);
    }
  }
  baton::check_group(ranks, rank, world_size);
  const int occurrence = groups_.next_occurrence(ranks);
  // The group's lowest rank numbers it; the others read the number. Ids are unique in the
  // run, so two groups sharing a pair of neighbours never mix their messages.
  const std::string key = baton::group_key(ranks, occurrence);
  std::uint64_t id = 0;
  try {
    if (rank == ranks.front()) {
      id = static_cast<std::uint64_t>(store_->add("group-ids", 1));
      store_->set(key, to_bytes(std::to_string(id)));
    } else {
      const std::vector<std::uint8_t> value = store_->get(key, timeout_);
      id = std::stoull(std::string(value.begin(), value.end()));
    }
  } catch (const std::exception& error) {
    throw baton::TransportError(baton::rank_prefix(rank) + "ucx: joining group " +
                                baton::format_group(ranks) + " failed: " + error.what());
  }
  if (id > kMaxUserTag) {
    throw baton::TransportError(baton::rank_prefix(rank) + "ucx: too many groups");
  }
  auto group = std::make_unique<Group>();
  group->ranks = ranks;
  group->id = id;
  group->queue = std::make_unique<baton::CollectiveQueue>(rank, ranks, abort_handle_);
  BATON_LOG_DEBUG("ucx", "joined group " << baton::format_group(ranks) << " (id " << id << ")");
  return groups_.add(std::move(group));
}

std::unique_ptr<baton::Work> UcxTransport::iallreduce(int handle,
                                                      const std::vector<at::Tensor>& tensors) {
  Group* group = &groups_.at(handle, "ucx: ");
  const std::uint64_t id = group->id;
  const std::vector<int> ranks = group->ranks;
  int rank;
  {
    auto lock = engine_->caller_lock();
    rank = rank_;
  }
  const std::chrono::milliseconds timeout = timeout_;
  const baton::RingLinks links = ring_links(id);
  return group->queue->post(
      tensors,
      [tensors, ranks, rank, links, timeout] {
        for (const at::Tensor& tensor : tensors) {
          baton::ring_all_reduce(tensor, ranks, rank, links, timeout);
        }
      },
      /*allow_non_cpu=*/true);
}

baton::RingLinks UcxTransport::ring_links(std::uint64_t group_id) {
  baton::RingLinks links;
  links.send = [this, group_id](const at::Tensor& tensor, int peer) {
    return post(tensor, peer, group_id, baton::P2PDirection::kSend, /*collective=*/true);
  };
  links.recv = [this, group_id](const at::Tensor& tensor, int peer) {
    return post(tensor, peer, group_id, baton::P2PDirection::kRecv, /*collective=*/true);
  };
  return links;
}

std::unique_ptr<baton::Work> UcxTransport::post_shard_collective(baton::ShardCollective kind,
                                                                 int handle,
                                                                 const at::Tensor& whole,
                                                                 const at::Tensor& shard) {
  Group* group = &groups_.at(handle, "ucx: ");
  const std::vector<int> ranks = group->ranks;
  int rank;
  {
    auto lock = engine_->caller_lock();
    rank = rank_;
  }
  const std::chrono::milliseconds timeout = timeout_;
  const baton::RingLinks links = ring_links(group->id);
  return group->queue->post_named(
      [&](std::uint64_t sequence) {
        return baton::describe_shard_collective(kind, rank, ranks, sequence, whole, shard,
                                                /*allow_non_cpu=*/true);
      },
      [kind, whole, shard, ranks, rank, links, timeout] {
        if (kind == baton::ShardCollective::kReduceScatter) {
          baton::ring_reduce_scatter(whole, shard, ranks, rank, links, timeout);
        } else {
          baton::ring_all_gather(shard, whole, ranks, rank, links, timeout);
        }
      });
}

std::unique_ptr<baton::Work> UcxTransport::ireduce_scatter(int group, const at::Tensor& input,
                                                           const at::Tensor& output) {
  return post_shard_collective(baton::ShardCollective::kReduceScatter, group, input, output);
}

std::unique_ptr<baton::Work> UcxTransport::iall_gather(int group, const at::Tensor& input,
                                                       const at::Tensor& output) {
  return post_shard_collective(baton::ShardCollective::kAllGather, group, output, input);
}

void UcxTransport::stop_groups(const std::string& reason) {
  // A running ring ends when its transfers fail, which the caller has made them do.
  groups_.for_each([&reason](Group& group) { group.queue->fail_all(reason); });
}

}  // namespace baton_ucx
