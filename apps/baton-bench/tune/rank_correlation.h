// How well one series orders things like another: Spearman's rank correlation, for
// `baton bench tune` (predicted against measured step times). LibTorch-free.
#pragma once

#include <vector>

namespace baton_app {

// Spearman's rank correlation of two equally long series (ties get their mean rank): 1 when
// they order their items alike, -1 when reversed; 0 for fewer than two values, series of
// different lengths, or a constant series.
double rank_correlation(const std::vector<double>& a, const std::vector<double>& b);

}  // namespace baton_app
