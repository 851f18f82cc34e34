// kerncast-worker: one process per GPU, newline-delimited JSON on stdin/stdout (ARCHITECTURE §5).
//   kerncast-worker [--gpu N] [--kernel-printf-to-stderr] [--die-with-parent]
//   kerncast-worker --replay DEVICE [--resources DIR] [--wall-time SCALE] [--die-with-parent]
//   kerncast-worker --compile [--die-with-parent]
//   kerncast-worker --list-gpus
#include "engine/cli/cli.h"
#include "engine/gpu/cuda_driver.h"
#include "engine/worker/compile_helpers.h"
#include "engine/worker/replay_worker_server.h"
#include "engine/worker/worker_server.h"
#include "engine/worker/worker_watchdog.h"

#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>

namespace {

int usage(const char* why) {
    std::cerr << "kerncast-worker: " << why << "\n"
              << "usage: kerncast-worker [--gpu N] [--kernel-printf-to-stderr] [--die-with-parent]\n"
              << "       kerncast-worker --replay replay:<recordings>|FOLDER [--resources DIR] [--wall-time SCALE]\n"
              << "       kerncast-worker --compile [--die-with-parent]\n"
              << "       kerncast-worker --list-gpus\n"
              << "Speaks the Kerncast worker protocol (newline-delimited JSON) on stdin/stdout.\n"
              << "  --replay           answer from recordings instead of a GPU (replay:<name> under DIR/recordings)\n"
              << "  --wall-time SCALE  replay: take the recorded wall time of each measurement times SCALE\n"
              << "  --compile          compile kernel programs for the engine (NVRTC, nvJitLink); no GPU\n"
              << "  --die-with-parent  end when the parent process (ssh session, Slurm step, engine) ends\n"
              << "  --list-gpus        print the GPUs of this machine as one JSON array and exit\n";
    return 2;
}

}  // namespace

int main(int argc, char** argv) {
    int gpu = 0;
    bool printf_to_stderr = false;
    bool with_parent = false;
    bool list_gpus = false;
    bool compile = false;
    kerncast::ReplayWorkerOptions replay;
    replay.resources_dir = kerncast::cli::resources_dir();
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--gpu" && i + 1 < argc) {
            char* end = nullptr;
            const long v = std::strtol(argv[++i], &end, 10);
            if (!end || *end || v < 0 || v > 1024)
                return usage("--gpu needs a device ordinal such as 0");
            gpu = static_cast<int>(v);
        } else if (arg == "--kernel-printf-to-stderr") {
            printf_to_stderr = true;
        } else if (arg == "--die-with-parent") {
            with_parent = true;
        } else if (arg == "--list-gpus") {
            list_gpus = true;
        } else if (arg == "--compile") {
            compile = true;
        } else if (arg == "--replay" && i + 1 < argc) {
            replay.device = argv[++i];
        } else if (arg == "--resources" && i + 1 < argc) {
            replay.resources_dir = argv[++i];
        } else if (arg == "--wall-time" && i + 1 < argc) {
            char* end = nullptr;
            replay.wall_time_scale = std::strtod(argv[++i], &end);
            if (!end || *end || !(replay.wall_time_scale >= 0) || replay.wall_time_scale > 1000)
                return usage("--wall-time needs a scale such as 1 (the recorded time) or 0.1");
        } else if (arg == "--help" || arg == "-h") {
            usage("help");
            return 0;
        } else {
            return usage(("unknown argument '" + arg + "'").c_str());
        }
    }

    if (list_gpus) {
        std::string why;
        nlohmann::json out = nlohmann::json::array();
        for (const auto& d : kerncast::cuda::discover_devices(&why))
            out.push_back(d);
        std::cout << out.dump() << std::endl;
        if (out.empty())
            std::cerr << "kerncast-worker: no GPU: " << (why.empty() ? "none found" : why) << "\n";
        return 0;
    }
    if (with_parent) {
        std::string why;
        if (!kerncast::die_with_parent(&why))
            std::cerr << "kerncast-worker: --die-with-parent: " << why << "\n";
    }

    // The protocol gets a private copy of stdout; fd 1 itself, where the CUDA driver flushes kernel printf output,
    // goes to /dev/null (or stderr when asked), so nothing a kernel prints can reach the engine's protocol reader.
    std::fflush(stdout);
    const int reply_fd = ::dup(STDOUT_FILENO);
    if (reply_fd < 0) {
        std::perror("kerncast-worker: dup(stdout)");
        return 1;
    }
    ::fcntl(reply_fd, F_SETFD, FD_CLOEXEC);
    const int sink = printf_to_stderr ? STDERR_FILENO : ::open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (sink < 0 || ::dup2(sink, STDOUT_FILENO) < 0) {
        std::perror("kerncast-worker: redirecting stdout");
        return 1;
    }
    if (sink != STDERR_FILENO)
        ::close(sink);

    int code = 0;
    if (compile)
        return kerncast::serve_compiles(std::cin, reply_fd);
    if (!replay.device.empty()) {
        try {
            kerncast::ReplayWorkerServer server(replay, reply_fd);
            code = server.serve(std::cin);
        } catch (const std::exception& e) {
            // The engine reads why from the hello reply, as for a GPU worker without a driver.
            std::string line;
            if (std::getline(std::cin, line))
                kerncast::write_protocol_line(reply_fd, kerncast::make_hello_failure(e.what()));
            std::cerr << "kerncast-worker: " << e.what() << "\n";
            return 1;
        }
        return code;
    }
    kerncast::WorkerServer server(gpu, reply_fd);
    code = server.serve(std::cin);
    // _exit: after a sticky CUDA error, the driver's and CUPTI's exit handlers can block on the dead context.
    std::fflush(stderr);
    if (code != 0)
        ::_exit(code);
    return code;
}
