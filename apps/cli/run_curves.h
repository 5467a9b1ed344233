// A training run read from its curves: `<run dir>/curves.svg` — the loss and the held-out
// loss, the learning rate and the gradient's norm against the step — drawn from
// metrics.jsonl. Written at the end of every run and by `baton plot RUN_DIR` at any time
// (while the run goes on, too). No LibTorch.
#pragma once

#include <string>

namespace baton_app {

// Reads `<run_dir>/metrics.jsonl` (a line cut short by a running writer is skipped) and
// writes `<run_dir>/curves.svg` (through a temporary file). Returns its path. Throws
// baton::Error when the metrics cannot be read or hold no step.
std::string write_run_curves(const std::string& run_dir);

// The SVG of the curves in `metrics_jsonl` (the file's text); `title` heads it.
std::string render_run_curves(const std::string& metrics_jsonl, const std::string& title);

}  // namespace baton_app
