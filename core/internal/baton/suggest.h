// "Did you mean …?" for typos in keys, plugin names and CLI words.
#pragma once

#include <string>
#include <vector>

#include "baton/export.h"

namespace baton {

// The candidate closest to `word` by edit distance (with transpositions), if it is close
// enough to be a plausible typo; empty otherwise.
BATON_API std::string nearest_word(const std::string& word,
                                   const std::vector<std::string>& candidates);

// " (did you mean 'x'?)" or "" — ready to append to a message.
BATON_API std::string did_you_mean(const std::string& word,
                                   const std::vector<std::string>& candidates);

}  // namespace baton
