#include "sweep/trial_record.h"

namespace tessera::sweep {

std::string_view TrialStateName(TrialState state) {
  switch (state) {
    case TrialState::kRunning:
      return "Running";
    case TrialState::kSucceeded:
      return "Succeeded";
    case TrialState::kFailed:
      return "Failed";
    case TrialState::kEarlyStopped:
      return "EarlyStopped";
  }
  return "Unknown";
}

}  // namespace tessera::sweep
