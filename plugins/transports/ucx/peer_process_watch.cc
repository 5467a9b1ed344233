#include "peer_process_watch.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <sstream>

#include "baton/error.h"
#include "baton/log.h"

namespace baton_ucx {
namespace {

std::string read_machine_identity() {
  std::string boot_id;
  std::ifstream("/proc/sys/kernel/random/boot_id") >> boot_id;
  struct stat pid_namespace {};
  if (boot_id.empty() || ::stat("/proc/self/ns/pid", &pid_namespace) != 0) return "";
  return boot_id + "/" + std::to_string(pid_namespace.st_dev) + ":" +
         std::to_string(pid_namespace.st_ino);
}

// Read once: neither changes while the process runs.
const std::string& machine_identity() {
  static const std::string identity = read_machine_identity();
  return identity;
}

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434  // the same number on every architecture (Linux 5.3)
#endif

}  // namespace

std::string PeerProcessWatch::this_process() {
  return machine_identity() + " " + std::to_string(::getpid());
}

pid_t PeerProcessWatch::local_pid(const std::string& published) {
  const std::string& identity = machine_identity();
  std::istringstream in(published);
  std::string theirs;
  long long pid = 0;
  if (identity.empty() || !(in >> theirs >> pid) || theirs != identity || pid <= 0) return 0;
  return static_cast<pid_t>(pid);
}

PeerProcessWatch::PeerProcessWatch(OnExit on_exit) : on_exit_(std::move(on_exit)) {
  wake_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake_fd_ < 0) throw baton::Error("ucx: eventfd for the peer process watch failed");
  thread_ = std::thread([this] { run(); });
}

PeerProcessWatch::~PeerProcessWatch() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  const std::uint64_t one = 1;
  (void)!::write(wake_fd_, &one, sizeof(one));
  thread_.join();
  for (const Watched& watched : watched_) ::close(watched.fd);
  ::close(wake_fd_);
}

int PeerProcessWatch::open(pid_t pid) {
  return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
}

bool PeerProcessWatch::available() {
  const int fd = open(::getpid());
  if (fd < 0) return false;
  ::close(fd);
  return true;
}

void PeerProcessWatch::watch(int peer, pid_t pid, int fd) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    watched_.push_back({peer, pid, fd});
  }
  const std::uint64_t one = 1;
  (void)!::write(wake_fd_, &one, sizeof(one));
}

void PeerProcessWatch::run() {
  std::vector<Watched> exited;
  for (;;) {
    std::vector<pollfd> fds{{wake_fd_, POLLIN, 0}};
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (stopping_) return;
      for (const Watched& watched : watched_) fds.push_back({watched.fd, POLLIN, 0});
    }
    if (::poll(fds.data(), fds.size(), -1) < 0 && errno != EINTR) {
      BATON_LOG_WARN("ucx", "watching the local peers' processes stopped: poll failed: "
                                << std::strerror(errno)
                                << "; a peer that dies now shows as a wait's timeout");
      return;
    }
    if (fds[0].revents != 0) {
      std::uint64_t count = 0;
      (void)!::read(wake_fd_, &count, sizeof(count));
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (stopping_) return;
      for (std::size_t i = 1; i < fds.size(); ++i) {
        if (fds[i].revents == 0) continue;
        for (auto it = watched_.begin(); it != watched_.end(); ++it) {
          if (it->fd != fds[i].fd) continue;
          exited.push_back(*it);
          watched_.erase(it);
          break;
        }
      }
    }
    // Outside the lock: the callback takes the transport's own.
    for (const Watched& watched : exited) {
      ::close(watched.fd);
      on_exit_(watched.peer, "peer rank " + std::to_string(watched.peer) +
                                 " closed the connection: its process (pid " +
                                 std::to_string(watched.pid) + ") exited");
    }
    exited.clear();
  }
}

}  // namespace baton_ucx
