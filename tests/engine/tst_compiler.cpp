#include "engine/gpu/compiler.h"
#include "tests/support/cubin_sections.h"

#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>

using namespace kerncast;

namespace {

std::string fixture(const std::string& name) {
    std::ifstream in(std::string(KERNCAST_TEST_DATA) + "/compile/" + name, std::ios::binary);
    if (!in)
        qFatal("missing fixture %s", name.c_str());
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

CompileRequest request(const std::string& name, const std::string& arch = "sm_90") {
    CompileRequest r;
    r.source = fixture(name);
    r.file_name = "compile/" + name;
    r.arch = arch;
    return r;
}

const StaticReport* reportFor(const CompileResult& r, const std::string& kernel) {
    auto it =
        std::find_if(r.kernels.begin(), r.kernels.end(), [&](const StaticReport& s) { return s.kernel == kernel; });
    return it == r.kernels.end() ? nullptr : &*it;
}

bool hasError(const CompileResult& r, const std::string& text) {
    return std::any_of(r.diagnostics.begin(), r.diagnostics.end(), [&](const CompileDiagnostic& d) {
        return d.severity == "error" && d.message.find(text) != std::string::npos;
    });
}

// A family of distinct kernels (the constant differs), each a separate compile.
CompileRequest numbered(int i) {
    CompileRequest r;
    r.file_name = "scaled" + std::to_string(i) + ".cu";
    r.source = "extern \"C\" __global__ void scaled(float* y, int n) {\n"
               "    const int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
               "    if (i < n) y[i] *= " +
               std::to_string(i + 2) + ".0f;\n}\n";
    return r;
}

}  // namespace

class TestCompiler : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void trivialKernelGivesElfCubin_data() {
        QTest::addColumn<QString>("arch");
        QTest::newRow("hopper") << "sm_90";
        QTest::newRow("ampere") << "sm_80";
    }
    void trivialKernelGivesElfCubin() {
        QFETCH(QString, arch);
        Compiler compiler;
        const auto r = compiler.compile(request("saxpy.cu", arch.toStdString()));
        QVERIFY2(r.ok, r.log.c_str());
        QVERIFY(r.cubin.size() > 4);
        QCOMPARE(r.cubin[0], '\x7f');  // ELF magic: what cuModuleLoadData expects of a cubin
        QCOMPARE(std::string(r.cubin.begin() + 1, r.cubin.begin() + 4), std::string("ELF"));
        QVERIFY(r.ptx.find(".target " + arch.toStdString()) != std::string::npos);
        QCOMPARE(r.kernels.size(), size_t{1});
        QCOMPARE(r.kernels[0].kernel, std::string("saxpy"));
        QVERIFY(r.kernels[0].registers > 0);
        QVERIFY(!r.from_cache);
        QVERIFY(r.diagnostics.empty());
    }

    void virtualArchGivesPtxOnly() {
        Compiler compiler;
        const auto r = compiler.compile(request("saxpy.cu", "compute_90"));
        QVERIFY2(r.ok, r.log.c_str());
        QVERIFY(r.cubin.empty());
        QVERIFY(r.ptx.find(".entry saxpy") != std::string::npos);
    }

    void unknownArchIsReadableError_data() {
        QTest::addColumn<QString>("arch");
        QTest::newRow("typo") << "sm90";
        QTest::newRow("retired") << "sm_50";
        QTest::newRow("empty") << "";
    }
    void unknownArchIsReadableError() {
        QFETCH(QString, arch);
        Compiler compiler;
        const auto r = compiler.compile(request("saxpy.cu", arch.toStdString()));
        QVERIFY(!r.ok);
        QVERIFY(r.cubin.empty());
        QVERIFY(!r.diagnostics.empty());
        QVERIFY2(r.log.find("arch") != std::string::npos, r.log.c_str());
    }

    void defineSelectsCode_data() {
        QTest::addColumn<int>("block");
        QTest::addColumn<bool>("ok");
        QTest::newRow("256 accepted") << 256 << true;
        QTest::newRow("128 rejected by #error") << 128 << false;
        QTest::newRow("undefined rejected") << 0 << false;
    }
    void defineSelectsCode() {
        QFETCH(int, block);
        QFETCH(bool, ok);
        auto req = request("block_guard.cu");
        if (block)
            req.defines["BLOCK"] = block;
        Compiler compiler;
        const auto r = compiler.compile(req);
        QCOMPARE(r.ok, ok);
        if (!ok) {
            QVERIFY2(hasError(r, "BLOCK must be 256"), r.log.c_str());
            QCOMPARE(r.diagnostics.front().line, 5);
            QCOMPARE(r.diagnostics.front().file, req.file_name);
        }
    }

    void cacheKeyFollowsEveryInput_data() {
        QTest::addColumn<QString>("change");
        QTest::newRow("define value") << "define";
        QTest::newRow("arch") << "arch";
        QTest::newRow("source") << "source";
        QTest::newRow("extra option") << "option";
        QTest::newRow("file name") << "file";
    }
    void cacheKeyFollowsEveryInput() {
        QFETCH(QString, change);
        auto base = request("block_guard.cu");
        base.defines["BLOCK"] = 256;
        auto other = base;
        QCOMPARE(Compiler::cacheKey(base), Compiler::cacheKey(other));
        if (change == "define")
            other.defines["BLOCK"] = 128;
        else if (change == "arch")
            other.arch = "sm_80";
        else if (change == "source")
            other.source += "\n";
        else if (change == "option")
            other.extra_options.push_back("-DEXTRA=1");
        else
            other.file_name = "other.cu";
        QVERIFY(Compiler::cacheKey(base) != Compiler::cacheKey(other));
        // The launch plan's kernel list narrows the report; it does not change what is compiled.
        other = base;
        other.kernel_names = {"scale"};
        QCOMPARE(Compiler::cacheKey(base), Compiler::cacheKey(other));
    }

    // An LLM-written kernel with an enormous identifier: the diagnostics quote it shortened, nothing overflows.
    void hugeIdentifierIsAnError() {
        Compiler compiler;
        CompileRequest req;
        req.file_name = "huge.cu";
        req.source = "extern \"C\" __global__ void k(float* y) { y[0] = " + std::string(200000, 'q') + "; }\n";
        const auto r = compiler.compile(req);
        QVERIFY(!r.ok);
        QVERIFY(!r.diagnostics.empty());
        QCOMPARE(r.diagnostics.front().file, std::string("huge.cu"));
        QCOMPARE(r.diagnostics.front().line, 1);
    }

    void syntaxErrorNamesFileLine() {
        Compiler compiler;
        const auto req = request("syntax_error.cu");
        const auto r = compiler.compile(req);
        QVERIFY(!r.ok);
        QVERIFY(r.cubin.empty());
        QVERIFY(!r.diagnostics.empty());
        const auto& d = r.diagnostics.front();
        QCOMPARE(d.file, req.file_name);
        QCOMPARE(d.line, 7);
        QCOMPARE(d.severity, std::string("error"));
        QVERIFY2(d.message.find("undeclared_scale") != std::string::npos, d.message.c_str());
        QVERIFY(r.log.find("compile/syntax_error.cu(7)") != std::string::npos);
    }

    void staticReport_data() {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("kernel");
        QTest::addColumn<QString>("field");
        QTest::addColumn<int>("atLeast");
        QTest::newRow("1 KiB static shared memory") << "static_smem.cu"
                                                    << "reverse_tile"
                                                    << "shared" << 1024;
        QTest::newRow("run-time indexed local array") << "local_array.cu"
                                                      << "gather_local"
                                                      << "stack" << 1;
        QTest::newRow("__syncthreads") << "barrier.cu"
                                       << "block_sum"
                                       << "barriers" << 1;
        QTest::newRow("no barrier") << "saxpy.cu"
                                    << "saxpy"
                                    << "barriers" << 0;
        QTest::newRow("__launch_bounds__(128)") << "launch_bounds.cu"
                                                << "bounded"
                                                << "max_threads" << 128;
        QTest::newRow("constant banks") << "saxpy.cu"
                                        << "saxpy"
                                        << "constant" << 1;
    }
    void staticReport() {
        QFETCH(QString, file);
        QFETCH(QString, kernel);
        QFETCH(QString, field);
        QFETCH(int, atLeast);
        Compiler compiler;
        const auto r = compiler.compile(request(file.toStdString()));
        QVERIFY2(r.ok, r.log.c_str());
        const auto* k = reportFor(r, kernel.toStdString());
        QVERIFY(k);
        QVERIFY(k->registers > 0);
        if (field == "shared") {
            QVERIFY(k->shared_bytes >= atLeast);
        } else if (field == "stack") {
            QVERIFY(k->stack_bytes >= atLeast);
        } else if (field == "barriers") {
            if (atLeast == 0)
                QCOMPARE(k->barriers, 0);
            else
                QVERIFY(k->barriers >= atLeast);
        } else if (field == "max_threads") {
            QCOMPARE(k->max_threads_per_block, atLeast);
        } else {
            QVERIFY(k->constant_bytes >= atLeast);
        }
    }

    void cubHeaderCompiles() {
        Compiler compiler;
        auto req = request("cub_reduce.cu");
        req.kernel_names = {"block_reduce"};
        const auto r = compiler.compile(req);
        QVERIFY2(r.ok, r.log.c_str());
        QCOMPARE(r.kernels.size(), size_t{1});
        QVERIFY(r.kernels[0].shared_bytes > 0);
        QVERIFY(r.kernels[0].barriers >= 1);
    }

    void memoryCacheAnswersRepeats() {
        Compiler compiler;
        const auto first = compiler.compile(request("saxpy.cu"));
        const auto second = compiler.compile(request("saxpy.cu"));
        QVERIFY(first.ok && second.ok);
        QVERIFY(!first.from_cache);
        QVERIFY(second.from_cache);
        QCOMPARE(second.key, first.key);
        QVERIFY(second.cubin == first.cubin);
        QCOMPARE(compiler.stats().compiles, size_t{1});
        QCOMPARE(compiler.stats().memory_hits, size_t{1});
    }

    void diskCacheSurvivesNewCompiler() {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        auto req = request("barrier.cu");
        CompileResult first;
        {
            Compiler compiler(dir.path().toStdString());
            first = compiler.compile(req);
            QVERIFY2(first.ok, first.log.c_str());
            QVERIFY(!first.from_cache);
        }
        Compiler again(dir.path().toStdString());
        const auto second = again.compile(req);
        QVERIFY2(second.ok, second.log.c_str());
        QVERIFY(second.from_cache);
        QCOMPARE(again.stats().compiles, size_t{0});
        QCOMPARE(again.stats().disk_hits, size_t{1});
        QVERIFY(second.cubin == first.cubin);
        QCOMPARE(second.ptx, first.ptx);
        QCOMPARE(second.kernels.size(), first.kernels.size());
        QCOMPARE(second.kernels[0].registers, first.kernels[0].registers);
        QCOMPARE(second.kernels[0].shared_bytes, first.kernels[0].shared_bytes);
        // No temporary files are left behind by the atomic writes.
        for (const auto& e : std::filesystem::directory_iterator(dir.path().toStdString()))
            QVERIFY2(e.path().string().find(".tmp.") == std::string::npos, e.path().c_str());
    }

    void compileErrorsAreCachedToo() {
        QTemporaryDir dir;
        {
            Compiler compiler(dir.path().toStdString());
            QVERIFY(!compiler.compile(request("syntax_error.cu")).ok);
        }
        Compiler again(dir.path().toStdString());
        const auto r = again.compile(request("syntax_error.cu"));
        QVERIFY(!r.ok);
        QVERIFY(r.from_cache);
        QCOMPARE(r.diagnostics.front().line, 7);
    }

    void corruptEntryIsRecompiled_data() {
        QTest::addColumn<QString>("damage");
        QTest::newRow("truncated cubin") << "truncate-cubin";
        QTest::newRow("cubin bytes changed") << "flip-cubin";
        QTest::newRow("cubin deleted") << "delete-cubin";
        QTest::newRow("truncated json") << "truncate-json";
        QTest::newRow("garbage json") << "garbage-json";
    }
    void corruptEntryIsRecompiled() {
        QFETCH(QString, damage);
        QTemporaryDir dir;
        const std::string root = dir.path().toStdString();
        const auto req = request("saxpy.cu");
        CompileResult first;
        {
            Compiler compiler(root);
            first = compiler.compile(req);
            QVERIFY(first.ok);
        }
        const std::string cubin = root + "/" + first.key + ".cubin";
        const std::string json = root + "/" + first.key + ".json";
        QVERIFY(std::filesystem::exists(cubin));
        QVERIFY(std::filesystem::exists(json));
        if (damage == "truncate-cubin") {
            std::filesystem::resize_file(cubin, std::filesystem::file_size(cubin) / 2);
        } else if (damage == "flip-cubin") {
            std::fstream f(cubin, std::ios::in | std::ios::out | std::ios::binary);
            f.seekp(100);
            f.put('\x5a');
        } else if (damage == "delete-cubin") {
            std::filesystem::remove(cubin);
        } else if (damage == "truncate-json") {
            std::filesystem::resize_file(json, std::filesystem::file_size(json) / 3);
        } else {
            std::ofstream(json, std::ios::trunc) << "\x01\x02 not json";
        }
        {
            Compiler compiler(root);
            const auto r = compiler.compile(req);
            QVERIFY2(r.ok, r.log.c_str());
            QVERIFY(!r.from_cache);
            QVERIFY(test::code_sections(r.cubin) == test::code_sections(first.cubin));
            QCOMPARE(compiler.stats().corrupt_entries, size_t{1});
            QCOMPARE(compiler.stats().compiles, size_t{1});
        }
        Compiler repaired(root);
        QVERIFY(repaired.compile(req).from_cache);
    }

    void asyncCompilesAllSucceed() {
        Compiler compiler("", 2);
        QCOMPARE(compiler.threads(), 2u);
        std::vector<std::shared_future<CompileResult>> futures;
        for (int i = 0; i < 8; ++i)
            futures.push_back(compiler.compileAsync(numbered(i)));
        std::vector<std::string> keys;
        for (auto& f : futures) {
            const auto& r = f.get();
            QVERIFY2(r.ok, r.log.c_str());
            QVERIFY(!r.cubin.empty());
            keys.push_back(r.key);
        }
        std::sort(keys.begin(), keys.end());
        QCOMPARE(std::unique(keys.begin(), keys.end()) - keys.begin(), 8);
        QCOMPARE(compiler.stats().compiles, size_t{8});
    }

    void identicalRequestsInFlightCompileOnce() {
        Compiler compiler("", 2);
        std::vector<std::shared_future<CompileResult>> futures;
        for (int i = 0; i < 6; ++i)
            futures.push_back(compiler.compileAsync(request("cub_reduce.cu")));
        const auto sync = compiler.compile(request("cub_reduce.cu"));
        QVERIFY(sync.ok);
        for (auto& f : futures) {
            QVERIFY(f.get().ok);
            QVERIFY(f.get().cubin == sync.cubin);
        }
        const auto s = compiler.stats();
        QCOMPARE(s.compiles, size_t{1});
        QCOMPARE(s.joined + s.memory_hits, size_t{6});
    }

    // Spare compiles run in the background and are kept: asked for later, each is found, not compiled again.
    void spareCompilesAreFoundLater() {
        Compiler compiler("", 2);
        for (int i = 0; i < 4; ++i)
            compiler.compileSpare(numbered(200 + i));
        compiler.compileSpare(numbered(200));  // queued already: once
        QTRY_VERIFY2_WITH_TIMEOUT(compiler.stats().spare == 4 && compiler.stats().compiles == 4,
                                  "the spare compiles did not run", 60000);
        for (int i = 0; i < 4; ++i)
            QVERIFY(compiler.compile(numbered(200 + i)).ok);
        const auto s = compiler.stats();
        QCOMPARE(s.compiles, size_t{4});
        QCOMPARE(s.spare, size_t{4});
        QCOMPARE(s.memory_hits + s.joined, size_t{4});
        compiler.compileSpare(numbered(201));  // in the cache: nothing to do
        QCOMPARE(compiler.stats().compiles, size_t{4});
    }

    // An ordinary compile does not wait behind spare ones (two threads: spare compiles run one at a time), and one of
    // a program whose spare compile has not started takes its place: compiled once, early.
    void ordinaryCompilesGoBeforeSpareOnes() {
        Compiler compiler("", 2);
        for (int i = 0; i < 12; ++i)
            compiler.compileSpare(numbered(300 + i));
        const CompileResult fresh = compiler.compileAsync(numbered(320)).get();
        QVERIFY(fresh.ok);
        const CompileResult promoted = compiler.compileAsync(numbered(311)).get();  // the last spare one
        QVERIFY(promoted.ok);
        QVERIFY2(compiler.stats().spare < 11, "the ordinary compiles waited for the spare ones");
        QTRY_VERIFY2_WITH_TIMEOUT(compiler.stats().compiles >= 13, "the spare compiles did not run", 120000);
        QTest::qWait(200);  // the promoted program's spare task, run now, must compile nothing
        const auto s = compiler.stats();
        QCOMPARE(s.compiles, size_t{13});
        QCOMPARE(s.spare, size_t{11});
    }

    void shutdownNeverBreaksFutures() {
        std::vector<std::shared_future<CompileResult>> futures;
        {
            Compiler compiler("", 1);
            for (int i = 0; i < 6; ++i)
                futures.push_back(compiler.compileAsync(numbered(100 + i)));
        }
        int cancelled = 0;
        for (auto& f : futures) {
            QCOMPARE(f.wait_for(std::chrono::seconds(0)), std::future_status::ready);
            const auto& r = f.get();  // must not throw (a broken promise would)
            if (!r.ok) {
                QVERIFY(hasError(r, "shut down"));
                ++cancelled;
            }
        }
        QVERIFY(cancelled >= 1);
    }

    void launchPlanSelectsKernels() {
        Compiler compiler;
        auto req = request("two_kernels.cu");
        req.kernel_names = {"accumulate", "clear", "accumulate"};
        const auto r = compiler.compile(req);
        QVERIFY2(r.ok, r.log.c_str());
        QCOMPARE(r.kernels.size(), size_t{2});
        QCOMPARE(r.kernels[0].kernel, std::string("accumulate"));
        QCOMPARE(r.kernels[1].kernel, std::string("clear"));
        req.kernel_names.clear();
        QCOMPARE(compiler.compile(req).kernels.size(), size_t{2});
    }

    void missingLaunchKernelIsClearError() {
        Compiler compiler;
        auto req = request("two_kernels.cu");
        req.kernel_names = {"clear", "accumulate", "finalize"};
        const auto r = compiler.compile(req);
        QVERIFY(!r.ok);
        QVERIFY(r.cubin.empty());
        QCOMPARE(r.diagnostics.size(), size_t{1});
        const auto& d = r.diagnostics.front();
        QCOMPARE(d.file, req.file_name);
        QCOMPARE(d.line, 3);  // the plan line that names it
        QVERIFY2(d.message.find("'finalize'") != std::string::npos, d.message.c_str());
        QVERIFY2(d.message.find("clear") != std::string::npos, d.message.c_str());
        QVERIFY2(d.message.find("accumulate") != std::string::npos, d.message.c_str());
        QVERIFY(r.log.find("compile/two_kernels.cu:3:") != std::string::npos);
    }

    void mangledKernelSuggestsExternC() {
        Compiler compiler;
        auto req = request("mangled.cu");
        req.kernel_names = {"relu"};
        const auto r = compiler.compile(req);
        QVERIFY(!r.ok);
        QVERIFY2(hasError(r, "extern \"C\""), r.log.c_str());
        QVERIFY2(hasError(r, "mangled"), r.log.c_str());
    }

    void linkerErrorIsReported() {
        Compiler compiler;
        const auto r = compiler.compile(request("too_much_smem.cu"));
        QVERIFY(!r.ok);
        QVERIFY(r.cubin.empty());
        QVERIFY2(hasError(r, "too much shared data"), r.log.c_str());
    }

    void diagnosticJsonRoundTrip() {
        const CompileDiagnostic d{"saxpy/seeds/vec4.cu", 12, "warning", "variable \"t\" was declared"};
        const nlohmann::json j = d;
        QCOMPARE(j.at("line").get<int>(), 12);
        const auto back = j.get<CompileDiagnostic>();
        QCOMPARE(back.file, d.file);
        QCOMPARE(back.line, d.line);
        QCOMPARE(back.severity, d.severity);
        QCOMPARE(back.message, d.message);
    }
};

QTEST_GUILESS_MAIN(TestCompiler)
#include "tst_compiler.moc"
