// The core's configuration sections: what runs (run), where (world), with which schedule,
// transport and validators, and where plugins are found. A program adds the sections of its
// own components (add_config_sections); together their defaults form the embedded default
// run.
#include "baton/config.h"

#include <string>

#include "baton/error.h"
#include "baton/plan/shape_limits.h"

namespace baton {

namespace {

// Long on purpose: a table of every core key, its type, default, documentation and the values
// it takes, read top to bottom like `baton config defaults` prints it.
std::vector<SectionSpec> core_sections() {
  return {
      {"run",
       "What to run and for how long.",
       {
           {"name", ParamType::kString, "baton", "Name of the run; names its output folder."},
           KeySpec{"steps", ParamType::kInt, "20", "Training steps (optimizer updates)."}.at_least(
               1),
           {"seed", ParamType::kInt, "0", "Seed for parameters and synthetic data."},
           {"output_dir", ParamType::kString, "runs",
            "Folder that receives <name>/ with metrics, traces and checkpoints."},
           KeySpec{"log_every", ParamType::kInt, "1", "Print progress every N steps."}.at_least(1),
           KeySpec{
               "log_level", ParamType::kString, "",
               "error, warn, info or debug: what the core, plugins and program log (rank-prefixed, "
               "on stderr); empty: BATON_LOG_LEVEL, else info."}
               .one_of({"error", "warn", "info", "debug"})
               .off("BATON_LOG_LEVEL, else info"),
           KeySpec{"threads", ParamType::kInt, "0",
                   "Threads per rank for LibTorch's intra- and inter-op pools and OpenMP (so "
                   "OpenBLAS); 0 = the CPUs available to the process / local ranks, at least 1."}
               .at_least(0)
               .off("automatic"),
       },
       false},
      {"world",
       "The ranks and how they find each other.",
       {
           KeySpec{"ranks", ParamType::kInt, "2",
                   "Number of ranks (processes): world.data_parallel x the ranks of one pipeline."}
               .at_least(1)
               .at_most(kMaxRanks),
           KeySpec{"device", ParamType::kString, "cpu",
                   "Where each rank's stages, receive buffers and data live: cpu, or cuda (GPU "
                   "<local rank> of its machine; needs baton built against a CUDA LibTorch)."}
               .one_of({"cpu", "cuda"}),
           KeySpec{"data_parallel", ParamType::kInt, "1",
                   "Replicas of the pipeline, each on its own slice of data.batch_size, their "
                   "gradients averaged (all-reduced) every step; rank = replica x pipeline ranks + "
                   "pipeline rank. The transport must be able to all-reduce (baton plugins)."}
               .at_least(1),
           KeySpec{"bucket_mb", ParamType::kFloat, "25",
                   "With data_parallel > 1: MiB of gradients all-reduced as one message. Each "
                   "stage's first bucket (its last parameters) takes at most 1 MiB, and a bucket "
                   "starts as soon as the stage's last backward of the step has finished its "
                   "gradients, so smaller buckets overlap more of the reduction with the backward, "
                   "larger ones send fewer messages."}
               .at_least(1.0 / 1048576)  // one byte
               .at_most(65536)
               .in("a size in MiB")
               .hint("25 (the default, as PyTorch DDP) suits most models"),
           KeySpec{"rendezvous", ParamType::kString, "tcp",
                   "Key-value store for rendezvous: tcp (baton's store, hosted by the launcher or "
                   "rank 0 "
                   "on world.address only) or file."}
               .one_of({"tcp", "file"}),
           {"address", ParamType::kString, "127.0.0.1", "Address of the TCP store (rank 0)."},
           KeySpec{"port", ParamType::kInt, "29511", "Port of the TCP store; 0 picks a free one."}
               .at_least(0)
               .at_most(65535),
           {"file", ParamType::kString, "",
            "Path of the file store (rendezvous: file); empty: a fresh temporary one."},
           KeySpec{"timeout_s", ParamType::kFloat, "60",
                   "Seconds to wait for peers at rendezvous and for any transfer."}
               .above(0)
               .at_most(604800, " (a week)")
               .in("a number of seconds"),
           KeySpec{
               "heartbeat_s", ParamType::kFloat, "10",
               "A rank whose pipeline neighbour sends no heartbeat (through the store) for this "
               "many seconds while training stops the run, naming it as hung, instead of waiting "
               "for world.timeout_s; 0: off."}
               .off("off")
               .at_least(1)
               .at_most(604800, " (a week)")
               .in("a number of seconds")
               .hint("a shorter period blames healthy ranks that are busy"),
       },
       false},
      {"schedule",
       "The pipeline schedule plugin and its shape.",
       {
           {"name", ParamType::kString, "1f1b",
            "Schedule plugin: a name or a path to a .so; auto: measure the model and run the "
            "fastest candidate."},
           KeySpec{"microbatches", ParamType::kInt, "4", "Microbatches per step."}
               .at_least(1)
               .at_most(kMaxMicrobatches),
           KeySpec{"stages_per_rank", ParamType::kInt, "1", "Model stages on each rank."}
               .at_least(1)
               .at_most(kMaxStagesPerRank),
           KeySpec{"memory_limit_mb", ParamType::kFloat, "0",
                   "schedule: auto and baton tune keep plans whose simulated peak memory per rank "
                   "is at most this "
                   "(MiB); 0: no limit."}
               .at_least(0)
               .off("no limit")
               .in("a size in MiB"),
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
      {"plugins",
       "Where to look for plugins before BATON_PLUGIN_PATH and the built-in folders.",
       {
           {"path", ParamType::kStringList, "[]",
            "Folders searched first, in order; relative ones in the YAML file are taken from "
            "its folder."},
       },
       false},
  };
}

struct Registry {
  std::vector<SectionSpec> sections = core_sections();
  std::vector<SectionCheck> checks;
};

Registry& registry() {
  static Registry instance;
  return instance;
}

}  // namespace

const std::vector<SectionSpec>& config_sections() {
  return registry().sections;
}

const std::vector<SectionCheck>& config_section_checks() {
  return registry().checks;
}

void add_config_sections(const std::vector<SectionSpec>& sections, SectionCheck check) {
  Registry& all = registry();
  for (const SectionSpec& section : sections) {
    for (const SectionSpec& known : all.sections) {
      if (std::string(known.name) == section.name) {
        throw Error(std::string("configuration section '") + section.name +
                    "' is declared twice (add_config_sections)");
      }
    }
  }
  all.sections.insert(all.sections.end(), sections.begin(), sections.end());
  if (check) all.checks.push_back(check);
}

}  // namespace baton
