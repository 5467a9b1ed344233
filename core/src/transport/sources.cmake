# The transport layer's core parts: interface anchors and the helpers transport plugins
# share (the rendezvous stores are in ../store, in libbaton_plan). Included by core/CMakeLists.txt.
set(BATON_TRANSPORT_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/all_reduce.cc
  ${CMAKE_CURRENT_LIST_DIR}/collective_queue.cc
  ${CMAKE_CURRENT_LIST_DIR}/interfaces.cc
  ${CMAKE_CURRENT_LIST_DIR}/ring_all_reduce.cc
  ${CMAKE_CURRENT_LIST_DIR}/shard_collectives.cc
  ${CMAKE_CURRENT_LIST_DIR}/transfer_outcome.cc
  ${CMAKE_CURRENT_LIST_DIR}/transport_interfaces.cc
  ${CMAKE_CURRENT_LIST_DIR}/transport_support.cc
)
