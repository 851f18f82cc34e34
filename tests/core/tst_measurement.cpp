#include "core/candidate.h"
#include "core/error.h"
#include "core/measurement.h"

#include <QTest>

using namespace kerncast;

class TestMeasurement : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void statusNamesRoundTrip_data() {
        QTest::addColumn<int>("status");
        for (int s = 0; s <= static_cast<int>(Status::NotRecorded); ++s)
            QTest::newRow(to_string(static_cast<Status>(s))) << s;
    }
    void statusNamesRoundTrip() {
        QFETCH(int, status);
        const auto s = static_cast<Status>(status);
        QCOMPARE(status_from_string(to_string(s)), s);
    }
    void unknownStatusIsAnError() { QVERIFY_THROWS_EXCEPTION(Error, status_from_string("fast")); }
    void failureStatusesAreBinZero() {
        QVERIFY(is_failure(Status::CompileError));
        QVERIFY(is_failure(Status::Crashed));
        QVERIFY(!is_failure(Status::Ok));
        QVERIFY(!is_failure(Status::Suspect));
        QVERIFY(!is_failure(Status::NotRecorded));
    }
    void measurementJsonRoundTrip() {
        Measurement m;
        m.status = Status::Suspect;
        m.reason = "below roofline floor";
        m.speedup = 3.5;
        m.device.name = "NVIDIA H100 80GB HBM3";
        m.device.cc_major = 9;
        TimingStats t;
        t.median_us = 12.5;
        t.n = 3;
        t.samples_us = {12.0, 12.5, 13.0};
        m.candidate = t;
        const nlohmann::json j = m;
        const auto back = j.get<Measurement>();
        QCOMPARE(back.status, Status::Suspect);
        QCOMPARE(back.reason, m.reason);
        QCOMPARE(back.speedup, 3.5);
        QVERIFY(back.candidate.has_value());
        QCOMPARE(back.candidate->samples_us.size(), size_t{3});
        QVERIFY(!back.reference.has_value());
        QCOMPARE(back.device.cc_major, 9);
        QCOMPARE(back.device.slug(), std::string("nvidia-h100-80gb-hbm3"));
    }
    void contentHashDependsOnSourceAndTunables() {
        const std::string src = "__global__ void k() {}";
        QCOMPARE(content_hash(src, {{"BLOCK", 128}}), content_hash(src, {{"BLOCK", 128}}));
        QVERIFY(content_hash(src, {{"BLOCK", 128}}) != content_hash(src, {{"BLOCK", 256}}));
        QVERIFY(content_hash(src, {}) != content_hash(src + " ", {}));
        QCOMPARE(content_hash(src, {}).size(), size_t{32});
    }
};

QTEST_GUILESS_MAIN(TestMeasurement)
#include "tst_measurement.moc"
