#include "engine/worker/compile_helpers.h"

#include "engine/worker/gpu_device.h"
#include "engine/worker/worker_protocol.h"

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <iostream>

#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

namespace kerncast {

namespace {

// What a compile helper's hello names (a measurement worker names its GPU).
constexpr const char* kHelperName = "compile helper";

class CompileServer : public WorkerLineServer {
public:
    using WorkerLineServer::WorkerLineServer;

    bool handleLine(const std::string& line, int* exit_code) override {
        *exit_code = 0;
        const auto req = readRequest(line);
        if (!req)
            return true;
        if (req->op == "shutdown") {
            reply(make_bye());
            return false;
        }
        if (req->op == "hello") {
            DeviceFingerprint compiler;
            compiler.name = "NVRTC " + Compiler::nvrtcVersion() + " " + kHelperName;
            reply(make_hello_reply(compiler, DeviceCeilings{}));
            return true;
        }
        if (req->op != "compile" || !req->id) {
            reply(
                make_error_reply(req->id_json, "expected a compile request with an id, found op \"" + req->op + "\""));
            return true;
        }
        CompileRequest request;
        std::string key;
        try {
            request = compile_request_from_json(req->json.at("request"));
            key = req->json.at("key").get<std::string>();
        } catch (const std::exception& e) {
            reply(make_error_reply(req->id_json, e.what()));
            return true;
        }
        // Each compile runs in a fork of this process, which itself never compiles. ptxas inside nvJitLink does not
        // allocate registers alike in a process that has compiled before: one 4096^3 SGEMM configuration's PTX,
        // compiled 24 times in one process, came back with 223 registers 21 times and with 241 or 244 the other
        // three; in 24 forks of a process that had not compiled, 223 each time. A program's machine code, and so its
        // time and static report, are then the same whichever programs the helper compiled before (the cubin's
        // -lineinfo debug sections are not: they follow the heap's addresses, which reading requests moves). A compile
        // that crashes ends its fork, and the helper answers that it did.
        const pid_t helper = ::getpid();
        const pid_t pid = ::fork();
        if (pid == 0) {
            ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // a helper stopped at a deadline takes its compile with it
            if (::getppid() != helper)           // ...also when it was stopped before the line above
                ::_exit(1);
            nlohmann::json out;
            try {
                out = {{"op", "compiled"},
                       {"id", *req->id},
                       {"outcome", compile_outcome_to_json(compile_here(request, key))}};
            } catch (const std::exception& e) {
                out = make_error_reply(req->id_json, e.what());
            }
            reply(out);
            ::_exit(0);
        }
        if (pid < 0) {
            reply(make_error_reply(req->id_json,
                                   std::string("cannot start the compile: fork failed: ") + std::strerror(errno)));
            return true;
        }
        int status = 0;
        while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
            reply(make_error_reply(
                req->id_json, WIFSIGNALED(status) ? "the compile ended on signal " + std::to_string(WTERMSIG(status)) +
                                                        " (" + strsignal(WTERMSIG(status)) + ") without an answer"
                                                  : "the compile ended without an answer (exit code " +
                                                        std::to_string(WEXITSTATUS(status)) + ")"));
        return true;
    }
};

}  // namespace

std::unique_ptr<CompileBackend> default_compile_backend(unsigned threads) {
    if (const char* v = std::getenv("KERNCAST_COMPILE_IN_PROCESS"); v && std::strcmp(v, "1") == 0)
        return nullptr;
    const std::string program = find_worker_executable();
    if (program.empty())
        return nullptr;
    return std::make_unique<CompileHelpers>(program, threads);
}

CompileHelpers::CompileHelpers(std::string program, unsigned count)
    : m_program(std::move(program)), m_count(std::max(1u, count)) {}

CompileHelpers::~CompileHelpers() = default;

WorkerSupervisor* CompileHelpers::take() {
    std::unique_lock lock(m_mutex);
    m_free_cv.wait(lock, [&] { return !m_free.empty() || m_owned.size() < m_count; });
    if (!m_free.empty()) {
        WorkerSupervisor* helper = m_free.back();
        m_free.pop_back();
        return helper;
    }
    WorkerCommand command;
    command.argv = {m_program, "--compile", "--die-with-parent"};
    command.label = "compile helper " + std::to_string(m_owned.size() + 1) + " (" + m_program + " --compile)";
    m_owned.push_back(std::make_unique<WorkerSupervisor>(std::move(command)));
    return m_owned.back().get();
}

void CompileHelpers::giveBack(WorkerSupervisor* helper) {
    {
        std::lock_guard lock(m_mutex);
        m_free.push_back(helper);
    }
    m_free_cv.notify_one();
}

size_t CompileHelpers::processes() const {
    if (m_unusable)
        return 0;
    std::lock_guard lock(m_mutex);
    return m_owned.size();
}

std::vector<pid_t> CompileHelpers::pids() const {
    std::lock_guard lock(m_mutex);
    std::vector<pid_t> out;
    for (const auto& helper : m_owned)
        if (helper->running())
            out.push_back(helper->pid());
    return out;
}

std::string CompileHelpers::startFailure(WorkerSupervisor& helper) const {
    try {
        const HelloReply hello = helper.start();
        if (!hello.ok)
            return hello.error;
        if (hello.device.name.find(kHelperName) == std::string::npos)  // an older kerncast-worker, a stand-in
            return m_program + " is not a compile helper (its hello names \"" + hello.device.name + "\")";
        return "";
    } catch (const std::exception& e) {
        return e.what();
    }
}

CompileOutcome CompileHelpers::compile(const CompileRequest& request, const std::string& key) {
    if (m_unusable) {
        ++m_in_process;
        return compile_here(request, key);
    }
    WorkerSupervisor* helper = take();
    if (!helper->running()) {
        // A program that cannot start as a compile helper: every compile of this Compiler runs here instead.
        if (const std::string why = startFailure(*helper); !why.empty()) {
            if (!m_unusable.exchange(true))
                std::cerr << "kerncast: compiling in this process: " << why << "\n";
            helper->stop(0.5);
            giveBack(helper);
            ++m_in_process;
            return compile_here(request, key);
        }
    }
    nlohmann::json message = {{"op", "compile"}, {"key", key}, {"request", compile_request_to_json(request)}};
    std::string failure;
    for (int attempt = 0; attempt < 2; ++attempt) {
        message["id"] = m_next_id++;
        nlohmann::json reply;
        try {
            reply = helper->request(message, m_deadline_s);
        } catch (const WorkerFailure& f) {
            // Replaced already; a hang is not tried again, a death once.
            if (f.status() == Status::Timeout) {
                failure = "the compile took longer than " + std::to_string(static_cast<int>(m_deadline_s)) +
                          " s and was stopped: " + f.what();
                break;
            }
            failure = std::string("the compile's process ended without an answer: ") + f.what();
            continue;
        } catch (const Error& e) {
            failure = std::string("the compile helper cannot compile: ") + e.what();  // it could not be restarted
            break;
        }
        giveBack(helper);
        try {
            if (protocol_op(reply) != "compiled")
                return compile_failure(request, key,
                                       "the compile helper could not compile: " + reply.value("message", reply.dump()));
            return compile_outcome_from_json(reply.at("outcome"), key);
        } catch (const std::exception& e) {
            return compile_failure(request, key, std::string("the compile helper's answer is unreadable: ") + e.what());
        }
    }
    giveBack(helper);
    return compile_failure(request, key, failure);
}

int serve_compiles(std::istream& in, int reply_fd) {
    CompileServer server(reply_fd);
    return server.serve(in);
}

}  // namespace kerncast
