#include "thread_cpu.h"

#include <dirent.h>
#include <time.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

namespace baton_test {

namespace {

std::string first_line(const std::string& path) {
  std::ifstream file(path);
  std::string line;
  std::getline(file, line);
  return line;
}

std::chrono::nanoseconds task_cpu_time(const std::string& task) {
  // schedstat: "<ns on cpu> <ns waiting> <timeslices>"
  std::istringstream schedstat(first_line(task + "/schedstat"));
  long long on_cpu = -1;
  if (schedstat >> on_cpu && on_cpu >= 0) return std::chrono::nanoseconds(on_cpu);
  // stat: utime and stime are fields 14 and 15, after the parenthesized command name.
  const std::string stat = first_line(task + "/stat");
  std::istringstream fields(stat.substr(stat.rfind(')') + 2));
  std::string field;
  long long utime = 0;
  long long stime = 0;
  for (int index = 3; fields >> field; ++index) {
    if (index == 14) utime = std::stoll(field);
    if (index == 15) {
      stime = std::stoll(field);
      break;
    }
  }
  const long ticks = ::sysconf(_SC_CLK_TCK);
  return std::chrono::nanoseconds((utime + stime) * 1000000000LL / ticks);
}

}  // namespace

std::chrono::nanoseconds thread_cpu_time(const std::string& name, int* count) {
  std::chrono::nanoseconds total{0};
  int found = 0;
  DIR* tasks = ::opendir("/proc/self/task");
  if (tasks == nullptr) return total;
  while (dirent* entry = ::readdir(tasks)) {
    if (entry->d_name[0] == '.') continue;
    const std::string task = std::string("/proc/self/task/") + entry->d_name;
    if (first_line(task + "/comm") != name) continue;
    total += task_cpu_time(task);
    ++found;
  }
  ::closedir(tasks);
  if (count != nullptr) *count = found;
  return total;
}

std::chrono::nanoseconds process_cpu_time() {
  timespec now{};
  ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
  return std::chrono::seconds(now.tv_sec) + std::chrono::nanoseconds(now.tv_nsec);
}

}  // namespace baton_test
