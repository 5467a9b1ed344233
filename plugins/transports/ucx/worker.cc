#include "worker.h"

#include <cstdlib>

#include "baton/error.h"

namespace baton_ucx {

namespace {

[[noreturn]] void fail(const std::string& call, ucs_status_t status) {
  // baton::Error, not TransportError: the plugin file (no LibTorch) runs this for viability.
  throw baton::Error("ucx: " + call + " failed: " + status_text(status));
}

}  // namespace

std::string status_text(ucs_status_t status) {
  return ucs_status_string(status);
}

Worker::Worker(const std::string& net_devices, const std::string& excluded_transports) {
  ucp_config_t* config = nullptr;
  ucs_status_t status = ucp_config_read(nullptr, nullptr, &config);
  if (status != UCS_OK) fail("ucp_config_read (check the UCX_* environment variables)", status);
  if (!net_devices.empty() && std::getenv("UCX_NET_DEVICES") == nullptr) {
    status = ucp_config_modify(config, "NET_DEVICES", net_devices.c_str());
    if (status != UCS_OK) {
      ucp_config_release(config);
      fail("setting NET_DEVICES to '" + net_devices + "' (transport.params.net_devices)", status);
    }
  }

  if (!excluded_transports.empty() && std::getenv("UCX_TLS") == nullptr) {
    const std::string tls = "^" + excluded_transports;
    status = ucp_config_modify(config, "TLS", tls.c_str());
    if (status != UCS_OK) {
      ucp_config_release(config);
      fail("setting TLS to '" + tls + "'", status);
    }
  }

  ucp_params_t params{};
  params.field_mask = UCP_PARAM_FIELD_FEATURES;
  // WAKEUP: the progress thread sleeps on the worker's event fd instead of polling.
  params.features = UCP_FEATURE_TAG | UCP_FEATURE_WAKEUP;
  status = ucp_init(&params, config, &context_);
  ucp_config_release(config);
  if (status != UCS_OK) fail("ucp_init", status);

  ucp_context_attr_t context_attr{};
  context_attr.field_mask = UCP_ATTR_FIELD_MEMORY_TYPES;
  if (ucp_context_query(context_, &context_attr) == UCS_OK) {
    cuda_memory_ = (context_attr.memory_types & UCS_BIT(UCS_MEMORY_TYPE_CUDA)) != 0;
  }

  ucp_worker_params_t worker_params{};
  worker_params.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE | UCP_WORKER_PARAM_FIELD_EVENTS;
  // The transport serializes every call into UCX with its own mutex (see ucx_transport.h).
  worker_params.thread_mode = UCS_THREAD_MODE_SERIALIZED;
  // Partial completions (TX/RX) wake the progress thread too, so that multi-step protocols
  // (rendezvous, fragmented sends) keep moving while it sleeps.
  worker_params.events = UCP_WAKEUP_TAG_SEND | UCP_WAKEUP_TAG_RECV | UCP_WAKEUP_TX | UCP_WAKEUP_RX;
  status = ucp_worker_create(context_, &worker_params, &worker_);
  if (status != UCS_OK) {
    ucp_cleanup(context_);
    fail("ucp_worker_create", status);
  }

  status = ucp_worker_get_efd(worker_, &event_fd_);
  if (status == UCS_OK) {
    ucp_address_t* address = nullptr;
    std::size_t length = 0;
    status = ucp_worker_get_address(worker_, &address, &length);
    if (status == UCS_OK) {
      const auto* bytes = reinterpret_cast<const std::uint8_t*>(address);
      address_.assign(bytes, bytes + length);
      ucp_worker_release_address(worker_, address);
    }
  }
  if (status != UCS_OK) {
    ucp_worker_destroy(worker_);
    ucp_cleanup(context_);
    fail(event_fd_ < 0 ? "ucp_worker_get_efd" : "ucp_worker_get_address", status);
  }
}

Worker::~Worker() {
  ucp_worker_destroy(worker_);
  ucp_cleanup(context_);
}

}  // namespace baton_ucx
