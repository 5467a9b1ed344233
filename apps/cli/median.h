// The middle value of a set of timings, in the two conventions the project uses.
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

namespace baton_app {

// The benches' median of steps and rounds: the mean of the two middle values of an even
// count; 0 for none.
inline double median_of(std::vector<double> values) {
  if (values.empty()) return 0.0;
  const auto middle = values.begin() + static_cast<std::ptrdiff_t>(values.size() / 2);
  std::nth_element(values.begin(), middle, values.end());
  if (values.size() % 2 == 1) return *middle;
  return (*std::max_element(values.begin(), middle) + *middle) / 2;
}

// The profilers' median of a unit's (or a message's) timed passes: the upper of the two middle
// values of an even count; 0 for none.
inline double upper_median(std::vector<double> values) {
  if (values.empty()) return 0.0;
  const auto middle = values.begin() + static_cast<std::ptrdiff_t>(values.size() / 2);
  std::nth_element(values.begin(), middle, values.end());
  return *middle;
}

}  // namespace baton_app
