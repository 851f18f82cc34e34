// kerncast-cli forecast as the README runs it: the bins with the speedups they hold, and what the recording measured
// for the same program beside the forecast.
#include "tests/support/cli_runner.h"

#include <QTest>

#include <nlohmann/json.hpp>

#include <cmath>
#include <string>

using kerncast::test::run_cli;

class TestCmdForecast : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void theReadmeExampleShowsRangesAndTheRecordedSpeedup() {
        const std::string kernel = KERNCAST_SOURCE_DIR "/resources/problems/saxpy/seeds/float4.cu";
        const auto r = run_cli({"forecast", "--problem", "saxpy", "--kernel", kernel, "--surrogate", "local"});
        QVERIFY2(r.code == 0, (r.out + r.err).c_str());
        // Every bin line names its range; the predicted one too.
        for (const char* range : {"<= 0.25x", "0.71-1.00x", "1.00-1.41x", "> 4.00x"})
            QVERIFY2(r.out.find(range) != std::string::npos, (std::string(range) + " missing in:\n" + r.out).c_str());
        QVERIFY2(r.out.find("predicted  bin ") != std::string::npos, r.out.c_str());
        // The shipped H200 recording measured this program at 1.37x: bin 5.
        QVERIFY2(r.out.find("recorded   1.37x on NVIDIA H200") != std::string::npos, r.out.c_str());
        QVERIFY2(r.out.find("bin 5 minor speedup (1.00-1.41x)") != std::string::npos, r.out.c_str());

        const auto j =
            run_cli({"--json", "forecast", "--problem", "saxpy", "--kernel", kernel, "--surrogate", "local"});
        QVERIFY2(j.code == 0, (j.out + j.err).c_str());
        const auto json = nlohmann::json::parse(j.out);
        QCOMPARE(json["bins"][4]["range"].get<std::string>(), std::string("1.00-1.41x"));
        QCOMPARE(json["recorded"]["bin"].get<int>(), 5);
        QVERIFY(std::abs(json["recorded"]["speedup"].get<double>() - 1.37) < 0.005);
    }
};

QTEST_GUILESS_MAIN(TestCmdForecast)
#include "tst_cmd_forecast.moc"
