// The loop's children: their static reports (recorded or compiled), duplicates dropped, the examples the mutators
// see, and the LLM calls that proposed them counted.

#include "engine/search/search_loop.h"

#include "engine/replay/replay_device.h"
#include "engine/worker/gpu_device.h"

#include <algorithm>

namespace kerncast::search_loop {

MutationExample Loop::exampleOf(int64_t id) const {
    MutationExample e;
    const Cand& c = s.cands.at(id);
    e.candidate = c.c;
    e.static_report = c.report;
    if (c.measurement && c.measurement->status == Status::Ok)
        e.speedup = c.measurement->speedup;
    else if (!c.compile_error.empty())
        e.failure = c.compile_error;
    else if (c.measurement)
        e.failure = std::string(to_string(c.measurement->status)) + ": " + c.measurement->reason;
    return e;
}

// The static report: the recording's (made by the real compiler on the recording machine) when the replay device
// knows the program, else a real NVRTC/nvJitLink compile here. Started for every child of a batch before any is
// stored, so that the compiles run in parallel on the compiler's pool (one compile of a large kernel takes about a
// second, and a gated batch has dozens of children); the results are then taken in order, as before. With
// SearchConfig::static_reports "measured", a family configuration has none until it is measured.
Loop::ReportJob Loop::startStaticReport(const Candidate& c) {
    ReportJob job;
    if (reportAtMeasurement(c)) {
        job.recorded.emplace();  // none until it is measured (SearchConfig::static_reports)
        return job;
    }
    if (auto recorded = s.device->recordedStaticReport(s.bundle.problem.name, c.source_hash)) {
        job.recorded = std::move(*recorded);
        return job;
    }
    if (!s.compiler)
        s.compiler = s.device->compilePool();
    if (!s.compiler)
        s.compiler = std::make_shared<Compiler>();
    const ProgramRef program = measured_program(c);
    try {
        KernelProgram::parse(program.source, program.file_name);  // a plan that does not parse ends its path here
    } catch (const Error& e) {
        job.error = e.what();
        return job;
    }
    // What the device compiles when it measures the candidate (the same cache key): the compile is found there.
    job.compile = s.compiler->compileAsync(measure_compile_request(program, s.device->compileArch()));
    return job;
}

void Loop::finishStaticReport(Cand& c, ReportJob& job) {
    if (job.recorded) {
        c.report = std::move(*job.recorded);
        return;
    }
    if (!job.error.empty()) {
        c.compile_error = job.error;
        return;
    }
    const CompileResult& r = job.compile.get();
    if (!r.ok) {
        c.compile_error = r.log.empty() ? "compilation failed" : r.log;
        return;
    }
    c.report = r.kernels;
}

std::vector<int64_t> Loop::addChildren(std::vector<Candidate> children) {
    std::vector<int64_t> ids;
    s.last_added.clear();
    std::vector<ReportJob> reports;
    reports.reserve(children.size());
    for (auto& child : children) {
        if (child.source_hash.empty())
            child.source_hash = content_hash(child.source, child.tunables);
        reports.push_back(startStaticReport(child));
    }
    for (size_t i = 0; i < children.size(); ++i) {
        const Candidate& child = children[i];
        Cand c;
        c.c = child;
        {
            const auto in_phase = phase(Phase::Compile);
            finishStaticReport(c, reports[i]);
        }
        {
            const auto in_phase = phase(Phase::Store);
            auto tx = s.store->transaction();
            s.store->addCandidate(s.run_id, c.c);
            if (!c.report.empty())
                s.store->addStaticReports(c.c.id, c.report);
            int64_t measurement_row = 0;
            if (!c.compile_error.empty()) {
                Measurement m;
                m.status = Status::CompileError;
                m.reason = c.compile_error;
                m.device_kind = "compiler";
                measurement_row = s.store->addMeasurement(c.c.id, m);
                c.measurement = m;
            }
            tx.commit();
            s.rows.candidate = c.c.id;
            s.rows.measurement = std::max(s.rows.measurement, measurement_row);
        }
        s.seen.insert(c.c.source_hash);
        s.by_normalized.emplace(normalized_hash(c.c.source, c.c.tunables), c.c.id);
        s.last_added.push_back(c.c.id);
        if (c.c.mutator == Mutator::Reference)
            s.reference_report = c.report;
        ++s.progress.candidates;
        const int64_t id = c.c.id;
        s.cands[id] = c;
        SearchEvent e;
        e.kind = SearchEvent::Kind::CandidateProposed;
        e.candidate_id = id;
        e.candidate = c.c;
        e.static_report = c.report;
        e.compile_error = c.compile_error;
        emit(std::move(e));
        if (!c.compile_error.empty())
            s.recent_failures.push_back(id);
        else
            ids.push_back(id);
    }
    return ids;
}

std::vector<Candidate> Loop::dropDuplicates(std::vector<Candidate> children, std::vector<std::optional<LlmCall>>& calls,
                                            int64_t parent, std::vector<bool>* dropped) {
    if (dropped)
        dropped->assign(children.size(), false);
    std::vector<Candidate> kept;
    std::vector<std::optional<LlmCall>> kept_calls;
    std::map<std::string, size_t> batch;  // normalized hash -> index in kept
    for (size_t i = 0; i < children.size(); ++i) {
        const std::string key = normalized_hash(children[i].source, children[i].tunables);
        int64_t original = 0;
        if (auto it = s.by_normalized.find(key); it != s.by_normalized.end())
            original = it->second;
        if (!original && !batch.count(key)) {
            batch[key] = kept.size();
            kept.push_back(std::move(children[i]));
            kept_calls.push_back(std::move(calls[i]));
            continue;
        }
        ++s.progress.duplicates;
        if (dropped)
            (*dropped)[i] = true;
        nlohmann::json payload = {{"parent", parent},
                                  {"mutator", to_string(children[i].mutator)},
                                  {"label", children[i].label},
                                  {"source_hash", content_hash(children[i].source, children[i].tunables)}};
        if (original)
            payload["original"] = original;
        else
            payload["original_in_batch"] = batch[key];  // its id is known once the batch is stored
        s.store->addEvent(s.run_id, "duplicate", payload);
        if (calls[i]) {
            calls[i]->outcome = "duplicate";
            calls[i]->error = original ? "duplicate of candidate " + std::to_string(original)
                                       : "duplicate of another answer in the same batch";
            recordLlmCalls({*calls[i]}, 0);
        }
    }
    calls = std::move(kept_calls);
    return kept;
}

void Loop::recordLlmCalls(std::vector<LlmCall> calls, int64_t candidate_id) {
    for (LlmCall& call : calls) {
        call.candidate_id = candidate_id;
        s.store->addLlmCall(s.run_id, call);
        ++s.progress.llm_calls;
        s.progress.tokens += call.tokens_in + call.tokens_out;
        s.progress.cost_usd += call.cost_usd;
        s.progress.llm_truncated += call.outcome == "truncated";
        noteSpend(call);
    }
    noteRequestShapes();
}

void Loop::noteSpend(const LlmCall& call) {
    LlmSpend& spend = call.kind == "forecast"         ? s.progress.llm_forecast
                      : call.kind == "mutate_rewrite" ? s.progress.llm_rewrite
                                                      : s.progress.llm_diff;
    ++spend.calls;
    spend.tokens += call.tokens_in + call.tokens_out;
    spend.cost_usd += call.cost_usd;
    spend.duplicates += call.outcome == "duplicate";
    SearchRunner::State::Spend& largest = call.kind == "forecast" ? s.forecast_call_max : s.llm_call_max;
    largest.tokens = std::max(largest.tokens, call.tokens_in + call.tokens_out);
    largest.cost_usd = std::max(largest.cost_usd, call.cost_usd);
    if (call.kind == "forecast")
        s.forecast_call_known = true;
}

void Loop::noteRequestShapes() {
    if (!s.shapes)
        return;
    for (const auto& change : s.shapes->takeChanges())
        s.store->addEvent(
            s.run_id, "llm_request_shape",
            {{"endpoint", change.endpoint}, {"model", change.model}, {"shape", change.shape}, {"why", change.why}});
}

}  // namespace kerncast::search_loop
