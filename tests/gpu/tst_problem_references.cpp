// Every shipped problem's kernel programs (reference, seeds, a sample of the family's configurations) run on the GPU
// at every correctness case with fresh seeded inputs, and their outputs are compared with an fp64 CPU
// implementation of the problem (tests/gpu/cpu_refs). This is what makes a problem's reference trustworthy: the
// search measures every candidate against it.

#include "core/error.h"
#include "core/problem_library.h"
#include "engine/gpu/compiler.h"
#include "engine/gpu/cuda_driver.h"
#include "engine/gpu/gpu_session.h"
#include "engine/gpu/verifier.h"
#include "tests/gpu/cpu_refs/all.h"

#include <QTest>

#include <algorithm>
#include <filesystem>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

using namespace kerncast;
namespace fs = std::filesystem;

namespace {

const std::string kProblemsRoot = std::string(KERNCAST_SOURCE_DIR) + "/resources/problems";

// Family configurations checked per problem: the first, the last and evenly spaced ones between.
constexpr size_t kFamilySample = 6;

std::string problem_name(const std::string& dir) { return fs::path(dir).filename().string(); }

std::string describe(const Bindings& b) {
    std::string s;
    for (const auto& [k, v] : b)
        s += (s.empty() ? "" : ",") + k + "=" + std::to_string(v);
    return s;
}

std::vector<Bindings> sample_configurations(const KernelProgram& family) {
    const auto all = family.configurations();
    if (all.size() <= kFamilySample)
        return all;
    std::vector<Bindings> picked;
    for (size_t i = 0; i < kFamilySample; ++i)
        picked.push_back(all[i * (all.size() - 1) / (kFamilySample - 1)]);
    return picked;
}

}  // namespace

class TestProblemReferences : public QObject {
    Q_OBJECT

    // One (problem, program, configuration) to compile, checked at every correctness case.
    struct Program {
        std::string dir;
        std::string label;  // "reference", "seeds/float4.cu", "family BLOCK=256,VEC=4"
        const KernelProgram* program = nullptr;
        Bindings tunables;
        std::shared_future<CompileResult> compiled;
    };
    struct Row {
        size_t program = 0;
        size_t case_index = 0;
    };

    std::string m_no_gpu;  // why the GPU rows are skipped; empty when a device is present
    std::map<std::string, ProblemBundle> m_bundles;
    std::map<std::string, std::string> m_load_errors;
    std::vector<Program> m_programs;
    std::vector<Row> m_rows;
    std::unique_ptr<Compiler> m_compiler;
    std::unique_ptr<GpuSession> m_session;
    std::string m_arch = "sm_90";

private Q_SLOTS:
    void initTestCase() {
        QVERIFY2(fs::is_directory(kProblemsRoot), kProblemsRoot.c_str());
        for (const auto& dir : list_problem_folders(kProblemsRoot)) {
            try {
                m_bundles.emplace(dir, load_problem_folder(dir));
            } catch (const Error& e) {
                m_load_errors[dir] = e.what();
            }
        }
        std::string why;
        if (cuda::discover_devices(&why).empty()) {
            m_no_gpu = "no CUDA device: " + why;
            return;
        }
        m_session = std::make_unique<GpuSession>(0);
        m_arch = "sm_" + std::to_string(m_session->fingerprint().cc_major) +
                 std::to_string(m_session->fingerprint().cc_minor);
        m_compiler = std::make_unique<Compiler>();
        // Every program compiles on the pool up front; the rows wait for theirs.
        for (const auto& [dir, bundle] : m_bundles) {
            if (!cpu_references().count(problem_name(dir)))
                continue;
            addProgram(dir, "reference", bundle.reference, {});
            for (const auto& seed : bundle.seeds)
                addProgram(dir, "seeds/" + fs::path(seed.file).filename().string(), seed, {});
            if (bundle.family)
                for (const auto& config : sample_configurations(*bundle.family))
                    addProgram(dir, "family " + describe(config), *bundle.family, config);
        }
    }

    // No problem goes unchecked: each folder loads and has an fp64 CPU reference in tests/gpu/cpu_refs/all.h.
    void everyProblemHasCpuReference_data() {
        QTest::addColumn<QString>("dir");
        for (const auto& dir : list_problem_folders(kProblemsRoot))
            QTest::addRow("%s", problem_name(dir).c_str()) << QString::fromStdString(dir);
    }
    void everyProblemHasCpuReference() {
        QFETCH(QString, dir);
        const std::string d = dir.toStdString();
        if (auto it = m_load_errors.find(d); it != m_load_errors.end())
            QFAIL(it->second.c_str());
        const std::string name = problem_name(d);
        QVERIFY2(cpu_references().count(name), ("problem '" + name + "' has no CPU reference: add tests/gpu/cpu_refs/" +
                                                name + ".h and register it in tests/gpu/cpu_refs/all.h")
                                                   .c_str());
        QCOMPARE(m_bundles.at(d).problem.name, name);
    }

    void programMatchesCpu_data() {
        QTest::addColumn<int>("row");
        if (!m_no_gpu.empty()) {
            QTest::newRow("no-gpu") << -1;
            return;
        }
        for (size_t p = 0; p < m_programs.size(); ++p) {
            const auto& problem = m_bundles.at(m_programs[p].dir).problem;
            for (size_t c = 0; c < problem.correctness.size(); ++c) {
                m_rows.push_back({p, c});
                QTest::addRow("%s %s %s", problem.name.c_str(), m_programs[p].label.c_str(),
                              describe(problem.correctness[c]).c_str())
                    << static_cast<int>(m_rows.size() - 1);
            }
        }
    }
    void programMatchesCpu() {
        QFETCH(int, row);
        if (row < 0)
            QSKIP(m_no_gpu.c_str());
        const Row& r = m_rows.at(static_cast<size_t>(row));
        const Program& prog = m_programs.at(r.program);
        const Problem& problem = m_bundles.at(prog.dir).problem;
        const Bindings& sizes = problem.correctness.at(r.case_index);

        const CompileResult& compiled = prog.compiled.get();
        QVERIFY2(compiled.ok, (prog.label + " does not compile:\n" + compiled.log).c_str());

        // A different seed per row: programs see different inputs, and every run is reproducible.
        const uint64_t seed = 0x5eed0000u + static_cast<uint64_t>(row);
        RunOutput out;
        try {
            out = m_session->runOnce(problem, *prog.program, compiled.cubin, sizes, prog.tunables, seed);
        } catch (const std::exception& e) {
            QFAIL((prog.label + " failed to run: " + e.what()).c_str());
        }

        std::map<std::string, double> scalars;
        for (const auto& s : problem.scalars)
            scalars[s.name] = s.value;
        const auto expected = cpu_references().at(problem.name)(out.inputs_before, sizes, scalars);

        const Verifier verifier(problem.tolerance);
        for (const auto& b : problem.buffers) {
            QVERIFY2(out.buffers.count(b.name), ("buffer " + b.name + " was not read back").c_str());
            VerifyResult v;
            if (b.role == Role::In) {
                v = verifier.checkUnchanged(b.name, out.inputs_before.at(b.name), out.buffers.at(b.name));
            } else {
                QVERIFY2(expected.count(b.name), ("the CPU reference does not compute " + b.name).c_str());
                v = verifier.compareOutput(b.name, b.dtype, out.buffers.at(b.name), expected.at(b.name));
            }
            QVERIFY2(v.ok, (prog.label + ": " + v.reason).c_str());
        }
    }

private:
    void addProgram(const std::string& dir, const std::string& label, const KernelProgram& program,
                    const Bindings& tunables) {
        CompileRequest req;
        req.source = program.source;
        req.file_name = program.file;
        req.defines = tunables;
        req.arch = program.compileArch(m_arch);  // sm_90a for a program with that target
        req.kernel_names = program.kernelNames();
        m_programs.push_back({dir, label, &program, tunables, m_compiler->compileAsync(std::move(req))});
    }
};

QTEST_GUILESS_MAIN(TestProblemReferences)
#include "tst_problem_references.moc"
