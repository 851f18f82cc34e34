// kerncast-worker: one process per GPU, newline-delimited JSON on stdin/stdout (ARCHITECTURE §5).
//   kerncast-worker [--gpu N] [--kernel-printf-to-stderr]
#include "engine/worker_server.h"

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
              << "usage: kerncast-worker [--gpu N] [--kernel-printf-to-stderr]\n"
              << "Speaks the Kerncast worker protocol (newline-delimited JSON) on stdin/stdout.\n";
    return 2;
}

}  // namespace

int main(int argc, char** argv) {
    int gpu = 0;
    bool printf_to_stderr = false;
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
        } else if (arg == "--help" || arg == "-h") {
            usage("help");
            return 0;
        } else {
            return usage(("unknown argument '" + arg + "'").c_str());
        }
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

    kerncast::WorkerServer server(gpu, reply_fd);
    const int code = server.serve(std::cin);
    // _exit: after a sticky CUDA error, the driver's and CUPTI's exit handlers can block on the dead context.
    std::fflush(stderr);
    if (code != 0)
        ::_exit(code);
    return code;
}
