// Orders a UCX transfer of CUDA memory after the GPU work already queued by this process.
// UCX copies device memory on streams of its own, unordered with LibTorch's: a send could read
// an activation a queued kernel has not written yet, and a receive could overwrite a buffer a
// queued kernel has not read yet (the runtime reuses receive buffers across microbatches). So
// before such a transfer the caller's CUDA context is synchronized. The plugin does not link
// CUDA: the driver is found in the process (it is loaded wherever a CUDA tensor exists).
#pragma once

namespace baton_ucx {

// Waits for the work queued in the calling thread's CUDA context; throws TransportError naming
// `what` when the driver cannot be found or reports an error.
void wait_for_queued_cuda_work(const char* what);

}  // namespace baton_ucx
