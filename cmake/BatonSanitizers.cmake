# BATON_SANITIZE builds everything — core, plugins, apps and tests — under the named
# sanitizers: "address,undefined" or "thread" (scripts/sanitize makes such builds in their own
# folders). Findings stop the program: UBSan does not recover, so a finding fails its test.
# LibTorch, gloo and UCX stay uninstrumented; docs/testing.md lists what that means and the
# suppressions in tests/sanitizers/.
set(BATON_SANITIZE "" CACHE STRING "Sanitizers for the whole build (address,undefined or thread)")
if(BATON_SANITIZE)
  message(STATUS "sanitizers: ${BATON_SANITIZE}")
  add_compile_options(-fsanitize=${BATON_SANITIZE} -fno-omit-frame-pointer)
  if(BATON_SANITIZE MATCHES "undefined")
    add_compile_options(-fno-sanitize-recover=undefined)
  endif()
  add_link_options(-fsanitize=${BATON_SANITIZE})
endif()
