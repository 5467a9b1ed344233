// The replicas' layout (world.data_parallel): rank = replica x pipeline ranks + pipeline rank,
// and the groups that synchronise parameters, from one place.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "baton/topology.h"

namespace {

using testing::ElementsAre;

TEST(Topology, RanksAreReplicaTimesPipelineRanksPlusPipelineRank) {
  const baton::Topology topology{3, 4};  // 3 replicas of a 4-rank pipeline
  EXPECT_EQ(topology.world_size(), 12);
  for (int rank = 0; rank < topology.world_size(); ++rank) {
    EXPECT_EQ(topology.rank(topology.replica_of(rank), topology.pipeline_rank_of(rank)), rank);
  }
  EXPECT_EQ(topology.rank(2, 1), 9);
  EXPECT_EQ(topology.replica_of(9), 2);
  EXPECT_EQ(topology.pipeline_rank_of(9), 1);
}

TEST(Topology, TheGroupsThatSynchroniseParameters) {
  const baton::Topology topology{3, 4};
  // Data parallelism's average: one pipeline rank in every replica.
  EXPECT_THAT(topology.replicas_of(1), ElementsAre(1, 5, 9));
  // The gradient norm: one replica's whole pipeline.
  EXPECT_THAT(topology.pipeline_of(2), ElementsAre(8, 9, 10, 11));
  // A tied weight held by the first and the last pipeline rank (given in any order, twice).
  EXPECT_THAT(topology.in_every_replica({3, 0, 3}), ElementsAre(0, 3, 4, 7, 8, 11));
  // One replica: a pipeline rank is its own group.
  EXPECT_THAT((baton::Topology{1, 2}.replicas_of(1)), ElementsAre(1));
}

}  // namespace
