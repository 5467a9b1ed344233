#include "cuda_order.h"

#include <dlfcn.h>

#include <string>

#include "baton/transport.h"

namespace baton_ucx {
namespace {

using CtxSynchronize = int (*)();  // CUresult cuCtxSynchronize(void); 0 is CUDA_SUCCESS

CtxSynchronize find_ctx_synchronize() {
  // RTLD_NOLOAD: only a driver already loaded by whoever made the CUDA tensor.
  void* driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (driver == nullptr) return nullptr;
  return reinterpret_cast<CtxSynchronize>(dlsym(driver, "cuCtxSynchronize"));
}

}  // namespace

void wait_for_queued_cuda_work(const char* what) {
  static const CtxSynchronize synchronize = find_ctx_synchronize();
  if (synchronize == nullptr) {
    throw baton::TransportError(std::string(what) +
                                ": a CUDA tensor, but the CUDA driver (libcuda.so.1) is not "
                                "loaded in this process, so the transfer cannot be ordered "
                                "after the GPU work that produces or reads it");
  }
  const int status = synchronize();
  if (status != 0) {
    throw baton::TransportError(std::string(what) +
                                ": waiting for the GPU work queued before the transfer failed "
                                "(CUresult " +
                                std::to_string(status) + ")");
  }
}

}  // namespace baton_ucx
