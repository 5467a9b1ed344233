# Use ccache when it is installed: LibTorch translation units take seconds each.
find_program(BATON_CCACHE ccache)
if(BATON_CCACHE AND NOT CMAKE_CXX_COMPILER_LAUNCHER)
  set(CMAKE_CXX_COMPILER_LAUNCHER ${BATON_CCACHE})
  set(CMAKE_C_COMPILER_LAUNCHER ${BATON_CCACHE})
endif()
