#include "model_catalog.h"

#include "baton/error.h"
#include "baton/suggest.h"
#include "losses.h"

namespace baton_models {
namespace {

using baton::ParamSpec;
using baton::ParamType;

const ParamSpec kMlpParams[] = {
    {"in_features", ParamType::kInt, "64", "Input width."},
    {"hidden", ParamType::kInt, "256", "Width of every hidden layer."},
    {"layers", ParamType::kInt, "8", "Hidden layers (each Linear + ReLU is one child)."},
    {"out_features", ParamType::kInt, "10", "Output width (classes)."},
    {"head", ParamType::kBool, "true",
     "End with a Linear(hidden, out_features) head; false: the last hidden layer (Linear + "
     "ReLU) is the output, and out_features is ignored."},
};

const ParamSpec kGptParams[] = {
    {"vocab_size", ParamType::kInt, "256", "Vocabulary size (256: bytes)."},
    {"seq_len", ParamType::kInt, "64", "Tokens per sample (context length)."},
    {"d_model", ParamType::kInt, "128", "Embedding width."},
    {"heads", ParamType::kInt, "4", "Attention heads per block."},
    {"layers", ParamType::kInt, "4", "Decoder blocks."},
};

const ParamSpec kIdentityParams[] = {
    {"width", ParamType::kInt, "1024", "Width of a sample (and of every unit's output)."},
    {"units", ParamType::kInt, "4", "Units, each a multiplication by one learnable scalar."},
};

const ParamSpec kTorchScriptParams[] = {
    {"input_shape", ParamType::kIntList, "[]",
     "Shape of one sample's input (without the batch dimension), for synthetic data."},
    {"num_classes", ParamType::kInt, "0",
     "Classes of the cross-entropy loss (synthetic targets in [0, num_classes)); 0: the width "
     "of the model's output on one sample."},
};

}  // namespace

const std::vector<ModelEntry>& model_catalog() {
  static const std::vector<ModelEntry> catalog = {
      {"mlp", "Multi-layer perceptron (Linear + ReLU blocks), classification loss.", kMlpParams,
       baton::param_table_size(kMlpParams), &build_mlp},
      {"gpt", "Small GPT-style decoder: embedding, attention blocks, layer norm, head.", kGptParams,
       baton::param_table_size(kGptParams), &build_gpt},
      {"identity",
       "Units that return their input (times a learnable scalar): the runtime's own cost.",
       kIdentityParams, baton::param_table_size(kIdentityParams), &build_identity},
      {"torchscript", "A scripted model saved from Python (torch.jit.save), named by model.path.",
       kTorchScriptParams, baton::param_table_size(kTorchScriptParams), nullptr},
  };
  return catalog;
}

const ModelEntry& find_model(const baton::ParamValue& model_name) {
  std::vector<std::string> names;
  for (const auto& entry : model_catalog()) {
    if (model_name.as_string() == entry.name) return entry;
    names.emplace_back(entry.name);
  }
  throw baton::ConfigError(model_name.origin().description + ": model.name: unknown model '" +
                           model_name.as_string() + "'" +
                           baton::did_you_mean(model_name.as_string(), names) +
                           "; built-in models: mlp, gpt, identity, torchscript");
}

BuiltModel build_configured_model(baton::Config& config, std::uint64_t seed) {
  const baton::ParamValues& section = config.section("model");
  const ModelEntry& entry = find_model(section.at("name"));
  config.set_plugin_params(
      "model", baton::resolve_params(config.raw_params("model"), entry.params, entry.num_params,
                                     std::string("model '") + entry.name + "'"));
  BuiltModel model = entry.build == nullptr ? build_torchscript(config.section("model").at("path"),
                                                                config.plugin_params("model"))
                                            : entry.build(config.plugin_params("model"), seed);
  apply_configured_loss(config.section("model").at("loss"), &model);
  return model;
}

}  // namespace baton_models
