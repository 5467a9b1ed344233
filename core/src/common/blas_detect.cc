#include <dlfcn.h>
#include <link.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "baton/runtime/compute_environment.h"

namespace baton {
namespace {

bool contains(const std::string& text, const char* part) {
  return text.find(part) != std::string::npos;
}

std::string resolved(const char* path) {
  char* real = ::realpath(path, nullptr);
  if (real == nullptr) return path;
  std::string result(real);
  std::free(real);
  return result;
}

// The BLAS-providing libraries loaded into this process, resolved through symlinks (the
// alternatives system makes libblas.so.3 a link to whichever BLAS is selected).
std::vector<std::string> loaded_blas_libraries() {
  std::vector<std::string> found;
  dl_iterate_phdr(
      [](dl_phdr_info* info, std::size_t, void* data) {
        if (info->dlpi_name == nullptr || info->dlpi_name[0] == '\0') return 0;
        const std::string name(info->dlpi_name);
        const std::string base = name.substr(name.find_last_of('/') + 1);
        if (base.rfind("libblas.so", 0) == 0 || base.rfind("libopenblas", 0) == 0 ||
            base.rfind("libblis", 0) == 0 || base.rfind("libmkl_rt", 0) == 0) {
          static_cast<std::vector<std::string>*>(data)->push_back(resolved(info->dlpi_name));
        }
        return 0;
      },
      &found);
  return found;
}

}  // namespace

BlasInfo classify_blas_library(const std::string& resolved_path,
                               const std::string& openblas_config) {
  BlasInfo info;
  info.library = resolved_path;
  const std::string variant = contains(resolved_path, "openblas-openmp")    ? " (openmp)"
                              : contains(resolved_path, "openblas-pthread") ? " (pthread)"
                              : contains(resolved_path, "openblas-serial")  ? " (serial)"
                                                                            : "";
  if (contains(resolved_path, "openblas") || !openblas_config.empty()) {
    // "OpenBLAS 0.3.21 DYNAMIC_ARCH NO_AFFINITY Haswell MAX_THREADS=64" -> "OpenBLAS 0.3.21"
    std::string name = "OpenBLAS";
    if (openblas_config.rfind("OpenBLAS ", 0) == 0) {
      const std::size_t end = openblas_config.find(' ', 9);
      name = openblas_config.substr(0, end);
    }
    info.name = name + variant;
  } else if (contains(resolved_path, "blis")) {
    info.name = "BLIS";
  } else if (contains(resolved_path, "mkl")) {
    info.name = "Intel MKL";
  } else if (contains(resolved_path, "atlas")) {
    info.name = "ATLAS";
  } else if (contains(resolved_path, "/blas/libblas.so") || contains(resolved_path, "refblas")) {
    info.name = "reference BLAS (netlib)";
    info.reference = true;
    info.advice =
        "LibTorch is using netlib's reference BLAS, which makes matmuls 5-16x slower; install "
        "an optimized one: sudo apt-get install libopenblas0-openmp";
  } else {
    info.name = "unknown";
  }
  return info;
}

BlasInfo detect_blas() {
  using ConfigFunction = char* (*)();
  std::string config;
  if (auto function =
          reinterpret_cast<ConfigFunction>(::dlsym(RTLD_DEFAULT, "openblas_get_config"))) {
    if (const char* text = function()) config = text;
  }
  // The library that LibTorch's matmuls really call: whoever provides sgemm_ first in the
  // global lookup order (a reference BLAS and an OpenBLAS can be loaded side by side).
  if (void* sgemm = ::dlsym(RTLD_DEFAULT, "sgemm_")) {
    Dl_info where{};
    if (::dladdr(sgemm, &where) != 0 && where.dli_fname != nullptr) {
      return classify_blas_library(resolved(where.dli_fname), config);
    }
  }
  const std::vector<std::string> libraries = loaded_blas_libraries();
  if (libraries.empty()) {
    BlasInfo info;
    info.name = config.empty() ? "none loaded" : classify_blas_library("", config).name;
    return info;
  }
  return classify_blas_library(libraries.front(), config);
}

}  // namespace baton
