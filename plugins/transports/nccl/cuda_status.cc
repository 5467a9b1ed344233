#include "cuda_status.h"

#include <thread>

namespace baton_nccl {

std::string cuda_text(cudaError_t error) {
  return std::string(cudaGetErrorName(error)) + " (" + cudaGetErrorString(error) + ")";
}

std::string nccl_text(ncclResult_t result, ncclComm_t comm) {
  std::string text = ncclGetErrorString(result);
  const char* last = ncclGetLastError(comm);
  if (last != nullptr && last[0] != '\0') text += ": " + std::string(last);
  return text;
}

int visible_devices(std::string* reason) {
  int count = 0;
  const cudaError_t error = cudaGetDeviceCount(&count);
  if (error != cudaSuccess) {
    if (reason != nullptr) {
      *reason = "no CUDA device visible: cudaGetDeviceCount returned " + cuda_text(error);
    }
    return 0;
  }
  if (count == 0 && reason != nullptr) {
    *reason = "no CUDA device visible: cudaGetDeviceCount returned 0 devices";
  }
  return count;
}

ncclResult_t end_group(ncclResult_t posted, ncclComm_t comm) {
  const ncclResult_t ended = ncclGroupEnd();
  ncclResult_t result = posted == ncclSuccess ? ended : posted;
  while (result == ncclInProgress) {
    std::this_thread::yield();
    ncclCommGetAsyncError(comm, &result);
  }
  return result;
}

}  // namespace baton_nccl
