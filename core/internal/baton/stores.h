// The concrete rendezvous stores and the factory the runtime uses to pick one.
//
//   tcp  — baton's own TCP store: the launcher or rank 0 hosts it at address:port (bound to
//          that address only: loopback unless the configuration names another), every rank
//          connects to it and proves it belongs to the run with the run's token. Every
//          length a peer sends is capped before it is buffered. For runs across machines.
//   file — a folder on a shared file system, one file per key. For runs on one machine
//          (or a shared mount) without a free port.
//
// make_rendezvous_store() wraps either in a PrefixStore named after the run id, so two runs
// sharing a store (the same port, the same folder) never see each other's keys.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "baton/export.h"
#include "baton/store.h"

namespace baton {

// A store kept in a folder: one file per key, written to a temporary file and renamed into
// place (readers never see half a value); add() is serialized by an advisory lock. The
// folder is created if missing and never deleted: its owner (a run's temp dir) removes it.
class BATON_API FileStore : public Store {
 public:
  explicit FileStore(std::string directory);
  ~FileStore() override;

  void set(const std::string& key, const std::vector<std::uint8_t>& value) override;
  std::vector<std::uint8_t> get(const std::string& key, std::chrono::milliseconds timeout) override;
  std::int64_t add(const std::string& key, std::int64_t delta) override;
  bool remove(const std::string& key) override;

  const std::string& directory() const { return directory_; }

 private:
  std::string path_of(const std::string& key) const;
  void write_atomically(const std::string& path, const std::vector<std::uint8_t>& value) const;

  std::string directory_;
};

struct TcpStoreOptions {
  // The server's address; a hosting store binds exactly this one ("" or "*": every
  // interface).
  std::string host = "127.0.0.1";
  // Port of the server. A hosting store given 0 binds a free port; see TcpStore::port().
  int port = 29511;
  bool is_server = false;  // rank 0 (or the launcher) hosts
  // What a client must present before it is served (at most 256 bytes): the run's secret
  // (BATON_STORE_TOKEN) or, without one, its run id, so that another run on the same port is
  // refused rather than joined.
  std::string token;
  // How long a client keeps trying to reach the server, and waits for any one answer.
  std::chrono::milliseconds timeout{60000};
};

// baton's TCP store: a client, and the server too when `is_server`.
class BATON_API TcpStore : public Store {
 public:
  explicit TcpStore(const TcpStoreOptions& options);
  ~TcpStore() override;

  void set(const std::string& key, const std::vector<std::uint8_t>& value) override;
  std::vector<std::uint8_t> get(const std::string& key, std::chrono::milliseconds timeout) override;
  std::int64_t add(const std::string& key, std::int64_t delta) override;
  bool remove(const std::string& key) override;

  // The port actually in use (the one chosen by the system when hosting on port 0).
  int port() const;
  const std::string& host() const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

struct RendezvousOptions {
  std::string kind = "tcp";           // "tcp" or "file"
  std::string address = "127.0.0.1";  // tcp: host of rank 0's store
  int port = 29511;                   // tcp: its port
  std::string file;                   // file: the store's folder
  int rank = 0;
  int world_size = 1;
  std::chrono::milliseconds timeout{60000};
  // Namespaces every key; two runs with different ids never collide. Must not be empty.
  std::string run_id;
  // tcp: whether rank 0 hosts the store (false when a launcher already hosts it).
  bool rank0_hosts = true;
  // tcp: what every rank presents to the store; empty: the run id.
  std::string token;
};

// The store of one run: a TcpStore (hosted by rank 0) or a FileStore, inside a PrefixStore
// "baton/<run_id>". Throws StoreError (cannot host or reach the store, folder not writable)
// or ConfigError (unknown kind, missing file, empty run id, rank outside the world).
BATON_API std::shared_ptr<Store> make_rendezvous_store(const RendezvousOptions& options);

// Polls the counter `key` (Store::add) until it reaches `expected` or `timeout` passes;
// returns the last count read, below `expected` only on a timeout. What every "each rank
// adds 1, then waits for all" step of a run uses (rendezvous, checkpoints, traces).
BATON_API std::int64_t wait_for_counter(Store& store, const std::string& key, std::int64_t expected,
                                        std::chrono::milliseconds timeout);

// Counts this rank in and waits until every rank of the world has arrived at the run's
// store (a TCP one: its rank claims say who came). A rank that never arrives is named when
// `timeout` passes — rather than surfacing later as a key the transport waited for — with
// what to check. `where` names the store ("the tcp store at 127.0.0.1:29511").
BATON_API void wait_for_every_rank(Store& run_store, int rank, int world_size,
                                   std::chrono::milliseconds timeout, const std::string& where);

// 127.0.0.0/8, ::1 or "localhost": an address only this machine reaches.
BATON_API bool is_loopback_address(const std::string& address);

}  // namespace baton
