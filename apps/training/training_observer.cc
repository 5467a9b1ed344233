#include "training_observer.h"

namespace baton_app {

TrainingObserver::~TrainingObserver() = default;

// Both do nothing: an observer overrides what it listens to.
void TrainingObserver::step_ended(int, double, double, const baton::StepResult&) {}
void TrainingObserver::trained(const TrainedRank&) {}

}  // namespace baton_app
