#pragma once
// Mutators propose children of a parent candidate (ARCHITECTURE §3, §7). The parametric mutator moves and crosses over
// a family's tunables (the embedded default: offline, no LLM); the LLM mutators rewrite the kernel or edit it with
// SEARCH/REPLACE blocks. A kernel a person submits is a mutator too (Mutator::Human), handled by the runner.

#include "core/candidate.h"
#include "core/gating.h"
#include "core/problem_library.h"
#include "core/run_store.h"
#include "core/static_report.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace kerncast {

// A measured candidate the mutator may look at: the parent, or an inspiration.
struct MutationExample {
    Candidate candidate;
    double speedup = 0;  // measured; 0 when it failed
    std::vector<StaticReport> static_report;
    std::string failure;  // compile error or failure reason, when it failed
};

struct MutationContext {
    const ProblemBundle* problem = nullptr;
    MutationExample parent;
    std::vector<MutationExample> inspirations;    // a few elites and recent failures
    const std::set<std::string>* seen = nullptr;  // source hashes already in the run: do not propose them again
    int generation = 0;                           // the children's generation
};

// A proposal: the child (source, tunables, label, mutator) plus what the mutator spent and any failure to parse.
struct Proposal {
    std::optional<Candidate> child;  // empty when the mutator's answer was unusable
    std::string failure;             // why (reply did not parse, edit did not apply...)
    int64_t tokens_in = 0, tokens_out = 0;
    double cost_usd = 0;
    std::string raw_reply;        // LLM mutators: the answer as received
    std::optional<LlmCall> call;  // LLM mutators: the request behind it (kind mutate_rewrite or mutate_diff)
};

class CandidateMutator {
public:
    virtual ~CandidateMutator() = default;
    virtual Mutator kind() const = 0;
    // Whether this mutator can make children of the candidate (e.g. parametric needs the family's tunables).
    virtual bool canExpand(const Candidate& candidate, const ProblemBundle& problem) const = 0;
    // Up to `count` proposals. The parametric mutator returns no child whose source hash is in ctx.seen; an LLM
    // may repeat a kernel, which the runner then records as a duplicate of the original.
    virtual std::vector<Proposal> propose(const MutationContext& ctx, int count, SplitMix& rng) = 0;
};

// Moves one or two tunables of a family configuration to neighbouring (sometimes random) allowed values, and
// crosses the parent with an inspiration from the same family (each tunable from either). Children satisfy the
// family's where-conditions.
class ParametricMutator : public CandidateMutator {
public:
    Mutator kind() const override { return Mutator::Parametric; }
    bool canExpand(const Candidate& candidate, const ProblemBundle& problem) const override;
    std::vector<Proposal> propose(const MutationContext& ctx, int count, SplitMix& rng) override;
};

// A family configuration as a candidate: the family source, its tunables, a label "family A=1 B=2".
Candidate family_candidate(const ProblemBundle& problem, const std::map<std::string, int64_t>& tunables);
// Every valid family configuration's count is small enough to enumerate; draws `count` distinct ones.
std::vector<Candidate> random_family_candidates(const ProblemBundle& problem, size_t count, SplitMix& rng);

}  // namespace kerncast
