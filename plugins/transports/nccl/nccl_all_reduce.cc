// AllReduceTransport for NCCL: ncclAllReduce (sum) on a communicator per group, on the
// group's stream, after the work queued on the default stream (as for transfers). Completion
// is a CUDA event; a Work that times out aborts the group's communicator and the transport.
#include <ATen/core/Tensor.h>

#include <ATen/ATen.h>

#include <algorithm>
#include <functional>
#include <thread>

#include "baton/transport_support.h"
#include "cuda_status.h"
#include "nccl_transport.h"

namespace baton_nccl {
namespace {

bool nccl_type(at::ScalarType type, ncclDataType_t* out) {
  switch (type) {
    case at::kFloat:
      *out = ncclFloat32;
      return true;
    case at::kDouble:
      *out = ncclFloat64;
      return true;
    case at::kHalf:
      *out = ncclFloat16;
      return true;
    case at::kBFloat16:
      *out = ncclBfloat16;
      return true;
    case at::kInt:
      *out = ncclInt32;
      return true;
    case at::kLong:
      *out = ncclInt64;
      return true;
    case at::kChar:
      *out = ncclInt8;
      return true;
    case at::kByte:
      *out = ncclUint8;
      return true;
    default:
      return false;
  }
}

}  // namespace

// One posted collective: its event, and its tensors kept until the event completed.
struct Reduction {
  std::shared_ptr<Communicator> communicator;
  std::vector<at::Tensor> tensors;
  std::string name;
  cudaEvent_t event = nullptr;
  ~Reduction() {
    if (event != nullptr) cudaEventDestroy(event);
  }
  bool completed() {
    if (!communicator) return true;  // a group of one
    const cudaError_t state = cudaEventQuery(event);
    if (state == cudaSuccess) return true;
    if (state != cudaErrorNotReady) {
      const std::string why = "CUDA: " + cuda_text(state);
      communicator->abort(why);
      throw baton::TransportError(name + " failed: " + why);
    }
    const std::string failure = communicator->check_async_error();
    if (!failure.empty()) throw baton::TransportError(name + " failed: " + failure);
    return false;
  }
};

namespace {

class ReductionWork : public baton::Work {
 public:
  ReductionWork(std::shared_ptr<Reduction> reduction,
                std::shared_ptr<baton::TransportAbortHandle> abort_handle)
      : reduction_(std::move(reduction)), abort_handle_(std::move(abort_handle)) {}

  void wait(std::chrono::milliseconds timeout) override {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    std::chrono::microseconds pause(20);
    while (!reduction_->completed()) {
      const auto now = std::chrono::steady_clock::now();
      if (now >= deadline) {
        const std::string message = reduction_->name + " timed out after " +
                                    baton::format_seconds(timeout) +
                                    "; the group's NCCL communicator was aborted";
        reduction_->communicator->abort(message);
        abort_handle_->abort_on_timeout(message);
      }
      std::this_thread::sleep_for(
          std::min<std::chrono::steady_clock::duration>(pause, deadline - now));
      pause = std::min(pause * 2, std::chrono::microseconds(1000));
    }
  }
  bool test() override { return reduction_->completed(); }

 private:
  std::shared_ptr<Reduction> reduction_;
  std::shared_ptr<baton::TransportAbortHandle> abort_handle_;
};

}  // namespace

int NcclTransport::join_group(const std::vector<int>& ranks) {
  if (communicator_ == nullptr) throw baton::TransportError("nccl: join_group() before connect()");
  baton::check_group(ranks, rank_, world_size_);
  const int occurrence = groups_.next_occurrence(ranks);
  auto group = std::make_unique<Group>();
  group->ranks = ranks;
  if (ranks.size() > 1) {
    const int index =
        static_cast<int>(std::find(ranks.begin(), ranks.end(), rank_) - ranks.begin());
    cudaSetDevice(device_);
    const cudaError_t error = cudaStreamCreateWithFlags(&group->stream, cudaStreamNonBlocking);
    if (error != cudaSuccess) {
      throw baton::TransportError(baton::rank_prefix(rank_) +
                                  "nccl: cannot create the stream of group " +
                                  baton::format_group(ranks) + ": " + cuda_text(error));
    }
    try {
      group->communicator = std::make_shared<Communicator>(
          join_communicator(*store_, baton::group_key(ranks, occurrence),
                            static_cast<int>(ranks.size()), index, rank_,
                            "group " + baton::format_group(ranks), timeout_),
          device_, rank_);
    } catch (...) {
      cudaStreamDestroy(group->stream);
      throw;
    }
  }
  return groups_.add(std::move(group));
}

std::unique_ptr<baton::Work> NcclTransport::iallreduce(int handle,
                                                       const std::vector<at::Tensor>& tensors) {
  Group* group = &groups_.at(handle, "nccl: ");
  const std::uint64_t sequence = ++group->posted;
  const baton::CollectiveDescription what =
      baton::describe_all_reduce(rank_, group->ranks, sequence, tensors, /*allow_non_cpu=*/true);
  auto reduction = std::make_shared<Reduction>();
  reduction->communicator = group->communicator;
  reduction->tensors = tensors;
  reduction->name = baton::rank_prefix(rank_) + what.str();
  std::vector<ncclDataType_t> types;
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    ncclDataType_t type;
    if (!tensors[i].is_cuda() || tensors[i].device().index() != device_) {
      throw baton::TransportError(
          reduction->name + ": tensor " + std::to_string(i) + " is on " +
          tensors[i].device().str() +
          "; this rank's communicators use cuda:" + std::to_string(device_));
    }
    if (!nccl_type(tensors[i].scalar_type(), &type)) {
      throw baton::TransportError(reduction->name + ": tensor " + std::to_string(i) + " is " +
                                  std::string(c10::toString(tensors[i].scalar_type())) +
                                  ", which NCCL does not sum");
    }
    types.push_back(type);
  }
  return launch(group, reduction, [&](ncclComm_t comm, cudaStream_t stream) {
    ncclResult_t result = ncclSuccess;
    for (std::size_t i = 0; i < tensors.size() && result == ncclSuccess; ++i) {
      if (tensors[i].numel() == 0) continue;
      void* data = tensors[i].data_ptr();
      result = ncclAllReduce(data, data, static_cast<size_t>(tensors[i].numel()), types[i], ncclSum,
                             comm, stream);
    }
    return result;
  });
}

std::unique_ptr<baton::Work> NcclTransport::launch(
    Group* group, const std::shared_ptr<Reduction>& reduction,
    const std::function<ncclResult_t(ncclComm_t, cudaStream_t)>& issue,
    const std::function<cudaError_t(cudaStream_t)>& after) {
  if (!group->communicator) return std::make_unique<ReductionWork>(reduction, abort_handle_);

  std::lock_guard<std::mutex> nccl_lock(group->communicator->mutex());
  ncclComm_t comm = group->communicator->handle_locked();
  if (comm == nullptr) {
    throw baton::TransportError(reduction->name + ": " + group->communicator->failure_locked());
  }
  cudaSetDevice(device_);
  cudaEvent_t ordered = nullptr;
  cudaError_t error = cudaEventCreateWithFlags(&ordered, cudaEventDisableTiming);
  if (error == cudaSuccess) error = cudaEventRecord(ordered, cudaStreamLegacy);
  if (error == cudaSuccess) error = cudaStreamWaitEvent(group->stream, ordered, 0);
  if (ordered != nullptr) cudaEventDestroy(ordered);
  if (error != cudaSuccess) {
    throw baton::TransportError(reduction->name +
                                ": cannot order it after the default stream: " + cuda_text(error));
  }
  ncclResult_t result = ncclGroupStart();
  if (result == ncclSuccess) result = issue(comm, group->stream);
  result = end_group(result, comm);
  if (result != ncclSuccess) {
    throw baton::TransportError(reduction->name +
                                ": posting to NCCL failed: " + nccl_text(result, comm));
  }
  if (after) {
    error = after(group->stream);
    if (error != cudaSuccess) {
      throw baton::TransportError(reduction->name +
                                  ": cannot copy its shard out: " + cuda_text(error));
    }
  }
  error = cudaEventCreateWithFlags(&reduction->event, cudaEventDisableTiming);
  if (error == cudaSuccess) error = cudaEventRecord(reduction->event, group->stream);
  if (error != cudaSuccess) {
    throw baton::TransportError(reduction->name +
                                ": cannot record its completion event: " + cuda_text(error));
  }
  return std::make_unique<ReductionWork>(reduction, abort_handle_);
}

// NCCL's reduce-scatter and all-gather move equal counts: the shards of baton::shard_of,
// padded to ceil(n / members) each. What is padded goes through a scratch tensor, filled
// (and its pad zeroed) on the default stream before the group's stream takes it; the shard
// is copied out on the group's stream after NCCL. Every tensor touched is kept until the
// completion event.
std::unique_ptr<baton::Work> NcclTransport::shard_collective(baton::ShardCollective kind,
                                                             int handle, const at::Tensor& whole,
                                                             const at::Tensor& shard) {
  Group* group = &groups_.at(handle, "nccl: ");
  const std::uint64_t sequence = ++group->posted;
  auto reduction = std::make_shared<Reduction>();
  reduction->communicator = group->communicator;
  reduction->name =
      baton::rank_prefix(rank_) + baton::describe_shard_collective(kind, rank_, group->ranks,
                                                                   sequence, whole, shard,
                                                                   /*allow_non_cpu=*/true);
  for (const at::Tensor* tensor : {&whole, &shard}) {
    if (!tensor->is_cuda() || tensor->device().index() != device_) {
      throw baton::TransportError(
          reduction->name + ": a tensor is on " + tensor->device().str() +
          "; this rank's communicators use cuda:" + std::to_string(device_));
    }
  }
  ncclDataType_t type;
  if (!nccl_type(whole.scalar_type(), &type)) {
    throw baton::TransportError(reduction->name + ": its dtype is " +
                                std::string(c10::toString(whole.scalar_type())) +
                                ", which NCCL does not move in collectives");
  }
  const int members = static_cast<int>(group->ranks.size());
  const std::int64_t n = whole.numel();
  const std::int64_t padded_shard = (n + members - 1) / members;
  const std::int64_t padded = padded_shard * members;
  const bool reducing = kind == baton::ShardCollective::kReduceScatter;
  reduction->tensors = {whole, shard};
  if (!group->communicator) {
    (reducing ? shard : whole).view({-1}).copy_((reducing ? whole : shard).reshape({-1}));
    return std::make_unique<ReductionWork>(reduction, abort_handle_);
  }
  if (n == 0) return std::make_unique<ReductionWork>(reduction, abort_handle_);
  // The padded whole and this member's padded shard, scratch where the caller's do not fit.
  at::Tensor big = whole.view({-1});
  if (padded != n) {
    big = at::zeros({padded}, whole.options());
    if (reducing) big.narrow(0, 0, n).copy_(whole.view({-1}));
  }
  at::Tensor small = shard.view({-1});
  if (shard.numel() != padded_shard) {
    small = at::zeros({padded_shard}, shard.options());
    if (!reducing && shard.numel() > 0) small.narrow(0, 0, shard.numel()).copy_(shard.view({-1}));
  }
  reduction->tensors.push_back(big);
  reduction->tensors.push_back(small);
  const auto count = static_cast<size_t>(padded_shard);
  const auto copy_out = [&](const at::Tensor& from, const at::Tensor& to) {
    return [from, to](cudaStream_t stream) {
      if (to.numel() == 0 || from.data_ptr() == to.data_ptr()) return cudaSuccess;
      return cudaMemcpyAsync(to.data_ptr(), from.data_ptr(),
                             static_cast<size_t>(to.numel()) * to.element_size(),
                             cudaMemcpyDeviceToDevice, stream);
    };
  };
  if (reducing) {
    return launch(
        group, reduction,
        [&](ncclComm_t comm, cudaStream_t stream) {
          return ncclReduceScatter(big.data_ptr(), small.data_ptr(), count, type, ncclSum, comm,
                                   stream);
        },
        copy_out(small, shard.view({-1})));
  }
  return launch(
      group, reduction,
      [&](ncclComm_t comm, cudaStream_t stream) {
        return ncclAllGather(small.data_ptr(), big.data_ptr(), count, type, comm, stream);
      },
      copy_out(big.narrow(0, 0, n), whole.view({-1})));
}

std::unique_ptr<baton::Work> NcclTransport::ireduce_scatter(int group, const at::Tensor& input,
                                                            const at::Tensor& output) {
  return shard_collective(baton::ShardCollective::kReduceScatter, group, input, output);
}

std::unique_ptr<baton::Work> NcclTransport::iall_gather(int group, const at::Tensor& input,
                                                        const at::Tensor& output) {
  return shard_collective(baton::ShardCollective::kAllGather, group, output, input);
}

void NcclTransport::abort_groups(const std::string& reason) {
  groups_.for_each([&reason](Group& group) {
    if (group.communicator) group.communicator->abort(reason);
  });
}

}  // namespace baton_nccl
