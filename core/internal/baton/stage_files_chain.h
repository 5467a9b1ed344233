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

#include <memory>
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

}  // namespace baton
