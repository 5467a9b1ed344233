// Interleaved 1F1B (Narayanan et al., "Efficient Large-Scale Language Model Training on GPU
// Clusters", 2021; PyTorch's ScheduleInterleaved1F1B): v stages per rank in loop placement, run
// depth first — a round of microbatches goes through chunk 0, then chunk 1, ... — with a 1F1B
// steady state (see depth_first.h for the exact order). Each stage is v times smaller, so the
// warm-up and drain cost 1/v as much: the bubble drops to (r-1)/(v*m+r-1) of the step (m >= r),
// for v times the point-to-point messages. Unlike Megatron's, any microbatch count works: rounds
// may differ in size by one.
#include <memory>

#include "baton/schedule.h"
#include "baton/schedule_support.h"
#include "depth_first.h"

namespace {

constexpr char kName[] = "interleaved_1f1b";

class Interleaved1F1B final : public baton::Schedule {
 public:
  void check(const baton::ScheduleShape& shape) const override {
    baton::check_schedule_shape_positive(kName, shape);
  }

  baton::Plan build(const baton::ScheduleShape& shape) const override {
    baton::Plan plan = baton::make_empty_plan(shape, baton::Placement::kLoop, kName);
    baton::depth_first::Options options;
    options.warmup_per_hop = 2;  // a gradient takes F + B to come back one hop further
    for (int rank = 0; rank < shape.ranks; ++rank) {
      baton::RankProgram program(&plan.rank_steps[rank], plan.num_stages);
      baton::depth_first::append_rank_order(shape, rank, options, &program);
    }
    return plan;
  }
};

std::unique_ptr<baton::PluginObject> create(const baton::ParamValues&) {
  return std::make_unique<Interleaved1F1B>();
}

}  // namespace

BATON_PLUGIN(baton::PluginKind::kSchedule, kName, "1.0.0",
             "Interleaved 1F1B (Megatron): depth-first 1F1B over several stages per rank in "
             "loop placement",
             nullptr, nullptr, &create)
