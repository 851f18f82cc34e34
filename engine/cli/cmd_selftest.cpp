// kerncast-cli selftest: checks that this installation can compile, replay and (with a GPU) measure. Each check is
// PASS or FAIL with a detail line; the exit code is 1 when any check fails.
#include "engine/cli/cli.h"
#include "engine/cli/problem_arg.h"
#include "engine/device.h"
#include "engine/gpu/compiler.h"
#include "engine/gpu/cuda_driver.h"
#include "engine/replay/recorder.h"
#include "engine/replay/replay_device.h"
#include "engine/worker/gpu_device.h"
#include "engine/worker/worker_supervisor.h"

#include "core/candidate.h"
#include "core/error.h"
#include "core/kernel_program.h"
#include "core/problem.h"
#include "core/problem_library.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <ostream>
#include <sstream>

namespace fs = std::filesystem;

namespace kerncast::cli {

namespace {

struct Check {
    std::string name;
    bool pass = false;
    std::string detail;
};

std::string read_text(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

std::string fmt(const char* format, double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, format, v);
    return buf;
}

// A kernel with the saxpy problem's signature that also writes far outside any allocation: the worker must report
// it as crashed and the next candidate must still be measured.
constexpr const char* kHostileSaxpy =
    R"(// @kerncast launch saxpy_oob grid(ceil_div(N, 256)) block(256) args(x, y, a, N)
extern "C" __global__ void saxpy_oob(const float* x, float* y, float a, int N) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N) y[i] = a * x[i] + y[i];
    if (i == 0) y[(1ll << 40) / 4] = 1.0f;
}
)";

void check_compiles(Compiler& compiler, const std::vector<std::string>& problems, std::vector<Check>& checks) {
    for (const auto& dir : problems) {
        Check c;
        c.name = "compile " + fs::path(dir).filename().string() + " reference (sm_90)";
        try {
            const Problem problem = Problem::load(dir);
            const auto ref = KernelProgram::load(problem.referencePath());
            CompileRequest req;
            req.source = ref.source;
            req.file_name = fs::path(problem.referencePath()).filename().string();
            req.arch = "sm_90";
            req.kernel_names = ref.kernelNames();
            const auto configs = ref.configurations(1);
            if (!configs.empty())
                req.defines = configs.front();
            const auto result = compiler.compile(req);
            if (!result.ok) {
                c.detail = format_compile_log(result).substr(0, 300);
            } else if (result.kernels.empty()) {
                c.detail = "compiled, but the static report is empty";
            } else {
                c.pass = true;
                int regs = 0;
                for (const auto& k : result.kernels)
                    regs = std::max(regs, k.registers);
                c.detail = std::to_string(result.kernels.size()) + " kernel(s), up to " + std::to_string(regs) +
                           " registers" + (result.from_cache ? " (cached)" : fmt(", %.0f ms", result.compile_ms));
            }
        } catch (const std::exception& e) {
            c.detail = e.what();
        }
        checks.push_back(c);
    }
}

// Finds a recorded program through its problem's recording plan (recordings keep hashes, not sources).
void check_replay(std::vector<Check>& checks) {
    std::vector<std::pair<std::string, std::string>> roots = {{resources_dir(), "resources"}};
    roots.push_back({std::string(KERNCAST_SOURCE_DIR) + "/tests/data", "test fixture"});
    for (const auto& [root, what] : roots) {
        std::error_code ec;
        for (const auto& folder : fs::directory_iterator(fs::path(root) / "recordings", ec)) {
            if (!folder.is_directory())
                continue;
            try {
                ReplayDevice replay(folder.path().string());
                for (const auto& problem : replay.problems()) {
                    const fs::path problem_dir = fs::path(root) / "problems" / problem;
                    if (!fs::is_regular_file(problem_dir / "problem.json"))
                        continue;
                    const auto rec = replay.recording(problem);
                    for (const auto& item : recording_plan(problem_dir.string(), 0)) {
                        const auto* entry = rec->find(content_hash(item.program.source, item.program.tunables));
                        if (!entry)
                            continue;
                        MeasureRequest req;
                        req.problem_dir = problem_dir.string();
                        req.candidate = item.program;
                        const auto got = replay.measure(req);
                        Check hit{"replay answers a recorded program", false, ""};
                        hit.pass = got.measurement.status == entry->measurement.status &&
                                   got.measurement.speedup == entry->measurement.speedup;
                        hit.detail = replay.id() + " " + problem + " '" + item.label +
                                     "': " + to_string(got.measurement.status) +
                                     fmt(" %.3fx", got.measurement.speedup) + " (" + what + ")";
                        checks.push_back(hit);
                        req.candidate.source += "\n// a program nobody recorded\n";
                        const auto miss = replay.measure(req);
                        checks.push_back({"replay says not_recorded for an unknown program",
                                          miss.measurement.status == Status::NotRecorded,
                                          to_string(miss.measurement.status) + std::string(": ") +
                                              miss.measurement.reason.substr(0, 120)});
                        return;
                    }
                }
            } catch (const std::exception& e) {
                checks.push_back({"replay " + folder.path().filename().string(), false, e.what()});
                return;
            }
        }
    }
    checks.push_back(
        {"replay answers a recorded program", false,
         "no recording with a matching problem folder under " + resources_dir() + "/recordings or the test fixtures"});
}

void check_gpu(const std::vector<std::string>& problems, std::vector<Check>& checks) {
    std::unique_ptr<GpuDevice> gpu;
    try {
        gpu = std::make_unique<GpuDevice>(0, find_worker_executable());
    } catch (const std::exception& e) {
        checks.push_back({"open cuda:0", false, e.what()});
        return;
    }
    checks.push_back({"open cuda:0", true, gpu->fingerprint().name + " " + gpu->arch()});
    std::string saxpy_dir;
    for (const auto& dir : problems) {
        const std::string name = fs::path(dir).filename().string();
        Check c{"measure " + name + " reference against itself", false, ""};
        try {
            const Problem problem = Problem::load(dir);
            if (problem.name == "saxpy")
                saxpy_dir = dir;
            MeasureRequest req;
            req.problem_dir = dir;
            req.reference.source = read_text(problem.referencePath());
            req.reference.file_name = fs::path(problem.referencePath()).filename().string();
            const auto configs = KernelProgram::parse(req.reference.source, req.reference.file_name).configurations(1);
            if (!configs.empty())
                req.reference.tunables = configs.front();
            req.candidate = req.reference;
            req.options.deadline_s = 120;
            const auto out = gpu->measure(req);
            const auto& m = out.measurement;
            // Same program on both sides: anything far from 1x means the timing is broken.
            c.pass = m.status == Status::Ok && m.speedup > 0.8 && m.speedup < 1.25;
            c.detail = to_string(m.status) + fmt(" %.3fx", m.speedup) +
                       (m.candidate ? fmt(", %.2f us", m.candidate->median_us) : std::string()) +
                       (m.reason.empty() ? "" : "; " + m.reason.substr(0, 200));
        } catch (const std::exception& e) {
            c.detail = e.what();
        }
        checks.push_back(c);
    }
    if (saxpy_dir.empty()) {
        checks.push_back({"hostile kernel is contained", false, "needs the saxpy problem in " + resources_dir()});
        return;
    }
    MeasureRequest req;
    req.problem_dir = saxpy_dir;
    const Problem saxpy = Problem::load(saxpy_dir);
    req.reference.source = read_text(saxpy.referencePath());
    req.reference.file_name = "reference.cu";
    req.candidate.source = kHostileSaxpy;
    req.candidate.file_name = "saxpy_oob.cu";
    const int restarts_before = gpu->supervisor().restarts();
    const auto bad = gpu->measure(req).measurement;
    checks.push_back({"out-of-bounds write -> crashed", bad.status == Status::Crashed,
                      to_string(bad.status) + std::string(": ") + bad.reason.substr(0, 200) + " (restarts " +
                          std::to_string(restarts_before) + " -> " + std::to_string(gpu->supervisor().restarts()) +
                          ")"});
    req.candidate = req.reference;
    const auto good = gpu->measure(req).measurement;
    checks.push_back({"ordinary kernel after the crash -> ok", good.status == Status::Ok,
                      to_string(good.status) + fmt(" %.3fx", good.speedup) +
                          (good.reason.empty() ? "" : "; " + good.reason.substr(0, 200))});
}

void run_selftest(Context& ctx) {
    std::vector<Check> checks;
    const auto problems = list_problem_folders(resources_dir() + "/problems");
    if (problems.empty())
        checks.push_back({"problem library", false, "no problem folders under " + resources_dir() + "/problems"});

    Compiler compiler;
    check_compiles(compiler, problems, checks);
    check_replay(checks);

    const bool have_gpu = cuda::available();
    {
        Check c{"worker starts", false, ""};
        const std::string exe = find_worker_executable();
        if (exe.empty()) {
            c.detail = "kerncast-worker not found (build it, or set KERNCAST_WORKER)";
        } else {
            try {
                WorkerSupervisor worker(exe, 0);
                const auto hello = worker.start();
                if (have_gpu) {
                    c.pass = hello.ok;
                    c.detail =
                        hello.ok ? "hello from " + hello.device.name + fmt(", %.0f GB/s DRAM", hello.ceilings.dram_gbps)
                                 : hello.error;
                } else {
                    // Without a driver the worker must still start and say why it cannot measure.
                    c.pass = !hello.ok && !hello.error.empty();
                    c.detail = hello.ok ? "hello ok without a driver?" : "says: " + hello.error;
                }
            } catch (const std::exception& e) {
                c.detail = e.what();
            }
        }
        checks.push_back(c);
    }
    if (have_gpu)
        check_gpu(problems, checks);

    bool all = true;
    for (const auto& c : checks)
        all = all && c.pass;
    if (ctx.json) {
        nlohmann::json list = nlohmann::json::array();
        for (const auto& c : checks)
            list.push_back({{"name", c.name}, {"pass", c.pass}, {"detail", c.detail}});
        *ctx.out << nlohmann::json{{"ok", all}, {"gpu", have_gpu}, {"checks", list}}.dump(2) << "\n";
    } else {
        auto& out = *ctx.out;
        out << std::left << std::setw(52) << "CHECK" << std::setw(8) << "RESULT"
            << "DETAIL\n";
        for (const auto& c : checks) {
            std::string detail = c.detail;
            for (auto& ch : detail)
                if (ch == '\n')
                    ch = ' ';
            out << std::left << std::setw(52) << c.name << std::setw(8) << (c.pass ? "PASS" : "FAIL") << detail << "\n";
        }
        size_t failed = 0;
        for (const auto& c : checks)
            failed += c.pass ? 0 : 1;
        out << checks.size() - failed << " passed, " << failed << " failed"
            << (have_gpu ? "" : " (no GPU: " + cuda::unavailable_reason() + ")") << "\n";
    }
    ctx.exit_code = all ? 0 : 1;
}

}  // namespace

void add_selftest_command(CLI::App& app, Context& ctx) {
    auto* cmd = app.add_subcommand("selftest", "Check compilation, replay and (with a GPU) measurement; exit 1 on "
                                               "any failure");
    cmd->callback([&ctx] { run_selftest(ctx); });
}

}  // namespace kerncast::cli
