#pragma once
// The state of a search run, one enum for the engine, the CLI's JSON, the store's end events and the workbench
// (ARCHITECTURE §7). Its names are what JSON and the store hold.

#include <string>

namespace kerncast {

enum class RunState {
    Idle,      // nothing started yet
    Starting,  // the runner is being built (device, surrogate training)
    Running,
    Paused,    // waits for resume or step between iterations
    Stopping,  // a stop was asked for; the current step finishes
    Finished,  // ended normally (budget spent, stopped, space exhausted)
    Failed,    // ended by an error
};

// "idle", "starting", "running", "paused", "stopping", "finished", "failed".
const char* to_string(RunState state);
// Throws kerncast::Error naming the accepted names for anything else.
RunState run_state_from_string(const std::string& name);
// Finished or failed: nothing more will happen.
bool is_ended(RunState state);

}  // namespace kerncast
