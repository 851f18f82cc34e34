#include "core/suspect_review.h"

#include "core/error.h"

#include <map>

namespace kerncast {

SuspectReview record_suspect_review(RunStore& store, int64_t run_id, int64_t candidate_id, bool accept) {
    const std::string who = "candidate " + std::to_string(candidate_id);
    const std::optional<int64_t> owner = store.runOfCandidate(candidate_id);
    if (!owner)
        throw Error(SourceLocation{store.path(), 0}, who + " is not in this run file");
    if (run_id && *owner != run_id)
        throw Error(SourceLocation{store.path(), 0},
                    who + " belongs to run " + std::to_string(*owner) + ", not to run " + std::to_string(run_id));
    const std::vector<StoredMeasurement> ms = store.measurementsFor(candidate_id);
    if (ms.empty())
        throw Error(SourceLocation{store.path(), 0}, who + " has not been measured; only suspect results are reviewed");
    const Measurement& m = ms.back().measurement;
    if (m.status != Status::Suspect)
        throw Error(SourceLocation{store.path(), 0}, who + "'s measurement is " + to_string(m.status) +
                                                         ", not suspect; only suspect results are reviewed");
    SuspectReview r;
    r.run_id = *owner;
    r.candidate_id = candidate_id;
    r.accepted = accept;
    r.speedup = m.speedup;
    r.reason = m.reason;
    store.addEvent(r.run_id, "review", review_payload(r));
    return r;
}

nlohmann::json review_payload(const SuspectReview& review) {
    return {{"candidate", review.candidate_id},
            {"verdict", review.accepted ? "accepted" : "rejected"},
            {"speedup", review.speedup},
            {"reason", review.reason}};
}

std::set<int64_t> accepted_suspects(const std::vector<RunEvent>& events) {
    std::map<int64_t, bool> latest;
    for (const RunEvent& e : events) {
        if (e.kind != "review" || !e.payload.is_object())
            continue;
        const auto candidate = e.payload.find("candidate");
        const auto verdict = e.payload.find("verdict");
        if (candidate == e.payload.end() || !candidate->is_number_integer() || verdict == e.payload.end() ||
            !verdict->is_string())
            continue;  // not ours to judge: a malformed entry accepts nothing
        latest[candidate->get<int64_t>()] = verdict->get<std::string>() == "accepted";
    }
    std::set<int64_t> out;
    for (const auto& [id, accepted] : latest)
        if (accepted)
            out.insert(id);
    return out;
}

}  // namespace kerncast
