// A plan written as CSV (a row per rank, a column per timestep): read, validated and checked
// for completion, or refused with baton::Error naming where; never a crash, a hang or an
// allocation proportional to a number in the file.
#include <cstddef>
#include <cstdint>
#include <string>

#include "baton/error.h"
#include "baton/plan/csv.h"
#include "baton/plan/lower.h"
#include "baton/plan/validate.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > 64 * 1024) return 0;
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const baton::Plan plan = baton::plan_from_csv(text, "fuzz.csv");
    baton::validate_plan(plan);
    if (plan.has_comms()) baton::check_can_complete(plan);
    (void)baton::plan_to_csv(plan);
  } catch (const baton::Error&) {
  }
  return 0;
}
