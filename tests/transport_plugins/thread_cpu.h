// CPU time of this process's threads, by thread name, from /proc/self/task: how tests see
// that a background thread sleeps instead of polling.
#pragma once

#include <chrono>
#include <string>

namespace baton_test {

// Total CPU time (user + system) of every thread of this process named `name` (the
// pthread_setname_np name, as in /proc/self/task/<tid>/comm). Nanosecond resolution where
// the kernel has schedstat, else clock ticks. Returns the number of such threads in `count`.
std::chrono::nanoseconds thread_cpu_time(const std::string& name, int* count = nullptr);

// CPU time of the whole process (every thread).
std::chrono::nanoseconds process_cpu_time();

}  // namespace baton_test
