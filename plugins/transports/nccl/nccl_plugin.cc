// The NCCL transport plugin: CUDA tensors between GPUs with NCCL's point-to-point calls.
// Not viable on a machine without a visible CUDA device (the reason names CUDA's answer).
// This file is the plugin's descriptor (parameters, viability); nccl_create.cc makes the
// transport.
#include "baton/plugin.h"
#include "baton/plugin_implementation.h"
#include "cuda_status.h"

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

// The tensor side (LibTorch) is libbaton_nccl_transport.so, loaded when a transport is
// made: listing this plugin costs no LibTorch.
const char kInThisLibrary = 0;

std::unique_ptr<baton::PluginObject> create(const baton::ParamValues& params) {
  return baton::create_from_implementation(&kInThisLibrary, "libbaton_nccl_transport.so", params);
}

// What the object implements (transport version 2: supports_device). NCCL matches transfers
// in posting order per peer, so it does not list baton.receives_match_by_tag.
const baton::PluginInterface kInterfaces[] = {
    baton::kTransportInterface, baton::kAllReduceInterface, baton::kShardCollectivesInterface};

}  // namespace

BATON_PLUGIN_WITH_INTERFACES(
    baton::PluginKind::kTransport, "nccl", "1.0.0",
    "CUDA tensors between GPUs with NCCL point-to-point (transfers matched in posting "
    "order per peer)",
    kParams, &viability, &create, kInterfaces)
