#include "core/run_state.h"

#include "core/error.h"

namespace kerncast {

namespace {
constexpr RunState kAll[] = {RunState::Idle,     RunState::Starting, RunState::Running, RunState::Paused,
                             RunState::Stopping, RunState::Finished, RunState::Failed};
}

const char* to_string(RunState state) {
    switch (state) {
    case RunState::Idle:
        return "idle";
    case RunState::Starting:
        return "starting";
    case RunState::Running:
        return "running";
    case RunState::Paused:
        return "paused";
    case RunState::Stopping:
        return "stopping";
    case RunState::Finished:
        return "finished";
    case RunState::Failed:
        return "failed";
    }
    return "unknown";
}

RunState run_state_from_string(const std::string& name) {
    for (RunState s : kAll)
        if (name == to_string(s))
            return s;
    throw Error("unknown run state '" + name +
                "' (expected idle, starting, running, paused, stopping, finished or failed)");
}

bool is_ended(RunState state) { return state == RunState::Finished || state == RunState::Failed; }

}  // namespace kerncast
