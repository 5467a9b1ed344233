# baton_add_plugin(NAME <name> KIND <schedule|transport|validator> SOURCES <files…>
#                  [LIBRARIES <targets…>]
#                  [IMPLEMENTATION_SOURCES <files…> [IMPLEMENTATION_LIBRARIES <targets…>]]
#                  [OUTPUT_DIRECTORY <dir>] [NO_INSTALL])
#
# Builds libbaton-<kind>-<name>.so against the core's SDK: hidden visibility (only the
# entry point declared by BATON_PLUGIN is exported), output into the plugin folder the
# loader searches. Schedules link the plan layer only (no LibTorch); transports and
# validators link baton::core with LibTorch's ABI flags.
#
# With IMPLEMENTATION_SOURCES the plugin is two files (baton/plugin_implementation.h): the
# plugin file keeps the descriptor, parameters and viability and links the plan layer only,
# so listing it does not load LibTorch; libbaton_<name>_<kind>.so, next to it, holds the
# tensor side (BATON_PLUGIN_IMPLEMENTATION) and links baton::core.
function(baton_add_plugin)
  cmake_parse_arguments(PLUGIN "NO_INSTALL" "NAME;KIND;OUTPUT_DIRECTORY"
                        "SOURCES;LIBRARIES;IMPLEMENTATION_SOURCES;IMPLEMENTATION_LIBRARIES" ${ARGN})
  if(NOT PLUGIN_NAME OR NOT PLUGIN_KIND OR NOT PLUGIN_SOURCES)
    message(FATAL_ERROR "baton_add_plugin needs NAME, KIND and SOURCES")
  endif()
  if(NOT PLUGIN_KIND MATCHES "^(schedule|transport|validator)$")
    message(FATAL_ERROR "baton_add_plugin(${PLUGIN_NAME}): KIND must be schedule, transport "
                        "or validator, got '${PLUGIN_KIND}'")
  endif()
  set(target baton-${PLUGIN_KIND}-${PLUGIN_NAME})
  set(needs_torch OFF)
  if(NOT PLUGIN_KIND STREQUAL "schedule")
    set(needs_torch ON)
    if(NOT TARGET baton::core OR (DEFINED BATON_SDK_HAS_TORCH AND NOT TARGET torch))
      message(FATAL_ERROR "baton_add_plugin(${PLUGIN_NAME}): a ${PLUGIN_KIND} plugin passes "
                          "tensors and needs LibTorch, which find_package(Torch) did not find "
                          "(install libtorch-dev or set Torch_DIR)")
    endif()
  endif()
  add_library(${target} MODULE ${PLUGIN_SOURCES})
  set(targets ${target})
  # A schedule is pure data (plans, no tensors): it needs only the plan layer, and builds
  # where LibTorch is not installed. Transports and validators pass tensors, unless their
  # tensor side is a separate implementation library.
  if(PLUGIN_IMPLEMENTATION_SOURCES)
    set(implementation baton_${PLUGIN_NAME}_${PLUGIN_KIND})
    add_library(${implementation} MODULE ${PLUGIN_IMPLEMENTATION_SOURCES})
    if(needs_torch)
      target_link_libraries(${implementation} PRIVATE baton::core ${PLUGIN_IMPLEMENTATION_LIBRARIES})
      # The plugin file records the LibTorch its implementation is built against.
      target_compile_definitions(${target} PRIVATE
        BATON_PLUGIN_TORCH_VERSION="${BATON_TORCH_VERSION}")
    else()
      target_link_libraries(${implementation} PRIVATE baton::plan ${PLUGIN_IMPLEMENTATION_LIBRARIES})
    endif()
    set_target_properties(${implementation} PROPERTIES PREFIX "lib")
    target_link_libraries(${target} PRIVATE baton::plan ${PLUGIN_LIBRARIES})
    add_dependencies(${target} ${implementation})
    list(APPEND targets ${implementation})
  elseif(needs_torch)
    target_link_libraries(${target} PRIVATE baton::core ${PLUGIN_LIBRARIES})
  else()
    target_link_libraries(${target} PRIVATE baton::plan ${PLUGIN_LIBRARIES})
  endif()
  set_target_properties(${target} PROPERTIES
    PREFIX "lib"
    OUTPUT_NAME "baton-${PLUGIN_KIND}-${PLUGIN_NAME}")
  foreach(each IN LISTS targets)
    set_target_properties(${each} PROPERTIES CXX_VISIBILITY_PRESET hidden
                                             VISIBILITY_INLINES_HIDDEN ON)
    if(PLUGIN_OUTPUT_DIRECTORY)
      set_target_properties(${each} PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${PLUGIN_OUTPUT_DIRECTORY})
    elseif(DEFINED BATON_PLUGIN_OUTPUT_DIRECTORY)
      set_target_properties(${each} PROPERTIES
        LIBRARY_OUTPUT_DIRECTORY ${BATON_PLUGIN_OUTPUT_DIRECTORY})
    endif()
    if(DEFINED BATON_INSTALL_PLUGIN_DIR AND NOT PLUGIN_NO_INSTALL)
      # Installed plugins sit in <libdir>/baton, one level below libbaton_core.
      set_target_properties(${each} PROPERTIES INSTALL_RPATH "$ORIGIN/..")
      install(TARGETS ${each} LIBRARY DESTINATION ${BATON_INSTALL_PLUGIN_DIR})
    endif()
    if(COMMAND baton_target_warnings)
      baton_target_warnings(${each})
    endif()
  endforeach()
  if(NOT PLUGIN_NO_INSTALL AND NOT PLUGIN_OUTPUT_DIRECTORY)
    # The plugins a run can load (not test fixtures): see the main-job target.
    set_property(GLOBAL APPEND PROPERTY BATON_PLUGIN_TARGETS ${target})
  endif()
  set(BATON_LAST_PLUGIN_TARGET ${target} PARENT_SCOPE)
endfunction()
