// The precision a profile measures the model's units in: the run's (precision.compute,
// params, wire), so that `schedule: auto` and `baton tune` cost a bf16 run by bf16 times and
// bytes. With compute: bf16 every unit's forward runs under autocast, as the run's stages do
// (on every thread that computes — the timed passes' and the companions': autocast is per
// thread); with params: bf16 the chain's parameters and floating buffers are cast to bf16 and
// its floating inputs with them, as LowPrecisionStage and MasterWeights do. A unit's outputs
// cross ranks in precision.wire's dtype, so that is what their bytes are counted in. The
// profiler runs on the CPU, whose autocast in LibTorch 1.13 has bf16 only: an fp16 run
// (world.device: cuda) is measured in bf16, its closest — the same bytes, a CPU's bf16 times.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/ScalarType.h>

#include <optional>
#include <vector>

#include "baton/unit_chain.h"
#include "training/precision_settings.h"

namespace baton_app {

class UnitPrecision {
 public:
  explicit UnitPrecision(const PrecisionSettings& precision);

  // params: bf16: `chain`'s parameters and floating buffers cast in place (the chain keeps
  // its tensors). Otherwise nothing.
  void cast_chain(baton::UnitChain& chain) const;
  // The model's inputs as its first stage computes on them (params: bf16: floating ones cast).
  std::vector<at::Tensor> model_inputs(const std::vector<at::Tensor>& inputs) const;
  // Unit `unit` of `chain` on `inputs`, under autocast where the run computes under it.
  std::vector<at::Tensor> run_unit(baton::UnitChain& chain, int unit,
                                   const std::vector<at::Tensor>& inputs) const;
  // What `outputs` take on the wire between two ranks.
  double wire_bytes(const std::vector<at::Tensor>& outputs) const;
  // What the optimizer, the gradients and the replicas' all-reduce hold of `params`: with
  // params: bf16 their float32 masters' bytes, not the bf16 copies'.
  double parameter_bytes(const std::vector<at::Tensor>& params) const;

 private:
  std::optional<c10::ScalarType> autocast_;    // compute: bf16 / fp16 (measured in bf16)
  std::optional<c10::ScalarType> parameters_;  // params: bf16
  std::optional<c10::ScalarType> wire_;        // wire: not auto
};

}  // namespace baton_app
