#include "core/run_store.h"
#include "widgets/candidate_row.h"

#include <QTemporaryDir>
#include <QTest>

#include <cmath>

using namespace kerncast;

namespace {

Candidate makeCandidate(const std::string& label, int64_t parent, int generation, Mutator mutator) {
    Candidate c;
    c.parent_id = parent;
    c.generation = generation;
    c.mutator = mutator;
    c.label = label;
    c.source = "extern \"C\" __global__ void k(float* y) { y[threadIdx.x] = 1.0f; } // " + label + "\n";
    return c;
}

Forecast forecastPeakingAt(int bin, double peak) {
    std::array<double, kBinCount> raw{};
    raw.fill((1.0 - peak) / (kBinCount - 1));
    raw[static_cast<size_t>(bin - 1)] = peak;
    Forecast f = Forecast::fromRaw(raw);
    f.surrogate_id = "local-test";
    f.reasoning = "bin " + std::to_string(bin);
    return f;
}

Measurement measured(Status status, double speedup, double medianUs, const std::string& reason = {}) {
    Measurement m;
    m.status = status;
    m.speedup = speedup;
    m.reason = reason;
    m.device_kind = "replay";
    if (medianUs > 0) {
        TimingStats t;
        t.median_us = medianUs;
        t.n = 3;
        m.candidate = t;
    }
    return m;
}

SearchEvent makeEvent(SearchEvent::Kind kind, int64_t candidateId, int64_t runId = 1) {
    SearchEvent e;
    e.kind = kind;
    e.run_id = runId;
    e.candidate_id = candidateId;
    return e;
}

SearchEvent proposed(int64_t id, int64_t parent, const std::string& compileError = {}) {
    SearchEvent e = makeEvent(SearchEvent::Kind::CandidateProposed, id);
    Candidate c = makeCandidate("child " + std::to_string(id), parent, 1, Mutator::LlmDiff);
    c.id = id;
    c.source_hash = "abc" + std::to_string(id);
    e.candidate = c;
    e.compile_error = compileError;
    if (compileError.empty())
        e.static_report = {{"k", 40, 2048, 0, 0, 0, 0, 1, 0}};
    return e;
}

SearchEvent forecastEvent(int64_t id, int bin, double peak) {
    SearchEvent e = makeEvent(SearchEvent::Kind::Forecast, id);
    e.forecast = forecastPeakingAt(bin, peak);
    return e;
}

SearchEvent gatingEvent(int64_t id, GatingDecision decision) {
    SearchEvent e = makeEvent(SearchEvent::Kind::Gating, id);
    e.decision = decision;
    e.message = "confidence 0.4 < 0.6";
    return e;
}

SearchEvent measuredEvent(int64_t id, Status status, double speedup) {
    SearchEvent e = makeEvent(SearchEvent::Kind::Measured, id);
    e.measurement = measured(status, speedup, speedup > 0 ? 20.0 / speedup : 0, speedup > 0 ? "" : "output 3 differs");
    e.speedup = speedup;
    return e;
}

}  // namespace

Q_DECLARE_METATYPE(std::vector<kerncast::SearchEvent>)

class TestCandidateRow : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;

private Q_SLOTS:
    void initTestCase() { QVERIFY(m_dir.isValid()); }

    // A run written with the store's own API reads back as one row per candidate with its latest records.
    void rowsFromAStoredRun() {
        auto store = RunStore::create(m_dir.filePath(QStringLiteral("run.sqlite")).toStdString());
        RunInfo run;
        run.name = "rowsum";
        run.problem = "row_sum";
        const int64_t runId = store.addRun(run);
        RunInfo other;
        other.name = "another run";
        const int64_t otherRun = store.addRun(other);

        Candidate reference = makeCandidate("reference.cu", 0, 0, Mutator::Reference);
        Candidate seed = makeCandidate("seed:vec4.cu", 0, 0, Mutator::Seed);
        store.addCandidate(runId, reference);
        store.addCandidate(runId, seed);
        Candidate a = makeCandidate("rewrite a", seed.id, 1, Mutator::LlmRewrite);
        Candidate b = makeCandidate("rewrite b", seed.id, 1, Mutator::LlmRewrite);
        Candidate c = makeCandidate("diff c", a.id, 2, Mutator::LlmDiff);
        store.addCandidate(runId, a);
        store.addCandidate(runId, b);
        c.parent_id = a.id;
        store.addCandidate(runId, c);
        Candidate d = makeCandidate("family BLOCK=256", seed.id, 1, Mutator::Parametric);
        store.addCandidate(runId, d);
        Candidate elsewhere = makeCandidate("other run", 0, 0, Mutator::Seed);
        store.addCandidate(otherRun, elsewhere);

        // a: two kernels, an old and a new forecast, a failed then a good measurement.
        store.addStaticReports(a.id,
                               {{"rowsum_a", 32, 1024, 0, 0, 8, 4, 1, 0}, {"rowsum_b", 64, 4096, 0, 0, 0, 16, 1, 0}});
        store.addForecast(a.id, forecastPeakingAt(2, 0.5));
        const Forecast latest = forecastPeakingAt(6, 0.7);
        store.addForecast(a.id, latest);
        store.addEvent(runId, "gating", {{"candidate", a.id}, {"decision", "measure"}, {"reason", "promising"}});
        store.addMeasurement(a.id, measured(Status::Timeout, 0, 0, "past its deadline"));
        store.addMeasurement(a.id, measured(Status::Ok, 1.8, 12.5));
        // b: trusted; c: discarded, then a person forced a measurement that found it incorrect.
        store.addForecast(b.id, forecastPeakingAt(5, 0.9));
        store.addEvent(runId, "gating", {{"candidate", b.id}, {"decision", "trust"}, {"reason", "sure"}});
        store.addForecast(c.id, forecastPeakingAt(1, 0.95));
        store.addEvent(runId, "gating", {{"candidate", c.id}, {"decision", "discard"}});
        store.addEvent(runId, "gating", {{"candidate", c.id}, {"decision", "forced"}});
        store.addMeasurement(c.id, measured(Status::Incorrect, 0, 0, "output 17 differs by 3.2"));
        // Events that name no known candidate or decision change nothing.
        store.addEvent(runId, "gating", {{"candidate_id", 9999}, {"decision", "trust"}});
        store.addEvent(runId, "gating", {{"candidate_id", d.id}, {"decision", "maybe"}});
        store.addEvent(runId, "pause", nlohmann::json::object());

        const std::vector<CandidateRow> rows = rowsFromStore(store, runId);
        QCOMPARE(rows.size(), size_t{6});
        QList<int64_t> ids;
        for (const auto& r : rows)
            ids << r.id;
        QCOMPARE(ids, (QList<int64_t>{reference.id, seed.id, a.id, b.id, c.id, d.id}));
        for (const auto& r : rows)
            QCOMPARE(r.run_id, runId);

        const CandidateRow& ra = rows[2];
        QCOMPARE(ra.parent_id, seed.id);
        QCOMPARE(ra.generation, 1);
        QCOMPARE(ra.mutator, Mutator::LlmRewrite);
        QCOMPARE(ra.label, QStringLiteral("rewrite a"));
        QCOMPARE(ra.source_hash, QString::fromStdString(a.source_hash));
        QVERIFY(!ra.source_hash.isEmpty());
        QCOMPARE(ra.status, QStringLiteral("ok"));
        QCOMPARE(ra.decision, std::optional<GatingDecision>(GatingDecision::Measure));
        QCOMPARE(ra.predicted_bin, 6);
        QCOMPARE(ra.confidence, 0.7);
        QCOMPARE(ra.expected_log_speedup, latest.expectedLogSpeedup(BinScheme::gfV2()));
        QCOMPARE(ra.probabilities, latest.probabilities);
        QCOMPARE(ra.measured_speedup, std::optional<double>(1.8));
        QCOMPARE(ra.time_us, std::optional<double>(12.5));
        QCOMPARE(ra.registers, 64);
        QCOMPARE(ra.smem_bytes, 4096);
        QCOMPARE(ra.spills, 28);

        const CandidateRow& rb = rows[3];
        QCOMPARE(rb.status, QStringLiteral("trusted"));
        QCOMPARE(rb.reason, QStringLiteral("sure"));
        QVERIFY(!rb.measured_speedup);
        QVERIFY(!rb.isMeasured());

        const CandidateRow& rc = rows[4];
        QCOMPARE(rc.status, QStringLiteral("incorrect"));
        QCOMPARE(rc.decision, std::optional<GatingDecision>(GatingDecision::Forced));
        QCOMPARE(rc.reason, QStringLiteral("output 17 differs by 3.2"));
        QVERIFY(!rc.measured_speedup);
        QVERIFY(isFailureStatus(rc.status));

        const CandidateRow& rd = rows[5];
        QCOMPARE(rd.status, QStringLiteral("proposed"));
        QVERIFY(!rd.decision);
        QVERIFY(!rd.hasForecast());
        QCOMPARE(rd.registers, 0);

        QCOMPARE(rows[0].mutator, Mutator::Reference);
        QCOMPARE(rows[0].parent_id, int64_t{0});

        // The same rows, then the live events of the run on top: update-or-insert.
        CandidateRowSet set;
        for (const auto& r : rows)
            set.upsert(r);
        QCOMPARE(set.apply(gatingEvent(d.id, GatingDecision::Measure)), 5);
        QCOMPARE(set.find(d.id)->status, QStringLiteral("queued"));
        QCOMPARE(set.apply(measuredEvent(b.id, Status::Ok, 2.5)), 3);
        QCOMPARE(set.find(b.id)->status, QStringLiteral("ok"));
        QCOMPARE(set.find(b.id)->measured_speedup, std::optional<double>(2.5));
        QCOMPARE(set.find(b.id)->time_us, std::optional<double>(8.0));
        const int64_t fresh = c.id + 100;
        QCOMPARE(set.apply(proposed(fresh, c.id)), 6);
        QCOMPARE(set.size(), size_t{7});
        QCOMPARE(set.indexOf(fresh), 6);
        QCOMPARE(set.find(fresh)->parent_id, c.id);
        QCOMPARE(set.find(fresh)->registers, 40);
        QCOMPARE(set.find(fresh)->smem_bytes, 2048);
        QCOMPARE(set.find(fresh)->source_hash, QStringLiteral("abc%1").arg(fresh));
    }

    void missingRunHasNoRows() {
        auto store = RunStore::create(m_dir.filePath(QStringLiteral("empty.sqlite")).toStdString());
        QVERIFY(rowsFromStore(store, 42).empty());
    }

    // The status a row shows after a sequence of the runner's events.
    void eventsMoveTheStatusForward_data() {
        QTest::addColumn<std::vector<SearchEvent>>("events");
        QTest::addColumn<QString>("status");
        QTest::addColumn<double>("speedup");  // 0: none

        QTest::newRow("proposed") << std::vector{proposed(7, 1)} << "proposed" << 0.0;
        QTest::newRow("did not compile") << std::vector{proposed(7, 1, "kernel.cu:3: error: expected ';'")}
                                         << "compile_error" << 0.0;
        QTest::newRow("forecast") << std::vector{proposed(7, 1), forecastEvent(7, 6, 0.5)} << "forecast" << 0.0;
        QTest::newRow("trusted") << std::vector{proposed(7, 1), forecastEvent(7, 6, 0.9),
                                                gatingEvent(7, GatingDecision::Trust)}
                                 << "trusted" << 0.0;
        QTest::newRow("discarded") << std::vector{proposed(7, 1), forecastEvent(7, 1, 0.9),
                                                  gatingEvent(7, GatingDecision::Discard)}
                                   << "discarded" << 0.0;
        QTest::newRow("audited") << std::vector{proposed(7, 1), forecastEvent(7, 6, 0.9),
                                                gatingEvent(7, GatingDecision::Audit)}
                                 << "queued" << 0.0;
        QTest::newRow("measured") << std::vector{proposed(7, 1), forecastEvent(7, 6, 0.4),
                                                 gatingEvent(7, GatingDecision::Measure),
                                                 measuredEvent(7, Status::Ok, 1.6)}
                                  << "ok" << 1.6;
        QTest::newRow("suspect keeps its speedup")
            << std::vector{proposed(7, 1), measuredEvent(7, Status::Suspect, 40.0)} << "suspect" << 40.0;
        QTest::newRow("crashed") << std::vector{proposed(7, 1), measuredEvent(7, Status::Crashed, 0)} << "crashed"
                                 << 0.0;
        QTest::newRow("forced after trust")
            << std::vector{proposed(7, 1), forecastEvent(7, 6, 0.9), gatingEvent(7, GatingDecision::Trust),
                           gatingEvent(7, GatingDecision::Forced)}
            << "queued" << 0.0;
        // Late events must not undo a measurement.
        QTest::newRow("forecast after measurement")
            << std::vector{proposed(7, 1), measuredEvent(7, Status::Ok, 1.2), forecastEvent(7, 3, 0.6)} << "ok" << 1.2;
        QTest::newRow("gating after measurement")
            << std::vector{proposed(7, 1), measuredEvent(7, Status::Ok, 1.2), gatingEvent(7, GatingDecision::Discard)}
            << "ok" << 1.2;
        // Update-or-insert: a forecast for a row not seen yet creates it.
        QTest::newRow("forecast first") << std::vector{forecastEvent(7, 4, 0.5)} << "forecast" << 0.0;
    }
    void eventsMoveTheStatusForward() {
        QFETCH(std::vector<SearchEvent>, events);
        QFETCH(QString, status);
        QFETCH(double, speedup);
        CandidateRowSet set;
        for (const auto& e : events)
            QCOMPARE(set.apply(e), 0);
        QCOMPARE(set.size(), size_t{1});
        const CandidateRow& row = set[0];
        QCOMPARE(row.id, int64_t{7});
        QCOMPARE(row.run_id, int64_t{1});
        QCOMPARE(row.status, status);
        QCOMPARE(row.measured_speedup.value_or(0.0), speedup);
    }

    void eventsThatChangeNoRow_data() {
        QTest::addColumn<int>("kind");
        QTest::newRow("new best") << int(SearchEvent::Kind::NewBest);
        QTest::newRow("progress") << int(SearchEvent::Kind::Progress);
        QTest::newRow("command") << int(SearchEvent::Kind::Command);
        QTest::newRow("finished") << int(SearchEvent::Kind::Finished);
        QTest::newRow("forecast without one") << int(SearchEvent::Kind::Forecast);
        QTest::newRow("gating without decision") << int(SearchEvent::Kind::Gating);
        QTest::newRow("measured without measurement") << int(SearchEvent::Kind::Measured);
    }
    void eventsThatChangeNoRow() {
        QFETCH(int, kind);
        CandidateRowSet set;
        QCOMPARE(set.apply(proposed(3, 0)), 0);
        const CandidateRow before = set[0];
        QCOMPARE(set.apply(makeEvent(static_cast<SearchEvent::Kind>(kind), 3)), -1);
        QCOMPARE(set.apply(makeEvent(static_cast<SearchEvent::Kind>(kind), 4)), -1);
        QCOMPARE(set.size(), size_t{1});
        QCOMPARE(set[0].status, before.status);
    }

    void compileErrorKeepsTheLog() {
        CandidateRowSet set;
        set.apply(proposed(5, 1, "kernel.cu:3: error: expected ';'"));
        QCOMPARE(set[0].status, QStringLiteral("compile_error"));
        QCOMPARE(set[0].reason, QStringLiteral("kernel.cu:3: error: expected ';'"));
        QVERIFY(isMeasuredStatus(set[0].status));
        QCOMPARE(set[0].registers, 0);
    }

    // A family configuration compiled only when measured (search --static-reports measured) is proposed without a
    // static report; its registers and shared memory arrive with the measurement.
    void aStaticReportMayComeWithTheMeasurement() {
        CandidateRowSet set;
        SearchEvent p = proposed(7, 1);
        p.static_report.clear();
        set.apply(p);
        QCOMPARE(set[0].registers, 0);
        SearchEvent m = measuredEvent(7, Status::Ok, 1.5);
        m.static_report = {{"k", 96, 4096, 0, 0, 0, 0, 1, 0}};
        set.apply(m);
        QCOMPARE(set[0].registers, 96);
        QCOMPARE(set[0].smem_bytes, 4096);
        set.apply(measuredEvent(7, Status::Ok, 1.5));  // a measurement without one keeps what the row has
        QCOMPARE(set[0].registers, 96);
    }

    void statusVocabulary() {
        const QStringList all = candidateStatuses();
        for (const char* name : {"proposed", "forecast", "trusted", "discarded", "queued", "measuring", "ok",
                                 "compile_error", "incorrect", "crashed", "timeout", "suspect", "not_recorded"})
            QVERIFY2(all.contains(QLatin1String(name)), name);
        int previous = 0;
        for (const QString& s : all) {
            QVERIFY2(candidateStatusStage(s) >= previous, qPrintable(s));
            previous = candidateStatusStage(s);
        }
        for (GatingDecision d : {GatingDecision::Measure, GatingDecision::Trust, GatingDecision::Audit,
                                 GatingDecision::Discard, GatingDecision::Forced})
            QCOMPARE(gatingDecisionFromName(gatingDecisionName(d)), std::optional<GatingDecision>(d));
        QVERIFY(!gatingDecisionFromName(QStringLiteral("Trust")));
    }
};

QTEST_GUILESS_MAIN(TestCandidateRow)
#include "tst_candidate_row.moc"
