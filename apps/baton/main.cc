// baton: pipeline-parallel training on LibTorch, with schedules and transports as plugins.
//
// This is the front end, built on the plan layer alone (no LibTorch), so what needs no tensor
// answers at once: help, version, plan, plugins. Training and managing runs (launch, run,
// export, config) is `baton-runtime`, measuring (bench) is `baton-bench`, both next to this
// program, which the front end replaces itself with (execv: same process id and environment).
#include <dlfcn.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "baton/error.h"
#include "baton/plugin.h"
#include "baton/runtime/compute_environment.h"
#include "baton/suggest.h"
#include "cli_args.h"
#include "commands.h"
#include "process_group.h"
#include "usage.h"

namespace {

// Replaces this process with `program` (next to this one) and `arguments`.
[[noreturn]] void continue_in(const std::string& program,
                              const std::vector<std::string>& arguments) {
  const std::string path = baton_app::sibling_program(program);
  std::vector<std::string> words{path};
  words.insert(words.end(), arguments.begin(), arguments.end());
  std::vector<char*> pointers;
  for (std::string& word : words) pointers.push_back(word.data());
  pointers.push_back(nullptr);
  ::execv(path.c_str(), pointers.data());
  throw baton::Error("cannot start " + path + ": " + std::strerror(errno) +
                     " (it is installed next to `baton`; reinstall baton)");
}

void print_version() {
  std::cout << "baton " << BATON_VERSION << " (plugin ABI " << BATON_ABI_MAJOR << "."
            << BATON_ABI_MINOR << ", LibTorch " << BATON_TORCH_VERSION
            << ", _GLIBCXX_USE_CXX11_ABI=" << BATON_CXX11_ABI << ")\n";
  // The BLAS LibTorch will use is the one libblas.so.3 resolves to (LibTorch links it by that
  // name); load just that library to name it, instead of all of LibTorch.
  ::dlopen("libblas.so.3", RTLD_LAZY | RTLD_GLOBAL);
  const baton::BlasInfo blas = baton::detect_blas();
  std::cout << "blas: " << blas.name << (blas.library.empty() ? "" : " (" + blas.library + ")")
            << "\ncpus: " << baton::cpus_available()
            << " available; threads per rank default to cpus / local ranks (run.threads)\n";
  if (blas.reference) std::cerr << "warning: " << blas.advice << "\n";
}

int dispatch(const std::vector<std::string>& args) {
  if (args.empty() || args[0] == "help" || args[0] == "--help" || args[0] == "-h") {
    std::cout << baton_app::kUsage;
    return args.empty() ? 2 : 0;
  }
  const std::string command = args[0];
  const std::vector<std::string> rest(args.begin() + 1, args.end());
  if (command == "plugins") return baton_app::run_plugins_command(rest);
  if (command == "plan") return baton_app::run_plan_command(rest);
  if (command == "version" || command == "--version") {
    print_version();
    return 0;
  }
  if (command == "bench") continue_in("baton-bench", rest);
  for (const char* runtime_command : {"launch", "run", "export", "config"}) {
    if (command == runtime_command) continue_in("baton-runtime", args);
  }
  throw baton_app::UsageError(
      "unknown command '" + command + "'" +
      baton::did_you_mean(command, {"launch", "run", "export", "plugins", "config", "plan", "bench",
                                    "version", "help"}));
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  return baton_app::run_guarded([&] { return dispatch(args); });
}
