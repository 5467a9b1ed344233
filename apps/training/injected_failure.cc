#include "injected_failure.h"

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <optional>
#include <string>

#include "baton/error.h"

namespace baton_app {

void inject_failure_from_environment(int rank, baton::InjectedFault* fault,
                                     InjectedSignal* signal_at_step) {
  const char* text = std::getenv("BATON_INJECT_FAILURE");
  if (text == nullptr || text[0] == '\0') return;
  const auto refuse = [&](const std::string& why) {
    return baton::ConfigError(std::string("BATON_INJECT_FAILURE='") + text + "': " + why +
                              "; expected rank=R,step=S,action=A[,by=kill|stop|inf|nan] (for "
                              "example rank=1,step=2,action=1B0 or "
                              "rank=1,step=2,action=1RECV_F1,by=stop)");
  };
  int target_rank = -1, step = -1, consumed = 0;
  char action[64] = {0};
  if (std::sscanf(text, "rank=%d,step=%d,action=%63[^,]%n", &target_rank, &step, action,
                  &consumed) != 3) {
    throw refuse("not of that form");
  }
  int by_signal = 0;
  std::optional<double> nonfinite;
  const std::string rest = text + consumed;
  if (rest == ",by=kill") {
    by_signal = SIGKILL;
  } else if (rest == ",by=stop") {
    by_signal = SIGSTOP;
  } else if (rest == ",by=inf") {
    nonfinite = std::numeric_limits<double>::infinity();
  } else if (rest == ",by=nan") {
    nonfinite = std::numeric_limits<double>::quiet_NaN();
  } else if (!rest.empty()) {
    throw refuse("'" + rest + "' after the action is not ,by=kill, ,by=stop, ,by=inf or ,by=nan");
  }
  const std::string name = action;
  const bool whole_step = name == "kill" || name == "stop" || name == "kill_in_checkpoint";
  if (whole_step && (by_signal != 0 || nonfinite)) throw refuse("action=" + name + " takes no by=");
  if (target_rank != rank) return;
  if (name == "kill_in_checkpoint") {
    signal_at_step->kill_in_checkpoint_step = step;
    return;
  }
  if (whole_step) {
    *signal_at_step = {step, name == "kill" ? SIGKILL : SIGSTOP};
    return;
  }
  *fault = {name, step, by_signal, nonfinite};
}

}  // namespace baton_app
