// What the math of a rank runs on: which BLAS LibTorch resolved to, and how many threads
// each rank's LibTorch and OpenMP pools use. Reported at start-up (launch, run, version,
// doctor), so a slow set-up is named instead of silently slow.
#pragma once

#include <functional>
#include <string>
#include <thread>

#include "baton/export.h"
#include "baton/machine.h"  // cpus_available()

namespace baton {

struct BlasInfo {
  std::string name;        // "OpenBLAS 0.3.21 (openmp)", "reference BLAS (netlib)", "unknown"
  std::string library;     // resolved path of the loaded BLAS library; empty if none was found
  bool reference = false;  // netlib's unoptimized BLAS: 5-16x slower matmuls
  // What to do about it (empty unless `reference`): the package that fixes it.
  std::string advice;
};

// Inspects the libraries loaded into this process (LibTorch loads its BLAS with it).
BATON_API BlasInfo detect_blas();

// Classifies one resolved library path ("/usr/lib/x86_64-linux-gnu/blas/libblas.so.3.11.0"
// is netlib's reference BLAS; ".../openblas-openmp/libblas.so.3" is OpenBLAS). Exposed for
// tests; `openblas_config` is openblas_get_config()'s text when that symbol exists.
BATON_API BlasInfo classify_blas_library(const std::string& resolved_path,
                                         const std::string& openblas_config);

// The default threads per rank: cpus_available() / local_ranks, at least 1.
BATON_API int default_threads_per_rank(int local_ranks);

// Sets LibTorch's intra-op pool (which is also OpenMP's, and so OpenBLAS-openmp's) and its
// inter-op pool to `threads`. Call before any tensor work; the inter-op pool can only be set
// once per process, so a later call leaves it as it was. Throws baton::Error for threads < 1.
BATON_API void apply_threads(int threads);

// Starts `work` on a new thread that computes with this thread's intra-op threads from its
// first operation. LibTorch keeps apply_threads' count for the process but applies it to
// another thread only when that thread first asks for it (an elementwise operation above its
// grain size does); until then the thread has OpenMP's default, every core, and a matrix
// product — what a small microbatch's Linear runs first, and often only — takes them all,
// crowding the machine more than a rank does.
BATON_API std::thread start_rank_thread(std::function<void()> work);

// Makes glibc's malloc keep freed memory for reuse instead of handing it back to the kernel:
// a training step frees and reallocates the same multi-megabyte tensors (gradients,
// activations) every microbatch, and with glibc's defaults each of them is a fresh mmap
// whose pages fault in again — a third of a rank's time on the reference MLP went to the
// kernel. Leaves alone any MALLOC_*_ tuning set in the environment. Returns a description
// ("malloc keeps freed memory (mmap threshold 256 MiB, trim threshold 1 GiB)").
BATON_API std::string apply_allocator_policy();

// Hands the kernel back the heap's free pages (malloc_trim): kept memory that fragmentation
// left behind grows a long run's resident set by a few KiB a step. The trainer calls it
// every kTrimEverySteps steps; a call costs a few milliseconds.
BATON_API void release_free_heap_pages();
inline constexpr int kTrimEverySteps = 1000;

// LibTorch's current intra-op threads (at::get_num_threads()).
BATON_API int intra_op_threads();

}  // namespace baton
