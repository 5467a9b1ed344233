# Finds UCX's UCP and UCS libraries (Debian: libucx-dev). Defines UCX::ucp.
find_path(UCX_INCLUDE_DIR ucp/api/ucp.h)
find_library(UCX_UCP_LIBRARY NAMES ucp)
find_library(UCX_UCS_LIBRARY NAMES ucs)

if(UCX_INCLUDE_DIR AND UCX_UCP_LIBRARY AND UCX_UCS_LIBRARY)
  set(UCX_FOUND TRUE)
  set(UCX_DESCRIPTION "${UCX_UCP_LIBRARY}")
  if(NOT TARGET UCX::ucp)
    add_library(UCX::ucs UNKNOWN IMPORTED)
    set_target_properties(UCX::ucs PROPERTIES
      IMPORTED_LOCATION "${UCX_UCS_LIBRARY}"
      INTERFACE_INCLUDE_DIRECTORIES "${UCX_INCLUDE_DIR}")
    add_library(UCX::ucp UNKNOWN IMPORTED)
    set_target_properties(UCX::ucp PROPERTIES
      IMPORTED_LOCATION "${UCX_UCP_LIBRARY}"
      INTERFACE_INCLUDE_DIRECTORIES "${UCX_INCLUDE_DIR}"
      INTERFACE_LINK_LIBRARIES UCX::ucs)
  endif()
else()
  set(UCX_FOUND FALSE)
  set(UCX_NOT_FOUND_REASON "ucp/api/ucp.h: ${UCX_INCLUDE_DIR}, libucp: ${UCX_UCP_LIBRARY}")
endif()
mark_as_advanced(UCX_INCLUDE_DIR UCX_UCP_LIBRARY UCX_UCS_LIBRARY)
