// The loop's measurements: one at a time or a batch on the device's pool (overlapped or not), applied in the
// batch's order, and what a measurement changes (archive, calibration, the surrogate's training, the best).

#include "engine/search/search_loop.h"

#include "engine/replay/replay_device.h"
#include "engine/worker/gpu_device.h"

#include <algorithm>
#include <cmath>

namespace kerncast::search_loop {

// A device that answers from recordings cannot measure a program it has no recording of (a kernel edited by hand):
// asking would only spend a measurement on not_recorded. The candidate says why instead.
bool Loop::deviceCanMeasure(int64_t id) {
    if (s.device->recordingsFolder().empty())
        return true;
    const Cand& c = s.cands.at(id);
    const auto rec = s.device->recording(s.bundle.problem.name);
    if (rec && rec->find(content_hash(c.c.source, c.c.tunables)))
        return true;
    recordGating(id, GatingDecision::Discard,
                 "not measured: " + s.device->id() +
                     " answers only the programs recorded on a GPU, and this one is not among them (no measurement "
                     "was spent); measure it on a GPU");
    return false;
}

ProgramRef measured_program(const Candidate& c) {
    ProgramRef p;
    p.source = c.source;
    p.tunables = c.tunables;
    p.file_name = c.label.rfind("seed:", 0) == 0 ? c.label.substr(5) : "candidate.cu";
    return p;
}

ProgramRef paired_reference(const ProblemBundle& bundle) {
    ProgramRef p;
    p.source = bundle.reference.source;
    p.file_name = "reference.cu";
    return p;
}

MeasureRequest Loop::requestFor(const Cand& c) const {
    MeasureRequest req;
    req.problem_dir = s.bundle.problem.dir;
    req.candidate = measured_program(c.c);
    req.reference = paired_reference(s.bundle);
    // A candidate that would become the new best is verified again on fresh inputs and timed again by the worker
    // (ARCHITECTURE §5), not only an implausible speedup: the best is what the search and its user act on.
    if (s.progress.best_speedup > 0)
        req.options.reverify_above = std::min(req.options.reverify_above, s.progress.best_speedup);
    return req;
}

void Loop::measure(int64_t id) {
    const Cand& c = s.cands.at(id);
    if (c.measurement)
        return;
    MeasureOutcome out;
    if (auto before = s.measured_before.find(c.c.source_hash);
        before != s.measured_before.end() && !before->second.empty()) {
        out.measurement = before->second.front();  // measured by the interrupted session after its checkpoint
        before->second.pop_front();
    } else {
        // On a pool the workers measure it (their timeline lanes, which count it); this thread waits.
        const bool pooled = s.device->batchPool() != nullptr;
        const auto in_phase = phase(pooled ? Phase::Wait : Phase::Measure);
        out = s.device->measure(requestFor(c));
        if (!pooled)
            s.timeline->noteSearchMeasurement();
    }
    applyMeasurement(id, out);
}

std::vector<int64_t> Loop::withinBudget(const std::vector<int64_t>& ids) const {
    std::vector<int64_t> todo;
    for (int64_t id : ids)
        if (!s.cands.at(id).measurement && std::find(todo.begin(), todo.end(), id) == todo.end() &&
            s.progress.measurements + s.inFlightCount() + static_cast<int64_t>(todo.size()) < cfg.budgets.measurements)
            todo.push_back(id);
    return todo;
}

// Where a family configuration is compiled only when it is measured (SearchConfig::static_reports "measured"), a
// batch's compiles start on the device's compile pool as soon as the batch is chosen, all at once: the device then
// finds each compiled (or joins the compile in flight) instead of compiling one after another as it measures. On an
// H200 with 16 CPUs, measuring the older hub convolution one compile after the other took 3.4 s per measurement
// (NVRTC takes 0.4 to 7.5 s for one of its configurations). A replay device compiles nothing.
// spare: candidates the search may measure soon, compiled in the pool's spare time (Compiler::compileSpare): the
// initial screen's configurations, while the first batch is measured. The screen chooses some of them as soon as that
// batch is applied and a pool measures them at once; compiled only then, every worker would wait for NVRTC (0.2 s for
// a softmax configuration) before its first screened measurement.
void Loop::compileAhead(const std::vector<int64_t>& ids, bool spare) {
    const std::shared_ptr<Compiler> pool = s.device->compilePool();
    if (!pool)
        return;
    for (int64_t id : ids) {
        const Cand& c = s.cands.at(id);
        if (c.measurement || !c.report.empty() || !c.compile_error.empty() || !reportAtMeasurement(c.c) ||
            measuredBefore({id}))
            continue;
        // A plan that does not parse is said by the device when it measures it. Either is kept in the pool's cache.
        CompileRequest request = measure_compile_request(measured_program(c.c), s.device->compileArch());
        if (spare)
            pool->compileSpare(std::move(request));
        else
            pool->compileAsync(std::move(request));
    }
}

void Loop::measureInOrder(const std::vector<int64_t>& ids) {
    const std::vector<int64_t> todo = withinBudget(ids);
    compileAhead(todo);
    auto* pool = s.device->batchPool();
    // What an interrupted session measured after its checkpoint is taken from the store, in this order: one by one.
    if (!pool || todo.size() < 2 || measuredBefore(todo)) {
        for (int64_t id : todo)
            measure(id);
        if (pool)
            recordPoolNotes(*pool);
        return;
    }
    applyPoolBatch(*pool, submitTo(*pool, todo), todo);
}

bool Loop::measuredBefore(const std::vector<int64_t>& ids) const {
    return std::any_of(ids.begin(), ids.end(), [&](int64_t id) {
        auto it = s.measured_before.find(s.cands.at(id).c.source_hash);
        return it != s.measured_before.end() && !it->second.empty();
    });
}

MeasurementPool::Ticket Loop::submitTo(MeasurementPool& pool, const std::vector<int64_t>& ids) {
    std::vector<MeasurementPool::Job> jobs;
    for (int64_t id : ids)
        jobs.push_back({requestFor(s.cands.at(id)), id});
    return pool.submit(std::move(jobs));
}

void Loop::applyPoolBatch(MeasurementPool& pool, MeasurementPool::Ticket ticket, const std::vector<int64_t>& ids) {
    const auto waiting = phase(Phase::Wait);
    pool.collect(
        ticket,
        [&](size_t i, MeasureOutcome& out) {
        const auto applying = phase(Phase::Other);
        recordPoolNotes(pool);
        applyMeasurement(ids[i], out);
        },
        [&](const PoolSnapshot& snapshot) {
        SearchEvent e;
        e.kind = SearchEvent::Kind::Pool;
        e.pool = snapshot;
        emit(std::move(e));
    });
    recordPoolNotes(pool);
}

SearchRunner::State::InFlight Loop::dispatch(const std::vector<int64_t>& ids, int64_t parent) {
    SearchRunner::State::InFlight batch;
    batch.parent = parent;
    batch.ids = withinBudget(ids);
    compileAhead(batch.ids);
    // What an interrupted session measured after its checkpoint comes from the store when the batch is applied.
    if (auto* pool = s.device->batchPool(); pool && !batch.ids.empty() && !measuredBefore(batch.ids))
        batch.ticket = submitTo(*pool, batch.ids);
    return batch;
}

// A batch is applied once the batches queued behind it hold SearchConfig::ahead measurements (twice the round by
// default): the workers then have that much to measure while the next iteration proposes, compiles, forecasts and
// gates. An iteration whose gate chose nothing leaves the batch before it in flight, rather than idle the workers while
// it chooses the next one. With one batch in flight, a pool of 2 H200s was idle for 40-50% of a search; with a round
// queued behind it, 4 H200s were still idle 40% of the time, mostly at a batch's last measurements. The rule depends
// on the batches alone, never on the workers' timing, so a search stays the same with one worker or many.
constexpr size_t kBatchesInFlight = 8;

void Loop::applyQueued() {
    const auto behind_oldest = [&] {
        int64_t n = 0;
        for (size_t i = 1; i < s.in_flight.size(); ++i)
            n += static_cast<int64_t>(s.in_flight[i].ids.size());
        return n;
    };
    while (s.in_flight.size() > 1 && (behind_oldest() >= cfg.aheadOrDefault() || s.in_flight.size() > kBatchesInFlight))
        finishInFlight();
}

void Loop::finishInFlight() {
    if (s.in_flight.empty())
        return;
    SearchRunner::State::InFlight batch = std::move(s.in_flight.front());
    s.in_flight.pop_front();
    const double best_before = s.progress.best_speedup;
    if (auto* pool = s.device->batchPool(); batch.ticket && pool)
        applyPoolBatch(*pool, *batch.ticket, batch.ids);
    else
        measureInOrder(batch.ids);
    if (batch.parent) {
        const bool improved = s.progress.best_speedup > best_before;
        s.strategy.noteExpanded(batch.parent, improved);
        s.store->addEvent(s.run_id, "expanded", {{"parent", batch.parent}, {"improved", improved}});
    }
}

// What the pool did (a worker lost and its candidate requeued, a worker retired) goes to the event log.
void Loop::recordPoolNotes(MeasurementPool& pool) {
    for (PoolNote& n : pool.takeNotes()) {
        s.store->addEvent(s.run_id, n.kind, n.payload);
        SearchEvent e;
        e.kind = SearchEvent::Kind::Pool;
        e.message = n.message;
        e.pool = pool.snapshot();
        emit(std::move(e));
    }
}

void Loop::applyMeasurement(int64_t id, MeasureOutcome& out) {
    Cand& c = s.cands.at(id);
    std::vector<StaticReport> shown;
    {
        const auto in_phase = phase(Phase::Store);
        s.rows.measurement = s.store->addMeasurement(id, out.measurement);
        c.measurement = out.measurement;
        if (c.report.empty() && !out.static_report.empty()) {
            // Stored for display; a resumed run builds the same forecast queries from it, or, where the report comes
            // only with the measurement, leaves it out of them as this run does (reportAtMeasurement).
            s.store->addStaticReports(id, out.static_report);
            if (reportAtMeasurement(c.c))
                shown = out.static_report;
            else
                c.report = out.static_report;
        }
    }
    ++s.progress.measurements;
    noteMeasured(id, false, std::move(shown));
}

void Loop::updateCalibration() {
    if (!s.scored.empty())
        s.progress.setCalibration(compute_metrics(s.scored, s.scheme));
    if (!s.scored_audited.empty())
        s.progress.setAuditedCalibration(compute_metrics(s.scored_audited, s.scheme));
}

// Book-keeping after a measurement (also when a resumed run replays its stored ones).
void Loop::noteMeasured(int64_t id, bool restoring, std::vector<StaticReport> shown) {
    Cand& c = s.cands.at(id);
    const Measurement& m = *c.measurement;
    const bool accepted = m.status == Status::Suspect && s.accepted_suspects.count(id);
    const bool ok = (m.status == Status::Ok || accepted) && m.speedup > 0 && std::isfinite(m.speedup);
    if (c.c.mutator == Mutator::Reference && m.candidate)
        s.reference_us = m.candidate->median_us;
    bool improved = false;
    if (ok) {
        improved = admit(id, m);
    } else {
        s.recent_failures.push_back(id);
    }
    if (m.device_kind != "compiler")
        s.trajectory.push_back({s.progress.measurements, s.progress.best_speedup});
    if (restoring)
        return;
    SearchEvent e;
    e.kind = SearchEvent::Kind::Measured;
    e.candidate_id = id;
    e.measurement = m;
    e.speedup = ok ? m.speedup : 0;
    e.static_report = std::move(shown);
    emit(std::move(e));
    if (improved)
        noteNewBest(id, m.speedup);
}

// A correct measurement (or an accepted suspect one) enters the archive, the calibration and the surrogate's
// training. True when it is the run's new best.
bool Loop::admit(int64_t id, const Measurement& m) {
    Cand& c = s.cands.at(id);
    bool improved = false;
    s.strategy.addMeasured(id, c.c.parent_id, m.speedup, expandable(c.c));
    if (m.speedup > s.progress.best_speedup) {
        s.progress.best_speedup = m.speedup;
        s.progress.best_candidate = id;
        improved = true;
    }
    if (c.forecast) {
        ScoredForecast sf;
        sf.probabilities = c.forecast->probabilities;
        // The forecast was of S against its anchor: score it against the measured S.
        sf.true_speedup = m.speedup / c.forecast->anchor_speedup;
        sf.pack = s.bundle.problem.name;
        s.scored.push_back(sf);
        // The audit share is a random sample of the candidates the gate trusted: the calibration it gives is not
        // skewed towards the unsure and promising ones that the gate chose to measure.
        if (c.decision == GatingDecision::Audit)
            s.scored_audited.push_back(sf);
        updateCalibration();
    }
    if (s.surrogate) {
        const auto in_phase = phase(Phase::Model);
        try {
            s.surrogate->learn({LabelledExample{queryFor(c), m.speedup}});
        } catch (const Error&) {
            // a query that cannot be built teaches nothing; the measurement itself is stored
        }
    }
    return improved;
}

void Loop::noteNewBest(int64_t id, double speedup) {
    s.store->addEvent(s.run_id, "new_best", {{"candidate", id}, {"speedup", speedup}});
    SearchEvent b;
    b.kind = SearchEvent::Kind::NewBest;
    b.candidate_id = id;
    b.speedup = speedup;
    emit(std::move(b));
}

}  // namespace kerncast::search_loop
