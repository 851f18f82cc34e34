#pragma once
// Compile helpers: kerncast-worker processes started with --compile, each compiling one program at a time with NVRTC
// and nvJitLink, for a Compiler whose threads hand them their compiles (ARCHITECTURE §2). NVRTC takes one compile at a
// time within a process: on a 16-CPU H200 host, 160 compiles of softmax configurations took 3.1 s on 16 threads of
// one process and 0.75 s in 16 processes. A helper compiles each program in a fork of itself that has never compiled,
// so that ptxas allocates registers as a fresh process does (the machine code does not depend on what the helper
// compiled before; -lineinfo's debug sections still follow the heap's addresses). A helper also keeps a compile that
// crashes or hangs NVRTC out of the engine's (and the workbench's) process: a crash ends the fork and is answered with
// its signal, a hang ends the helper at the deadline; either is a failed compile with a reason.
//
// The helper speaks the worker protocol's framing (newline-delimited JSON on stdin/stdout):
//   {"op":"hello"}                                   -> {"op":"hello","ok":true,"version":...,"device":{"name":...}}
//   {"op":"compile","id":N,"key":K,"request":{...}}  -> {"op":"compiled","id":N,"outcome":{...}}
//   {"op":"shutdown"}                                -> {"op":"bye"}
// A line it cannot read gets {"op":"error","id":N,"message":...}.

#include "engine/gpu/compiler.h"
#include "engine/worker/worker_supervisor.h"

#include <atomic>
#include <condition_variable>
#include <iosfwd>
#include <memory>
#include <mutex>
#include <string>
#include <sys/types.h>
#include <vector>

namespace kerncast {

class CompileHelpers : public CompileBackend {
public:
    // At most `count` helpers, started when first needed, each by the command line `program --compile
    // --die-with-parent`.
    CompileHelpers(std::string program, unsigned count);
    ~CompileHelpers() override;

    // In a free helper. A helper that dies without an answer is replaced and the compile tried once more in the new
    // one; a second death, or a compile past the deadline, gives a failed outcome that is not cached. Where the
    // program cannot start as a compile helper (missing, or a program whose hello names no compile helper), this and
    // every later compile runs in this process (compile_here), as without helpers.
    CompileOutcome compile(const CompileRequest& request, const std::string& key) override;

    // A compile longer than this ends its helper (the longest compile of the shipped problems takes about 8 s).
    void setDeadline(double seconds) { m_deadline_s = seconds; }
    // Helpers started and used (0 where the program could not start as a compile helper).
    size_t processes() const override;
    // The process ids of the helpers running now.
    std::vector<pid_t> pids() const;
    // Compiles made in this process because no helper could start.
    size_t inProcess() const { return m_in_process; }

private:
    WorkerSupervisor* take();
    void giveBack(WorkerSupervisor* helper);
    // Starts the helper; why it cannot serve as a compile helper, or "".
    std::string startFailure(WorkerSupervisor& helper) const;

    std::string m_program;
    unsigned m_count;
    double m_deadline_s = 300;
    std::atomic<int64_t> m_next_id{1};
    std::atomic<size_t> m_in_process{0};
    std::atomic<bool> m_unusable{false};  // the program could not start as a compile helper: compiles run here
    mutable std::mutex m_mutex;
    std::condition_variable m_free_cv;
    std::vector<std::unique_ptr<WorkerSupervisor>> m_owned;  // every helper made, free or lent
    std::vector<WorkerSupervisor*> m_free;
};

// The helper's side: answers the requests on `in` with lines on reply_fd until shutdown or the end of input. Returns
// the exit code.
int serve_compiles(std::istream& in, int reply_fd);

}  // namespace kerncast
