#pragma once
// A person's verdict on a `suspect` measurement (ARCHITECTURE §5): a time below the roofline floor is physically
// implausible, so it stays out of the elite archive until someone who checked the kernel accepts it, or rejects it.
// The verdict is a "review" event in the run's log; the runner admits an accepted candidate to the archive (at
// once in a live run, from the log when a run is resumed). A later review of the same candidate replaces an
// earlier one.

#include "core/run_store.h"

#include <cstdint>
#include <set>
#include <string>
#include <vector>

namespace kerncast {

struct SuspectReview {
    int64_t run_id = 0;
    int64_t candidate_id = 0;
    bool accepted = false;
    double speedup = 0;  // the suspect measurement's
    std::string reason;  // why it was suspect
};

// Checks that the candidate exists (in run_id, when that is not 0) and that its latest measurement is suspect,
// then appends the "review" event. Throws Error naming the candidate and what is wrong otherwise.
SuspectReview record_suspect_review(RunStore& store, int64_t run_id, int64_t candidate_id, bool accept);

// The event's payload, and the candidates a run's log leaves accepted (each candidate's latest review counts).
nlohmann::json review_payload(const SuspectReview& review);
std::set<int64_t> accepted_suspects(const std::vector<RunEvent>& events);

}  // namespace kerncast
