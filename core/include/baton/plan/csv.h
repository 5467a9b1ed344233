// Plans as CSV, the exchange format of PyTorch's `PipelineScheduleMulti._dump_csv` / `_load_csv`
// (both "compute_only" and "compute_comms"): line r holds rank r's actions, one per cell, in the
// text form of action.h; an empty cell is an idle step. A rank with a single idle step is written
// `""`, as Python's csv module does, because an empty line means a rank with no steps.
#pragma once

#include <string>
#include <string_view>

#include "baton/export.h"
#include "baton/plan/plan.h"

namespace baton {

// One line per rank, '\n'-terminated.
BATON_API std::string plan_to_csv(const Plan& plan);

// Parses CSV text. Accepts '\n' or "\r\n" line ends, a UTF-8 byte-order mark, blanks around cells
// and double-quoted cells. The counts are inferred: num_ranks from the lines, num_stages and
// num_microbatches from the largest numbers used, stage_to_rank from the rank that computes each
// stage (placement "loop" or "v" when it matches, else "custom"). `source` names the text in
// errors (a file name; may be empty). Throws PlanError naming the line (rank) and cell (step) of
// a malformed action, both ranks when a stage computes on two, and any stage that never computes.
// The result is not validated; call validate_plan.
BATON_API Plan plan_from_csv(std::string_view text, std::string_view source = {});

// File forms of the two above. I/O failures throw PlanError naming the path.
BATON_API void write_plan_csv(const Plan& plan, const std::string& path);
BATON_API Plan read_plan_csv(const std::string& path);

}  // namespace baton
