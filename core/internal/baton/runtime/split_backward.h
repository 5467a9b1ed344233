// The backward pass of one stage for one microbatch, as one piece (B) or split in two for
// zero-bubble schedules: I (gradients w.r.t. the stage inputs, which the previous stage
// needs now) and W (gradients w.r.t. the parameters, deferred).
//
// W reuses I's work. After the forward, the autograd graph is classified: a node "reaches
// inputs" when a path leads from it to a stage input, and "reaches params" when one leads to
// a parameter's accumulator. The weight roots are the nodes where the weight-only part of the
// graph hangs off: mixed nodes with a weight-only child (a matmul whose operands are the
// activation and a weight) and weight-only nodes fed straight by an output (stage 0, whose
// inputs need no gradient). I runs the engine from the outputs to the inputs only, capturing
// the gradient arriving at every weight root; W re-enters the graph at each weight root with
// that gradient and asks only for its parameters, so a matmul computes just its weight half.
//
// This uses LibTorch 1.13's autograd engine directly (PyTorch's Python I/W split needs 2.x).
#pragma once

#include <ATen/core/Tensor.h>

#include <cstddef>
#include <functional>
#include <memory>
#include <vector>

#include "baton/export.h"

namespace baton {

// Full backward: accumulates parameter gradients into .grad and returns the gradients of
// `inputs` (undefined for inputs that need none). `output_grads` empty means the outputs
// are scalar losses (gradient 1).
BATON_API std::vector<at::Tensor> full_backward(const std::vector<at::Tensor>& outputs,
                                                const std::vector<at::Tensor>& output_grads,
                                                const std::vector<at::Tensor>& inputs);

class BATON_API SplitBackward {
 public:
  // `inputs` are the stage's input leaves (detached, requires_grad where a gradient must be
  // sent back); `params` the stage's parameters. Call after the forward, before backward.
  SplitBackward(std::vector<at::Tensor> outputs, std::vector<at::Tensor> inputs,
                std::vector<at::Tensor> params);
  ~SplitBackward();
  SplitBackward(const SplitBackward&) = delete;
  SplitBackward& operator=(const SplitBackward&) = delete;

  // I: returns the gradients of the inputs; keeps what W needs.
  std::vector<at::Tensor> backward_input(const std::vector<at::Tensor>& output_grads);
  // Called with a parameter's index in `params` once W has added the last of its gradient
  // (data parallelism posts the all-reduce of a bucket whose gradients are all final); when
  // the backward was not split, for every parameter (I added them all).
  using GradientFinal = std::function<void(std::size_t param_index)>;

  // W: accumulates the parameter gradients into .grad and releases the graph.
  void backward_weight(const GradientFinal& on_final = {});

  // False when the graph shares a parameter between the input path and a weight path in a
  // way that a split would count twice; I then runs the full backward and W does nothing.
  bool is_split() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace baton
