// The reference for the UCX plugin: UCX's own benchmark, ucx_perftest (Debian package
// ucx-utils), run as a server and a client process on loopback — `-t tag_lat` for latency
// (it reports half a round trip, the median) and `-t tag_bw` for bandwidth (a stream of tag
// sends). The UCX_* environment (UCX_TLS, …) is the bench's, so both sides use the same UCX
// transports.
#pragma once

#include <cstddef>
#include <string>

#include "process_group.h"

namespace baton_app {

// The ucx_perftest program on PATH; empty when there is none.
std::string find_ucx_perftest();

struct PerftestFigures {
  double latency_us = 0;  // the median column ("50.0%ile")
  double gbps = 0;        // the overall bandwidth column, converted from MiB/s to 1e9 bytes/s
};

// Reads the final line of `ucx_perftest -f -v` (CSV) output. Throws baton::Error quoting
// the output when it has none.
PerftestFigures parse_ucx_perftest_output(const std::string& output);

struct PerftestRun {
  std::string program;  // from find_ucx_perftest()
  std::string test;     // "tag_lat" or "tag_bw"
  std::size_t bytes = 0;
  int iterations = 0;
  int warmup = 0;
  std::string scratch;  // folder for the two processes' output
};

// Runs the server, waits until it listens, runs the client, and parses the client's output.
// Throws baton::Error (with both outputs) when either fails or `deadline` passes.
PerftestFigures run_ucx_perftest(const PerftestRun& run, BenchClock::time_point deadline);

}  // namespace baton_app
