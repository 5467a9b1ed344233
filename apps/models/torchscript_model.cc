// A model scripted and saved from Python: the chain of its children, cross-entropy loss on
// the last output dimension, synthetic inputs of `input_shape`.
#include <ATen/ATen.h>

#include "baton/error.h"
#include "baton/torchscript_chain.h"
#include "models.h"

namespace baton_models {

BuiltModel build_torchscript(const baton::ParamValue& path, const baton::ParamValues& params) {
  if (path.as_string().empty()) {
    throw baton::ConfigError(path.origin().description +
                             ": model.path: model 'torchscript' needs the .pt file saved with "
                             "torch.jit.save(torch.jit.script(model), path)");
  }
  BuiltModel model;
  model.chain = baton::load_torchscript_chain(path.as_string());
  model.sample_shape = params.at("input_shape").as_int_list();
  if (model.sample_shape.empty()) {
    throw baton::ConfigError(params.at("input_shape").origin().description +
                             ": model.params.input_shape: give the shape of one sample without "
                             "the batch dimension, e.g. [64]");
  }
  model.loss = cross_entropy_loss;
  model.target_shape = {};
  model.num_classes = params.get_int("num_classes");
  if (model.num_classes <= 0) {
    // Ask the model: the width of its output on one sample.
    std::vector<std::int64_t> shape{1};
    shape.insert(shape.end(), model.sample_shape.begin(), model.sample_shape.end());
    try {
      at::NoGradGuard no_grad;
      const auto outputs = baton::run_whole_chain(*model.chain, {at::zeros(shape)});
      model.num_classes = outputs.at(0).size(-1);
    } catch (const std::exception& error) {
      throw baton::ConfigError("model 'torchscript' (" + path.as_string() +
                               "): cannot find its number of classes by running it on one "
                               "sample: " +
                               error.what() + "; set model.params.num_classes");
    }
  }
  std::shared_ptr<baton::UnitChain> chain = model.chain;
  model.verify = [chain](const std::vector<at::Tensor>& inputs) {
    baton::verify_torchscript_chain(*chain, inputs);
  };
  return model;
}

}  // namespace baton_models
