// An example third-party schedule: 1F1B with a configurable warm-up depth.
//
// Plain 1F1B (plugins/schedules/1f1b) lets rank k run r-1-k forwards before its first
// backward: just enough that the first gradient arrives as the warm-up ends. Running
// `extra_warmup` more forwards first costs activation memory (each extra forward keeps one
// more microbatch alive) and buys slack: a rank whose backward arrives late (a slow link, a
// slower stage downstream) has forward work queued instead of idling. extra_warmup = 0 is
// exactly 1F1B.
//
// Built only against the installed SDK: see CMakeLists.txt here and docs/writing-a-schedule.md.
#include <algorithm>
#include <memory>
#include <string>

#include "baton/plugin.h"
#include "baton/schedule.h"
#include "baton/schedule_support.h"

namespace {

constexpr char kName[] = "warmup_1f1b";

// The parameters YAML may set under schedule.params, checked by the core before create().
const baton::ParamSpec kParams[] = {
    {"extra_warmup", baton::ParamType::kInt, "1",
     "Forwards each rank runs before its first backward, beyond 1F1B's ranks-1-rank."},
};

class WarmupOneForwardOneBackward final : public baton::Schedule {
 public:
  explicit WarmupOneForwardOneBackward(int extra_warmup) : extra_warmup_(extra_warmup) {}

  // Refuse shapes this schedule cannot serve, naming the rule and the values.
  void check(const baton::ScheduleShape& shape) const override {
    baton::check_schedule_shape_positive(kName, shape);
    baton::require_stages_per_rank(kName, shape, 1, "one stage per rank");
    baton::require_schedule_constraint(
        shape.microbatches >= shape.ranks, kName, "microbatches >= ranks (stages)",
        baton::format_count(shape.microbatches, "microbatch", "microbatches") + " for " +
            baton::format_count(shape.ranks, "rank", "ranks"));
  }

  // The compute-only plan: per rank, in order, which stage runs F or B on which
  // microbatch. The core inserts every SEND/RECV, validates and simulates it.
  baton::Plan build(const baton::ScheduleShape& shape) const override {
    baton::Plan plan = baton::make_empty_plan(shape, baton::Placement::kLoop, kName);
    const int m = shape.microbatches;
    for (int rank = 0; rank < shape.ranks; ++rank) {
      baton::RankProgram program(&plan.rank_steps[rank], plan.num_stages);
      const int warmup = std::min(shape.ranks - 1 - rank + extra_warmup_, m);
      for (int i = 0; i < warmup; ++i) program.forward(rank);
      for (int i = warmup; i < m; ++i) {
        program.forward(rank);
        program.backward(rank);
      }
      for (int i = 0; i < warmup; ++i) program.backward(rank);
    }
    return plan;
  }

 private:
  const int extra_warmup_;
};

std::unique_ptr<baton::PluginObject> create(const baton::ParamValues& params) {
  const std::int64_t extra = params.get_int("extra_warmup");
  if (extra < 0) {
    throw baton::ConfigError(params.at("extra_warmup").origin().description +
                             ": schedule.params.extra_warmup must be >= 0, got " +
                             std::to_string(extra));
  }
  return std::make_unique<WarmupOneForwardOneBackward>(static_cast<int>(extra));
}

}  // namespace

// The one exported symbol: kind, name, version, a one-line description, the parameter
// table, an optional viability check (schedules can always run) and the factory.
BATON_PLUGIN(baton::PluginKind::kSchedule, kName, "1.0.0",
             "1F1B with a configurable warm-up depth (example plugin built against the SDK)",
             kParams, nullptr, &create)
