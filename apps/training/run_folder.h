// A run folder belongs to one run. Rank 0 claims it before anything is written: a lock held
// for the whole run (<output_dir>/.<name>.lock, outside the folder so that moving the folder
// aside cannot split it), a refusal to start fresh over an earlier run's checkpoints unless
// the user says --resume or --overwrite (which moves the earlier run aside, and says so),
// and a checkpoint folder that is writable now rather than at the first checkpoint.
//
// checkpoint.dir may lie outside the run folder, so it is owned the same way: its own lock
// (<checkpoint.dir>/.baton.lock) for the whole run, and the run's identity (a random id kept
// in <run folder>/run-id, made at a fresh start) recorded in every manifest, which --resume
// checks: two runs given one checkpoint.dir cannot both run, nor one resume from the other's
// checkpoints.
#pragma once

#include <memory>
#include <string>

#include "run_settings.h"

namespace baton_app {

// Held for the whole run; released when destroyed (or when the process ends, however).
class RunFolderClaim {
 public:
  explicit RunFolderClaim(int fd) : fd_(fd) {}
  ~RunFolderClaim();
  RunFolderClaim(const RunFolderClaim&) = delete;
  RunFolderClaim& operator=(const RunFolderClaim&) = delete;

  // This run's identity, recorded in its checkpoints' manifests.
  const std::string& run_id() const { return run_id_; }

 private:
  friend std::unique_ptr<RunFolderClaim> claim_run_folder(const RunSettings&, bool, bool);
  int fd_;
  int checkpoint_fd_ = -1;  // the lock on checkpoint.dir, when it is outside the run folder
  std::string run_id_;
};

// Throws ConfigError naming the folder and what to do: another run holds it or its
// checkpoint.dir (its pid), it holds checkpoints and neither `resume` nor `overwrite` was
// given, or `resume` would continue from checkpoints another run wrote. With `overwrite`, an
// earlier run's folder is renamed to <folder>.replaced-<UTC time> and the move is printed.
std::unique_ptr<RunFolderClaim> claim_run_folder(const RunSettings& settings, bool resume,
                                                 bool overwrite);

// Throws ConfigError when checkpoints are on and `dir` cannot be created or written to
// (found at start-up, not after the first `checkpoint.every` steps).
// `writes`: this rank writes checkpoints (replica 0's ranks).
void check_checkpoint_folder_writable(const RunSettings& settings, bool writes);

}  // namespace baton_app
