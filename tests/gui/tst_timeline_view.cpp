// The device dock's timeline: a lane for the search thread and one per worker, each span where its time was, a
// tooltip naming the span under the mouse, where the wall time went below, and the set-up step before the first
// candidate; it polls the timeline while the search runs and keeps what it shows once frozen.
#include "widgets/timeline_view.h"

#include <QLabel>
#include <QTest>

#include <chrono>
#include <thread>

using namespace kerncast;

class TestTimelineView : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void drawsTheSearchThreadAndEachWorker() {
        auto timeline = std::make_shared<Timeline>();
        {
            const Timeline::Scope scope(timeline.get(), TimelinePhase::Forecast);
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
        TimelineView view;
        view.resize(600, 200);
        // Worker 2 verifies from the start until now, worker 1 measured in the first half.
        const double now = timeline->now();
        timeline->addMeasurement("cuda:1 on local, worker 2", 5, 0.0, now, 0.004, 0, now * 1000, 0);
        timeline->addMeasurement("cuda:0 on local, worker 1", 4, 0.0, now / 2, 0.0, 0, 0, 0);
        view.setTimeline(timeline);
        view.freeze();  // drawn as it is now: the positions below do not move with a later poll
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QVERIFY(view.isVisible());
        QCOMPARE(view.lanes(), (QStringList{QStringLiteral("search"), QStringLiteral("cuda:0 on local, worker 1"),
                                            QStringLiteral("cuda:1 on local, worker 2")}));
        QCOMPARE(view.spans().size(), timeline->spans().size());
        const QString summary = view.summaryText();
        QVERIFY2(summary.contains(QStringLiteral("2 measurements")), qPrintable(summary));
        QVERIFY2(summary.contains(QStringLiteral("forecasting")), qPrintable(summary));
        QVERIFY2(summary.contains(QStringLiteral("Workers (2) busy")), qPrintable(summary));
        QVERIFY2(!summary.contains(QStringLiteral("Compiles")), qPrintable(summary));  // nothing compiled yet
        // The third lane (worker 2) is busy verifying over the whole width; the first lane is forecasting at the
        // start.
        QWidget* lanes = view.lanesWidget();
        const int lane = lanes->minimumHeight() / 3;
        QCOMPARE(view.phaseAt(QPoint(lanes->width() * 3 / 4, 2 + 2 * lane + lane / 2)), QStringLiteral("verify"));
        QCOMPARE(view.phaseAt(QPoint(lanes->width() / 4 + 2, 2 + lane / 2)), QStringLiteral("forecasting"));
        QVERIFY(view.phaseAt(QPoint(lanes->width() - 2, 2 + lane + lane / 2)).isEmpty());  // worker 1 was done
    }

    // The search's compile counts, as the search thread sets them on the timeline, and where the compiles ran.
    void saysWhatTheSearchCompiledAndWhere() {
        for (const auto& [helpers, expected] :
             {std::pair{int64_t(2),
                        "Compiles: 12 with NVRTC in 2 compile helper process(es), 30 found compiled already."},
              std::pair{int64_t(0), "Compiles: 12 with NVRTC in the engine's process, 30 found compiled already."}}) {
            auto timeline = std::make_shared<Timeline>();
            timeline->addMeasurement("cuda:0 on local, worker 1", 1, 0.0, 0.01, 0.0, 0, 5, 0);
            timeline->setCompiles({12, 30, 4, helpers});
            TimelineView view;
            view.setTimeline(timeline);
            view.freeze();
            QVERIFY2(view.summaryText().contains(QString::fromUtf8(expected)), qPrintable(view.summaryText()));
        }
    }

    void showsTheSetupUntilTheFirstMeasurement() {
        auto timeline = std::make_shared<Timeline>();
        TimelineView view;
        view.setTimeline(timeline);
        view.showSetup(QStringLiteral("starting the GPU workers"));
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        auto* setup = view.findChild<QLabel*>(QStringLiteral("timelineSetup"));
        QVERIFY(setup->isVisible());
        QVERIFY(setup->text().contains(QStringLiteral("starting the GPU workers")));
        timeline->addMeasurement("replay worker 1", 1, 0, 0.001, 0, 0, 0, 0);
        view.poll();
        QVERIFY(!setup->isVisible());
    }

    // Each poll adds what the search recorded since the last one, and none runs while the view is hidden (the dock
    // behind another tab): showing it catches up. The same timeline given again starts from its first span.
    void pollsAddOnlyWhatIsNew() {
        auto timeline = std::make_shared<Timeline>();
        TimelineView view;
        view.setTimeline(timeline);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        timeline->addMeasurement("w", 1, 0, 0.001, 0, 0.5, 0, 0);
        view.hide();
        view.poll();
        QVERIFY(view.spans().empty());
        view.show();
        QCOMPARE(view.spans().size(), size_t(2));
        timeline->addMeasurement("w", 2, 0.002, 0.003, 0, 0, 0, 0);
        view.poll();
        view.poll();
        QCOMPARE(view.spans().size(), size_t(3));
        QCOMPARE(view.spans().back().candidate, int64_t(2));
        view.setTimeline(nullptr);
        view.setTimeline(timeline);
        QCOMPARE(view.spans().size(), size_t(3));
    }

    void frozenKeepsWhatItShowsAndNoneHides() {
        auto timeline = std::make_shared<Timeline>();
        TimelineView view;
        view.setTimeline(timeline);
        timeline->addMeasurement("w", 1, 0, 0.001, 0, 0, 0, 0);
        view.freeze();
        const QString frozen = view.summaryText();
        timeline->addMeasurement("w", 2, 0.002, 0.003, 0, 0, 0, 0);
        QTest::qWait(400);  // longer than the polling interval
        QCOMPARE(view.spans().size(), size_t(1));
        QCOMPARE(view.summaryText(), frozen);
        view.show();  // shown after the search ended (the dock was behind another tab): still the search's end
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QCOMPARE(view.spans().size(), size_t(1));
        QCOMPARE(view.summaryText(), frozen);
        view.setTimeline(nullptr);
        QVERIFY(view.isHidden());
    }
};

QTEST_MAIN(TestTimelineView)
#include "tst_timeline_view.moc"
