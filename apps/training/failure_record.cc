#include "failure_record.h"

#include <string>
#include <vector>

#include "baton/store_keys.h"

namespace baton_app {

void FailureRecord::record() {
  if (recorded_ || store_ == nullptr) return;
  recorded_ = true;
  try {
    const std::int64_t order = store_->add(baton::store_keys::kFailureCount, 1);
    const std::string rank_text = std::to_string(rank_);
    store_->set(baton::store_keys::failure(order),
                std::vector<std::uint8_t>(rank_text.begin(), rank_text.end()));
  } catch (const std::exception&) {
    // The store may be gone with the launcher; the error itself still tells the story.
  }
}

}  // namespace baton_app
