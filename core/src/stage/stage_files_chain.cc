#include "baton/stage_files_chain.h"

#include <torch/script.h>

#include <algorithm>
#include <filesystem>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

#include "baton/error.h"
#include "baton/files.h"
#include "script_outputs.h"

namespace baton {

const char* const kStageNamesFile = "baton/names.json";

namespace {

using NameMap = std::map<std::string, std::string>;

struct StageFile {
  std::string path;
  torch::jit::Module module;
  bool has_map = false;
  NameMap parameter_names;  // own -> original
  NameMap buffer_names;
  // Tied weights: groups of original names that are one tensor in the model (baton-split
  // writes them; each stage file holding one keeps its own copy).
  std::vector<std::vector<std::string>> ties;
  // Which split wrote it (baton-split records one in each file): its id, this file's place,
  // the number of stages and every original name the split's files hold between them.
  struct Split {
    std::string id;
    long stage = -1;
    long stages = 0;
    std::set<std::string> names;
  };
  std::optional<Split> split;
  std::optional<TracedInputs> traced;
  std::optional<ModelLossRecord> model_loss;
};

// A JSON list of sizes (non-negative integers); throws ConfigError(rule) for anything else.
std::vector<std::int64_t> read_sizes(const nlohmann::json& list, const std::string& rule) {
  if (!list.is_array()) throw ConfigError(rule);
  std::vector<std::int64_t> sizes;
  for (const auto& size : list) {
    if (!size.is_number_integer() || size.get<std::int64_t>() < 0) throw ConfigError(rule);
    sizes.push_back(size.get<std::int64_t>());
  }
  return sizes;
}

std::optional<ModelLossRecord> read_model_loss(const nlohmann::json& map, const std::string& path) {
  if (!map.contains("model_loss")) return std::nullopt;
  const auto& entry = map.at("model_loss");
  const std::string rule = std::string("stage file '") + path + "': " + kStageNamesFile +
                           ": \"model_loss\" must be {\"targets\": {\"shape\": [sizes of one "
                           "sample], \"dtype\": text, \"classes\": n}, \"ignore_index\": n}";
  if (!entry.is_object() || !entry.contains("targets") || !entry["targets"].is_object() ||
      !entry.contains("ignore_index") || !entry["ignore_index"].is_number_integer()) {
    throw ConfigError(rule);
  }
  const auto& targets = entry["targets"];
  if (!targets.contains("shape") || !targets.contains("dtype") || !targets["dtype"].is_string() ||
      !targets.contains("classes") || !targets["classes"].is_number_integer() ||
      targets["classes"].get<std::int64_t>() < 0) {
    throw ConfigError(rule);
  }
  ModelLossRecord record;
  record.file = path;
  record.target_shape = read_sizes(targets["shape"], rule);
  record.target_dtype = targets["dtype"].get<std::string>();
  record.classes = targets["classes"].get<std::int64_t>();
  record.ignore_index = entry["ignore_index"].get<std::int64_t>();
  return record;
}

std::optional<TracedInputs> read_traced_for(const nlohmann::json& split, const std::string& path) {
  if (!split.contains("traced_for")) return std::nullopt;
  const auto& entry = split.at("traced_for");
  const std::string rule = std::string("stage file '") + path + "': " + kStageNamesFile +
                           ": \"split\".\"traced_for\" must be {\"inputs\": [[sizes of one "
                           "sample] per input], \"command\": text, \"fixed_at\": [text]}";
  if (!entry.is_object() || !entry.contains("inputs") || !entry["inputs"].is_array()) {
    throw ConfigError(rule);
  }
  TracedInputs traced;
  traced.file = path;
  for (const auto& shape : entry["inputs"]) traced.shapes.push_back(read_sizes(shape, rule));
  if (entry.contains("command")) {
    if (!entry["command"].is_string()) throw ConfigError(rule);
    traced.command = entry["command"].get<std::string>();
  }
  if (entry.contains("fixed_at")) {
    if (!entry["fixed_at"].is_array()) throw ConfigError(rule);
    for (const auto& where : entry["fixed_at"]) {
      if (!where.is_string()) throw ConfigError(rule);
      traced.fixed_at.push_back(where.get<std::string>());
    }
  }
  return traced;
}

// One sample's sizes: the tensor's without the batch dimension (none for a 0-d tensor).
c10::IntArrayRef sample_sizes(const at::Tensor& tensor) {
  const c10::IntArrayRef sizes = tensor.sizes();
  return sizes.empty() ? sizes : sizes.slice(1);
}

bool traced_shapes_match(const TracedInputs& traced, const std::vector<at::Tensor>& inputs) {
  if (inputs.size() != traced.shapes.size()) return false;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (!sample_sizes(inputs[i]).equals(traced.shapes[i])) return false;
  }
  return true;
}

// A stage traced for other input shapes than it is given: said before its forward fails
// somewhere inside with a size of the example's. Every forward asks; only a mismatch builds
// the message.
void check_traced_shapes(const TracedInputs& traced, const std::vector<at::Tensor>& inputs) {
  if (traced_shapes_match(traced, inputs)) return;
  std::vector<std::vector<std::int64_t>> given;
  for (const at::Tensor& input : inputs) given.push_back(sample_sizes(input).vec());
  std::string where;
  for (std::size_t i = 0; i < traced.fixed_at.size(); ++i) {
    where += (i ? ", " : "") + traced.fixed_at[i];
  }
  throw ConfigError(
      "stage file '" + traced.file + "' was traced for inputs " +
      format_sample_shapes(traced.shapes) + " (one sample each; the batch is free) and is given " +
      format_sample_shapes(given) +
      ": baton-split kept the sizes the model's forward reads as numbers" +
      (where.empty() ? std::string() : " (" + where + ")") +
      ". Split again with example_inputs() of the shape you train on" +
      (traced.command.empty() ? std::string() : " (`" + traced.command + "` wrote these files)") +
      ", or give the run inputs of the traced shape (model.params.inputs, the data)");
}

std::optional<StageFile::Split> read_split(const nlohmann::json& map, const std::string& path) {
  if (!map.contains("split")) return std::nullopt;
  const auto& entry = map.at("split");
  const std::string rule = std::string("stage file '") + path + "': " + kStageNamesFile +
                           ": \"split\" must be {\"id\": text, \"stage\": n, \"stages\": n, "
                           "\"names\": [the original names the split holds]}";
  if (!entry.is_object() || !entry.contains("id") || !entry["id"].is_string() ||
      !entry.contains("stage") || !entry["stage"].is_number_integer() ||
      !entry.contains("stages") || !entry["stages"].is_number_integer() ||
      !entry.contains("names") || !entry["names"].is_array()) {
    throw ConfigError(rule);
  }
  StageFile::Split split;
  split.id = entry["id"].get<std::string>();
  split.stage = entry["stage"].get<long>();
  split.stages = entry["stages"].get<long>();
  for (const auto& name : entry["names"]) {
    if (!name.is_string()) throw ConfigError(rule);
    split.names.insert(name.get<std::string>());
  }
  if (split.stages < 1 || split.stage < 0 || split.stage >= split.stages) throw ConfigError(rule);
  return split;
}

// Stage files written by baton-split must be one split's, all of it, in its order: files of
// two splits (cut at other places) would run as a model nobody wrote, silently.
void check_one_whole_split(const std::vector<StageFile>& files) {
  const auto first = std::find_if(files.begin(), files.end(),
                                  [](const StageFile& file) { return file.split.has_value(); });
  if (first == files.end()) return;  // written by hand, or by a baton-split before splits had ids
  const auto& split = *first->split;
  const std::string remedy =
      "; give model.stages the files of one baton-split run, in order (its model.yaml lists "
      "them)";
  std::set<std::string> held;
  for (std::size_t i = 0; i < files.size(); ++i) {
    const StageFile& file = files[i];
    if (!file.split) {
      throw ConfigError("model.stages: '" + file.path + "' records no split, but '" + first->path +
                        "' was written by baton-split" + remedy);
    }
    if (file.split->id != split.id) {
      throw ConfigError("model.stages: '" + file.path + "' is stage " +
                        std::to_string(file.split->stage) + " of split " + file.split->id +
                        " and '" + first->path + "' stage " + std::to_string(split.stage) +
                        " of split " + split.id +
                        ": stage files of two splits make a model nobody wrote" + remedy);
    }
    if (file.split->stage != static_cast<long>(i) ||
        file.split->stages != static_cast<long>(files.size())) {
      throw ConfigError("model.stages: '" + file.path + "' is stage " +
                        std::to_string(file.split->stage) + " of " +
                        std::to_string(file.split->stages) + ", listed as stage " +
                        std::to_string(i) + " of " + std::to_string(files.size()) + remedy);
    }
    for (const NameMap* names : {&file.parameter_names, &file.buffer_names}) {
      for (const auto& entry : *names) held.insert(entry.second);
    }
  }
  if (held != split.names) {
    std::vector<std::string> missing;
    std::set_difference(split.names.begin(), split.names.end(), held.begin(), held.end(),
                        std::back_inserter(missing));
    throw ConfigError("model.stages: the files of split " + split.id + " hold " +
                      std::to_string(held.size()) + " of its " +
                      std::to_string(split.names.size()) + " names" +
                      (missing.empty() ? std::string() : " (missing: " + missing.front() + ", …)") +
                      " (a stage file rewritten, or edited?)" + remedy);
  }
}

std::vector<std::vector<std::string>> read_ties(const nlohmann::json& map,
                                                const std::string& path) {
  std::vector<std::vector<std::string>> ties;
  if (!map.contains("ties")) return ties;
  const auto& entries = map.at("ties");
  const std::string rule = std::string("stage file '") + path + "': " + kStageNamesFile +
                           ": \"ties\" must be a list of lists of the original model's names, "
                           "each list one tensor";
  if (!entries.is_array()) throw ConfigError(rule);
  for (const auto& group : entries) {
    if (!group.is_array() || group.size() < 2) throw ConfigError(rule);
    std::vector<std::string> names;
    for (const auto& name : group) {
      if (!name.is_string()) throw ConfigError(rule);
      names.push_back(name.get<std::string>());
    }
    ties.push_back(std::move(names));
  }
  return ties;
}

NameMap read_section(const nlohmann::json& map, const char* section, const std::string& path) {
  NameMap names;
  if (!map.contains(section)) return names;
  const auto& entries = map.at(section);
  if (!entries.is_object()) {
    throw ConfigError("stage file '" + path + "': " + kStageNamesFile + ": \"" + section +
                      "\" must map each of the stage's own names to the original model's");
  }
  for (const auto& item : entries.items()) {
    if (!item.value().is_string()) {
      throw ConfigError("stage file '" + path + "': " + kStageNamesFile + ": \"" + section + "\"." +
                        item.key() + " must be a name (a string)");
    }
    names[item.key()] = item.value().get<std::string>();
  }
  return names;
}

StageFile load_stage_file(const std::string& path) {
  StageFile file;
  file.path = path;
  try {
    require_readable_file(path, "stage file");
  } catch (const Error& error) {
    std::error_code unknown;
    throw ConfigError(std::string(error.what()) +
                      (path.empty() || path[0] == '/'
                           ? std::string()
                           : " (the folder baton runs in: " +
                                 std::filesystem::current_path(unknown).string() + ")"));
  }
  torch::jit::ExtraFilesMap extra{{kStageNamesFile, ""}};
  try {
    file.module = torch::jit::load(path, c10::nullopt, extra);
  } catch (const c10::Error& error) {
    std::string first_line = error.what_without_backtrace();
    first_line = first_line.substr(0, first_line.find('\n'));
    throw ConfigError("cannot load stage file '" + path + "': " + first_line +
                      " (write stage files with baton-split, or save each stage module with "
                      "torch.jit.save(torch.jit.script(stage), path))");
  }
  if (!file.module.find_method("forward")) {
    throw ConfigError("stage file '" + path + "' has no forward method");
  }
  const std::string& text = extra[kStageNamesFile];
  if (text.empty()) return file;
  nlohmann::json map;
  try {
    map = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& error) {
    throw ConfigError("stage file '" + path + "': its " + kStageNamesFile +
                      " is not JSON: " + error.what());
  }
  if (!map.is_object()) {
    throw ConfigError("stage file '" + path + "': its " + kStageNamesFile +
                      " must be an object {\"parameters\": {...}, \"buffers\": {...}}");
  }
  file.has_map = true;
  file.parameter_names = read_section(map, "parameters", path);
  file.buffer_names = read_section(map, "buffers", path);
  file.ties = read_ties(map, path);
  file.split = read_split(map, path);
  if (file.split) file.traced = read_traced_for(map.at("split"), path);
  file.model_loss = read_model_loss(map, path);
  for (const auto& param : file.module.named_parameters(/*recurse=*/true)) {
    if (!file.parameter_names.count(param.name)) {
      throw ConfigError("stage file '" + path + "': parameter '" + param.name +
                        "' has no original name in its " + kStageNamesFile +
                        "; the map must name every parameter (write the file again with "
                        "baton-split)");
    }
  }
  return file;
}

class StageFilesChain : public UnitChain {
 public:
  explicit StageFilesChain(std::vector<StageFile> files) : files_(std::move(files)) {
    // One name in two stages would make two tensors one in checkpoints and exports: found
    // here, for parameters and buffers alike, not after training at export.
    std::map<std::string, std::string> owner;
    for (int unit = 0; unit < num_units(); ++unit) {
      for (const bool buffers : {false, true}) {
        for (const auto& named : buffers ? unit_buffers(unit) : unit_parameters(unit)) {
          const auto inserted = owner.emplace(named.first, files_[unit].path);
          if (!inserted.second) {
            throw ConfigError(std::string(buffers ? "buffer" : "parameter") + " '" + named.first +
                              "' is in stage file '" + inserted.first->second + "' and in '" +
                              files_[unit].path +
                              "'; each name belongs to one stage. Give the "
                              "files the original model's names (" +
                              kStageNamesFile + ", as baton-split writes) or distinct names");
          }
        }
      }
    }
  }

  int num_units() const override { return static_cast<int>(files_.size()); }

  // Makes each tie's copies one tensor, as in the model: the first holder's, put in place of
  // the others' (every rank loads every stage file, so every rank holds the model whole;
  // the trainer then finds the tie as one tensor under several names).
  void retie() {
    std::set<std::vector<std::string>> ties;
    for (const auto& file : files_) ties.insert(file.ties.begin(), file.ties.end());
    for (const auto& names : ties) {
      at::Tensor shared;
      std::string shared_where;
      for (auto& file : files_) {
        for (const auto& [own, original] : file.parameter_names) {
          if (std::find(names.begin(), names.end(), original) == names.end()) continue;
          // The attribute behind the stage's own name: "lm_head.weight" -> lm_head's weight.
          torch::jit::Module holder = file.module;
          std::string attribute = own;
          for (auto dot = attribute.find('.'); dot != std::string::npos;
               dot = attribute.find('.')) {
            holder = holder.attr(attribute.substr(0, dot)).toModule();
            attribute = attribute.substr(dot + 1);
          }
          const at::Tensor copy = holder.attr(attribute).toTensor();
          if (!shared.defined()) {
            shared = copy;
            shared_where = "'" + original + "' in '" + file.path + "'";
            continue;
          }
          if (!copy.sizes().equals(shared.sizes()) || !at::equal(copy, shared)) {
            throw ConfigError("tied weights: '" + original + "' in '" + file.path +
                              "' differs from " + shared_where +
                              ", which the stage files say are one tensor; write the files "
                              "again with baton-split from one model");
          }
          holder.register_parameter(attribute, shared, /*is_buffer=*/false);
        }
      }
    }
  }

  std::string unit_name(int unit) const override {
    const std::string& path = files_.at(static_cast<std::size_t>(unit)).path;
    return path.substr(path.find_last_of('/') + 1);
  }

  std::vector<at::Tensor> run_unit(int unit, const std::vector<at::Tensor>& inputs) override {
    auto& file = files_.at(static_cast<std::size_t>(unit));
    if (file.traced) check_traced_shapes(*file.traced, inputs);
    std::vector<c10::IValue> args(inputs.begin(), inputs.end());
    return script_outputs_to_tensors(file.module.forward(args), "stage file '" + file.path + "'");
  }

  std::vector<std::pair<std::string, at::Tensor>> unit_parameters(int unit) const override {
    const auto& file = files_.at(static_cast<std::size_t>(unit));
    std::vector<std::pair<std::string, at::Tensor>> params;
    for (const auto& param : file.module.named_parameters(/*recurse=*/true)) {
      params.emplace_back(file.has_map ? file.parameter_names.at(param.name) : param.name,
                          param.value);
    }
    return params;
  }

  std::vector<std::pair<std::string, at::Tensor>> unit_buffers(int unit) const override {
    // TorchScript forgets which buffers are persistent; the map lists those the original
    // model's state dict holds.
    const auto& file = files_.at(static_cast<std::size_t>(unit));
    std::vector<std::pair<std::string, at::Tensor>> buffers;
    for (const auto& buffer : file.module.named_buffers(/*recurse=*/true)) {
      const auto found = file.buffer_names.find(buffer.name);
      if (found != file.buffer_names.end()) buffers.emplace_back(found->second, buffer.value);
    }
    return buffers;
  }

  void set_training(bool training) override {
    for (auto& file : files_) file.module.train(training);
  }

  void move_unit(int unit, c10::Device device) override {
    files_.at(static_cast<std::size_t>(unit)).module.to(device);
  }

  const std::optional<TracedInputs>& traced(int unit) const {
    return files_.at(static_cast<std::size_t>(unit)).traced;
  }

  const std::optional<ModelLossRecord>& model_loss() const { return files_.back().model_loss; }

 private:
  std::vector<StageFile> files_;
};

}  // namespace

std::string format_sample_shapes(const std::vector<std::vector<std::int64_t>>& shapes) {
  std::string text;
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    text += i ? ", [" : "[";
    for (std::size_t d = 0; d < shapes[i].size(); ++d) {
      text += (d ? ", " : "") + std::to_string(shapes[i][d]);
    }
    text += "]";
  }
  return text;
}

std::optional<TracedInputs> traced_inputs_of(const UnitChain& chain, int unit) {
  const auto* files = dynamic_cast<const StageFilesChain*>(&chain);
  if (files == nullptr || unit < 0 || unit >= files->num_units()) return std::nullopt;
  return files->traced(unit);
}

std::optional<ModelLossRecord> model_loss_of(const UnitChain& chain) {
  const auto* files = dynamic_cast<const StageFilesChain*>(&chain);
  if (files == nullptr) return std::nullopt;
  return files->model_loss();
}

std::shared_ptr<UnitChain> load_stage_files_chain(const std::vector<std::string>& paths) {
  if (paths.empty()) throw ConfigError("model.stages lists no stage files");
  std::vector<StageFile> files;
  for (const std::string& path : paths) files.push_back(load_stage_file(path));
  check_one_whole_split(files);
  auto chain = std::make_shared<StageFilesChain>(std::move(files));
  chain->retie();
  return chain;
}

}  // namespace baton
