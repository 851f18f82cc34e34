#pragma once
// How a worker process is started (ARCHITECTURE §5): here, on another machine over ssh, or as a Slurm job step. The
// worker protocol runs over the process's stdio, so a launcher is only a prefix to the worker's command line; the
// worker is told to end with its parent, and a launcher that needs it gets SIGTERM before SIGKILL so that it can end
// the remote side (srun cancels its step).
//
//   local            kerncast-worker ...
//   ssh:HOST         ssh -T -o BatchMode=yes ... HOST exec '<remote kerncast-worker>' ...   ($KERNCAST_SSH replaces
//                    "ssh", e.g. "ssh -F ~/.ssh/cluster_config")
//   slurm[:ARGS]     srun --ntasks=1 --nodes=1 [--gres=gpu:1] [--exact when inside an allocation] ARGS ... worker

#include "engine/worker/worker_supervisor.h"

#include <string>
#include <vector>

namespace kerncast {

struct WorkerLauncher {
    enum class Kind { Local, Ssh, Slurm };
    Kind kind = Kind::Local;
    std::string host;                     // ssh
    std::vector<std::string> slurm_args;  // srun options, passed through

    // "local", "ssh:HOST", "slurm" or "slurm:ARGS" (ARGS split on spaces); throws Error with the accepted forms.
    static WorkerLauncher parse(const std::string& text);
    std::string text() const;   // the form parse() reads
    std::string where() const;  // "local", the ssh host, or "slurm"

    // The command line that starts `worker_argv` (its first element: the worker's path on the target). needs_gpu:
    // a Slurm step asks for one GPU.
    WorkerCommand command(const std::vector<std::string>& worker_argv, bool needs_gpu, const std::string& label) const;
};

// Quotes one word for a POSIX shell (ssh hands the remote command to the user's shell).
std::string shell_quote(const std::string& word);

}  // namespace kerncast
