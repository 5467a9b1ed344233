#include "run_folder.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <iostream>

#include "baton/error.h"
#include "baton/files.h"

namespace baton_app {
namespace {

namespace fs = std::filesystem;

// The newest step-* folder under `dir`, or empty.
std::string any_checkpoint(const std::string& dir) {
  std::error_code error;
  std::string found;
  for (const auto& entry : fs::directory_iterator(dir, error)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("step-", 0) == 0 && (found.empty() || name > found)) found = name;
  }
  return found;
}

// Files a checkpoint write left half-written when its process was killed (written to
// <name>.tmp.XXXXXX and never renamed): nobody else writes here while the claim is held.
void remove_partial_writes(const std::string& checkpoints) {
  if (checkpoints.empty()) return;
  std::error_code error;
  int removed = 0;
  std::uintmax_t bytes = 0;
  for (const auto& step : fs::directory_iterator(checkpoints, error)) {
    if (!step.is_directory(error)) continue;
    for (const auto& file : fs::directory_iterator(step.path(), error)) {
      const std::string name = file.path().filename().string();
      const auto mark = name.rfind(".tmp.");
      if (mark == std::string::npos || name.size() != mark + 11) continue;
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
  if (fd_ >= 0) ::close(fd_);  // closing releases the flock
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
  const int fd = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    throw baton::ConfigError("cannot open the run's lock file '" + lock_path +
                             "': " + std::strerror(errno) + " (is run.output_dir writable?)");
  }
  auto claim = std::make_unique<RunFolderClaim>(fd);
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    char holder[32] = {0};
    const ssize_t read = ::pread(fd, holder, sizeof(holder) - 1, 0);
    std::string pid = read > 0 ? std::string(holder, static_cast<std::size_t>(read)) : "";
    while (!pid.empty() && (pid.back() == '\n' || pid.back() == ' ')) pid.pop_back();
    throw baton::ConfigError("run folder '" + settings.run_dir + "' is in use by another run (" +
                             (pid.empty() ? std::string("its process") : "process " + pid) +
                             " holds " + lock_path +
                             "); wait for it to end, or give this run another run.name");
  }
  const std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, pid.data(), pid.size(), 0) < 0) {
    throw baton::ConfigError("cannot write the run's lock file '" + lock_path +
                             "': " + std::strerror(errno));
  }
  remove_partial_writes(settings.checkpoint.dir);
  if (resume || settings.checkpoint.dir.empty()) return claim;
  const std::string newest = any_checkpoint(settings.checkpoint.dir);
  if (newest.empty()) return claim;
  if (!overwrite) {
    throw baton::ConfigError(
        "run folder '" + settings.run_dir +
        "' holds checkpoints of an earlier run (newest: " + settings.checkpoint.dir + "/" + newest +
        "); --resume continues that run, --overwrite moves it aside and starts afresh, or give "
        "this run another run.name");
  }
  const std::string aside = settings.run_dir + ".replaced-" + utc_stamp();
  std::error_code error;
  fs::rename(settings.run_dir, aside, error);
  if (error) {
    throw baton::ConfigError("--overwrite: cannot move '" + settings.run_dir + "' aside to '" +
                             aside + "': " + error.message());
  }
  std::cout << "--overwrite: moved the earlier run in " << settings.run_dir << " aside to " << aside
            << " (delete it when you no longer need it)" << std::endl;
  if (!any_checkpoint(settings.checkpoint.dir).empty()) {
    // checkpoint.dir outside the run folder: its checkpoints go aside too.
    const std::string checkpoints_aside = settings.checkpoint.dir + ".replaced-" + utc_stamp();
    fs::rename(settings.checkpoint.dir, checkpoints_aside, error);
    if (error) {
      throw baton::ConfigError("--overwrite: cannot move '" + settings.checkpoint.dir +
                               "' aside: " + error.message());
    }
    std::cout << "--overwrite: moved its checkpoints in " << settings.checkpoint.dir << " aside to "
              << checkpoints_aside << std::endl;
  }
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
