// `baton plot RUN_DIR`: draws a run's curves (loss and held-out loss, learning rate,
// gradient norm against the step) into RUN_DIR/curves.svg from its metrics.jsonl — at any
// time, while the run goes on too. A run writes the same file when it ends.
#include <iostream>
#include <memory>
#include <string>

#include "commands.h"
#include "run_curves.h"

namespace baton_app {

void add_plot_command(CommandLine& command_line) {
  auto run_dir = std::make_shared<std::string>();
  CLI::App& plot = command_line.add_command(
      command_line.root(), "plot",
      "draw a run's curves (loss, eval loss, lr, grad norm) into RUN_DIR/curves.svg from its "
      "metrics, also while it runs",
      [run_dir] {
        std::cout << "curves: " << write_run_curves(*run_dir) << "\n";
        return 0;
      });
  plot.group("Commands");
  plot.add_option("RUN_DIR", *run_dir, "the run's folder: <run.output_dir>/<run.name>")
      ->required()
      ->type_name("DIR");
}

}  // namespace baton_app
