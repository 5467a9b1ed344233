// A model given as one TorchScript file per stage (model.stages), as baton-split writes them
// or as an author writes the stage modules by hand: each file is one unit and one stage.
// Stage i's forward takes stage i-1's outputs (a tensor, or a tuple unpacked as positional
// arguments); the first takes the batch's inputs.
//
// A file may carry the map from its own parameter and buffer names to the original model's
// (the extra file "baton/names.json" inside the .pt: {"parameters": {own: original},
// "buffers": {own: original}}), so checkpoints and exports use the original names. Without a
// map a stage's parameters keep its own names and no buffer is exported.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "baton/export.h"
#include "baton/unit_chain.h"

namespace baton {

// The name of the extra file inside a stage's .pt that holds its name map.
BATON_API extern const char* const kStageNamesFile;

// Loads every file (throws ConfigError naming the file and what is wrong: unreadable, no
// forward, a map that misses a parameter or names one twice, two stages with the same name).
BATON_API std::shared_ptr<UnitChain> load_stage_files_chain(const std::vector<std::string>& paths);

// What a stage file was traced for, when baton-split fixed the sizes its forward reads to
// example_inputs()' (names.json "split"."traced_for"): the shape of each input, one sample
// without the batch dimension (the batch stays free), the command that wrote the files and
// where forward() read the sizes. A stage file refuses other input shapes, naming these.
struct TracedInputs {
  std::string file;
  std::vector<std::vector<std::int64_t>> shapes;
  std::string command;
  std::vector<std::string> fixed_at;
};

// `unit`'s TracedInputs; nullopt when it runs any shape or `chain` is not stage files.
BATON_API std::optional<TracedInputs> traced_inputs_of(const UnitChain& chain, int unit);

// The model's own loss, when baton-split traced its forward with targets (the last stage
// file's names.json "model_loss"): that stage takes the targets as its last input and
// returns the loss, a mean over the targets other than `ignore_index`. `target_shape` is one
// sample's (no batch dimension); `classes` the logits' width (0: unknown).
struct ModelLossRecord {
  std::string file;
  std::vector<std::int64_t> target_shape;
  std::string target_dtype;
  std::int64_t classes = 0;
  std::int64_t ignore_index = -100;
};

// The last unit's ModelLossRecord; nullopt when it returns no loss or `chain` is not stage
// files.
BATON_API std::optional<ModelLossRecord> model_loss_of(const UnitChain& chain);

// "[32]", "[32], [32, 128]": shapes as the messages write them.
BATON_API std::string format_sample_shapes(const std::vector<std::vector<std::int64_t>>& shapes);

}  // namespace baton
