// The loop's steering commands (SearchRunner::post()): pause, step, stop, pin and ban, submitted kernels, forced
// measurements, gating changes and reviews, applied between steps.

#include "engine/search/search_loop.h"

#include "core/suspect_review.h"

#include <algorithm>

namespace kerncast::search_loop {

void Loop::applyCommands() {
    while (true) {
        std::deque<SearchCommand> batch;
        {
            std::unique_lock<std::mutex> lock(s.mutex);
            const bool waits = s.commands.empty() && s.paused && s.steps_allowed == 0 && !s.stop_requested;
            if (!s.in_flight.empty() && (!s.commands.empty() || waits)) {
                // Commands and pauses come between batches: those in flight are applied first.
                lock.unlock();
                finishInFlight();
                checkpoint();
                continue;
            }
            if (s.commands.empty()) {
                if (!s.paused || s.steps_allowed > 0 || s.stop_requested)
                    return;
                s.progress.state = RunState::Paused;
                const auto paused_at = std::chrono::steady_clock::now();
                s.cv.wait(lock, [&] { return !s.commands.empty(); });
                // Time spent paused is not search time: the elapsed time and the wall-time budget leave it out.
                s.started += std::chrono::steady_clock::now() - paused_at;
            }
            batch.swap(s.commands);
        }
        for (const auto& c : batch)
            applyCommand(c);
        checkpoint();  // so that a resumed run keeps the commands (it goes back to its last checkpoint)
        s.progress.state = s.paused ? RunState::Paused : RunState::Running;
    }
}

void Loop::applyCommand(const SearchCommand& c) {
    using K = SearchCommand::Kind;
    nlohmann::json payload = nlohmann::json::object();
    std::string message = to_string(c.kind);
    switch (c.kind) {
    case K::Pause:
        s.paused = true;
        s.progress.state = RunState::Paused;  // the command's event says so
        break;
    case K::Resume:
        s.paused = false;
        s.progress.state = RunState::Running;
        break;
    case K::Step:
        ++s.steps_allowed;
        break;
    case K::Stop:
        s.stop_requested = true;
        s.end_reason = "stopped by request";
        break;
    case K::Pin:
        s.strategy.pin(c.candidate_id);
        payload["candidate"] = c.candidate_id;
        break;
    case K::Unpin:
        s.strategy.unpin();
        break;
    case K::Ban:
        s.strategy.ban(c.candidate_id);
        payload["candidate"] = c.candidate_id;
        break;
    case K::Unban:
        s.strategy.unban(c.candidate_id);
        payload["candidate"] = c.candidate_id;
        break;
    case K::SetGating:
        s.gating = c.gating;
        payload["gating"] = c.gating;
        message += ": " + describe(c.gating);
        break;
    case K::SubmitKernel:
    case K::ForceMeasure:
    case K::Review:
        break;
    }
    if (c.kind == K::Review)
        return review(c);
    if (c.kind == K::SubmitKernel) {
        payload = {{"parent", c.candidate_id}, {"source_chars", c.source.size()}};
        s.store->addEvent(s.run_id, to_string(c.kind), payload);
        emitSimple(SearchEvent::Kind::Command, message);
        Candidate child;
        child.mutator = Mutator::Human;
        child.label = "submitted by hand";
        child.source = c.source;
        child.tunables = c.tunables;
        child.parent_id = s.cands.count(c.candidate_id) ? c.candidate_id : 0;
        child.generation = child.parent_id ? s.cands.at(child.parent_id).c.generation + 1 : 0;
        // A kernel a person wrote is forecast (for the record) and measured whatever the gate says of it: the gate
        // chooses among the search's own children, not for the person.
        const std::vector<int64_t> ids = addChildren({child});
        std::vector<int64_t> chosen = gate(ids, false);
        for (int64_t id : ids)
            if (std::find(chosen.begin(), chosen.end(), id) == chosen.end()) {
                recordGating(id, GatingDecision::Forced, "submitted by hand: measured whatever its forecast");
                chosen.push_back(id);
            }
        std::vector<int64_t> measurable;
        for (int64_t id : chosen)
            if (deviceCanMeasure(id))
                measurable.push_back(id);
        measureInOrder(measurable);
        return;
    }
    if (c.kind == K::ForceMeasure) {
        payload["candidate"] = c.candidate_id;
        auto it = s.cands.find(c.candidate_id);
        if (it == s.cands.end() || it->second.measurement) {
            payload["ignored"] = it == s.cands.end() ? "no such candidate in this run" : "already measured";
            s.store->addEvent(s.run_id, to_string(c.kind), payload);
            emitSimple(SearchEvent::Kind::Command, message + " ignored: " + payload["ignored"].get<std::string>());
            return;
        }
        s.store->addEvent(s.run_id, to_string(c.kind), payload);
        emitSimple(SearchEvent::Kind::Command, message);
        recordGating(c.candidate_id, GatingDecision::Forced, "forced by a person");
        if (measurementsLeft() && deviceCanMeasure(c.candidate_id))
            measure(c.candidate_id);
        return;
    }
    s.store->addEvent(s.run_id, to_string(c.kind), payload);
    emitSimple(SearchEvent::Kind::Command, message);
}

// A person's verdict on a suspect result, recorded as a "review" event; an accepted one enters the archive now.
void Loop::review(const SearchCommand& c) {
    try {
        const SuspectReview r = record_suspect_review(*s.store, s.run_id, c.candidate_id, c.accept);
        emitSimple(SearchEvent::Kind::Command, std::string("review: candidate ") + std::to_string(c.candidate_id) +
                                                   (r.accepted ? " accepted" : " rejected"));
        if (!r.accepted || s.accepted_suspects.count(c.candidate_id)) {
            if (!r.accepted && s.accepted_suspects.erase(c.candidate_id))
                emitSimple(SearchEvent::Kind::Command, "review: candidate " + std::to_string(c.candidate_id) +
                                                           " stays in the archive until the run is resumed");
            return;
        }
        s.accepted_suspects.insert(c.candidate_id);
        Cand& cand = s.cands.at(c.candidate_id);
        if (admit(c.candidate_id, *cand.measurement))
            noteNewBest(c.candidate_id, cand.measurement->speedup);
    } catch (const Error& e) {
        s.store->addEvent(s.run_id, "review", {{"candidate", c.candidate_id}, {"ignored", e.what()}});
        emitSimple(SearchEvent::Kind::Command, std::string("review ignored: ") + e.what());
    }
}

}  // namespace kerncast::search_loop
