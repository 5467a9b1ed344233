// The largest pipeline shapes baton plans. Far above any real run; their point is that a
// typo (microbatches: 1000000000) is refused with a message before it reaches the
// allocator. A plan holds a few actions per (stage, microbatch), so its memory grows with
// ranks x stages_per_rank x microbatches.
#pragma once

#include <cstdint>

namespace baton {

inline constexpr std::int64_t kMaxRanks = 16384;
inline constexpr std::int64_t kMaxStagesPerRank = 64;
inline constexpr std::int64_t kMaxMicrobatches = 65536;
// ranks x stages_per_rank x microbatches (about 100 MB of plan at the limit).
inline constexpr std::int64_t kMaxPlanUnits = 1 << 20;

}  // namespace baton
