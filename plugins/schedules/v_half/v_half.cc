// V-Half (Qi et al., "Pipeline Parallelism with Controllable Memory", 2024): ZB-V's placement
// and split backward, with about half of 1F1B's activation memory — a rank holds about r
// half-stage microbatches where 1F1B holds r whole ones — and a bubble of about half of
// 1F1B's when F, I and W cost the same. The pattern (common/v_pattern.h) starts rank k's
// computations of microbatch 0 at
//   F down 2k,  F up 3r-k-2,  I up 3r+g+2k-1,  I down 6r+g-k-2
// with g = 3 when r is even (else 0), the gap that keeps the four apart modulo 6.
#include <memory>

#include "../common/v_pattern.h"

namespace {

constexpr char kName[] = "v_half";

class VHalf final : public baton::Schedule {
 public:
  void check(const baton::ScheduleShape& shape) const override {
    baton_v_pattern::check_shape(kName, shape);
  }

  baton::Plan build(const baton::ScheduleShape& shape) const override {
    return baton_v_pattern::build(kName, shape, [](int k, int r) {
      const int gap = r % 2 == 0 ? 3 : 0;
      return baton_v_pattern::Offsets{2 * k, 3 * r - k - 2, 3 * r + gap + 2 * k - 1,
                                      6 * r + gap - k - 2};
    });
  }
};

std::unique_ptr<baton::PluginObject> create(const baton::ParamValues&) {
  return std::make_unique<VHalf>();
}

}  // namespace

BATON_PLUGIN(baton::PluginKind::kSchedule, kName, "1.0.0",
             "V-Half: the V placement and split backward with about half of 1F1B's activation "
             "memory and half its bubble (Qi et al. 2024)",
             nullptr, nullptr, &create)
