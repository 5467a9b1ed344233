# Sources of the plan compiler (action IR, CSV, validate, lower, simulate, format), for
# baton_core. Absolute paths, so the file can be included from any directory.
set(BATON_PLAN_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/action.cc
  ${CMAKE_CURRENT_LIST_DIR}/action_rules.cc
  ${CMAKE_CURRENT_LIST_DIR}/plan.cc
  ${CMAKE_CURRENT_LIST_DIR}/csv.cc
  ${CMAKE_CURRENT_LIST_DIR}/validate.cc
  ${CMAKE_CURRENT_LIST_DIR}/lower.cc
  ${CMAKE_CURRENT_LIST_DIR}/simulate.cc
  ${CMAKE_CURRENT_LIST_DIR}/format_table.cc
  ${CMAKE_CURRENT_LIST_DIR}/format_trace.cc
  ${CMAKE_CURRENT_LIST_DIR}/chrome_trace.cc
  ${CMAKE_CURRENT_LIST_DIR}/format_summary.cc
  ${CMAKE_CURRENT_LIST_DIR}/json.cc
  ${CMAKE_CURRENT_LIST_DIR}/compile.cc
  ${CMAKE_CURRENT_LIST_DIR}/balanced_cuts.cc
  ${CMAKE_CURRENT_LIST_DIR}/gradient_reduction.cc
  ${CMAKE_CURRENT_LIST_DIR}/forward_only.cc
)
