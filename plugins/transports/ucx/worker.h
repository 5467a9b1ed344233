// One UCP context and its worker: tag messages with wake-up events, UCX's configuration
// read from the environment (UCX_TLS, UCX_NET_DEVICES, … are honoured, never overridden;
// `net_devices` applies only when UCX_NET_DEVICES is not set, `excluded_transports` only when
// UCX_TLS is not).
#pragma once

#include <ucp/api/ucp.h>

#include <cstdint>
#include <string>
#include <vector>

namespace baton_ucx {

class Worker {
 public:
  // Throws baton::Error saying which UCX call failed and why. `net_devices` (e.g. "lo"):
  // the network devices UCX may use and listen on; empty: UCX's default (all of them).
  // `excluded_transports` (e.g. "cma,tcp"): UCX transports left out of UCX_TLS's default,
  // applied only when UCX_TLS is not set; empty: none.
  explicit Worker(const std::string& net_devices = "", const std::string& excluded_transports = "");
  ~Worker();
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  ucp_worker_h handle() const { return worker_; }
  // Signaled on UCX events once the worker is armed (ucp_worker_arm).
  int event_fd() const { return event_fd_; }
  // The worker's address, as peers pass it to ucp_ep_create.
  const std::vector<std::uint8_t>& address() const { return address_; }
  // Whether UCX can move CUDA device memory (built with CUDA, and a CUDA transport loaded).
  bool supports_cuda_memory() const { return cuda_memory_; }

 private:
  ucp_context_h context_ = nullptr;
  ucp_worker_h worker_ = nullptr;
  int event_fd_ = -1;
  std::vector<std::uint8_t> address_;
  bool cuda_memory_ = false;
};

// "Endpoint timeout": UCX's text for a status.
std::string status_text(ucs_status_t status);

}  // namespace baton_ucx
