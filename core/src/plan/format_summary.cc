// The JSON summary of a simulation that `--format json` prints.
#include <string>

#include "baton/plan/format.h"
#include "baton/plan/json_text.h"
#include "json_number.h"

namespace baton {

std::string format_simulation_summary_json(const SimulationResult& result) {
  using plan_internal::json_number;
  std::string json = "{\n";
  json += "  \"schedule\": " + json_quote(result.schedule_name) + ",\n";
  json += "  \"num_ranks\": " + std::to_string(result.num_ranks) + ",\n";
  json += "  \"makespan\": " + json_number(result.makespan) + ",\n";
  json += "  \"bubble_fraction\": " + json_number(result.bubble_fraction) + ",\n";
  json += "  \"ranks\": [";
  for (size_t rank = 0; rank < result.ranks.size(); ++rank) {
    const RankStatistics& stats = result.ranks[rank];
    json += rank == 0 ? "\n" : ",\n";
    json += "    {\"rank\": " + std::to_string(rank) +
            ", \"busy_time\": " + json_number(stats.busy_time) +
            ", \"idle_time\": " + json_number(stats.idle_time) +
            ", \"bubble_fraction\": " + json_number(stats.bubble_fraction) +
            ", \"peak_activations\": " + std::to_string(stats.peak_activations) + "}";
  }
  json += result.ranks.empty() ? "]\n" : "\n  ]\n";
  return json + "}\n";
}

}  // namespace baton
