#include "nccl_work.h"

#include <algorithm>
#include <thread>

#include "cuda_status.h"

namespace baton_nccl {

Communicator::Communicator(ncclComm_t comm, int device, int rank)
    : comm_(comm), device_(device), rank_(rank) {}

Communicator::~Communicator() {
  std::lock_guard<std::mutex> lock(mutex_);
  abort_locked("the transport was shut down");
}

void Communicator::abort(const std::string& reason) {
  std::lock_guard<std::mutex> lock(mutex_);
  abort_locked(reason);
}

void Communicator::abort_locked(const std::string& reason) {
  if (aborted_) return;
  aborted_ = true;
  failure_ = reason;
  cudaSetDevice(device_);
  ncclCommAbort(comm_);  // frees the communicator; its pending kernels are terminated
  comm_ = nullptr;
}

std::string Communicator::failure() {
  std::lock_guard<std::mutex> lock(mutex_);
  return failure_;
}

std::string Communicator::check_async_error() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (aborted_) return failure_;
  ncclResult_t state = ncclSuccess;
  const ncclResult_t result = ncclCommGetAsyncError(comm_, &state);
  if (result != ncclSuccess) state = result;
  if (state == ncclSuccess || state == ncclInProgress) return "";
  abort_locked("nccl: " + nccl_text(state, comm_));
  return failure_;
}

Transfer::Transfer(std::shared_ptr<Communicator> communicator_in, baton::P2PDescription what_in,
                   at::Tensor tensor_in)
    : communicator(std::move(communicator_in)), what(what_in), tensor(std::move(tensor_in)) {}

Transfer::~Transfer() {
  // Safe while the event is pending: CUDA releases it once it completes.
  if (event != nullptr) cudaEventDestroy(event);
}

std::string Transfer::name() const {
  return baton::rank_prefix(communicator->rank()) + what.str();
}

bool Transfer::completed() {
  const cudaError_t state = cudaEventQuery(event);
  if (state == cudaSuccess) {
    tensor = at::Tensor();
    return true;
  }
  if (state != cudaErrorNotReady) {
    const std::string why = "CUDA: " + cuda_text(state);
    communicator->abort(why);
    throw baton::TransportError(name() + " failed: " + why);
  }
  const std::string failure = communicator->check_async_error();
  if (!failure.empty()) throw baton::TransportError(name() + " failed: " + failure);
  return false;
}

void NcclWork::wait(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  // Short transfers finish within microseconds; long waits should not spin a core.
  std::chrono::microseconds pause(20);
  while (!transfer_->completed()) {
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) {
      const std::string message =
          transfer_->name() + " timed out after " + baton::format_seconds(timeout) +
          "; the NCCL communicator was aborted (NCCL cannot cancel one transfer), so this "
          "transport cannot be used any more. NCCL matches transfers by posting order: check "
          "that rank " +
          std::to_string(transfer_->what.peer) + " posts its matching operations in the same order";
      transfer_->communicator->abort(message);
      throw baton::TransportError(message);
    }
    std::this_thread::sleep_for(
        std::min<std::chrono::steady_clock::duration>(pause, deadline - now));
    pause = std::min(pause * 2, std::chrono::microseconds(1000));
  }
}

}  // namespace baton_nccl
