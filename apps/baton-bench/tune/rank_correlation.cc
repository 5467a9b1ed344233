#include "rank_correlation.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <numeric>

namespace baton_app {
namespace {

std::vector<double> ranks_of(const std::vector<double>& values) {
  std::vector<std::size_t> order(values.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(),
            [&](std::size_t a, std::size_t b) { return values[a] < values[b]; });
  std::vector<double> ranks(values.size());
  for (std::size_t i = 0; i < order.size();) {
    std::size_t j = i;
    while (j + 1 < order.size() && values[order[j + 1]] == values[order[i]]) ++j;
    const double mean_rank = (static_cast<double>(i + j) / 2) + 1;
    for (std::size_t k = i; k <= j; ++k) ranks[order[k]] = mean_rank;
    i = j + 1;
  }
  return ranks;
}

}  // namespace

double rank_correlation(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size() || a.size() < 2) return 0.0;
  const std::vector<double> ra = ranks_of(a), rb = ranks_of(b);
  const double mean = (static_cast<double>(a.size()) + 1) / 2;
  double covariance = 0, var_a = 0, var_b = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    covariance += (ra[i] - mean) * (rb[i] - mean);
    var_a += (ra[i] - mean) * (ra[i] - mean);
    var_b += (rb[i] - mean) * (rb[i] - mean);
  }
  if (var_a == 0 || var_b == 0) return 0.0;
  return covariance / std::sqrt(var_a * var_b);
}

}  // namespace baton_app
