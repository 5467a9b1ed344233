// baton's Transport over NCCL point-to-point (ncclSend/ncclRecv) between CUDA tensors.
//
// Rendezvous: rank 0 creates the ncclUniqueId and publishes it in the run's store; the
// others read it; every rank then joins with ncclCommInitRankConfig in non-blocking mode, so
// that a missing rank fails connect() at its timeout (the communicator is aborted) instead of
// hanging. Each peer gets one stream per direction, so sends to a peer never queue behind
// receives from it; post_batch() issues its operations inside one ncclGroupStart/End, which
// lets a rank send to and receive from the same peer without deadlocking.
//
// NCCL matches transfers between two ranks by posting order, not by tag: per peer and
// direction, receives must be posted in the order the sends were (which baton's lowered
// plans do) and with the same byte counts (which the metadata handshake checks). The tag
// only names the operation in errors.
//
// Stream order: the plugin cannot see LibTorch's current CUDA stream (it links only the CUDA
// runtime), so every transfer waits for the work already queued on the device's default
// stream; a tensor produced on another stream must be synchronized by the caller first.
//
// All-reduce (nccl_all_reduce.cc): each joined group has a communicator of its own (made like
// the first, with a unique id published by the group's lowest rank) and a stream; an
// all-reduce is ncclAllReduce (sum) of each tensor in one NCCL group call.
#pragma once

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <atomic>
#include <chrono>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "baton/all_reduce.h"
#include "baton/joined_groups.h"
#include "baton/shard_collectives.h"
#include "baton/store.h"
#include "baton/transfer_outcome.h"
#include "baton/transport.h"
#include "nccl_work.h"

namespace baton_nccl {

struct NcclOptions {
  // How long connect() waits for the other ranks; zero: TransportContext::timeout.
  std::chrono::milliseconds connect_timeout{0};
  // CUDA device of this rank; -1: rank modulo the number of visible devices.
  int device = -1;
};

struct Reduction;  // one posted collective (nccl_all_reduce.cc)

class NcclTransport : public baton::TransportV2,
                      public baton::AllReduceTransport,
                      public baton::ShardCollectiveTransport {
 public:
  // Throws TransportError when no CUDA device is visible (saying why).
  explicit NcclTransport(const NcclOptions& options);
  ~NcclTransport() override;

  void connect(const baton::TransportContext& ctx) override;
  std::unique_ptr<baton::Work> isend(const at::Tensor& tensor, int peer,
                                     std::uint64_t tag) override;
  std::unique_ptr<baton::Work> irecv(const at::Tensor& tensor, int peer,
                                     std::uint64_t tag) override;
  std::vector<std::unique_ptr<baton::Work>> post_batch(
      const std::vector<baton::P2POp>& ops) override;
  void abort(const std::string& reason) override;
  baton::Viability supports_device(const c10::Device& device) const override;

  int join_group(const std::vector<int>& ranks) override;
  std::unique_ptr<baton::Work> iallreduce(int group,
                                          const std::vector<at::Tensor>& tensors) override;
  // ShardCollectiveTransport: ncclReduceScatter and ncclAllGather on the group's
  // communicator and stream, padded to equal shards (nccl_all_reduce.cc).
  std::unique_ptr<baton::Work> ireduce_scatter(int group, const at::Tensor& input,
                                               const at::Tensor& output) override;
  std::unique_ptr<baton::Work> iall_gather(int group, const at::Tensor& input,
                                           const at::Tensor& output) override;

 private:
  struct Group {
    std::vector<int> ranks;
    std::shared_ptr<Communicator> communicator;  // null for a group of one
    cudaStream_t stream = nullptr;
    std::atomic<std::uint64_t> posted{0};
  };
  ncclComm_t join_communicator(baton::Store& store, const std::string& key, int size, int index,
                               int rank, const std::string& what,
                               std::chrono::milliseconds timeout);
  void abort_groups(const std::string& reason);
  // Posts one collective on `group`'s stream, after the default stream's work: `issue`
  // between ncclGroupStart and its end, then `after` on the stream (may be empty), then the
  // completion event the Work waits for.
  std::unique_ptr<baton::Work> launch(
      Group* group, const std::shared_ptr<Reduction>& reduction,
      const std::function<ncclResult_t(ncclComm_t, cudaStream_t)>& issue,
      const std::function<cudaError_t(cudaStream_t)>& after = nullptr);
  std::unique_ptr<baton::Work> shard_collective(baton::ShardCollective kind, int group,
                                                const at::Tensor& whole, const at::Tensor& shard);

  struct PeerStreams {
    cudaStream_t send = nullptr;
    cudaStream_t recv = nullptr;
  };

  ncclComm_t initialize(const baton::TransportContext& ctx, std::chrono::milliseconds timeout);
  void check_tensor(const baton::P2POp& op) const;
  void forget_completed_locked();

  const NcclOptions options_;
  int device_count_ = 0;
  int rank_ = -1;
  int world_size_ = 0;
  int device_ = -1;
  std::shared_ptr<Communicator> communicator_;
  std::vector<PeerStreams> streams_;  // by peer rank
  cudaEvent_t default_stream_done_ = nullptr;

  std::mutex mutex_;  // guards in_flight_ and orders posts
  // Transfers whose events have not completed: their tensors must outlive NCCL's use even
  // when the caller dropped the Work.
  std::deque<std::shared_ptr<Transfer>> in_flight_;

  std::shared_ptr<baton::Store> store_;
  std::chrono::milliseconds timeout_{60000};
  const std::shared_ptr<baton::TransportAbortHandle> abort_handle_ =
      std::make_shared<baton::TransportAbortHandle>(this);
  baton::JoinedGroups<Group> groups_;
};

}  // namespace baton_nccl
