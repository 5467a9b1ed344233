#include <gtest/gtest.h>

#include "baton/suggest.h"

namespace {

TEST(Suggest, FindsTyposByEditDistance) {
  const std::vector<std::string> keys = {"name", "microbatches", "stages_per_rank"};
  EXPECT_EQ(baton::nearest_word("microbaches", keys), "microbatches");
  EXPECT_EQ(baton::nearest_word("mircobatches", keys), "microbatches");  // transposition
  EXPECT_EQ(baton::nearest_word("stage_per_rank", keys), "stages_per_rank");
  EXPECT_EQ(baton::nearest_word("nmae", keys), "name");
}

TEST(Suggest, OffersNothingForUnrelatedWords) {
  EXPECT_EQ(baton::nearest_word("optimizer", {"name", "microbatches"}), "");
  EXPECT_EQ(baton::did_you_mean("zzz", {"name"}), "");
  EXPECT_EQ(baton::did_you_mean("nme", {"name"}), " (did you mean 'name'?)");
}

TEST(Suggest, CompletesPrefixes) {
  EXPECT_EQ(baton::nearest_word("micro", {"name", "microbatches"}), "microbatches");
}

}  // namespace
