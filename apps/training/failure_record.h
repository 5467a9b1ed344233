// The order in which ranks failed, kept in the run's store: each rank records its failure
// before it aborts its transport (which makes its peers fail too), so the launcher names the
// rank that failed first, not the first to exit.
#pragma once

#include <exception>

#include "baton/store.h"

namespace baton_app {

// Records this rank's failure once: explicitly before it aborts its transport, or, for a
// failure during set-up (a missing checkpoint file, a damaged data file, a model that does
// not build), when an exception unwinds past an OnUnwind, so that set-up failures are
// ordered too.
class FailureRecord {
 public:
  // `store` may be null (a single rank): nothing is recorded.
  FailureRecord(baton::Store* store, int rank) : store_(store), rank_(rank) {}
  FailureRecord(const FailureRecord&) = delete;
  FailureRecord& operator=(const FailureRecord&) = delete;

  void record();

  // Records the failure if an exception unwinds past it. One right after the store covers
  // set-up; one declared after the transport records before the transport's connections
  // close (which makes the peers fail, and record, too). Null: does nothing.
  class OnUnwind {
   public:
    explicit OnUnwind(FailureRecord* record)
        : record_(record), exceptions_(std::uncaught_exceptions()) {}
    ~OnUnwind() {
      if (record_ != nullptr && std::uncaught_exceptions() > exceptions_) record_->record();
    }
    OnUnwind(const OnUnwind&) = delete;
    OnUnwind& operator=(const OnUnwind&) = delete;

   private:
    FailureRecord* record_;
    int exceptions_;
  };

 private:
  baton::Store* store_;
  int rank_;
  bool recorded_ = false;
};

}  // namespace baton_app
