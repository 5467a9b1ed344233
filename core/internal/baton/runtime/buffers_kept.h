// A probe — a forward run only to learn the shapes a stage gives, to check that pieces of a
// model chain up, or to time them — must leave the model as training will find it. In
// training mode a forward updates buffers: a BatchNorm's running statistics and its
// num_batches_tracked. BuffersKept copies the buffers it is given and puts the copies back
// when it goes out of scope, so a probe changes nothing a checkpoint or an export holds.
// Every probe of the runtime and the tools (the metadata handshake, the TorchScript model's
// check, the measured balance of --balance/stage cuts) runs inside one.
#pragma once

#include <ATen/core/Tensor.h>

#include <string>
#include <utility>
#include <vector>

#include "baton/export.h"

namespace baton {

class BATON_API BuffersKept {
 public:
  explicit BuffersKept(const std::vector<std::pair<std::string, at::Tensor>>& buffers);
  ~BuffersKept();  // puts every buffer back as it was, unseen by autograd's version counts
  BuffersKept(const BuffersKept&) = delete;
  BuffersKept& operator=(const BuffersKept&) = delete;

 private:
  std::vector<std::pair<at::Tensor, at::Tensor>> kept_;  // (the buffer, its copy)
};

}  // namespace baton
