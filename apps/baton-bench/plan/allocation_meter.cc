#include "allocation_meter.h"

#include <malloc.h>

#include <algorithm>
#include <cstdlib>
#include <new>

namespace baton_app {
namespace {

thread_local AllocationCount counts;

void* counted(void* block) {
  if (block != nullptr) {
    counts.live += static_cast<std::int64_t>(malloc_usable_size(block));
    if (counts.live > counts.peak) counts.peak = counts.live;
  }
  return block;
}

// As the standard's operator new: on failure, the new-handler gets its chance, until there
// is none.
void out_of_memory() {
  const std::new_handler handler = std::get_new_handler();
  if (handler == nullptr) throw std::bad_alloc();
  handler();
}

void* allocate(std::size_t size) {
  for (;;) {
    if (void* block = std::malloc(size == 0 ? 1 : size)) return counted(block);
    out_of_memory();
  }
}

void* allocate_aligned(std::size_t size, std::align_val_t alignment) {
  const std::size_t align = std::max(static_cast<std::size_t>(alignment), sizeof(void*));
  for (;;) {
    void* block = nullptr;
    if (posix_memalign(&block, align, size == 0 ? 1 : size) == 0) return counted(block);
    out_of_memory();
  }
}

void release(void* block) noexcept {
  if (block == nullptr) return;
  counts.live -= static_cast<std::int64_t>(malloc_usable_size(block));
  std::free(block);
}

}  // namespace

AllocationCount thread_allocations() {
  return counts;
}

void reset_allocation_peak() {
  counts.peak = counts.live;
}

}  // namespace baton_app

// The replacements: every form of new and delete, so that each block is counted once in and
// once out.
void* operator new(std::size_t size) {
  return baton_app::allocate(size);
}
void* operator new[](std::size_t size) {
  return baton_app::allocate(size);
}
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  try {
    return baton_app::allocate(size);
  } catch (...) {
    return nullptr;
  }
}
void* operator new[](std::size_t size, const std::nothrow_t&) noexcept {
  try {
    return baton_app::allocate(size);
  } catch (...) {
    return nullptr;
  }
}
void* operator new(std::size_t size, std::align_val_t alignment) {
  return baton_app::allocate_aligned(size, alignment);
}
void* operator new[](std::size_t size, std::align_val_t alignment) {
  return baton_app::allocate_aligned(size, alignment);
}
void operator delete(void* block) noexcept {
  baton_app::release(block);
}
void operator delete[](void* block) noexcept {
  baton_app::release(block);
}
void operator delete(void* block, std::size_t) noexcept {
  baton_app::release(block);
}
void operator delete[](void* block, std::size_t) noexcept {
  baton_app::release(block);
}
void operator delete(void* block, std::align_val_t) noexcept {
  baton_app::release(block);
}
void operator delete[](void* block, std::align_val_t) noexcept {
  baton_app::release(block);
}
void operator delete(void* block, std::size_t, std::align_val_t) noexcept {
  baton_app::release(block);
}
void operator delete[](void* block, std::size_t, std::align_val_t) noexcept {
  baton_app::release(block);
}
void* operator new(std::size_t size, std::align_val_t alignment, const std::nothrow_t&) noexcept {
  try {
    return baton_app::allocate_aligned(size, alignment);
  } catch (...) {
    return nullptr;
  }
}
void* operator new[](std::size_t size, std::align_val_t alignment, const std::nothrow_t&) noexcept {
  try {
    return baton_app::allocate_aligned(size, alignment);
  } catch (...) {
    return nullptr;
  }
}
void operator delete(void* block, const std::nothrow_t&) noexcept {
  baton_app::release(block);
}
void operator delete[](void* block, const std::nothrow_t&) noexcept {
  baton_app::release(block);
}
void operator delete(void* block, std::align_val_t, const std::nothrow_t&) noexcept {
  baton_app::release(block);
}
void operator delete[](void* block, std::align_val_t, const std::nothrow_t&) noexcept {
  baton_app::release(block);
}
