#include "run_folder.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <iostream>
#include <random>
#include <vector>

#include "baton/error.h"
#include "baton/files.h"
#include "checkpoint.h"
#include "checkpoint_manifest.h"
#include "owned_outputs.h"

namespace baton_app {
namespace {

namespace fs = std::filesystem;

// The newest checkpoint folder under `dir` (complete or not), or empty.
std::string any_checkpoint(const std::string& dir) {
  const std::vector<std::string> names = checkpoint_folders(dir);
  return names.empty() ? std::string() : names.back();
}

// The files a checkpoint write makes: rank<N>.pt, rank<N>.optim and manifest.json.
bool is_checkpoint_file_name(const std::string& name) {
  return name == "manifest.json" || is_rank_file_name(name, {".pt", ".optim"});
}

// Files a checkpoint write left half-written when its process was killed (written to
// <name>.tmp.XXXXXX and never renamed): nobody else writes here while the claim is held. Only
// the temporary names of baton's own files: a user's notes.tmp.abcdef stays.
void remove_partial_writes(const std::string& checkpoints) {
  if (checkpoints.empty()) return;
  std::error_code error;
  int removed = 0;
  std::uintmax_t bytes = 0;
  for (const std::string& step : checkpoint_folders(checkpoints)) {
    for (const auto& file : fs::directory_iterator(checkpoints + "/" + step, error)) {
      const std::string name = file.path().filename().string();
      const auto mark = name.rfind(".tmp.");
      if (mark == std::string::npos || name.size() != mark + 11 ||
          !is_checkpoint_file_name(name.substr(0, mark))) {
        continue;
      }
      bytes += fs::file_size(file.path(), error);
      if (fs::remove(file.path(), error)) ++removed;
    }
  }
  if (removed > 0) {
    std::cout << "removed " << removed << " partial file" << (removed == 1 ? "" : "s") << " ("
              << (bytes >> 20) << " MiB) that an interrupted checkpoint write left in "
              << checkpoints << std::endl;
  }
}

// Locks `lock_path` for this process, for as long as the returned descriptor is open; or
// throws what `busy` says, with the holder's pid.
int lock_for_this_run(const std::string& lock_path, const std::string& what,
                      const std::string& busy_advice) {
  const int fd = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0) {
    throw baton::ConfigError("cannot open the lock file '" + lock_path + "' of " + what + ": " +
                             std::strerror(errno) + " (is it writable?)");
  }
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    char holder[32] = {0};
    const ssize_t read = ::pread(fd, holder, sizeof(holder) - 1, 0);
    ::close(fd);
    std::string pid = read > 0 ? std::string(holder, static_cast<std::size_t>(read)) : "";
    while (!pid.empty() && (pid.back() == '\n' || pid.back() == ' ')) pid.pop_back();
    throw baton::ConfigError(what + " is in use by another run (" +
                             (pid.empty() ? std::string("its process") : "process " + pid) +
                             " holds " + lock_path + "); " + busy_advice);
  }
  const std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, pid.data(), pid.size(), 0) < 0) {
    const int saved = errno;
    ::close(fd);
    throw baton::ConfigError("cannot write the lock file '" + lock_path +
                             "': " + std::strerror(saved));
  }
  return fd;
}

// Whether `inner` is `outer` or lies inside it (both may not exist yet).
bool is_inside(const std::string& inner, const std::string& outer) {
  std::error_code error;
  const fs::path a = fs::weakly_canonical(fs::absolute(inner, error), error);
  const fs::path b = fs::weakly_canonical(fs::absolute(outer, error), error);
  return std::mismatch(b.begin(), b.end(), a.begin(), a.end()).first == b.end();
}

// The run's identity, kept in <run folder>/run-id: a new one when the run starts afresh (or
// when a run from before identities is resumed), the kept one when it resumes.
std::string run_identity(const std::string& run_dir, bool fresh) {
  const std::string path = run_dir + "/run-id";
  std::error_code error;
  if (!fresh && fs::exists(path, error)) {
    std::string id = baton::read_file(path, "run identity", 256);
    while (!id.empty() && (id.back() == '\n' || id.back() == ' ')) id.pop_back();
    if (!id.empty()) return id;
  }
  std::random_device random;
  char id[33];
  std::snprintf(id, sizeof(id), "%08x%08x%08x%08x", random(), random(), random(), random());
  baton::make_folders(run_dir, "run");
  baton::write_file_atomically(path, std::string(id) + "\n");
  return id;
}

// The first checkpoint under `dir` that another run wrote ("step-000007 (run 'sa')"), or empty.
std::string checkpoint_of_another_run(const std::string& dir, const std::string& run_id) {
  std::error_code error;
  for (const std::string& name : checkpoint_folders(dir)) {
    const std::string manifest_path = dir + "/" + name + "/manifest.json";
    if (!fs::exists(manifest_path, error)) continue;
    Manifest manifest;
    try {
      manifest = read_manifest(manifest_path);
    } catch (const baton::Error&) {
      continue;  // a damaged checkpoint is skipped where checkpoints are read, saying why
    }
    if (!manifest.run_id.empty() && manifest.run_id != run_id) {
      return name + " (run '" + manifest.run_name + "', id " + manifest.run_id + ")";
    }
  }
  return "";
}

std::string utc_stamp() {
  const std::time_t now = std::time(nullptr);
  std::tm parts{};
  gmtime_r(&now, &parts);
  char text[32];
  std::strftime(text, sizeof(text), "%Y%m%d-%H%M%S", &parts);
  return text;
}

}  // namespace

RunFolderClaim::~RunFolderClaim() {
  // Closing releases the flocks.
  if (fd_ >= 0) ::close(fd_);
  if (checkpoint_fd_ >= 0) ::close(checkpoint_fd_);
}

std::unique_ptr<RunFolderClaim> claim_run_folder(const RunSettings& settings, bool resume,
                                                 bool overwrite) {
  if (resume && overwrite) {
    throw baton::ConfigError("--resume continues the run in '" + settings.run_dir +
                             "' and --overwrite moves it aside to start afresh; give one");
  }
  const fs::path folder(settings.run_dir);
  const std::string parent = folder.parent_path().empty() ? "." : folder.parent_path().string();
  baton::make_folders(parent, "run.output_dir");
  const std::string lock_path = parent + "/." + folder.filename().string() + ".lock";
  auto claim = std::make_unique<RunFolderClaim>(
      lock_for_this_run(lock_path, "run folder '" + settings.run_dir + "'",
                        "wait for it to end, or give this run another run.name"));
  const std::string& checkpoints = settings.checkpoint.dir;
  const bool checkpoints_apart = !checkpoints.empty() && !is_inside(checkpoints, settings.run_dir);
  if (checkpoints_apart) {
    baton::make_folders(checkpoints, "checkpoint.dir");
    claim->checkpoint_fd_ = lock_for_this_run(
        checkpoints + "/.baton.lock", "checkpoint.dir '" + checkpoints + "'",
        "give each run a checkpoint.dir of its own (the default, <run folder>/checkpoints, is)");
  }
  remove_partial_writes(checkpoints);
  if (resume) {
    claim->run_id_ = run_identity(settings.run_dir, /*fresh=*/false);
    const std::string foreign =
        checkpoints.empty() ? "" : checkpoint_of_another_run(checkpoints, claim->run_id_);
    if (!foreign.empty()) {
      throw baton::ConfigError(
          "--resume: checkpoint.dir '" + checkpoints + "' holds " + foreign +
          ", written by another run than this one ('" + settings.name + "', id " + claim->run_id_ +
          " in " + settings.run_dir +
          "/run-id): resuming would train on its weights; give each run a checkpoint.dir of its "
          "own, or resume that run");
    }
    return claim;
  }
  const std::string newest = checkpoints.empty() ? "" : any_checkpoint(checkpoints);
  if (!newest.empty() && !overwrite) {
    throw baton::ConfigError(
        (checkpoints_apart ? "checkpoint.dir '" + checkpoints + "'"
                           : "run folder '" + settings.run_dir + "'") +
        " holds checkpoints of an earlier run (newest: " + checkpoints + "/" + newest +
        "); --resume continues that run, --overwrite moves it aside and starts afresh, or give "
        "this run another run.name" +
        (checkpoints_apart ? " and checkpoint.dir" : ""));
  }
  if (!newest.empty()) {
    const std::string aside = settings.run_dir + ".replaced-" + utc_stamp();
    std::error_code error;
    if (fs::exists(settings.run_dir, error)) {
      fs::rename(settings.run_dir, aside, error);
      if (error) {
        throw baton::ConfigError("--overwrite: cannot move '" + settings.run_dir + "' aside to '" +
                                 aside + "': " + error.message());
      }
      std::cout << "--overwrite: moved the earlier run in " << settings.run_dir << " aside to "
                << aside << " (delete it when you no longer need it)" << std::endl;
    }
    if (!any_checkpoint(checkpoints).empty()) {
      // checkpoint.dir outside the run folder: its checkpoints go aside, its lock stays.
      const std::string checkpoints_aside = checkpoints + "/replaced-" + utc_stamp();
      baton::make_folders(checkpoints_aside, "checkpoint.dir");
      for (const std::string& name : checkpoint_folders(checkpoints)) {
        fs::rename(checkpoints + "/" + name, checkpoints_aside + "/" + name, error);
        if (error) {
          throw baton::ConfigError("--overwrite: cannot move '" + checkpoints + "/" + name +
                                   "' aside: " + error.message());
        }
      }
      std::cout << "--overwrite: moved the earlier checkpoints in " << checkpoints << " aside to "
                << checkpoints_aside << std::endl;
    }
  }
  // A fresh start (over nothing, or with the earlier run moved aside): a new identity.
  claim->run_id_ = run_identity(settings.run_dir, /*fresh=*/true);
  return claim;
}

void check_checkpoint_folder_writable(const RunSettings& settings, bool writes) {
  if (!settings.checkpoint.enabled || !writes || settings.checkpoint.dir.empty()) {
    return;
  }
  baton::make_folders(settings.checkpoint.dir, "checkpoint.dir");
  const std::string probe =
      settings.checkpoint.dir + "/.baton-write-probe-" + std::to_string(::getpid());
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    throw baton::ConfigError("checkpoint.dir '" + settings.checkpoint.dir +
                             "' is not writable: " + std::strerror(errno) +
                             "; make it writable or set checkpoint.dir elsewhere (found before "
                             "training, not at the first checkpoint)");
  }
  ::close(fd);
  ::unlink(probe.c_str());
}

}  // namespace baton_app
