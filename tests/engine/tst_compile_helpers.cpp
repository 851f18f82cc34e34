#include "engine/worker/compile_helpers.h"
#include "engine/worker/gpu_device.h"
#include "tests/support/cubin_sections.h"

#include <QTemporaryDir>
#include <QTest>

#include <atomic>
#include <chrono>
#include <csignal>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

using namespace kerncast;

namespace {

CompileRequest scaled(int factor) {
    CompileRequest r;
    r.file_name = "scaled" + std::to_string(factor) + ".cu";
    r.source = "extern \"C\" __global__ void scaled(float* y, int n) {\n"
               "    const int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
               "    if (i < n) y[i] *= " +
               std::to_string(factor) + ".0f;\n}\n";
    return r;
}

// A stand-in program: its hello names `device` (a compile helper, or a GPU as a measurement worker's does), then it
// does `then` with the next request (exit, hang, or read on). An empty device: it exits at once, as an older
// kerncast-worker does on --compile.
std::string stand_in(const QTemporaryDir& dir, const std::string& device, const std::string& then) {
    const std::string path = dir.filePath("stand-in.sh").toStdString();
    std::ofstream out(path);
    out << "#!/bin/sh\n";
    if (device.empty())
        out << "exit 2\n";
    else
        out << "read line\necho '{\"op\":\"hello\",\"ok\":true,\"version\":\"0.1.0\",\"device\":{\"name\":\"" << device
            << "\"}}'\nread line\n"
            << then << "\n";
    out.close();
    ::chmod(path.c_str(), 0755);
    return path;
}

// What serve_compiles answered to `input`, one JSON object per line, then its exit code. The replies go to a file,
// not a pipe, so that a long reply cannot fill a pipe nobody reads yet.
std::vector<nlohmann::json> replies_to(const std::string& input) {
    QTemporaryDir dir;
    const std::string path = dir.filePath("replies.jsonl").toStdString();
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        qFatal("cannot open %s", path.c_str());
    std::istringstream in(input);
    const int code = serve_compiles(in, fd);
    ::close(fd);
    std::vector<nlohmann::json> out;
    std::ifstream lines(path);
    for (std::string line; std::getline(lines, line);)
        out.push_back(nlohmann::json::parse(line));
    out.push_back({{"exit_code", code}});
    return out;
}

// A program that strains ptxas (about a second to compile): matmul_tb's family at 256 x 64 x 8, read from the library.
CompileRequest straining() {
    CompileRequest request;
    std::ifstream in(std::string(KERNCAST_TEST_DATA) + "/../../resources/problems/matmul_tb/family.cu");
    std::ostringstream text;
    text << in.rdbuf();
    request.source = text.str();
    request.file_name = "family.cu";
    request.arch = "sm_90";
    request.defines = {{"BM", 256}, {"BN", 64},    {"BK", 8},    {"WM", 64},
                       {"WN", 64},  {"STAGES", 4}, {"ORDER", 1}, {"XPOSE", 0}};
    return request;
}

// The living (not yet reaped) process ids whose parent is `parent` (from /proc).
std::vector<pid_t> children_of(pid_t parent) {
    std::vector<pid_t> out;
    for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
        const std::string name = entry.path().filename().string();
        if (name.find_first_not_of("0123456789") != std::string::npos)
            continue;
        std::ifstream stat(entry.path() / "stat");
        std::string line;
        std::getline(stat, line);
        const auto close = line.rfind(')');  // "pid (comm) state ppid ...": comm may hold spaces
        if (close == std::string::npos)
            continue;
        std::istringstream rest(line.substr(close + 1));
        char state = 0;
        long ppid = 0;
        if (rest >> state >> ppid && ppid == parent && state != 'Z')
            out.push_back(static_cast<pid_t>(std::stol(name)));
    }
    return out;
}

}  // namespace

class TestCompileHelpers : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() { QVERIFY2(!find_worker_executable().empty(), "kerncast-worker is not built"); }

    // A helper gives what compiling in this process gives (PTX, machine code, static report), and runs in a process
    // of its own.
    void helpersCompileWhatThisProcessCompiles() {
        CompileHelpers helpers(find_worker_executable(), 2);
        const CompileRequest request = scaled(3);
        const std::string key = Compiler::cacheKey(request);
        const CompileOutcome there = helpers.compile(request, key);
        const CompileOutcome here = compile_here(request, key);
        QVERIFY2(there.result.ok, there.result.log.c_str());
        QCOMPARE(there.cacheable, here.cacheable);
        QCOMPARE(there.result.key, key);
        QCOMPARE(there.result.ptx, here.result.ptx);
        QVERIFY(!there.result.cubin.empty());
        QVERIFY(test::code_sections(there.result.cubin) == test::code_sections(here.result.cubin));
        QCOMPARE(nlohmann::json(there.result.kernels).dump(), nlohmann::json(here.result.kernels).dump());
        // The linker's log is not compared byte for byte: ptxas writes its compile time into it. Both name the
        // kernel and its registers; the static report above holds what is read from them.
        for (const std::string* log : {&there.result.log, &here.result.log}) {
            QVERIFY2(log->find("'scaled'") != std::string::npos, log->c_str());
            QVERIFY2(log->find("registers") != std::string::npos, log->c_str());
        }
        const auto pids = helpers.pids();
        QCOMPARE(pids.size(), size_t(1));
        QVERIFY(pids.front() != ::getpid());
        QCOMPARE(helpers.inProcess(), size_t(0));
    }

    // One helper compiling the same program again and again gives the same machine code each time. ptxas inside
    // nvJitLink does not allocate registers alike in a process that has compiled before (matmul_tb's 256 x 64
    // configuration: 223 registers most times, 241 or 244 about one time in eight), so a helper compiles each program
    // in a fork of itself that has compiled nothing. Compiled in one process, 16 compiles all alike happen about one
    // time in eight; the family is read from the library, and a family that stops straining ptxas weakens this test.
    // The cubins are compared section by section without -lineinfo's debug sections, whose names follow the heap's
    // addresses (code_sections): the helper's heap changes as it reads requests, and its forks with it.
    void repeatedCompilesInOneHelperAreAlike() {
        const CompileRequest request = straining();
        QVERIFY(request.source.find("matmul_tb_family") != std::string::npos);
        const std::string key = Compiler::cacheKey(request);
        CompileHelpers helpers(find_worker_executable(), 1);
        std::map<std::string, std::string> first;
        std::map<int, int> registers;  // count by the family kernel's registers
        for (int i = 0; i < 16; ++i) {
            const CompileOutcome r = helpers.compile(request, key);
            QVERIFY2(r.result.ok, r.result.log.c_str());
            for (const auto& k : r.result.kernels)
                if (k.kernel == "matmul_tb_family")
                    ++registers[k.registers];
            const auto sections = test::code_sections(r.result.cubin);
            QVERIFY(sections.count(".text.matmul_tb_family") == 1);
            if (i == 0)
                first = sections;
            else
                QVERIFY2(sections == first, ("compile " + std::to_string(i + 1) + " differs").c_str());
        }
        QCOMPARE(registers.size(), size_t(1));
        QCOMPARE(helpers.processes(), size_t(1));
    }

    // A compile whose fork dies (as one that crashes NVRTC or ptxas would: here it is killed with SIGSEGV while it
    // compiles) fails with the signal and is not cached; the helper itself lives on and compiles the next program.
    void aCompileWhoseForkDiesFailsWithItsSignal() {
        CompileHelpers helpers(find_worker_executable(), 1);
        QVERIFY(helpers.compile(scaled(2), Compiler::cacheKey(scaled(2))).result.ok);
        QCOMPARE(helpers.pids().size(), size_t(1));
        const pid_t helper = helpers.pids().front();
        // The first compile's fork may still be ending after its answer: wait until the helper has no child left.
        for (int i = 0; i < 1000 && !children_of(helper).empty(); ++i)
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        QVERIFY(children_of(helper).empty());
        std::atomic<bool> killed{false}, answered{false};
        std::thread killer([&] {
            while (!answered) {
                for (pid_t child : children_of(helper))
                    if (::kill(child, SIGSEGV) == 0) {
                        killed = true;
                        return;
                    }
                std::this_thread::sleep_for(std::chrono::milliseconds(5));
            }
        });
        const CompileRequest request = straining();
        const CompileOutcome r = helpers.compile(request, Compiler::cacheKey(request));
        answered = true;
        killer.join();
        QVERIFY(killed);
        QVERIFY(!r.result.ok);
        QVERIFY(!r.cacheable);
        QVERIFY2(r.result.log.find("the compile ended on signal 11") != std::string::npos, r.result.log.c_str());
        QCOMPARE(helpers.pids(), std::vector<pid_t>{helper});
        QVERIFY(helpers.compile(scaled(3), Compiler::cacheKey(scaled(3))).result.ok);
        QCOMPARE(helpers.pids(), std::vector<pid_t>{helper});
    }

    // Diagnostics travel too: a program that does not compile fails in the helper as it fails here.
    void aCompileErrorComesBackWithItsDiagnostics() {
        CompileHelpers helpers(find_worker_executable(), 1);
        CompileRequest request = scaled(2);
        request.source += "this is not CUDA\n";
        const std::string key = Compiler::cacheKey(request);
        const CompileOutcome there = helpers.compile(request, key);
        const CompileOutcome here = compile_here(request, key);
        QVERIFY(!there.result.ok);
        QVERIFY(there.cacheable);
        QCOMPARE(there.result.diagnostics.size(), here.result.diagnostics.size());
        QVERIFY(!there.result.diagnostics.empty());
        QCOMPARE(there.result.diagnostics.front().line, 5);
        QCOMPARE(there.result.diagnostics.front().message, here.result.diagnostics.front().message);
    }

    // A Compiler compiles in helpers, one a thread, unless told not to; a pool of one thread too.
    void aCompilerUsesHelpers() {
        QVERIFY(Compiler("", 2).inHelpers());
        qputenv("KERNCAST_COMPILE_IN_PROCESS", "1");
        const bool in_helpers = Compiler("", 2).inHelpers();
        qunsetenv("KERNCAST_COMPILE_IN_PROCESS");
        QVERIFY(!in_helpers);
        Compiler compiler("", 2);
        std::vector<std::shared_future<CompileResult>> futures;
        for (int i = 2; i < 6; ++i)
            futures.push_back(compiler.compileAsync(scaled(i)));
        for (auto& f : futures)
            QVERIFY2(f.get().ok, f.get().log.c_str());
        QCOMPARE(compiler.stats().compiles, size_t(4));
        QVERIFY(compiler.stats().helper_processes >= 1);
        QVERIFY(compiler.stats().helper_processes <= 2);
        Compiler one("", 1);
        QVERIFY(one.inHelpers());
        QVERIFY2(one.compile(scaled(7)).ok, "a one-thread Compiler's compile failed");
        QCOMPARE(one.stats().helper_processes, size_t(1));
    }

    // A helper killed between compiles is replaced at the next one.
    void aHelperKilledBetweenCompilesIsReplaced() {
        CompileHelpers helpers(find_worker_executable(), 1);
        QVERIFY(helpers.compile(scaled(2), Compiler::cacheKey(scaled(2))).result.ok);
        const auto before = helpers.pids();
        QCOMPARE(before.size(), size_t(1));
        ::kill(before.front(), SIGKILL);
        const CompileOutcome again = helpers.compile(scaled(3), Compiler::cacheKey(scaled(3)));
        QVERIFY2(again.result.ok, again.result.log.c_str());
        QCOMPARE(helpers.pids().size(), size_t(1));
        QVERIFY(helpers.pids().front() != before.front());
    }

    // A helper that dies on a compile (as NVRTC crashing on a program would) is tried once more; then the compile
    // fails with the reason, is not cached (a later request compiles again), and the engine's process lives on.
    void aCompileWhoseHelperDiesFailsWithAReason() {
        QTemporaryDir dir;
        Compiler compiler("", 2, std::make_unique<CompileHelpers>(stand_in(dir, "fake compile helper", "exit 3"), 2));
        const CompileResult r = compiler.compile(scaled(2));
        QVERIFY(!r.ok);
        QVERIFY2(r.log.find("ended without an answer") != std::string::npos, r.log.c_str());
        QVERIFY2(r.log.find("exit code 3") != std::string::npos, r.log.c_str());
        QCOMPARE(r.diagnostics.size(), size_t(1));
        QCOMPARE(compiler.compile(scaled(2)).ok, false);
        QCOMPARE(compiler.stats().compiles, size_t(2));
        QCOMPARE(compiler.stats().memory_hits, size_t(0));
    }

    // A compile that hangs is stopped at the deadline and fails; it is not tried again.
    void aHungCompileIsStoppedAtItsDeadline() {
        QTemporaryDir dir;
        CompileHelpers helpers(stand_in(dir, "fake compile helper", "sleep 60"), 1);
        helpers.setDeadline(1);
        const CompileOutcome r = helpers.compile(scaled(2), Compiler::cacheKey(scaled(2)));
        QVERIFY(!r.result.ok);
        QVERIFY(!r.cacheable);
        QVERIFY2(r.result.log.find("took longer than 1 s") != std::string::npos, r.result.log.c_str());
    }

    // Where the helper program cannot start, exits at once (an older kerncast-worker refusing --compile), or starts
    // as something else than a compile helper (a measurement worker's stand-in), the compiles run in this process,
    // as without helpers.
    void withoutAHelperProgramTheCompileRunsHere_data() {
        QTest::addColumn<QString>("program");
        QTest::newRow("missing") << "/nonexistent/kerncast-worker";
        QTest::newRow("exits at once") << "";
        QTest::newRow("not a compile helper") << "NVIDIA H200";
    }
    void withoutAHelperProgramTheCompileRunsHere() {
        QFETCH(QString, program);
        QTemporaryDir dir;
        const std::string path = program.startsWith(QLatin1Char('/'))
                                     ? program.toStdString()
                                     : stand_in(dir, program.toStdString(), "while read line; do :; done");
        CompileHelpers helpers(path, 2);
        for (int i = 2; i < 4; ++i) {
            const CompileOutcome r = helpers.compile(scaled(i), Compiler::cacheKey(scaled(i)));
            QVERIFY2(r.result.ok, r.result.log.c_str());
        }
        QCOMPARE(helpers.inProcess(), size_t(2));
        QVERIFY(helpers.pids().empty());
        QCOMPARE(helpers.processes(), size_t(0));
    }

    // The helper's side answers what it cannot use with an error line and goes on; shutdown ends it.
    void theHelperAnswersBadRequestsAndGoesOn() {
        const CompileRequest good = scaled(4);
        const nlohmann::json compile = {{"op", "compile"},
                                        {"id", 7},
                                        {"key", Compiler::cacheKey(good)},
                                        {"request", compile_request_to_json(good)}};
        nlohmann::json broken = compile;
        broken["id"] = 8;
        broken["request"].erase("source");
        nlohmann::json no_id = compile;
        no_id.erase("id");
        const auto replies = replies_to("not json\n" + no_id.dump() + "\n" + broken.dump() + "\n" + compile.dump() +
                                        "\n{\"op\":\"shutdown\"}\n{\"op\":\"hello\"}\n");
        QCOMPARE(replies.size(), size_t(6));  // the hello after shutdown is never read
        QCOMPARE(replies[0].value("op", ""), std::string("error"));
        QCOMPARE(replies[1].value("op", ""), std::string("error"));
        QCOMPARE(replies[2].value("op", ""), std::string("error"));
        QCOMPARE(replies[2].value("id", 0), 8);
        QVERIFY(replies[2].value("message", "").find("source") != std::string::npos);
        QCOMPARE(replies[3].value("op", ""), std::string("compiled"));
        QCOMPARE(replies[3].value("id", 0), 7);
        const CompileOutcome outcome = compile_outcome_from_json(replies[3].at("outcome"), Compiler::cacheKey(good));
        QVERIFY(outcome.result.ok);
        QCOMPARE(replies[4].value("op", ""), std::string("bye"));
        QCOMPARE(replies[5].value("exit_code", -1), 0);
    }

    // An outcome that names another request's key, or claims success with nothing compiled, is refused.
    void anOutcomeForAnotherRequestIsRefused() {
        const CompileRequest request = scaled(5);
        const std::string key = Compiler::cacheKey(request);
        const nlohmann::json outcome = compile_outcome_to_json(compile_here(request, key));
        QVERIFY_THROWS_EXCEPTION(Error, compile_outcome_from_json(outcome, Compiler::cacheKey(scaled(6))));
        nlohmann::json empty = outcome;
        empty["ptx"] = "";
        empty["cubin"] = "";
        empty["kernels"] = nlohmann::json::array();
        QVERIFY_THROWS_EXCEPTION(Error, compile_outcome_from_json(empty, key));
        nlohmann::json bad_cubin = outcome;
        bad_cubin["cubin"] = "not base64!";
        QVERIFY_THROWS_EXCEPTION(Error, compile_outcome_from_json(bad_cubin, key));
    }
};

QTEST_GUILESS_MAIN(TestCompileHelpers)
#include "tst_compile_helpers.moc"
