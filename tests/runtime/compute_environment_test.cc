// The BLAS LibTorch resolves to, and threads per rank.
#include "baton/runtime/compute_environment.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <omp.h>

#include <thread>

#include "baton/error.h"
#include "error_of.h"

namespace {

TEST(BlasClassification, NamesTheLibrariesDebianShips) {
  const auto reference =
      baton::classify_blas_library("/usr/lib/x86_64-linux-gnu/blas/libblas.so.3.11.0", "");
  EXPECT_TRUE(reference.reference);
  EXPECT_NE(reference.advice.find("libopenblas0-openmp"), std::string::npos);

  const auto openblas = baton::classify_blas_library(
      "/usr/lib/x86_64-linux-gnu/openblas-openmp/libblas.so.3",
      "OpenBLAS 0.3.21 DYNAMIC_ARCH NO_AFFINITY Haswell MAX_THREADS=64");
  EXPECT_FALSE(openblas.reference);
  EXPECT_EQ(openblas.name, "OpenBLAS 0.3.21 (openmp)");
  EXPECT_TRUE(openblas.advice.empty());

  EXPECT_EQ(
      baton::classify_blas_library("/usr/lib/x86_64-linux-gnu/blis-openmp/libblas.so.3", "").name,
      "BLIS");
  EXPECT_EQ(baton::classify_blas_library("/opt/x/libfoo.so", "").name, "unknown");
}

// The set-up the README installs (scripts/bootstrap) must leave LibTorch on an optimized
// BLAS: on netlib's reference one every matmul is 5-16x slower.
TEST(BlasDetection, ShippedSetUpIsNotOnTheReferenceBlas) {
  const baton::BlasInfo blas = baton::detect_blas();
  EXPECT_FALSE(blas.library.empty()) << "no BLAS library found loaded with LibTorch";
  EXPECT_FALSE(blas.reference) << blas.name << " at " << blas.library << ": " << blas.advice;
}

TEST(Threads, DefaultSharesTheCpusAmongLocalRanks) {
  const int cpus = baton::cpus_available();
  EXPECT_GE(cpus, 1);
  EXPECT_EQ(baton::default_threads_per_rank(1), cpus);
  EXPECT_EQ(baton::default_threads_per_rank(cpus * 4), 1);
  EXPECT_EQ(baton::default_threads_per_rank(0), cpus);
}

TEST(Threads, AppliedToLibTorch) {
  baton::apply_threads(1);
  EXPECT_EQ(baton::intra_op_threads(), 1);
  EXPECT_THAT(baton_test::error_of<baton::Error>([&] { baton::apply_threads(0); }),
              ::testing::HasSubstr("threads per rank must be at least 1, got 0"));
}

// The profiler's companion threads compute beside the timed unit as a rank would. LibTorch
// applies the setting to a new thread only when it first asks; until then OpenMP has its
// default (every core), which is what BLAS reads when the thread's first product starts.
TEST(Threads, ARankThreadComputesWithTheCallersThreadsFromItsFirstOperation) {
  const int before = baton::intra_op_threads();
  for (const int threads : {1, 2, 3}) {
    baton::apply_threads(threads);
    int seen = 0;
    std::thread thread = baton::start_rank_thread([&seen] { seen = omp_get_max_threads(); });
    thread.join();
    EXPECT_EQ(seen, threads);
  }
  baton::apply_threads(before);
}

}  // namespace
