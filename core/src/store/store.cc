// Out-of-line destructors anchor the store interface's vtable and type information in
// libbaton_plan, so plugins and the core agree on one type.
#include "baton/store.h"

namespace baton {

Store::~Store() = default;

bool Store::remove(const std::string& /*key*/) {
  return false;
}

StoreError::~StoreError() = default;

}  // namespace baton
