// A suspect result (a time below the roofline floor) stays out of the elite archive until a person accepts it:
// with `kerncast-cli review` on a run file (read when the run is resumed) or with a steering command in a live run.
// The device here is the replay device with one program's answers turned suspect, so the runs are real searches
// over a real recording.
#include "core/run_store.h"
#include "core/suspect_review.h"
#include "engine/cli/cli.h"
#include "engine/device.h"
#include "engine/search/mutators.h"
#include "engine/search/search_runner.h"
#include "tests/support/cli_runner.h"

#include <QTemporaryDir>
#include <QtTest>

#include <nlohmann/json.hpp>

using namespace kerncast;
using kerncast::test::run_cli;

namespace {

// The replay device, but the program `suspect` (source and tunables) comes back suspect instead of ok.
class SuspectingDevice : public Device {
public:
    SuspectingDevice(std::unique_ptr<Device> inner, Candidate suspect)
        : m_inner(std::move(inner)), m_suspect(std::move(suspect)) {}
    std::string id() const override { return m_inner->id(); }
    DeviceFingerprint fingerprint() const override { return m_inner->fingerprint(); }
    MeasureOutcome measure(const MeasureRequest& request, const ProgressFn& progress) override {
        MeasureOutcome o = m_inner->measure(request, progress);
        if (o.measurement.status == Status::Ok && request.candidate.source == m_suspect.source &&
            request.candidate.tunables == m_suspect.tunables) {
            o.measurement.status = Status::Suspect;
            o.measurement.reason = "the candidate's median is below the roofline floor";
        }
        return o;
    }

private:
    std::unique_ptr<Device> m_inner;
    Candidate m_suspect;
};

SearchConfig config(int64_t budget) {
    SearchConfig c;
    c.problem_dir = cli::resources_dir() + "/problems/saxpy";
    c.device = "replay:nvidia-h200";
    c.surrogate = "none";
    c.gating.kind = GatingKind::MeasureAll;
    c.budgets.measurements = budget;
    c.seed = 3;
    return c;
}

std::unique_ptr<SearchRunner> runner(const std::string& path, bool resume, const Candidate& suspect,
                                     int64_t budget = 14) {
    std::vector<std::unique_ptr<CandidateMutator>> mutators;
    mutators.push_back(std::make_unique<ParametricMutator>());
    return std::make_unique<SearchRunner>(
        config(budget), path, resume,
        std::make_unique<SuspectingDevice>(open_device("replay:nvidia-h200", cli::resources_dir()), suspect), nullptr,
        std::move(mutators));
}

int64_t candidateWithSource(const std::string& path, const Candidate& program) {
    RunStore store = RunStore::open(path);
    for (const Candidate& c : store.candidates(store.runs().back().id))
        if (c.source == program.source && c.tunables == program.tunables)
            return c.id;
    return 0;
}

}  // namespace

class TestSuspectReview : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_dir;
    Candidate m_best;  // the best program of an honest search
    double m_bestSpeedup = 0;

private Q_SLOTS:
    void initTestCase() {
        QVERIFY(m_dir.isValid());
        const std::string path = m_dir.filePath("honest.sqlite").toStdString();
        auto honest = make_search_runner(config(14), cli::resources_dir(), path, false);
        const SearchSummary s = honest->runHere();
        QCOMPARE(s.state, RunState::Finished);
        RunStore store = RunStore::open(path);
        m_best = *store.candidate(s.best_candidate);
        m_bestSpeedup = s.best_speedup;
        QVERIFY(m_best.mutator != Mutator::Reference);
    }

    // The same search where the best program is suspect: it never becomes the best, nor a parent; accepting it
    // with the CLI admits it when the run is resumed, rejecting it afterwards takes it out again.
    void suspectStaysOutUntilAcceptedOnResume() {
        const std::string path = m_dir.filePath("suspect.sqlite").toStdString();
        const SearchSummary first = runner(path, false, m_best)->runHere();
        QCOMPARE(first.state, RunState::Finished);
        const int64_t suspect = candidateWithSource(path, m_best);
        QVERIFY2(suspect != 0, "the suspect program was not measured");
        QVERIFY(first.best_candidate != suspect);
        {
            RunStore store = RunStore::open(path);
            QCOMPARE(store.measurementsFor(suspect).back().measurement.status, Status::Suspect);
            for (const Candidate& c : store.candidates(first.run_id))
                QVERIFY2(c.parent_id != suspect, "a suspect result was used as a parent");
        }

        // Resuming without a review changes nothing.
        const SearchSummary unchanged = runner(path, true, m_best)->runHere();
        QCOMPARE(unchanged.best_candidate, first.best_candidate);

        const auto accepted =
            run_cli({"--json", "review", "--run", path, "--candidate", std::to_string(suspect), "--accept"});
        QCOMPARE(accepted.code, 0);
        const auto j = nlohmann::json::parse(accepted.out);
        QCOMPARE(j["verdict"].get<std::string>(), std::string("accepted"));
        QCOMPARE(j["candidate"].get<int64_t>(), suspect);

        const SearchSummary resumed = runner(path, true, m_best)->runHere();
        QCOMPARE(resumed.best_speedup, std::max(first.best_speedup, m_bestSpeedup));
        if (m_bestSpeedup > first.best_speedup)
            QCOMPARE(resumed.best_candidate, suspect);

        QCOMPARE(run_cli({"review", "--run", path, "--candidate", std::to_string(suspect), "--reject"}).code, 0);
        const SearchSummary rejected = runner(path, true, m_best)->runHere();
        QVERIFY(rejected.best_candidate != suspect);
        QCOMPARE(rejected.best_speedup, first.best_speedup);

        // Every verdict is in the log, in order.
        RunStore store = RunStore::open(path);
        std::vector<std::string> verdicts;
        for (const RunEvent& e : store.events(first.run_id))
            if (e.kind == "review")
                verdicts.push_back(e.payload.value("verdict", std::string()));
        QCOMPARE(verdicts, (std::vector<std::string>{"accepted", "rejected"}));
        QVERIFY(accepted_suspects(store.events(first.run_id)).empty());
    }

    // Only suspect results are reviewed, and the CLI says why it refuses.
    void reviewRefusesWhatIsNotSuspect() {
        const std::string path = m_dir.filePath("honest.sqlite").toStdString();
        RunStore store = RunStore::open(path);
        const auto cands = store.candidates(store.runs().back().id);
        const auto r = run_cli({"review", "--run", path, "--candidate", std::to_string(cands.front().id), "--accept"});
        QCOMPARE(r.code, 1);
        QVERIFY2(r.err.find("measurement is ok, not suspect") != std::string::npos, r.err.c_str());
        const auto missing = run_cli({"review", "--run", path, "--candidate", "999999", "--reject"});
        QCOMPARE(missing.code, 1);
        QVERIFY2(missing.err.find("candidate 999999 is not in this run file") != std::string::npos,
                 missing.err.c_str());
        const auto neither = run_cli({"review", "--run", path, "--candidate", "1"});
        QVERIFY(neither.code != 0);
        QVERIFY2(neither.err.find("--accept or --reject") != std::string::npos, neither.err.c_str());
        const auto both = run_cli({"review", "--run", path, "--candidate", "1", "--accept", "--reject"});
        QVERIFY(both.code != 0);
        for (const RunEvent& e : store.events(store.runs().back().id))
            QVERIFY2(e.kind != "review", "a refused review was recorded");
    }

    // In a live run a person's acceptance (a steering command, as the workbench sends it) admits the result at once.
    void liveAcceptanceAdmitsAtOnce() {
        const std::string path = m_dir.filePath("live.sqlite").toStdString();
        auto live = runner(path, false, m_best);
        SearchRunner* r = live.get();
        bool posted = false;
        live->setEventCallback([&](const SearchEvent& e) {
            if (e.kind == SearchEvent::Kind::Measured && e.measurement && e.measurement->status == Status::Suspect &&
                !posted) {
                SearchCommand c;
                c.kind = SearchCommand::Kind::Review;
                c.candidate_id = e.candidate_id;
                c.accept = true;
                r->post(c);
                posted = true;
            }
        });
        const SearchSummary s = live->runHere();
        QVERIFY(posted);
        QVERIFY(s.best_speedup >= m_bestSpeedup);
        RunStore store = RunStore::open(path);
        QCOMPARE(accepted_suspects(store.events(s.run_id)).size(), size_t(1));
    }
};

QTEST_GUILESS_MAIN(TestSuspectReview)
#include "tst_suspect_review.moc"
