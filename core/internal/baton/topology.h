// Where a rank sits in a world of `replicas` copies of one pipeline of `pipeline_ranks`
// ranks (world.data_parallel, docs/runtime.md): a pipeline's ranks are adjacent, so rank =
// replica x pipeline_ranks + pipeline rank. The one place that layout is written; the groups
// that synchronise parameters follow from it: a pipeline rank's replicas (data parallelism's
// gradient average), a replica's pipeline (the gradient norm), some pipeline ranks in every
// replica (a tied weight's holders). LibTorch-free.
#pragma once

#include <algorithm>
#include <vector>

namespace baton {

struct Topology {
  int replicas = 1;
  int pipeline_ranks = 1;

  int world_size() const { return replicas * pipeline_ranks; }
  int rank(int replica, int pipeline_rank) const {
    return replica * pipeline_ranks + pipeline_rank;
  }
  int replica_of(int rank) const { return rank / pipeline_ranks; }
  int pipeline_rank_of(int rank) const { return rank % pipeline_ranks; }

  // `pipeline_rank` in every replica, ascending.
  std::vector<int> replicas_of(int pipeline_rank) const {
    return in_every_replica({pipeline_rank});
  }
  // Every rank of replica `replica`'s pipeline, ascending.
  std::vector<int> pipeline_of(int replica) const {
    std::vector<int> ranks;
    for (int p = 0; p < pipeline_ranks; ++p) ranks.push_back(rank(replica, p));
    return ranks;
  }
  // The ranks holding any of `pipeline_ranks_held` in any replica, ascending, once each.
  std::vector<int> in_every_replica(const std::vector<int>& pipeline_ranks_held) const {
    std::vector<int> ranks;
    for (int replica = 0; replica < replicas; ++replica) {
      for (const int p : pipeline_ranks_held) ranks.push_back(rank(replica, p));
    }
    std::sort(ranks.begin(), ranks.end());
    ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
    return ranks;
  }
};

}  // namespace baton
