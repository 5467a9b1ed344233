// CUDA and NCCL status texts, and whether this machine has a CUDA device at all.
#pragma once

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <string>

namespace baton_nccl {

// "cudaErrorNoDevice (no CUDA-capable device is detected)"
std::string cuda_text(cudaError_t error);
// "unhandled system error: <ncclGetLastError text>"; `comm` may be null.
std::string nccl_text(ncclResult_t result, ncclComm_t comm);

// Ends an ncclGroupStart() whose calls returned `posted` (the first failure among them, or
// ncclSuccess): returns that, else ncclGroupEnd's result, after waiting for a non-blocking
// communicator to finish enqueueing (events are recorded only after it has).
ncclResult_t end_group(ncclResult_t posted, ncclComm_t comm);

// The number of visible CUDA devices, or 0 with `reason` saying why there is none:
// "no CUDA device visible: cudaGetDeviceCount returned cudaErrorNoDevice (…)".
int visible_devices(std::string* reason);

}  // namespace baton_nccl
