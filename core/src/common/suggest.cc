#include "baton/suggest.h"

#include <algorithm>
#include <cctype>

namespace baton {
namespace {

std::string lowercase(const std::string& text) {
  std::string out = text;
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

// Optimal string alignment distance: insertions, deletions, substitutions and adjacent
// transpositions each cost 1 ("microbaches" -> "microbatches" is 1).
std::size_t edit_distance(const std::string& a, const std::string& b) {
  const std::size_t n = a.size(), m = b.size();
  std::vector<std::vector<std::size_t>> d(n + 1, std::vector<std::size_t>(m + 1));
  for (std::size_t i = 0; i <= n; ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= m; ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= n; ++i) {
    for (std::size_t j = 1; j <= m; ++j) {
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[n][m];
}

}  // namespace

std::string nearest_word(const std::string& word, const std::vector<std::string>& candidates) {
  const std::string lowered = lowercase(word);
  std::string best;
  std::size_t best_distance = 0;
  for (const auto& candidate : candidates) {
    const std::size_t distance = edit_distance(lowered, lowercase(candidate));
    if (best.empty() || distance < best_distance) {
      best = candidate;
      best_distance = distance;
    }
  }
  // A plausible typo changes at most a third of the word (and never more than 3 edits);
  // a prefix of a long candidate also counts ("micro" -> "microbatches").
  const std::size_t limit = std::min<std::size_t>(3, std::max<std::size_t>(1, word.size() / 3));
  if (best.empty()) return {};
  if (best_distance <= limit) return best;
  for (const auto& candidate : candidates) {
    if (word.size() >= 3 && lowercase(candidate).rfind(lowered, 0) == 0) return candidate;
  }
  return {};
}

std::string did_you_mean(const std::string& word, const std::vector<std::string>& candidates) {
  const std::string best = nearest_word(word, candidates);
  return best.empty() ? std::string() : " (did you mean '" + best + "'?)";
}

}  // namespace baton
