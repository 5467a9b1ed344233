// A plan from a file: the CSV form PyTorch's pipelining writes (`_dump_csv`, compute-only or
// with comms) and baton writes (`baton plan --format csv`, write_plan_csv). This is how a
// schedule designed elsewhere, or tuned by hand, runs without writing a plugin. The file must
// describe exactly the pipeline the run asks for; check() says which of ranks, stages or
// microbatches differ rather than letting the run fail later on a missing stage.
#include <unistd.h>
#include <cerrno>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "baton/error.h"
#include "baton/plan/csv.h"
#include "baton/schedule.h"
#include "baton/schedule_support.h"

namespace {

constexpr char kName[] = "csv";

const baton::ParamSpec kParams[] = {
    {"path", baton::ParamType::kFile, nullptr,
     "The plan CSV: one line per rank, one action per cell (0F0, 1B0, 1RECV_F0, ...), an empty "
     "cell for an idle step."},
};

class CsvSchedule final : public baton::Schedule {
 public:
  explicit CsvSchedule(std::string path) : path_(std::move(path)) {}

  void check(const baton::ScheduleShape& shape) const override {
    baton::check_schedule_shape_positive(kName, shape);
    check_matches(load(), shape);
  }

  baton::Plan build(const baton::ScheduleShape& shape) const override {
    baton::Plan plan = load();
    check_matches(plan, shape);  // the file may have changed since check()
    plan.schedule_name = kName;
    return plan;
  }

 private:
  // A file that cannot be opened is a configuration mistake (the `path` parameter); a file that
  // is malformed stays a PlanError naming its line and cell.
  baton::Plan load() const {
    if (path_.empty()) {
      throw baton::ConfigError("csv: parameter 'path' is empty; set it to a plan CSV file");
    }
    // access(), not open(): a FIFO given as the path must not block here (read_plan_csv
    // refuses what is not a regular file).
    if (::access(path_.c_str(), R_OK) != 0) {
      throw baton::ConfigError("csv: cannot open the plan file \"" + path_ +
                               "\" (parameter 'path'): " + std::strerror(errno));
    }
    return baton::read_plan_csv(path_);
  }

  void check_matches(const baton::Plan& plan, const baton::ScheduleShape& shape) const {
    std::vector<std::string> differences;
    auto compare = [&](const std::string& what, int in_file, int asked, const std::string& how) {
      if (in_file == asked) return;
      differences.push_back(what + ": the file has " + std::to_string(in_file) +
                            ", the run asks for " + std::to_string(asked) + how);
    };
    compare("ranks", plan.num_ranks, shape.ranks, "");
    compare("stages", plan.num_stages, shape.num_stages(),
            " (" + std::to_string(shape.ranks) + " ranks x " +
                std::to_string(shape.stages_per_rank) + " stages per rank)");
    compare("microbatches", plan.num_microbatches, shape.microbatches, "");
    if (differences.empty()) return;
    // Where the file goes past the run's shape: the cell to fix, not only the counts.
    if (const std::optional<std::string> cell = first_cell_outside(plan, shape)) {
      differences.push_back(*cell);
    }
    std::string given;
    for (const std::string& difference : differences) {
      given += (given.empty() ? "" : "; ") + difference;
    }
    baton::throw_schedule_constraint(
        kName, "the plan in \"" + path_ + "\" to match the pipeline shape", given);
  }

  // The first action (row by row, rank by rank) that names a stage or microbatch the run
  // does not have, e.g. "3F8 at rank 3, step 14 names microbatch 8 (the run has 0..7)".
  static std::optional<std::string> first_cell_outside(const baton::Plan& plan,
                                                       const baton::ScheduleShape& shape) {
    for (std::size_t rank = 0; rank < plan.rank_steps.size(); ++rank) {
      const std::vector<baton::PlanSlot>& steps = plan.rank_steps[rank];
      for (std::size_t step = 0; step < steps.size(); ++step) {
        if (!steps[step]) continue;
        std::vector<baton::Action> parts = steps[step]->sub_actions;
        if (parts.empty()) parts.push_back(*steps[step]);
        for (const baton::Action& part : parts) {
          std::string what;
          if (part.microbatch >= shape.microbatches) {
            what = "microbatch " + std::to_string(part.microbatch) + " (the run has 0.." +
                   std::to_string(shape.microbatches - 1) + ")";
          } else if (part.stage >= shape.num_stages()) {
            what = "stage " + std::to_string(part.stage) + " (the run has 0.." +
                   std::to_string(shape.num_stages() - 1) + ")";
          } else {
            continue;
          }
          return baton::to_string(*steps[step]) + " at rank " + std::to_string(rank) + ", step " +
                 std::to_string(step) + " (row " + std::to_string(rank + 1) + ", column " +
                 std::to_string(step + 1) + ") names " + what;
        }
      }
    }
    return std::nullopt;
  }

  std::string path_;
};

std::unique_ptr<baton::PluginObject> create(const baton::ParamValues& params) {
  return std::make_unique<CsvSchedule>(params.get_string("path"));
}

}  // namespace

BATON_PLUGIN(baton::PluginKind::kSchedule, kName, "1.0.0",
             "A plan read from a CSV file (PyTorch's format, compute-only or with comms)", kParams,
             nullptr, &create)
