#include "recompute_setting.h"

#include <cstdlib>
#include <string>
#include <vector>

#include "baton/error.h"

namespace baton_app {

std::set<int> recomputed_stages(const baton::ParamValue& setting, std::int64_t num_stages) {
  const std::vector<std::string> items = setting.as_string_list();
  std::set<int> stages;
  if (items.size() == 1 && (items[0] == "off" || items[0] == "on")) {
    if (items[0] == "on") {
      for (std::int64_t s = 0; s < num_stages; ++s) stages.insert(static_cast<int>(s));
    }
    return stages;
  }
  const std::string where = setting.origin().description + ": model.recompute " + setting.text();
  if (items.empty()) {
    throw baton::ConfigError(where + " names no stage; write off, on, or stage indices [0, 2]");
  }
  for (const std::string& item : items) {
    char* end = nullptr;
    const long long index = std::strtoll(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0') {
      throw baton::ConfigError(where + ": '" + item +
                               "' is neither off, on nor a stage index; write off, on, or a "
                               "list of stage indices such as [0, 2]");
    }
    if (index < 0 || index >= num_stages) {
      throw baton::ConfigError(where + ": the pipeline has stages 0 to " +
                               std::to_string(num_stages - 1) + " (world.ranks / " +
                               "world.data_parallel x schedule.stages_per_rank); " + item +
                               " is not one of them");
    }
    if (!stages.insert(static_cast<int>(index)).second) {
      throw baton::ConfigError(where + ": stage " + item + " is named twice");
    }
  }
  return stages;
}

}  // namespace baton_app
