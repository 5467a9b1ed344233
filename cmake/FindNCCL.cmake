# Finds NCCL and the CUDA runtime it needs. Defines NCCL::nccl (which brings CUDA::cudart).
# Looks in CUDA's usual prefixes; set NCCL_ROOT to point elsewhere.
find_package(CUDAToolkit QUIET)
find_path(NCCL_INCLUDE_DIR nccl.h
  HINTS ${NCCL_ROOT} $ENV{NCCL_ROOT} ${CUDAToolkit_INCLUDE_DIRS}
  PATHS /usr/local/cuda /usr/local/cuda/include
  PATH_SUFFIXES include)
find_library(NCCL_LIBRARY NAMES nccl
  HINTS ${NCCL_ROOT} $ENV{NCCL_ROOT} ${CUDAToolkit_LIBRARY_DIR}
  PATHS /usr/local/cuda
  PATH_SUFFIXES lib64 lib)

if(CUDAToolkit_FOUND AND NCCL_INCLUDE_DIR AND NCCL_LIBRARY)
  set(NCCL_FOUND TRUE)
  set(NCCL_DESCRIPTION "${NCCL_LIBRARY} with CUDA ${CUDAToolkit_VERSION}")
  if(NOT TARGET NCCL::nccl)
    add_library(NCCL::nccl UNKNOWN IMPORTED)
    set_target_properties(NCCL::nccl PROPERTIES
      IMPORTED_LOCATION "${NCCL_LIBRARY}"
      INTERFACE_INCLUDE_DIRECTORIES "${NCCL_INCLUDE_DIR}"
      INTERFACE_LINK_LIBRARIES CUDA::cudart)
  endif()
else()
  set(NCCL_FOUND FALSE)
  set(NCCL_NOT_FOUND_REASON
      "CUDA toolkit: ${CUDAToolkit_FOUND}, nccl.h: ${NCCL_INCLUDE_DIR}, libnccl: ${NCCL_LIBRARY}")
endif()
mark_as_advanced(NCCL_INCLUDE_DIR NCCL_LIBRARY)
