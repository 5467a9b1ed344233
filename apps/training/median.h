// The middle value the profilers take of their samples.
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

namespace baton_app {

// The upper of the two middle values of an even count; 0 for no values.
inline double median(std::vector<double> values) {
  if (values.empty()) return 0.0;
  const auto middle = values.begin() + static_cast<std::ptrdiff_t>(values.size() / 2);
  std::nth_element(values.begin(), middle, values.end());
  return *middle;
}

}  // namespace baton_app
