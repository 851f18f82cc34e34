// A search's timeline (engine/timeline.h): the search thread's phases never overlap and add up to its wall time (an
// inner phase pauses the outer one), a worker's measurement is laid out as its parts with the rest as the round trip,
// the summary counts what the spans hold, and the trace file is the Trace Event format Perfetto reads.
#include "engine/timeline.h"

#include <QTest>

#include <algorithm>
#include <chrono>
#include <set>
#include <thread>

using namespace kerncast;

namespace {

void pause_ms(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

}  // namespace

class TestTimeline : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void nestedPhasesNeverOverlapAndAddUpToTheWallTime() {
        Timeline t;
        {
            const Timeline::Scope outer(&t, TimelinePhase::Gating);
            pause_ms(3);
            {
                const Timeline::Scope inner(&t, TimelinePhase::Forecast);
                pause_ms(3);
                const Timeline::Scope store(&t, TimelinePhase::Store);
                pause_ms(2);
            }
            pause_ms(3);
        }
        t.setBatch(7);
        {
            const Timeline::Scope wait(&t, TimelinePhase::Wait);
            pause_ms(2);
        }
        const std::vector<TimelineSpan> all = t.spans();
        // Gating, forecast, store, gating again (after the inner ones), then waiting in batch 7; between the closing
        // of a scope and of the one around it a few microseconds go to the outer one, left out here.
        std::vector<TimelineSpan> spans;
        std::copy_if(all.begin(), all.end(), std::back_inserter(spans),
                     [](const TimelineSpan& s) { return s.end_s - s.start_s > 0.0005; });
        QCOMPARE(spans.size(), size_t(5));
        QCOMPARE(spans[0].phase, TimelinePhase::Gating);
        QCOMPARE(spans[1].phase, TimelinePhase::Forecast);
        QCOMPARE(spans[2].phase, TimelinePhase::Store);
        QCOMPARE(spans[3].phase, TimelinePhase::Gating);
        QCOMPARE(spans[4].phase, TimelinePhase::Wait);
        QCOMPARE(spans[4].batch, int64_t(7));
        for (size_t i = 0; i < all.size(); ++i) {
            QCOMPARE(all[i].lane, std::string("search"));
            QVERIFY(all[i].end_s > all[i].start_s);
            if (i > 0)
                QVERIFY2(all[i].start_s >= all[i - 1].end_s, "two phases of the search thread overlap");
        }
        const TimelineSummary s = t.summary();
        double sum = 0;
        for (const auto& [phase, seconds] : s.search_s)
            sum += seconds;
        QVERIFY(std::abs(sum - s.wall_s) < 1e-9);  // "other" takes what no phase covered
        QVERIFY(s.search_s.count(TimelinePhase::Other));
        QCOMPARE(s.measurements, int64_t(0));
        QVERIFY(s.workers.empty());
    }

    // A measurement the search thread makes itself counts whatever its span: an in-process replay device answers in
    // microseconds, and a span that short says nothing about how many were made.
    void measurementsOnTheSearchThreadAreCounted() {
        Timeline t;
        for (int i = 0; i < 3; ++i)
            t.noteSearchMeasurement();
        t.addMeasurement("w", 1, 0, 0.001, 0, 0, 0, 0);
        const TimelineSummary s = t.summary();
        QCOMPARE(s.measurements, int64_t(4));
        QCOMPARE(s.workers.size(), size_t(1));
        QCOMPARE(s.workers[0].measurements, int64_t(1));
    }

    void aNullTimelineRecordsNothing() {
        const Timeline::Scope scope(nullptr, TimelinePhase::Proposal);  // must not crash
        Timeline t;
        QVERIFY(t.spans().empty());
    }

    void aMeasurementIsItsPartsAndTheRoundTrip() {
        Timeline t;
        t.setBatch(3);
        // 100 ms taken, of which 20 compiling, 30 verifying, 40 timing: 10 left for the round trip.
        t.addMeasurement("cuda:0 on local, worker 1", 42, 1.0, 1.1, 0.25, 20, 30, 40);
        // A worker that reports more than it took: the parts are cut at its end.
        t.addMeasurement("cuda:1 on local, worker 2", 43, 1.0, 1.05, 0.0, 40, 40, 40);
        const auto spans = t.spans();
        std::vector<TimelineSpan> w1;
        std::copy_if(spans.begin(), spans.end(), std::back_inserter(w1),
                     [](const TimelineSpan& s) { return s.lane == "cuda:0 on local, worker 1"; });
        QCOMPARE(w1.size(), size_t(4));
        QCOMPARE(w1[0].phase, TimelinePhase::WorkerCompile);
        QCOMPARE(w1[1].phase, TimelinePhase::WorkerVerify);
        QCOMPARE(w1[2].phase, TimelinePhase::WorkerTime);
        QCOMPARE(w1[3].phase, TimelinePhase::WorkerTrip);
        QVERIFY(std::abs((w1[3].end_s - w1[3].start_s) - 0.010) < 1e-9);
        for (const auto& s : w1) {
            QCOMPARE(s.candidate, int64_t(42));
            QCOMPARE(s.batch, int64_t(3));
            QCOMPARE(s.queued_s, 0.25);
        }
        for (const auto& s : spans)
            QVERIFY2(s.end_s <= 1.1 + 1e-9, "a part runs past the end of its measurement");

        const TimelineSummary sum = t.summary();
        QCOMPARE(sum.measurements, int64_t(2));
        QCOMPARE(sum.workers.size(), size_t(2));
        QCOMPARE(sum.workers[0].measurements, int64_t(1));
        QVERIFY(std::abs(sum.workers[0].busy_s - 0.1) < 1e-9);
        QVERIFY(std::abs(sum.workers[1].busy_s - 0.05) < 1e-6);
        QVERIFY(std::abs(sum.mean_queued_s - 0.125) < 1e-9);
        const std::string text = format_summary(sum);
        QVERIFY2(text.find("cuda:0 on local, worker 1: 1 measurements") != std::string::npos, text.c_str());
        QVERIFY2(text.find("waited 0.125 s") != std::string::npos, text.c_str());
        QVERIFY2(text.find("compiles:") == std::string::npos, text.c_str());  // nothing compiled, nothing said
        TimelineSummary compiled = sum;
        compiled.compiles = {97, 3};
        QVERIFY(format_summary(compiled).find("compiles: 97 programs compiled with NVRTC in the engine's process, 3 "
                                              "requests found theirs compiled already") != std::string::npos);
        QCOMPARE(to_json(compiled)["compiles"]["found"].get<int64_t>(), int64_t(3));
        Timeline counted;
        counted.setCompiles({5, 2, 1, 3});
        QCOMPARE(counted.summary().compiles.compiled, int64_t(5));
        QCOMPARE(counted.summary().compiles.helpers, int64_t(3));
        compiled.compiles.helpers = 16;
        QVERIFY(format_summary(compiled).find("compiles: 97 programs compiled with NVRTC in 16 compile helper "
                                              "processes, 3 requests") != std::string::npos);
        QCOMPARE(to_json(compiled)["compiles"]["helpers"].get<int64_t>(), int64_t(16));
    }

    void spansFromGivesWhatCameAfter() {
        Timeline t;
        t.addMeasurement("w", 1, 0, 0.01, 0, 1, 1, 1);
        QCOMPARE(t.spansFrom(0).size(), size_t(4));
        QVERIFY(t.spansFrom(4).empty());
        QVERIFY(t.spansFrom(99).empty());
        t.addMeasurement("w", 2, 0.02, 0.03, 0, 0, 0, 0);
        const auto fresh = t.spansFrom(4);
        QCOMPARE(fresh.size(), size_t(1));  // no parts reported: all of it is the round trip
        QCOMPARE(fresh[0].candidate, int64_t(2));
    }

    void traceEventsAreWhatPerfettoReads() {
        Timeline t;
        {
            const Timeline::Scope scope(&t, TimelinePhase::Proposal);
            pause_ms(1);
        }
        t.addMeasurement("replay worker 1", 9, 0.0, 0.002, 0.001, 1, 0, 0);
        const nlohmann::json j = t.traceEvents();
        QVERIFY(j.contains("traceEvents") && j["traceEvents"].is_array());
        std::set<std::string> threads, names;
        for (const auto& e : j["traceEvents"]) {
            QVERIFY(e.contains("ph") && e.contains("pid") && e.contains("tid"));
            if (e["ph"] == "M") {
                QCOMPARE(e["name"].get<std::string>(), std::string("thread_name"));
                threads.insert(e["args"]["name"].get<std::string>());
            } else {
                QCOMPARE(e["ph"].get<std::string>(), std::string("X"));
                QVERIFY(e["ts"].is_number() && e["dur"].is_number() && e["dur"].get<double>() >= 0);
                names.insert(e["name"].get<std::string>());
            }
        }
        QCOMPARE(threads, (std::set<std::string>{"search", "replay worker 1"}));
        QVERIFY(names.count("proposal") && names.count("compile") && names.count("round trip"));
        QCOMPARE(j["summary"]["measurements"].get<int64_t>(), int64_t(1));
    }
};

QTEST_MAIN(TestTimeline)
#include "tst_timeline.moc"
