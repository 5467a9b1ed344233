// The NCCL transport plugin: CUDA tensors between GPUs with NCCL's point-to-point calls.
// Not viable on a machine without a visible CUDA device (the reason names CUDA's answer).
#include <cmath>

#include "baton/plugin.h"
#include "cuda_status.h"
#include "nccl_transport.h"

namespace {

const baton::ParamSpec kParams[] = {
    {"timeout_s", baton::ParamType::kFloat, "0",
     "Seconds to wait for the other ranks to join the NCCL communicator; 0: the run's timeout "
     "(world.timeout_s)."},
    {"device", baton::ParamType::kInt, "-1",
     "CUDA device this rank uses; -1: the rank modulo the number of visible devices."},
};

baton::Viability viability() {
  std::string reason;
  if (baton_nccl::visible_devices(&reason) == 0) return baton::Viability::no(reason);
  return baton::Viability::yes();
}

std::unique_ptr<baton::PluginObject> create(const baton::ParamValues& params) {
  baton_nccl::NcclOptions options;
  const double timeout_s = params.get_float("timeout_s");
  if (!(timeout_s >= 0) || !std::isfinite(timeout_s)) {
    throw baton::ConfigError("transport.params.timeout_s must be a number >= 0, got " +
                             params.at("timeout_s").text());
  }
  options.connect_timeout = std::chrono::milliseconds(static_cast<std::int64_t>(timeout_s * 1000));
  const std::int64_t device = params.get_int("device");
  if (device < -1 || device > 1024) {
    throw baton::ConfigError("transport.params.device must be -1 or a CUDA device index, got " +
                             params.at("device").text());
  }
  options.device = static_cast<int>(device);
  return std::make_unique<baton_nccl::NcclTransport>(options);
}

}  // namespace

BATON_PLUGIN(baton::PluginKind::kTransport, "nccl", "1.0.0",
             "CUDA tensors between GPUs with NCCL point-to-point (transfers matched in posting "
             "order per peer)",
             kParams, &viability, &create)
