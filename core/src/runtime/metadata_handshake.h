// Internal: the setup handshake of one stage. The stage learns its input metadata (stage 0
// from the batch; later stages from the previous stage, locally or over the transport),
// runs shape inference, and, when the previous stage is on another rank, replies whether
// it can take those inputs. A failure anywhere is sent down the pipeline so every rank
// fails at setup with the same message instead of waiting.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "baton/plan/plan.h"
#include "baton/stage.h"
#include "baton/tensor_meta.h"
#include "baton/transport.h"

namespace baton {

struct HandshakeContext {
  int rank;
  const Plan& plan;
  Transport* transport;  // may be null when nothing crosses ranks
  std::chrono::milliseconds timeout;
  // Added to a plan rank to get its rank on the transport (data parallelism: the replica's
  // first rank).
  int rank_offset = 0;
  // What each stage holds, for messages (ExecutorOptions::stage_names); may be empty.
  std::vector<std::string> stage_names;
  // Output metadata of this rank's stages handled so far (for same-rank neighbours).
  std::map<int, std::vector<TensorMeta>> local_outputs;
  // This rank's device: the setup messages and the metas' buffers live there.
  c10::Device device{c10::kCPU};
  // The forward's autocast (ExecutorOptions::autocast): the probe runs as the steps will, so
  // the metas, and the receive buffers made from them, have the dtypes that really arrive.
  std::optional<c10::ScalarType> autocast;
};

struct StageMetas {
  std::vector<TensorMeta> inputs;
  std::vector<TensorMeta> outputs;
};

// Call for this rank's stages in increasing order. `first_inputs`: stage 0's microbatch
// input metadata (used only for stage 0).
StageMetas exchange_stage_metadata(HandshakeContext& context, Stage& stage,
                                   const std::vector<TensorMeta>& first_inputs);

}  // namespace baton
