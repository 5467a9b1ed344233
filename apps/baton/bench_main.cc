// baton-bench: `baton bench …`, measured in processes of its own. The front end execs it with
// the words after "bench"; the pipeline bench starts its ranks as `baton-runtime run`.
#include <string>
#include <vector>

#include "commands.h"
#include "usage.h"

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  return baton_app::run_guarded([&] { return baton_app::run_bench_command(args); });
}
