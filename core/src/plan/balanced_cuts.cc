#include "baton/plan/balanced_cuts.h"

#include <algorithm>
#include <limits>
#include <string>

#include "baton/error.h"

namespace baton {

std::vector<int> balanced_boundaries(const std::vector<double>& unit_costs, int num_stages) {
  const int units = static_cast<int>(unit_costs.size());
  if (num_stages < 1 || num_stages > units) {
    throw ConfigError("cannot cut " + std::to_string(units) + " units into " +
                      std::to_string(num_stages) + " stages");
  }
  std::vector<double> prefix(static_cast<std::size_t>(units) + 1, 0.0);
  for (int u = 0; u < units; ++u)
    prefix[static_cast<std::size_t>(u) + 1] = prefix[static_cast<std::size_t>(u)] + unit_costs[u];
  auto cost = [&](int from, int to) { return prefix[to] - prefix[from]; };
  // best[s][u]: the smallest largest-stage cost of units [0, u) in s stages; min-max over
  // contiguous partitions, small enough (units x stages x units) to solve exactly.
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<std::vector<double>> best(
      static_cast<std::size_t>(num_stages) + 1,
      std::vector<double>(static_cast<std::size_t>(units) + 1, inf));
  std::vector<std::vector<int>> cut(best.size(), std::vector<int>(best[0].size(), 0));
  best[0][0] = 0.0;
  for (int s = 1; s <= num_stages; ++s) {
    for (int u = s; u <= units - (num_stages - s); ++u) {
      for (int from = s - 1; from < u; ++from) {
        const double candidate = std::max(best[s - 1][from], cost(from, u));
        // Ties go to the later cut, which keeps the last stage (which also runs the loss)
        // no larger than the others.
        if (candidate <= best[s][u]) {
          best[s][u] = candidate;
          cut[s][u] = from;
        }
      }
    }
  }
  std::vector<int> bounds(static_cast<std::size_t>(num_stages) + 1);
  bounds[static_cast<std::size_t>(num_stages)] = units;
  for (int s = num_stages; s > 0; --s) bounds[s - 1] = cut[s][bounds[s]];
  return bounds;
}

}  // namespace baton
