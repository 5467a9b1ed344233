// baton-bench: `baton bench …`, measured in processes of its own. The front end execs it with
// the words after "bench"; this program starts itself again for the ranks it measures — the
// pipeline benches' ranks, the transport bench's and the unpipelined reference (the internal
// commands, not listed).
#include <string>
#include <vector>

#include "command_line.h"
#include "pipeline.h"
#include "pipeline_rank.h"
#include "plan_bench.h"
#include "sweep.h"
#include "training/config_sections.h"
#include "transport_bench.h"
#include "transport_rank.h"
#include "tune_bench.h"
#include "unpipelined.h"

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  return baton_app::run_guarded([&] {
    baton_app::add_app_config_sections();
    baton_app::CommandLine command_line(
        "baton bench",
        "baton bench: measurements that print ratios against a baseline measured in the same "
        "run (docs/PERFORMANCE.md)");
    baton_app::add_transport_bench(command_line);
    baton_app::add_pipeline_bench(command_line);
    baton_app::add_sweep_bench(command_line);
    baton_app::add_plan_bench(command_line);
    baton_app::add_tune_bench(command_line);
    baton_app::add_rank_command(command_line);
    baton_app::add_unpipelined_rank_command(command_line);
    baton_app::add_pipeline_rank_command(command_line);
    return command_line.run(args);
  });
}
