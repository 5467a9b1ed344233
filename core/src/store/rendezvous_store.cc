// Picks and namespaces the store of one run (see baton/stores.h).
#include <chrono>
#include <string>

#include "baton/durations.h"
#include "baton/error.h"
#include "baton/store_keys.h"
#include "baton/stores.h"

namespace baton {

bool is_loopback_address(const std::string& address) {
  return address.rfind("127.", 0) == 0 || address == "::1" || address == "localhost" ||
         address == "[::1]";
}

std::shared_ptr<Store> make_rendezvous_store(const RendezvousOptions& options) {
  if (options.run_id.empty()) {
    throw ConfigError("rendezvous: the run id is empty; it namespaces the store's keys");
  }
  if (options.world_size < 1 || options.rank < 0 || options.rank >= options.world_size) {
    throw ConfigError("rendezvous: rank " + std::to_string(options.rank) +
                      " is outside a world of " + std::to_string(options.world_size) + " ranks");
  }
  std::shared_ptr<Store> store;
  if (options.kind == "tcp") {
    // The run id is no secret: beyond loopback, anyone who reaches the port could read and
    // write the run's keys with it.
    const bool hosts = options.rank0_hosts && options.rank == 0;
    if (hosts && options.token.empty() && !is_loopback_address(options.address)) {
      throw ConfigError(
          "rendezvous: rank 0 would host the store on " + options.address +
          ", beyond loopback, guarded only by the run id; set BATON_STORE_TOKEN to the same "
          "secret on every host (for example: export BATON_STORE_TOKEN=$(od -An -N16 -tx1 "
          "/dev/urandom | tr -d ' \\n')), or keep world.address on 127.0.0.1 for a run on one "
          "machine");
    }
    TcpStoreOptions tcp;
    tcp.host = options.address;
    tcp.port = options.port;
    tcp.is_server = options.rank0_hosts && options.rank == 0;
    tcp.token = options.token.empty() ? options.run_id : options.token;
    tcp.timeout = options.timeout;
    store = std::make_shared<TcpStore>(tcp);
  } else if (options.kind == "file") {
    if (options.file.empty()) {
      throw ConfigError("rendezvous: kind 'file' needs the store's folder (world.file)");
    }
    store = std::make_shared<FileStore>(options.file);
  } else {
    throw ConfigError("rendezvous: unknown store kind '" + options.kind +
                      "'; expected 'tcp' or 'file'");
  }
  auto run_store =
      std::make_shared<PrefixStore>(store_keys::run_prefix(options.run_id), std::move(store));
  // A second process claiming a rank that is taken would otherwise wait, silently, inside
  // the transport's connect. (A file store's folder may outlive a run: only tcp counts.)
  if (options.kind == "tcp") {
    const std::int64_t claims = run_store->add(store_keys::rank_claim(options.rank), 1);
    if (claims > 1) {
      throw StoreError("rank " + std::to_string(options.rank) + " of run '" + options.run_id +
                       "' is already taken by another process: two processes were started as "
                       "the same rank (check RANK / the launcher's environment, or stop the "
                       "stray process)");
    }
  }
  return run_store;
}

void wait_for_every_rank(Store& run_store, int rank, int world_size,
                         std::chrono::milliseconds timeout, const std::string& where) {
  run_store.add(store_keys::ranks_arrived(), 1);
  const std::int64_t arrived =
      wait_for_counter(run_store, store_keys::ranks_arrived(), world_size, timeout);
  if (arrived >= world_size) return;
  std::string missing;
  int count = 0;
  for (int r = 0; r < world_size; ++r) {
    if (run_store.add(store_keys::rank_claim(r), 0) > 0) continue;
    missing += (missing.empty() ? "" : ", ") + std::to_string(r);
    ++count;
  }
  throw StoreError(
      "rank " + std::to_string(rank) + ": rendezvous: " + std::to_string(arrived) + " of " +
      std::to_string(world_size) + " ranks arrived at " + where + " within " +
      format_seconds(timeout) + " (world.timeout_s); " +
      (count == 0 ? std::string("the others arrived only now")
                  : (count == 1 ? "rank " : "ranks ") + missing + " never did") +
      ". Start every rank with the same world settings (the launcher's RANK, WORLD_SIZE, "
      "MASTER_ADDR and MASTER_PORT, or world.address and world.port), check that each can "
      "reach " +
      where + ", or raise world.timeout_s if ranks start slowly");
}

}  // namespace baton
