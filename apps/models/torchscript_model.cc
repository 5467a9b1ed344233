// A model scripted and saved from Python: one file cut between its children (model.path), or
// one file per stage (model.stages). Its inputs are the data as it is; what its output is
// (the classes of the loss) is learned from a sample of the data (output_probe.h).
#include <ATen/ATen.h>

#include "baton/error.h"
#include "baton/stage_files_chain.h"
#include "baton/torchscript_chain.h"
#include "input_declaration.h"
#include "models.h"

namespace baton_models {
namespace {

at::ScalarType scalar_type_named(const std::string& dtype) {
  if (dtype == "float32") return at::kFloat;
  if (dtype == "float64") return at::kDouble;
  if (dtype == "float16") return at::kHalf;
  if (dtype == "bfloat16") return at::kBFloat16;
  if (dtype == "int64") return at::kLong;
  if (dtype == "int32") return at::kInt;
  if (dtype == "int16") return at::kShort;
  if (dtype == "int8") return at::kChar;
  if (dtype == "uint8") return at::kByte;
  if (dtype == "bool") return at::kBool;
  throw baton::Error("no tensor type for dtype '" + dtype + "'");
}

std::vector<InputSpec> declared_inputs(const baton::ParamValues& params) {
  std::vector<InputSpec> inputs;
  const baton::ParamValue& declared = params.at("inputs");
  for (const std::string& text : declared.as_string_list()) {
    const InputDeclaration declaration =
        parse_input_declaration(text, declared.origin().description + ": model.params.inputs");
    inputs.push_back({declaration.shape, scalar_type_named(declaration.dtype), declaration.high});
  }
  const std::vector<std::int64_t> shape = params.at("input_shape").as_int_list();
  if (!shape.empty()) inputs.push_back({shape, at::kFloat, 0});
  return inputs;
}

// Stage files traced for other input shapes than the configuration declares: refused here,
// at the declaration's line, before a forward fails inside the model.
void check_traced_inputs(const baton::UnitChain& chain, const std::vector<InputSpec>& inputs,
                         const baton::ParamValues& params) {
  const auto traced = baton::traced_inputs_of(chain, 0);
  if (!traced || inputs.empty()) return;
  std::vector<std::vector<std::int64_t>> declared;
  for (const InputSpec& input : inputs) declared.push_back(input.shape);
  if (declared == traced->shapes) return;
  const bool from_inputs = !params.at("inputs").as_string_list().empty();
  const baton::ParamValue& where = params.at(from_inputs ? "inputs" : "input_shape");
  throw baton::ConfigError(
      where.origin().description + ": model.params." + (from_inputs ? "inputs" : "input_shape") +
      " declares inputs " + baton::format_sample_shapes(declared) + ", but stage file '" +
      traced->file + "' was traced for " + baton::format_sample_shapes(traced->shapes) +
      " (one sample each; the batch is free): baton-split kept the sizes the model's forward "
      "reads as numbers. Declare the traced shapes (the files' model.yaml has them), or split "
      "again with example_inputs() of the shape you train on" +
      (traced->command.empty() ? std::string() : " (`" + traced->command + "` wrote the files)"));
}

}  // namespace

BuiltModel build_torchscript(const baton::Setting<std::string>& path,
                             const baton::Setting<std::vector<std::string>>& stage_files,
                             const baton::ParamValues& params) {
  const std::vector<std::string>& stages = stage_files.value;
  if (path.value.empty() == stages.empty()) {
    throw baton::ConfigError(
        (stages.empty() ? path.where() : stage_files.where()) +
        (stages.empty()
             ? ": model 'torchscript' needs model.path (one .pt file saved with "
               "torch.jit.save(torch.jit.script(model), path)) or model.stages (one file per "
               "stage, e.g. written by baton-split)"
             : ": model.path and model.stages are both set; give one: model.path for one "
               "file cut between its children, model.stages for one file per stage"));
  }
  BuiltModel model;
  model.keeps_data_dtype = true;
  model.inputs = declared_inputs(params);
  model.loss = cross_entropy_loss;
  model.num_classes = params.get_int("num_classes");
  if (!stages.empty()) {
    model.chain = baton::load_stage_files_chain(stages);
    check_traced_inputs(*model.chain, model.inputs, params);
    model.stage_files = true;
    model.description = "model 'torchscript' (" + std::to_string(stages.size()) + " stage files)";
    return model;
  }
  model.chain = baton::load_torchscript_chain(path.value);
  model.description = "model 'torchscript' (" + path.value + ")";
  std::shared_ptr<baton::UnitChain> chain = model.chain;
  model.verify = [chain](const std::vector<at::Tensor>& inputs) {
    baton::verify_torchscript_chain(*chain, inputs);
  };
  return model;
}

}  // namespace baton_models
