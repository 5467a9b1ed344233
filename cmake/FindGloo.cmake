# Finds Gloo (Debian: libgloo-dev). Debian ships headers and libgloo.so without a usable
# pkg-config file, so look for them directly. Defines Gloo::gloo.
find_path(Gloo_INCLUDE_DIR gloo/context.h)
find_library(Gloo_LIBRARY NAMES gloo PATHS /usr/lib /usr/local/lib)

if(Gloo_INCLUDE_DIR AND Gloo_LIBRARY)
  set(Gloo_FOUND TRUE)
  set(Gloo_DESCRIPTION "${Gloo_LIBRARY}")
  if(NOT TARGET Gloo::gloo)
    add_library(Gloo::gloo UNKNOWN IMPORTED)
    set_target_properties(Gloo::gloo PROPERTIES
      IMPORTED_LOCATION "${Gloo_LIBRARY}"
      INTERFACE_INCLUDE_DIRECTORIES "${Gloo_INCLUDE_DIR}")
  endif()
else()
  set(Gloo_FOUND FALSE)
  set(Gloo_NOT_FOUND_REASON "gloo/context.h: ${Gloo_INCLUDE_DIR}, libgloo: ${Gloo_LIBRARY}")
endif()
mark_as_advanced(Gloo_INCLUDE_DIR Gloo_LIBRARY)
