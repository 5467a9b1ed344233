// V-Min (Qi et al., "Pipeline Parallelism with Controllable Memory", 2024): ZB-V's placement
// and split backward with the least activation memory of the family — about a third of
// 1F1B's: a rank holds about 2r/3 half-stage microbatches where 1F1B holds r whole ones — for
// a bubble of about two thirds of 1F1B's when F, I and W cost the same. The pattern
// (common/v_pattern.h) starts rank k's computations of microbatch 0 at
//   F down k,  F up 2r-k-1,  I up 2r+g+k,  I down 4r+g-k-1
// with g = 2 when r is a multiple of 3 (else 0), the gap that keeps the four apart modulo 6.
#include <memory>

#include "../common/v_pattern.h"

namespace {

constexpr char kName[] = "v_min";

class VMin final : public baton::Schedule {
 public:
  void check(const baton::ScheduleShape& shape) const override {
    baton_v_pattern::check_shape(kName, shape);
  }

  baton::Plan build(const baton::ScheduleShape& shape) const override {
    return baton_v_pattern::build(kName, shape, [](int k, int r) {
      const int gap = r % 3 == 0 ? 2 : 0;
      return baton_v_pattern::Offsets{k, 2 * r - k - 1, 2 * r + gap + k, 4 * r + gap - k - 1};
    });
  }
};

std::unique_ptr<baton::PluginObject> create(const baton::ParamValues&) {
  return std::make_unique<VMin>();
}

}  // namespace

BATON_PLUGIN(baton::PluginKind::kSchedule, kName, "1.0.0",
             "V-Min: the V placement and split backward with about a third of 1F1B's activation "
             "memory (Qi et al. 2024)",
             nullptr, nullptr, &create)
