// The NCCL transport's tensor side: makes the transport from checked parameters
// (libbaton_nccl_transport.so, loaded by the plugin file on first use).
#include "baton/plugin_implementation.h"
#include "nccl_transport.h"

namespace {

std::unique_ptr<baton::PluginObject> make_transport(const baton::ParamValues& params) {
  baton_nccl::NcclOptions options;
  options.connect_timeout = params.get_seconds("timeout_s", "transport.params.timeout_s");
  const std::int64_t device = params.get_int("device");
  if (device < -1 || device > 1024) {
    throw baton::ConfigError("transport.params.device must be -1 or a CUDA device index, got " +
                             params.at("device").text());
  }
  options.device = static_cast<int>(device);
  return std::make_unique<baton_nccl::NcclTransport>(options);
}

}  // namespace

BATON_PLUGIN_IMPLEMENTATION(&make_transport)
