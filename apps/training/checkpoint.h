// Checkpoints of a pipelined run, under the full model's parameter names.
//
// Layout: <dir>/step-000004/ holds rank<r>.pt (a dict of "param.<name>" tensors, loadable by
// torch.load and torch::pickle_load) and rank<r>.optim (the optimizer's state archive) for
// every rank, then manifest.json, written last by rank 0 once every rank reported its files
// written (through the rendezvous store). Every file is written to a temporary name and
// renamed, so a checkpoint is either complete — it has a manifest — or ignored.
#pragma once

#include <ATen/core/Dict.h>
#include <ATen/core/Tensor.h>
#include <ATen/core/ivalue.h>
#include <torch/optim/optimizer.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "baton/config.h"
#include "baton/store.h"
#include "loss_scaler.h"

namespace baton_app {

struct CheckpointSettings {
  std::string dir;  // where step-* folders go
  int every = 0;    // 0: only at the end
  bool enabled = true;
  std::string optimizer;  // optimizer.name: recorded, and a resume with another is refused
  // The run writing it (run_folder.h), recorded in every manifest; rank 0 knows the id.
  std::string run_name;
  std::string run_id;
  // schedule: auto's choice (the JSON of schedule_choice.json), recorded in the manifest so
  // that a checkpoint carries the pipeline it was written by; empty for a named schedule.
  std::string schedule_choice;
  // Data parallelism: only replica 0 writes (the replicas hold the same parameters and
  // optimizer state); `data_parallel` is recorded in the manifest. Every replica restores.
  bool writes = true;
  int data_parallel = 1;
  // For tests (BATON_INJECT_FAILURE action=kill_in_checkpoint): the rank SIGKILLs itself in
  // the middle of this step's checkpoint, its parameters written and its optimizer state not.
  int kill_while_writing_step = -1;
};

// The newest complete checkpoint under `dir`: its folder, or empty when there is none. A
// newer one that is damaged (unreadable manifest, a file missing, empty or truncated) is
// skipped with a warning naming what is wrong.
std::string latest_checkpoint(const std::string& dir);

// The step a checkpoint folder's name says ("step-000042": 42), or -1 for any other name.
long checkpoint_step_of(const std::string& folder_name);

// The checkpoint folders (step-*) under `dir`, complete or not, as names, oldest first by
// step number (step-1000000 sorts before step-999999 as text). Empty when `dir` is missing.
std::vector<std::string> checkpoint_folders(const std::string& dir);

// The schedule: auto choice recorded in checkpoint `folder`'s manifest (JSON text), or empty
// when it has none (a named schedule, or a checkpoint from before choices were recorded).
std::string schedule_choice_in(const std::string& folder);

// Throws ConfigError naming the file and the problem when checkpoint `folder` is not
// complete and sound: its manifest, and every file the manifest lists (present, with the size
// and checksum the manifest recorded; a whole PyTorch archive for checkpoints from before
// checksums). Returns the number of ranks that wrote it.
int verify_checkpoint(const std::string& folder);

// Throws ConfigError naming the file when rank `rank`'s parameter file, as loaded, does not
// hold exactly the entries (names, dtypes, shapes) the manifest recorded for it.
void verify_rank_entries(const std::string& folder, int rank,
                         const c10::Dict<c10::IValue, c10::IValue>& dict);

// One rank's parameter file ({"param.<name>": tensor, "buffer.<name>": tensor, optimizer
// state}); ConfigError naming the file when it
// cannot be read.
c10::Dict<c10::IValue, c10::IValue> load_checkpoint_parameters(const std::string& path);

struct RankRecord;  // checkpoint_manifest.h

class Checkpointer {
 public:
  // `rank` and `world_size` are the pipeline's (with data parallelism, one replica's).
  Checkpointer(CheckpointSettings settings, int rank, int world_size,
               std::shared_ptr<baton::Store> store, std::chrono::milliseconds timeout,
               std::vector<std::pair<std::string, at::Tensor>> named_params,
               std::vector<std::pair<std::string, at::Tensor>> named_buffers,
               torch::optim::Optimizer* optimizer);

  // Whether step `step` of `last_step` ends with a checkpoint.
  bool due(int step, int last_step) const;
  // Writes this rank's files for `step`; rank 0 then writes the manifest. Collective: every
  // rank calls it after the same step. Returns the checkpoint's folder (empty on a rank that
  // does not write: CheckpointSettings::writes).
  std::string save(int step, const std::string& schedule_name);
  // Loads this rank's parameters and optimizer state from the newest complete checkpoint.
  // On the layout that wrote it, from this rank's own files; on another (other ranks,
  // stages, cuts or replicas), each parameter and its optimizer state by name from whichever
  // file holds it. Throws ConfigError when there is none, or it lacks one of this rank's
  // parameters (naming it) or has it in another shape.
  struct Restored {
    int step = 0;
    std::string folder;
    std::optional<LossScaleState> loss_scale;  // the manifest's (precision.loss_scale)
  };
  Restored restore_latest();

  // precision.loss_scale: every manifest records `scaler`'s state after its step (rank 0
  // writes it; every rank's scaler holds the same).
  void record_loss_scale(const LossScaler* scaler) { loss_scaler_ = scaler; }

 private:
  void restore_by_name(const std::string& folder, int written_by, bool state_by_name);
  // This rank's files (parameters and buffers; optimizer state) in `folder`, and what the
  // manifest records of them: every entry's dtype and shape, every file's size and checksum.
  RankRecord write_rank_files(const std::string& folder, int step);
  // Rank 0, once every rank reported its record: the manifest, which marks `folder` complete.
  void write_manifest(const std::string& folder, int step, const std::string& schedule_name,
                      const RankRecord& own);

  const CheckpointSettings settings_;
  const int rank_;
  const int world_size_;
  std::shared_ptr<baton::Store> store_;
  const std::chrono::milliseconds timeout_;
  std::vector<std::pair<std::string, at::Tensor>> named_params_;
  // Buffers of the full model's state dict ("buffer.<name>" in the rank files): exported with
  // the parameters and restored with them.
  std::vector<std::pair<std::string, at::Tensor>> named_buffers_;
  torch::optim::Optimizer* optimizer_;
  const LossScaler* loss_scaler_ = nullptr;
};

}  // namespace baton_app
