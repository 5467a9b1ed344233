#include "nccl_transport.h"

#include <algorithm>

#include <cstring>
#include <thread>

#include "baton/store.h"
#include "baton/transport_support.h"
#include "cuda_status.h"

namespace baton_nccl {

namespace {

constexpr const char* kUniqueIdKey = "nccl-unique-id";

}  // namespace

NcclTransport::NcclTransport(const NcclOptions& options) : options_(options) {
  std::string reason;
  device_count_ = visible_devices(&reason);
  if (device_count_ == 0) throw baton::TransportError("nccl: " + reason);
  if (options_.device >= device_count_) {
    throw baton::TransportError("nccl: device " + std::to_string(options_.device) +
                                " does not exist; " + std::to_string(device_count_) +
                                " CUDA devices are visible");
  }
}

NcclTransport::~NcclTransport() {
  abort_handle_->detach();
  abort_groups("the transport was shut down");
  // The communicator lives on while Works refer to it; abort it now so that their waits
  // fail instead of waiting for peers that will never match.
  if (communicator_ != nullptr) communicator_->abort("the transport was shut down");
  {
    std::lock_guard<std::mutex> lock(mutex_);
    in_flight_.clear();
  }
  for (PeerStreams& streams : streams_) {
    if (streams.send != nullptr) cudaStreamDestroy(streams.send);
    if (streams.recv != nullptr) cudaStreamDestroy(streams.recv);
  }
  if (default_stream_done_ != nullptr) cudaEventDestroy(default_stream_done_);
  groups_.for_each([](Group& group) {
    if (group.stream != nullptr) cudaStreamDestroy(group.stream);
  });
}

void NcclTransport::connect(const baton::TransportContext& ctx) {
  const std::string who = baton::rank_prefix(ctx.rank);
  if (communicator_ != nullptr)
    throw baton::TransportError(who + "nccl: connect() was already called");
  if (ctx.world_size < 1 || ctx.rank < 0 || ctx.rank >= ctx.world_size) {
    throw baton::TransportError(who + "nccl: rank outside a world of " +
                                std::to_string(ctx.world_size) + " ranks");
  }
  if (ctx.store == nullptr) throw baton::TransportError(who + "nccl: no rendezvous store");
  const std::chrono::milliseconds timeout =
      options_.connect_timeout.count() > 0 ? options_.connect_timeout : ctx.timeout;
  // The run's placement decides (world.device: cuda puts a rank on its local rank's GPU);
  // transport.params.device overrides it; a caller that names no device (a conformance run)
  // gets one per rank in turn.
  device_ = options_.device >= 0   ? options_.device
            : ctx.device.is_cuda() ? ctx.device.index()
                                   : ctx.rank % device_count_;
  cudaError_t error = cudaSetDevice(device_);
  if (error != cudaSuccess) {
    throw baton::TransportError(who + "nccl: cannot use CUDA device " + std::to_string(device_) +
                                ": " + cuda_text(error));
  }
  rank_ = ctx.rank;
  world_size_ = ctx.world_size;
  store_ = ctx.store;
  timeout_ = timeout;

  std::vector<PeerStreams> streams(static_cast<std::size_t>(ctx.world_size));
  for (int peer = 0; peer < ctx.world_size && error == cudaSuccess; ++peer) {
    if (peer == ctx.rank) continue;
    error = cudaStreamCreateWithFlags(&streams[peer].send, cudaStreamNonBlocking);
    if (error == cudaSuccess)
      error = cudaStreamCreateWithFlags(&streams[peer].recv, cudaStreamNonBlocking);
  }
  if (error == cudaSuccess) {
    error = cudaEventCreateWithFlags(&default_stream_done_, cudaEventDisableTiming);
  }
  streams_ = std::move(streams);  // destroyed by the destructor, also on failure
  if (error != cudaSuccess) {
    throw baton::TransportError(who + "nccl: cannot create CUDA streams on device " +
                                std::to_string(device_) + ": " + cuda_text(error));
  }
  communicator_ = std::make_shared<Communicator>(initialize(ctx, timeout), device_, rank_);
}

ncclComm_t NcclTransport::initialize(const baton::TransportContext& ctx,
                                     std::chrono::milliseconds timeout) {
  return join_communicator(*ctx.store, kUniqueIdKey, ctx.world_size, ctx.rank, ctx.rank,
                           "the communicator of " + std::to_string(ctx.world_size) + " ranks",
                           timeout);
}

ncclComm_t NcclTransport::join_communicator(baton::Store& store, const std::string& key, int size,
                                            int index, int rank, const std::string& what,
                                            std::chrono::milliseconds timeout) {
  const std::string who = baton::rank_prefix(rank) + "nccl: ";
  ncclUniqueId id;
  try {
    if (index == 0) {
      const ncclResult_t result = ncclGetUniqueId(&id);
      if (result != ncclSuccess) {
        throw baton::TransportError(who + "ncclGetUniqueId failed: " + nccl_text(result, nullptr));
      }
      const auto* bytes = reinterpret_cast<const std::uint8_t*>(&id);
      store.set(key, std::vector<std::uint8_t>(bytes, bytes + sizeof(id)));
    } else {
      const std::vector<std::uint8_t> bytes = store.get(key, timeout);
      if (bytes.size() != sizeof(id)) {
        throw baton::TransportError(who + "the unique id in the store has " +
                                    std::to_string(bytes.size()) + " bytes, expected " +
                                    std::to_string(sizeof(id)));
      }
      std::memcpy(&id, bytes.data(), sizeof(id));
    }
  } catch (const baton::TransportError&) {
    throw;
  } catch (const std::exception& error) {
    throw baton::TransportError(who + "cannot exchange the unique id of " + what + ": " +
                                error.what());
  }

  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;  // returns at once; the state is polled below, against the timeout
  ncclComm_t comm = nullptr;
  ncclResult_t result = ncclCommInitRankConfig(&comm, size, id, index, &config);
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (result == ncclInProgress) {
    if (std::chrono::steady_clock::now() >= deadline) {
      ncclCommAbort(comm);
      throw baton::TransportError(who + "joining " + what + " did not complete within " +
                                  baton::format_seconds(timeout) + " (are all ranks running?)");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    ncclCommGetAsyncError(comm, &result);
  }
  if (result != ncclSuccess) {
    const std::string why = nccl_text(result, comm);
    if (comm != nullptr) ncclCommAbort(comm);
    throw baton::TransportError(who + "ncclCommInitRankConfig failed: " + why);
  }
  return comm;
}

void NcclTransport::check_tensor(const baton::P2POp& op) const {
  baton::check_p2p_arguments(op.tensor, rank_, world_size_, op.peer, op.direction,
                             /*allow_non_cpu=*/true);
  const baton::P2PDescription what{op.direction, op.peer, op.tag, baton::tensor_bytes(op.tensor)};
  const std::string name = baton::rank_prefix(rank_) + what.str();
  if (!op.tensor.is_cuda()) {
    throw baton::TransportError(name + ": the tensor is on " + op.tensor.device().str() +
                                "; the NCCL transport moves CUDA tensors only (this rank uses "
                                "cuda:" +
                                std::to_string(device_) + ")");
  }
  if (op.tensor.device().index() != device_) {
    throw baton::TransportError(
        name + ": the tensor is on " + op.tensor.device().str() +
        ", but this rank's communicator uses cuda:" + std::to_string(device_));
  }
}

baton::Viability NcclTransport::supports_device(const c10::Device& device) const {
  if (device.is_cuda()) return baton::Viability::yes();
  return baton::Viability::no("NCCL moves CUDA tensors only (set world.device: cuda)");
}

std::unique_ptr<baton::Work> NcclTransport::isend(const at::Tensor& tensor, int peer,
                                                  std::uint64_t tag) {
  std::vector<std::unique_ptr<baton::Work>> works =
      post_batch({baton::P2POp{baton::P2PDirection::kSend, tensor, peer, tag}});
  return std::move(works.front());
}

std::unique_ptr<baton::Work> NcclTransport::irecv(const at::Tensor& tensor, int peer,
                                                  std::uint64_t tag) {
  std::vector<std::unique_ptr<baton::Work>> works =
      post_batch({baton::P2POp{baton::P2PDirection::kRecv, tensor, peer, tag}});
  return std::move(works.front());
}

void NcclTransport::forget_completed_locked() {
  // Every completed one, not only those ahead of the oldest still running: a finished
  // transfer holds its tensor until forgotten or tested.
  in_flight_.erase(std::remove_if(in_flight_.begin(), in_flight_.end(),
                                  [](const std::shared_ptr<Transfer>& transfer) {
                                    return cudaEventQuery(transfer->event) != cudaErrorNotReady;
                                  }),
                   in_flight_.end());
}

std::vector<std::unique_ptr<baton::Work>> NcclTransport::post_batch(
    const std::vector<baton::P2POp>& ops) {
  if (communicator_ == nullptr) throw baton::TransportError("nccl: transfer before connect()");
  for (const baton::P2POp& op : ops) check_tensor(op);

  std::vector<std::shared_ptr<Transfer>> transfers;
  for (const baton::P2POp& op : ops) {
    transfers.push_back(std::make_shared<Transfer>(
        communicator_,
        baton::P2PDescription{op.direction, op.peer, op.tag, baton::tensor_bytes(op.tensor)},
        op.tensor));
  }
  std::lock_guard<std::mutex> lock(mutex_);
  forget_completed_locked();
  std::lock_guard<std::mutex> nccl_lock(communicator_->mutex());
  const std::string failure_prefix =
      transfers.size() == 1 ? transfers.front()->name() + ": " : baton::rank_prefix(rank_);
  if (communicator_->handle_locked() == nullptr) {
    throw baton::TransportError(failure_prefix + communicator_->failure_locked());
  }
  cudaSetDevice(device_);  // the current device is per thread
  // Everything already queued on the default stream (where LibTorch produced the tensor,
  // unless the caller used its own stream) happens before the transfers.
  cudaError_t error = cudaEventRecord(default_stream_done_, cudaStreamLegacy);
  for (const auto& transfer : transfers) {
    if (error != cudaSuccess) break;
    const PeerStreams& streams = streams_[transfer->what.peer];
    const cudaStream_t stream =
        transfer->what.direction == baton::P2PDirection::kSend ? streams.send : streams.recv;
    error = cudaStreamWaitEvent(stream, default_stream_done_, 0);
  }
  if (error != cudaSuccess) {
    throw baton::TransportError(failure_prefix +
                                "cannot order the transfer after the default "
                                "stream: " +
                                cuda_text(error));
  }

  ncclComm_t comm = communicator_->handle_locked();
  ncclResult_t result = ncclGroupStart();
  for (const auto& transfer : transfers) {
    if (result != ncclSuccess) break;
    const baton::P2PDescription& what = transfer->what;
    const PeerStreams& streams = streams_[what.peer];
    void* data = transfer->tensor.data_ptr();
    if (what.direction == baton::P2PDirection::kSend) {
      result = ncclSend(data, what.bytes, ncclUint8, what.peer, comm, streams.send);
    } else {
      result = ncclRecv(data, what.bytes, ncclUint8, what.peer, comm, streams.recv);
    }
  }
  result = end_group(result, comm);
  if (result != ncclSuccess) {
    throw baton::TransportError(failure_prefix +
                                "posting to NCCL failed: " + nccl_text(result, comm));
  }

  std::vector<std::unique_ptr<baton::Work>> works;
  for (const auto& transfer : transfers) {
    const PeerStreams& streams = streams_[transfer->what.peer];
    const cudaStream_t stream =
        transfer->what.direction == baton::P2PDirection::kSend ? streams.send : streams.recv;
    error = cudaEventCreateWithFlags(&transfer->event, cudaEventDisableTiming);
    if (error == cudaSuccess) error = cudaEventRecord(transfer->event, stream);
    if (error != cudaSuccess) {
      throw baton::TransportError(transfer->name() +
                                  ": cannot record its completion event: " + cuda_text(error));
    }
    in_flight_.push_back(transfer);
    works.push_back(std::make_unique<NcclWork>(transfer));
  }
  return works;
}

void NcclTransport::abort(const std::string& reason) {
  if (communicator_ != nullptr) communicator_->abort("the transport was aborted: " + reason);
  abort_groups("the transport was aborted: " + reason);
}

}  // namespace baton_nccl
