#include "model_specs.h"

#include <utility>

#include "baton/error.h"
#include "baton/suggest.h"
#include "input_declaration.h"

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
    {"tie_embeddings", ParamType::kBool, "false",
     "The head's weight is the token embedding's (GPT-2, nanoGPT): one tensor under both "
     "names, kept identical on the ranks that hold each."},
};

const ParamSpec kIdentityParams[] = {
    {"width", ParamType::kInt, "1024", "Width of a sample (and of every unit's output)."},
    {"units", ParamType::kInt, "4", "Units, each a multiplication by one learnable scalar."},
};

const ParamSpec kTorchScriptParams[] = {
    {"inputs", ParamType::kStringList, "[]",
     "The forward's arguments, in order, for synthetic data and the text source: "
     "DTYPE[SHAPE] or DTYPE[SHAPE]<HIGH, e.g. [\"int64[32]<256\", \"bool[32]\"]; [] with "
     "data files: whatever the files hold."},
    {"input_shape", ParamType::kIntList, "[]",
     "Shorthand for one float32 input: one sample's shape without the batch dimension."},
    {"num_classes", ParamType::kInt, "0",
     "Classes of the cross-entropy loss (synthetic targets in [0, num_classes)); 0: the width "
     "of the model's output on a sample of the data."},
};

// A size no machine here could hold is a typo, not a model: refused before any allocation.
constexpr std::int64_t kLargestWidth = 1 << 20;

void check_size(const baton::ParamValues& params, const char* key, std::int64_t smallest,
                std::int64_t largest) {
  const std::int64_t value = params.get_int(key);
  if (value < smallest || value > largest) {
    throw baton::ConfigError(params.at(key).origin().description + ": model.params." + key +
                             " must be between " + std::to_string(smallest) + " and " +
                             std::to_string(largest) + ", got " + std::to_string(value));
  }
}

void check_mlp(const baton::ParamValues& params) {
  check_size(params, "in_features", 1, kLargestWidth);
  check_size(params, "hidden", 1, kLargestWidth);
  check_size(params, "layers", 1, 4096);
  check_size(params, "out_features", 1, kLargestWidth);
}

void check_gpt(const baton::ParamValues& params) {
  check_size(params, "vocab_size", 1, kLargestWidth);
  check_size(params, "seq_len", 1, kLargestWidth);
  check_size(params, "d_model", 1, kLargestWidth);
  check_size(params, "heads", 1, kLargestWidth);
  check_size(params, "layers", 1, 4096);
  const std::int64_t width = params.get_int("d_model");
  const std::int64_t heads = params.get_int("heads");
  if (width % heads != 0) {
    throw baton::ConfigError(params.at("heads").origin().description + ": model.params.heads (" +
                             std::to_string(heads) + ") must divide model.params.d_model (" +
                             std::to_string(width) + ")");
  }
}

void check_identity(const baton::ParamValues& params) {
  check_size(params, "width", 1, kLargestWidth);
  check_size(params, "units", 1, 4096);
}

void check_torchscript(const baton::ParamValues& params) {
  const baton::ParamValue& shape = params.at("input_shape");
  for (const std::int64_t extent : shape.as_int_list()) {
    if (extent < 1 || extent > kLargestWidth) {
      throw baton::ConfigError(shape.origin().description +
                               ": model.params.input_shape: every extent must be between 1 and " +
                               std::to_string(kLargestWidth) + ", got " + shape.text());
    }
  }
  const baton::ParamValue& inputs = params.at("inputs");
  if (!inputs.as_string_list().empty() && !shape.as_int_list().empty()) {
    throw baton::ConfigError(inputs.origin().description +
                             ": model.params.inputs and model.params.input_shape both describe "
                             "the model's inputs; keep inputs (input_shape " +
                             shape.text() + " is \"float32" + shape.text() + "\")");
  }
  for (const std::string& text : inputs.as_string_list()) {
    parse_input_declaration(text, inputs.origin().description + ": model.params.inputs");
  }
  check_size(params, "num_classes", 0, kLargestWidth);
}

}  // namespace

const std::vector<ModelSpec>& model_specs() {
  static const std::vector<ModelSpec> specs = {
      {"mlp", "Multi-layer perceptron (Linear + ReLU blocks), classification loss.", kMlpParams,
       baton::param_table_size(kMlpParams), &check_mlp},
      {"gpt", "Small GPT-style decoder: embedding, attention blocks, layer norm, head.", kGptParams,
       baton::param_table_size(kGptParams), &check_gpt},
      {"identity",
       "Units that return their input (times a learnable scalar): the runtime's own cost.",
       kIdentityParams, baton::param_table_size(kIdentityParams), &check_identity},
      {"torchscript",
       "A scripted model saved from Python (torch.jit.save): one file (model.path) or one per "
       "stage (model.stages, as baton-split writes them).",
       kTorchScriptParams, baton::param_table_size(kTorchScriptParams), &check_torchscript},
  };
  return specs;
}

const ModelSpec& find_model_spec(const baton::Setting<std::string>& model_name) {
  std::vector<std::string> names;
  for (const auto& spec : model_specs()) {
    if (model_name.value == spec.name) return spec;
    names.emplace_back(spec.name);
  }
  throw baton::ConfigError(model_name.where() + ": model.name: unknown model '" + model_name.value +
                           "'" + baton::did_you_mean(model_name.value, names) +
                           "; built-in models: mlp, gpt, identity, torchscript");
}

baton::Config with_model_params(baton::Config config) {
  const ModelSpec& spec =
      find_model_spec(baton::read_setting<std::string>(config.section("model"), "name"));
  config = baton::with_section_params(std::move(config), "model", spec.params, spec.num_params,
                                      std::string("model '") + spec.name + "'");
  if (spec.check != nullptr) spec.check(config.plugin_params("model"));
  return config;
}

}  // namespace baton_models
