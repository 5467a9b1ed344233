#include "config_sections.h"

#include <string>

#include "baton/config.h"
#include "baton/error.h"

namespace baton_app {
namespace {

using baton::ParamType;

// `section.key` must be at least `low`; `meaning` says what the smallest values do.
void require_at_least(const baton::Config& config, const char* section, const char* key, long low,
                      const std::string& meaning) {
  const baton::ParamValue& value = config.section(section).at(key);
  if (value.as_int() >= low) return;
  throw baton::ConfigError(value.origin().description + ": " + section + "." + key +
                           " must be at least " + std::to_string(low) + meaning + ", got " +
                           value.text());
}

void check_app_sections(const baton::Config& config) {
  require_at_least(config, "data", "batch_size", 1, "");
  require_at_least(config, "checkpoint", "every", 0, " (0: only at the end)");
  require_at_least(config, "trace", "steps", 0,
                   " (0 records none; trace.enabled: false turns the trace off)");
}

}  // namespace

void add_app_config_sections() {
  static const bool added = [] {
    baton::add_config_sections(
        {
            {"model",
             "The model to pipeline: built-in (mlp, gpt, identity) or a TorchScript file.",
             {
                 {"name", ParamType::kString, "gpt", "mlp, gpt, identity, or torchscript."},
                 {"path", ParamType::kString, "", "TorchScript .pt file (name: torchscript)."},
                 {"cuts", ParamType::kStringList, "params",
                  "Where stages start: params (equal parameter counts), balanced (equal measured "
                  "forward + backward time per stage), or a list of unit indices where stages "
                  "1..n-1 begin, e.g. [2, 5]."},
                 {"loss", ParamType::kString, "cross_entropy",
                  "cross_entropy (class targets), mse (float targets shaped like the output), or a "
                  "TorchScript .pt file whose forward(output, target) returns the loss."},
             },
             true},
            {"data",
             "Where batches come from.",
             {
                 {"source", ParamType::kString, "text",
                  "synthetic, files (inputs/targets .npy or .pt) or text (a token file)."},
                 {"batch_size", ParamType::kInt, "16", "Samples per step, before microbatching."},
                 {"inputs", ParamType::kString, "", "Input tensor file (source: files)."},
                 {"targets", ParamType::kString, "", "Target tensor file (source: files)."},
                 {"tokens", ParamType::kString, "",
                  "Token file (source: text): raw text read as bytes, .npy, or raw uint16/int32; "
                  "empty = the text shipped with baton."},
                 {"token_format", ParamType::kString, "auto",
                  "How to read data.tokens: auto (.npy -> npy, else bytes), bytes, uint16, int32 "
                  "(raw little-endian) or npy."},
             },
             false},
            {"optimizer",
             "The optimizer each rank runs on its stages after the plan.",
             {
                 {"name", ParamType::kString, "adam", "sgd or adam."},
                 {"lr", ParamType::kFloat, "0.001", "Learning rate."},
                 {"momentum", ParamType::kFloat, "0", "Momentum (sgd)."},
                 {"weight_decay", ParamType::kFloat, "0", "Weight decay."},
             },
             false},
            {"checkpoint",
             "Periodic checkpoints, saved under the original parameter names.",
             {
                 {"every", ParamType::kInt, "0", "Save every N steps (0: only at the end)."},
                 {"dir", ParamType::kString, "",
                  "Checkpoint folder; empty = <run dir>/checkpoints."},
                 {"enabled", ParamType::kBool, "true", "Write checkpoints at all."},
             },
             false},
            {"trace",
             "Chrome-trace timeline of what ran on every rank.",
             {
                 {"enabled", ParamType::kBool, "true", "Record and write the trace."},
                 {"path", ParamType::kString, "", "Trace file; empty = <run dir>/trace.json."},
                 {"steps", ParamType::kInt, "3",
                  "Training steps recorded (the first ones after setup; a trace of every step of a "
                  "long run would be huge)."},
             },
             false},
        },
        &check_app_sections);
    return true;
  }();
  (void)added;
}

}  // namespace baton_app
