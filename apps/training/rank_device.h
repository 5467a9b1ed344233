// Where a rank's stages live (world.device): the CPU, or with `cuda` the GPU of the rank's
// local rank on its machine (as torchrun's LOCAL_RANK, Slurm's SLURM_LOCALID or Open MPI's
// local rank number them; baton launch starts every rank on this machine). Chosen once, at
// set-up; the stages' parameters and buffers are moved there before the transport connects
// and the executor's handshake allocates receive buffers on it.
#pragma once

#include <c10/core/Device.h>

#include <string>

#include "baton/unit_chain.h"
#include "world_info.h"

namespace baton_app {

// Throws baton::ConfigError naming world.device when the rank has no such device (no CUDA
// in this LibTorch, or fewer GPUs on the machine than ranks on it).
c10::Device rank_device(const WorldSettings& settings, const WorldInfo& world);

struct LocalStages;

// Moves every parameter and buffer of the rank's own stages (their units of `chain`) to
// `device` in place: the tensors keep their identity, so the optimizer, the checkpoints and
// the stages see the moved ones. Nothing to do on the CPU.
void place_on_device(baton::UnitChain& chain, const LocalStages& local, c10::Device device);

}  // namespace baton_app
