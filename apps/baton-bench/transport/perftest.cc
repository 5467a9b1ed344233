#include "perftest.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include "baton/error.h"

namespace baton_app {

namespace {

// The last `lines` lines of `text`, for error messages.
std::string tail(const std::string& text, int lines) {
  std::size_t start = text.size();
  if (start > 0 && text[start - 1] == '\n') --start;
  for (int i = 0; i < lines && start != std::string::npos; ++i) {
    start = start == 0 ? std::string::npos : text.rfind('\n', start - 1);
  }
  return start == std::string::npos ? text : text.substr(start + 1);
}

// A port nobody listens on right now (the server binds it a moment later).
int free_loopback_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw baton::Error(std::string("bench: socket: ") + std::strerror(errno));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(address);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    const std::string why = std::strerror(errno);
    ::close(fd);
    throw baton::Error("bench: cannot find a free port: " + why);
  }
  ::close(fd);
  return ntohs(address.sin_port);
}

// Whether some socket listens on `port`, from the kernel's tables: connecting to find out
// would take the one connection the server accepts.
bool listening_on(int port) {
  for (const char* table : {"/proc/net/tcp", "/proc/net/tcp6"}) {
    std::ifstream file(table);  // /proc/: a kernel table reports size 0, read_file reads by size
    std::string line;
    std::getline(file, line);  // header
    while (std::getline(file, line)) {
      std::istringstream fields(line);
      std::string slot, local, remote, state;
      if (!(fields >> slot >> local >> remote >> state)) continue;
      const auto colon = local.rfind(':');
      if (colon == std::string::npos || state != "0A") continue;  // 0A: LISTEN
      if (std::strtol(local.c_str() + colon + 1, nullptr, 16) == port) return true;
    }
  }
  return false;
}

}  // namespace

std::string find_ucx_perftest() {
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    if (dir.empty()) continue;
    const std::string candidate = dir + "/ucx_perftest";
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return {};
}

PerftestFigures parse_ucx_perftest_output(const std::string& output) {
  // With -v, progress lines start with "[thread N]" and the final line is bare:
  //   iterations,50.0_percentile_lat,avg_lat,overall_lat,avg_bw,overall_bw,avg_mr,overall_mr
  std::istringstream lines(output);
  std::string line;
  std::vector<double> last;
  while (std::getline(lines, line)) {
    const auto first = line.find_first_not_of(" \t");
    if (first == std::string::npos || !std::isdigit(static_cast<unsigned char>(line[first]))) {
      continue;
    }
    std::vector<double> values;
    std::istringstream fields(line.substr(first));
    std::string field;
    bool numeric = true;
    while (std::getline(fields, field, ',')) {
      char* end = nullptr;
      values.push_back(std::strtod(field.c_str(), &end));
      if (end == field.c_str()) numeric = false;
    }
    if (numeric && values.size() == 8) last = values;
  }
  if (last.empty()) {
    throw baton::Error("ucx_perftest printed no result line:\n" + tail(output, 12));
  }
  PerftestFigures figures;
  figures.latency_us = last[1];
  figures.gbps = last[5] * 1024.0 * 1024.0 / 1e9;  // ucx_perftest's "MB" is 2^20 bytes
  return figures;
}

PerftestFigures run_ucx_perftest(const PerftestRun& run, BenchClock::time_point deadline) {
  const int port = free_loopback_port();
  const std::string server_log = run.scratch + "/perftest-server.log";
  const std::string client_log = run.scratch + "/perftest-client.log";
  std::vector<std::string> arguments = {
      "-p", std::to_string(port),       "-t", run.test,
      "-s", std::to_string(run.bytes),  "-n", std::to_string(run.iterations),
      "-w", std::to_string(run.warmup), "-f", "-v"};
  std::vector<std::string> server = {run.program};
  server.insert(server.end(), arguments.begin(), arguments.end());
  std::vector<std::string> client = {run.program, "127.0.0.1"};
  client.insert(client.end(), arguments.begin(), arguments.end());

  auto failure = [&](const std::string& what) {
    return baton::Error("ucx_perftest -t " + run.test + " -s " + std::to_string(run.bytes) + " " +
                        what + "\n--- server:\n" + tail(read_child_output(server_log), 12) +
                        "--- client:\n" + tail(read_child_output(client_log), 12));
  };

  ProcessGroup processes;  // kills both on every way out
  const std::size_t server_index = processes.spawn("ucx_perftest server", server, server_log);
  while (!listening_on(port)) {
    if (!processes.running(server_index)) throw failure("server exited before listening");
    if (BenchClock::now() >= deadline) throw failure("server did not listen before the deadline");
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  processes.spawn("ucx_perftest client", client, client_log);
  for (const ProcessOutcome& outcome : processes.wait_all(deadline, std::chrono::seconds(2))) {
    if (!outcome.succeeded()) throw failure("failed: " + outcome.describe());
  }
  try {
    return parse_ucx_perftest_output(read_child_output(client_log));
  } catch (const baton::Error&) {
    throw failure("printed no result");
  }
}

}  // namespace baton_app
