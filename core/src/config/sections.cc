// The core's configuration sections. The defaults form the embedded default run: a small
// GPT model pipelined with 1F1B over 2 local ranks, Gloo on loopback.
#include "baton/config.h"

namespace baton {

const std::vector<SectionSpec>& config_sections() {
  static const std::vector<SectionSpec> sections = {
      {"run",
       "What to run and for how long.",
       {
           {"name", ParamType::kString, "baton", "Name of the run; names its output folder."},
           {"steps", ParamType::kInt, "20", "Training steps (optimizer updates)."},
           {"seed", ParamType::kInt, "0", "Seed for parameters and synthetic data."},
           {"output_dir", ParamType::kString, "runs",
            "Folder that receives <name>/ with metrics, traces and checkpoints."},
           {"log_every", ParamType::kInt, "1", "Print progress every N steps."},
           {"log_level", ParamType::kString, "",
            "error, warn, info or debug: what the core, plugins and program log (rank-prefixed, "
            "on stderr); empty: BATON_LOG_LEVEL, else info."},
           {"threads", ParamType::kInt, "0",
            "Threads per rank for LibTorch's intra- and inter-op pools and OpenMP (so "
            "OpenBLAS); 0 = the CPUs available to the process / local ranks, at least 1."},
       },
       false},
      {"world",
       "The ranks and how they find each other.",
       {
           {"ranks", ParamType::kInt, "2", "Number of ranks (processes)."},
           {"rendezvous", ParamType::kString, "tcp",
            "Key-value store for rendezvous: tcp (rank 0 hosts a TCPStore) or file."},
           {"address", ParamType::kString, "127.0.0.1", "Address of the TCP store (rank 0)."},
           {"port", ParamType::kInt, "29511", "Port of the TCP store; 0 picks a free one."},
           {"file", ParamType::kString, "",
            "Path of the file store (rendezvous: file); empty: a fresh temporary one."},
           {"timeout_s", ParamType::kFloat, "60",
            "Seconds to wait for peers at rendezvous and for any transfer."},
       },
       false},
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
      {"schedule",
       "The pipeline schedule plugin and its shape.",
       {
           {"name", ParamType::kString, "1f1b", "Schedule plugin: a name or a path to a .so."},
           {"microbatches", ParamType::kInt, "4", "Microbatches per step."},
           {"stages_per_rank", ParamType::kInt, "1", "Model stages on each rank."},
       },
       true},
      {"transport",
       "The transport plugin that moves activations and gradients.",
       {
           {"name", ParamType::kString, "gloo", "Transport plugin: a name or a path to a .so."},
       },
       true},
      {"validation",
       "Checks on tensors crossing stage boundaries.",
       {
           {"validators", ParamType::kStringList, "[shape_dtype]",
            "Validator chain: shape_dtype, strict, finite, off."},
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
           {"dir", ParamType::kString, "", "Checkpoint folder; empty = <run dir>/checkpoints."},
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
      {"plugins",
       "Where to look for plugins before BATON_PLUGIN_PATH and the built-in folders.",
       {
           {"path", ParamType::kStringList, "[]", "Folders searched first, in order."},
       },
       false},
  };
  return sections;
}

}  // namespace baton
