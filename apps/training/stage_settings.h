// How the model becomes stages, as the configuration says: where it is cut (model.cuts), which
// stages recompute their forward (model.recompute), and the validators each stage runs
// (validation.validators). Read once, typed; errors name the file:line. No LibTorch.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "baton/config.h"
#include "baton/setting.h"

namespace baton_app {

// model.cuts.
struct StageCuts {
  enum class Kind {
    kByParams,  // params (or []): stages of about equal parameter counts
    kBalanced,  // balanced: on measured per-unit time (stage_cuts.h)
    kAtUnits,   // [2, 5]: the unit where each stage after the first begins
  };
  Kind kind = Kind::kByParams;
  std::vector<std::int64_t> units;  // kAtUnits: increasing, at least 1
};

struct StageSettings {
  baton::Setting<StageCuts> cuts;                       // model.cuts
  baton::Setting<std::set<int>> recompute;              // model.recompute: the stages it names
  baton::Setting<std::vector<std::string>> validators;  // validation.validators
};

// The pipeline's stage count: one pipeline's ranks (world.ranks / world.data_parallel) x
// schedule.stages_per_rank.
std::int64_t pipeline_stages(const baton::Config& config);

// model.cuts' words or unit indices. Throws ConfigError naming the value's origin for another
// word or indices that do not increase from 1.
StageCuts parse_stage_cuts(const baton::ParamValue& value);

// model.cuts as parse_stage_cuts reads it, and as many unit indices as the pipeline has stages
// after its first (ConfigError otherwise). The configuration's check runs it.
StageCuts check_stage_cuts(const baton::Config& config);

// `config` went through the run's front door (schedule: auto's choice in it).
StageSettings read_stage_settings(const baton::Config& config);

}  // namespace baton_app
