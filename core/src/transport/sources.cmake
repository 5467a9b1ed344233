# The transport layer's core parts: interface anchors, shared helpers for transport plugins,
# and the rendezvous stores. Included by core/CMakeLists.txt.
set(BATON_TRANSPORT_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/interfaces.cc
  ${CMAKE_CURRENT_LIST_DIR}/transport_support.cc
  ${CMAKE_CURRENT_LIST_DIR}/prefix_store.cc
  ${CMAKE_CURRENT_LIST_DIR}/file_store.cc
  ${CMAKE_CURRENT_LIST_DIR}/tcp_store.cc
  ${CMAKE_CURRENT_LIST_DIR}/rendezvous_store.cc
)
