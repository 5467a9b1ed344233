// Sees a peer process on this machine die, for the endpoints that UCX itself cannot watch.
//
// UCX 1.13 reports a failed peer (UCP_ERR_HANDLING_MODE_PEER) only over transports that can
// notice one — TCP, InfiniBand — so asking for it moves ranks on one machine off shared
// memory. A peer on this machine needs no network to be watched: its process can be. Each
// rank publishes its machine's identity (the kernel's boot id and its pid namespace) and its
// pid; a peer with the same identity is opened as a pidfd (pidfd_open, Linux 5.3), and one
// thread polls every such fd: a pidfd becomes readable when its process exits — killed,
// crashed or done, reaped or not — and the watch reports the peer once.
#pragma once

#include <sys/types.h>

#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace baton_ucx {

class PeerProcessWatch {
 public:
  // Called from the watch's thread, once per peer, when the peer's process has exited.
  using OnExit = std::function<void(int peer, const std::string& why)>;

  // What a peer publishes: "<machine identity> <pid>". Two processes with the same identity
  // run on one machine and see each other's pids.
  static std::string this_process();
  // The pid in `published` when it comes from a process on this machine, else 0.
  static pid_t local_pid(const std::string& published);

  explicit PeerProcessWatch(OnExit on_exit);
  ~PeerProcessWatch();
  PeerProcessWatch(const PeerProcessWatch&) = delete;
  PeerProcessWatch& operator=(const PeerProcessWatch&) = delete;

  // A pidfd of `pid`, or -1 when it cannot be had (the process is gone already, or pidfds are
  // not available: a kernel before 5.3, a seccomp profile that refuses the call). The caller
  // then needs another way to see the peer fail.
  static int open(pid_t pid);
  // Whether this process can open pidfds at all (of itself).
  static bool available();
  // Watches `fd` (from open(), owned from here on) for `peer`.
  void watch(int peer, pid_t pid, int fd);

 private:
  struct Watched {
    int peer;
    pid_t pid;
    int fd;
  };
  void run();

  OnExit on_exit_;
  int wake_fd_ = -1;  // an eventfd: a new peer to watch, or stop
  std::mutex mutex_;
  std::vector<Watched> watched_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace baton_ucx
