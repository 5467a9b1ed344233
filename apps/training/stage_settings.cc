#include "stage_settings.h"

#include <algorithm>
#include <cstdlib>

#include "baton/error.h"
#include "baton/suggest.h"
#include "recompute_setting.h"

namespace baton_app {

std::int64_t pipeline_stages(const baton::Config& config) {
  return config.section("world").get_int("ranks") /
         std::max<std::int64_t>(1, config.section("world").get_int("data_parallel")) *
         config.section("schedule").get_int("stages_per_rank");
}

StageCuts parse_stage_cuts(const baton::ParamValue& value) {
  const std::vector<std::string> items = value.as_string_list();
  StageCuts cuts;
  if (items.empty() || (items.size() == 1 && items[0] == "params")) return cuts;
  if (items.size() == 1 && items[0] == "balanced") {
    cuts.kind = StageCuts::Kind::kBalanced;
    return cuts;
  }
  cuts.kind = StageCuts::Kind::kAtUnits;
  std::int64_t previous = 0;
  for (const auto& item : items) {
    char* end = nullptr;
    const long long index = std::strtoll(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0') {
      throw baton::ConfigError(value.origin().description + ": model.cuts: '" + item +
                               "' is not a unit index; write params, balanced, or a list of "
                               "unit indices such as [2, 5]" +
                               baton::did_you_mean(item, {"params", "balanced"}));
    }
    if (index <= previous) {
      throw baton::ConfigError(value.origin().description + ": model.cuts " + value.text() +
                               ": each cut is the unit where a stage begins, so they must be " +
                               "increasing and at least 1; " + item + " is not");
    }
    previous = index;
    cuts.units.push_back(index);
  }
  return cuts;
}

StageCuts check_stage_cuts(const baton::Config& config) {
  const baton::ParamValue& value = config.section("model").at("cuts");
  const StageCuts cuts = parse_stage_cuts(value);
  const std::int64_t stages = pipeline_stages(config);
  if (cuts.kind == StageCuts::Kind::kAtUnits &&
      static_cast<std::int64_t>(cuts.units.size()) != stages - 1) {
    throw baton::ConfigError(value.origin().description + ": model.cuts " + value.text() + " has " +
                             std::to_string(cuts.units.size()) + " cuts; " +
                             std::to_string(stages) + " stages (world.ranks / " +
                             "world.data_parallel x schedule.stages_per_rank) need " +
                             std::to_string(stages - 1));
  }
  return cuts;
}

StageSettings read_stage_settings(const baton::Config& config) {
  StageSettings settings;
  settings.cuts = {check_stage_cuts(config), config.section("model").at("cuts").origin()};
  const std::int64_t stages = pipeline_stages(config);
  settings.recompute = baton::read_parsed_setting(
      config.section("model"), "recompute",
      [stages](const baton::ParamValue& value) { return recomputed_stages(value, stages); });
  settings.validators =
      baton::read_setting<std::vector<std::string>>(config.section("validation"), "validators");
  return settings;
}

}  // namespace baton_app
