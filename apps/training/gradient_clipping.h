// Global gradient clipping (optimizer.clip_grad_norm), as torch.nn.utils.clip_grad_norm_
// does it on the unpipelined model: every gradient scaled by min(1, C / (norm + 1e-6)), where
// the norm is the whole model's (the executor measures it over the pipeline's ranks), so
// every rank scales by the same factor.
#pragma once

#include <ATen/core/Tensor.h>

#include <vector>

namespace baton_app {

// The L2 norm of `params`' gradients, as torch.nn.utils.clip_grad_norm_ takes it (the
// formula GradientSync measures the pipeline's with: baton::gradient_squares). A parameter
// without a gradient counts 0.
double gradient_norm(const std::vector<at::Tensor>& params);

// Scales this rank's gradients for max norm `max_norm` and the whole model's norm `norm`.
// Returns the factor applied (1: left as they are). Throws Error naming `step` when the norm
// is not finite: a nan or inf gradient would poison every weight it reaches.
double clip_gradients(const std::vector<at::Tensor>& params, double norm, double max_norm,
                      int step);

}  // namespace baton_app
