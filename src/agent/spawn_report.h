// What a pod's process reports to the agent when it cannot start: shared by the
// agent's ProcessRunner and the pod reaper (tessera-pod-reaper), which run in
// different programs. Plain data, written with one write() or one store.
#pragma once

#include <cstdint>

namespace tessera {

// Where between clone and the command's exec the new process failed.
enum class ChildStage : int32_t {
  kNone = 0,
  kSetsid,
  kRedirect,
  kChdir,
  kSetGroups,
  kSetGid,
  kSetUid,
  kExecReaper,   // the pod reaper could not be run
  kExec,         // the command could not be run
  kNotReleased,  // the pod reaper was never told to run the command (its agent went away first)
  kMountNamespace,  // its private view of the filesystem could not be made
  kNetworkNamespace,  // it could not enter the pod's network namespace
};

struct ChildFailure {
  int32_t stage = 0;  // a ChildStage
  int32_t error = 0;  // errno
};

// The pod reaper's command line: tessera-pod-reaper STATUS_FD REPORT_FD GATE_FD EXECUTABLE ARGV...
// The reaper waits for one byte on GATE_FD before it runs the command; at
// end-of-file instead (the agent that launched it is gone) it never runs it,
// writes kNotStartedStatus to STATUS_FD and reports kNotReleased. STATUS_FD
// (a file opened for appending) receives a line "PID START_TICKS STATUS": the
// reaper's pid and start time (/proc/PID/stat field 22), and the command's wait
// status in decimal (or kNotStartedStatus); REPORT_FD one ChildFailure:
// stage kNone once the command runs, else why it could not (end-of-file without
// one: the reaper was killed first).
inline constexpr const char* kPodReaperName = "tessera-pod-reaper";
inline constexpr const char* kNotStartedStatus = "not-started";

}  // namespace tessera
