// kerncast-cli refresh-static on a recording written here around a copy of the replay fixture's problem: a line whose
// report is in the form a driver's compile cache gave (no static shared memory, no spills) and whose registers the
// fresh compile allocates again takes the fresh report; a line compiled here to other registers keeps its report, but
// for a static shared memory read as 0; lines already right, lines without a report (an imported cache) and lines of
// programs the folder no longer holds stay byte for byte; a dry run and a second run write nothing; a recording of
// another definition is a clear error.
#include "engine/gpu/compiler.h"
#include "tests/support/cli_runner.h"

#include "core/candidate.h"
#include "core/static_report.h"
#include "core/text_util.h"

#include <QTemporaryDir>
#include <QTest>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

using kerncast::test::run_cli;
namespace fs = std::filesystem;

namespace {

const std::string kProblem = KERNCAST_TEST_DATA "/problems/replay_saxpy";
const std::string kRecording = KERNCAST_TEST_DATA "/recordings/test-h100/replay_saxpy.jsonl";

std::string read(const std::string& path) { return kerncast::read_text_file(path); }

// A seed that stages x through static shared memory (256 floats: 1024 bytes).
std::string staged(const std::string& kernel) {
    return "// Stages each block's x through static shared memory.\n"
           "// @kerncast launch " +
           kernel +
           " grid(ceil_div(N, 256)) block(256) args(x, y, a, N)\n"
           "extern \"C\" __global__ void " +
           kernel +
           "(const float* x, float* y, float a, int N) {\n"
           "    __shared__ float t[256];\n"
           "    const int i = blockIdx.x * 256 + threadIdx.x;\n"
           "    t[threadIdx.x] = i < N ? x[i] : 0.0f;\n"
           "    __syncthreads();\n"
           "    if (i < N)\n"
           "        y[i] = a * t[255 - threadIdx.x] + y[i];\n"
           "}\n";
}

}  // namespace

class TestRecordingStatic : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;
    std::string m_problem, m_recordings, m_file;
    std::vector<std::string> m_lines;  // as written: header, then one line per case below
    std::vector<kerncast::StaticReport> m_truthA, m_truthB;
    int m_refRegisters = 0;

    kerncast::CompileResult compile(const std::string& source, const std::string& file,
                                    const std::map<std::string, int64_t>& tunables = {}) {
        kerncast::Compiler compiler("", 1);
        kerncast::ProgramRef p;
        p.source = source;
        p.file_name = file;
        p.tunables = tunables;
        return compiler.compile(kerncast::measure_compile_request(p, "sm_90"));
    }

private slots:
    void init() {
        QVERIFY(m_dir.isValid());
        const fs::path root = m_dir.path().toStdString();
        fs::remove_all(root / "replay_saxpy");
        fs::remove_all(root / "recordings");
        fs::copy(kProblem, root / "replay_saxpy", fs::copy_options::recursive);
        std::ofstream(root / "replay_saxpy" / "seeds" / "staged_a.cu") << staged("saxpy_staged_a");
        std::ofstream(root / "replay_saxpy" / "seeds" / "staged_b.cu") << staged("saxpy_staged_b");
        fs::create_directories(root / "recordings" / "test-h100");
        m_problem = (root / "replay_saxpy").string();
        m_recordings = (root / "recordings").string();
        m_file = m_recordings + "/test-h100/replay_saxpy.jsonl";

        // The fixture's header (an sm_90 GPU, the problem's fingerprint) and one of its measurements for every line.
        const auto fixture = kerncast::split_lines(read(kRecording));
        const nlohmann::json measurement = nlohmann::json::parse(fixture.at(1))["measurement"];
        auto line = [&](const std::string& label, const std::string& hash, const nlohmann::json& tunables,
                        const std::vector<kerncast::StaticReport>& report) {
            return nlohmann::json{{"kind", "measurement"}, {"label", label},   {"source_hash", hash},
                                  {"tunables", tunables},  {"static", report}, {"measurement", measurement}}
                .dump();
        };

        const auto a = compile(staged("saxpy_staged_a"), "staged_a.cu");
        const auto b = compile(staged("saxpy_staged_b"), "staged_b.cu");
        QVERIFY2(a.ok && b.ok, (a.log + b.log).c_str());
        m_truthA = a.kernels;
        m_truthB = b.kernels;
        QCOMPARE(m_truthA.at(0).shared_bytes, 1024);

        // 1. seed A in the cache's form: no shared memory (spills are none here either).
        auto cacheForm = m_truthA;
        cacheForm[0].shared_bytes = 0;
        // 2. seed B compiled to other registers, its shared memory read as 0.
        auto otherRegisters = m_truthB;
        otherRegisters[0].registers += 6;
        otherRegisters[0].shared_bytes = 0;
        // 3. a family configuration whose report is the compiler's already.
        const std::string family = read(m_problem + "/family.cu");
        const auto f = compile(family, "family.cu", {{"BLOCK", 256}, {"ITEMS", 4}});
        QVERIFY(f.ok);
        // 4. the reference compiled to other registers, nothing else to put right.
        const std::string reference = read(m_problem + "/reference.cu");
        auto ref = compile(reference, "reference.cu").kernels;
        m_refRegisters = ref.at(0).registers;
        ref.at(0).registers += 3;

        m_lines = {fixture.at(0),
                   line("seed:staged_a.cu", kerncast::content_hash(staged("saxpy_staged_a"), {}),
                        nlohmann::json::object(), cacheForm),
                   line("seed:staged_b.cu", kerncast::content_hash(staged("saxpy_staged_b"), {}),
                        nlohmann::json::object(), otherRegisters),
                   line("family BLOCK=256 ITEMS=4", kerncast::content_hash(family, {{"BLOCK", 256}, {"ITEMS", 4}}),
                        {{"BLOCK", 256}, {"ITEMS", 4}}, f.kernels),
                   line("reference", kerncast::content_hash(reference, {}), nlohmann::json::object(), ref),
                   line("seed:gone.cu", "0123456789abcdef0123456789abcdef", nlohmann::json::object(), cacheForm),
                   // 6. a configuration imported from a Kernel Tuner cache: no report to put right.
                   line("family BLOCK=128 ITEMS=1", kerncast::content_hash(family, {{"BLOCK", 128}, {"ITEMS", 1}}),
                        {{"BLOCK", 128}, {"ITEMS", 1}}, {})};
        std::string text;
        for (const auto& l : m_lines)
            text += l + "\n";
        std::ofstream(m_file, std::ios::binary) << text;
    }

    void putsRightWhatTheCacheLeftOut() {
        const std::string before = read(m_file);
        const auto dry = run_cli({"refresh-static", "--problem", m_problem, "--recordings", m_recordings, "--dry-run"});
        QVERIFY2(dry.code == 0, dry.err.c_str());
        QVERIFY2(dry.out.find("2 report(s) would be put right") != std::string::npos, dry.out.c_str());
        QCOMPARE(read(m_file), before);

        const auto r = run_cli({"refresh-static", "--problem", m_problem, "--recordings", m_recordings});
        QVERIFY2(r.code == 0, r.err.c_str());
        QVERIFY2(r.out.find("(sm_90): 2 report(s) put right (shared memory of 2 kernel(s), spills of 0), 1 already "
                            "the compiler's, 1 allocated otherwise here (kept), 1 of programs the folder no longer "
                            "holds (kept), 1 without a static report (kept, not compiled)") != std::string::npos,
                 r.out.c_str());
        QVERIFY2(r.out.find("seed:staged_a.cu: saxpy_staged_a shared_bytes 0 -> 1024") != std::string::npos,
                 r.out.c_str());
        const std::string kept = "allocated otherwise here: reference: saxpy registers " +
                                 std::to_string(m_refRegisters + 3) + " (here " + std::to_string(m_refRegisters) +
                                 "), spills 0 B (here 0 B)";
        QVERIFY2(r.out.find(kept) != std::string::npos, r.out.c_str());

        const auto after = kerncast::split_lines(read(m_file));
        QCOMPARE(after.size(), m_lines.size());
        // Seed A takes the fresh report whole.
        auto a = nlohmann::json::parse(after[1]), wasA = nlohmann::json::parse(m_lines[1]);
        QCOMPARE(a["static"].dump(), nlohmann::json(m_truthA).dump());
        a.erase("static");
        wasA.erase("static");
        QCOMPARE(a.dump(), wasA.dump());
        // Seed B keeps its registers; only its shared memory is put right.
        const auto b = nlohmann::json::parse(after[2])["static"].get<std::vector<kerncast::StaticReport>>();
        QCOMPARE(b.at(0).registers, m_truthB.at(0).registers + 6);
        QCOMPARE(b.at(0).shared_bytes, 1024);
        // Everything else byte for byte.
        for (size_t i : {size_t{0}, size_t{3}, size_t{4}, size_t{5}, size_t{6}})
            QCOMPARE(after[i], m_lines[i]);

        // Nothing left to do.
        const std::string done = read(m_file);
        const auto again = run_cli({"refresh-static", "--problem", m_problem, "--recordings", m_recordings});
        QVERIFY2(again.code == 0, again.err.c_str());
        QVERIFY2(again.out.find("0 report(s) put right, 2 already the compiler's, 2 allocated otherwise here (kept)") !=
                     std::string::npos,
                 again.out.c_str());
        QCOMPARE(read(m_file), done);
    }

    void anotherDefinitionIsAClearError() {
        std::ofstream(m_problem + "/reference.cu", std::ios::app) << "// edited\n";  // another reference
        const std::string before = read(m_file);
        const auto r = run_cli({"refresh-static", "--problem", m_problem, "--recordings", m_recordings});
        QCOMPARE(r.code, 1);
        QVERIFY2(r.err.find("measured another definition of problem 'replay_saxpy'") != std::string::npos,
                 r.err.c_str());
        QCOMPARE(read(m_file), before);
    }

    void noRecordingOrNoProblemIsAClearError() {
        const auto none = run_cli({"refresh-static", "--recordings", m_recordings});
        QCOMPARE(none.code, 1);
        QVERIFY2(none.err.find("give --problem (one or more) or --all") != std::string::npos, none.err.c_str());
        fs::remove(m_file);
        const auto r = run_cli({"refresh-static", "--problem", m_problem, "--recordings", m_recordings});
        QCOMPARE(r.code, 1);
        QVERIFY2(r.err.find("no recording of problem 'replay_saxpy'") != std::string::npos, r.err.c_str());
    }
};

QTEST_GUILESS_MAIN(TestRecordingStatic)
#include "tst_recording_static.moc"
