#pragma once
// Mutators propose children of a parent candidate (ARCHITECTURE §3, §7). The parametric mutator moves and crosses over
// a family's tunables (the embedded default: offline, no LLM); the LLM mutators rewrite the kernel or edit it with
// SEARCH/REPLACE blocks. A kernel a person submits is a mutator too (Mutator::Human), handled by the runner.

#include "core/candidate.h"
#include "core/gating.h"
#include "core/problem_library.h"
#include "core/run_store.h"
#include "core/static_report.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <map>
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
    // LLM mutators: how many LLM proposals this parent had before (each new one is a new sample, never the cached
    // answer to an earlier one), and how many of the last ones in a row came back as programs already seen: the
    // question is then asked differently (other inspirations, a higher temperature).
    int asked_before = 0;
    int duplicate_streak = 0;
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

// How a search spends LLM proposals (SearchConfig::llm_pacing; docs/llm.md "What a search costs"). Every LLM proposal
// is a call whose prompt holds the problem, the parent and inspirations, while a gated search measures a few children
// of dozens proposed: unpaced, the LLM mutators asked for about 500,000 tokens per measurement. So LLM proposals are
// earned by measurements, go to the best parents, and stop for a parent whose answers keep repeating programs.
struct LlmPacing {
    double per_measurement = 2;  // LLM proposals earned by each device measurement; 0: no limit
    int initial = 4;             // earned before any measurement
    int per_parent = 2;          // most LLM proposals for one parent in one expansion
    int elite_parents = 4;       // LLM children only for the best N measured parents (and kernels without a family
                                 // mutator); 0: any parent
    int duplicate_streak = 2;    // a parent whose last N programs from an LLM were programs already seen (answers
                                 // without a program in between aside) is not asked again
    // Which elite_parents parents are asked: "best", the best measured; "forecast", those whose children the
    // search's forecaster expects to be fastest (a parent not expanded yet ranks by its own speedup).
    std::string parents = "best";
};
void to_json(nlohmann::json& j, const LlmPacing& p);
// Throws kerncast::Error naming a field out of range.
LlmPacing llm_pacing_from_json(const nlohmann::json& j);

// The search's account of LLM proposals: what has been earned and spent, and per parent how often it was asked and
// how many of its last answers were duplicates. Kept in the search's checkpoints (state()).
class LlmProposalLedger {
public:
    explicit LlmProposalLedger(LlmPacing pacing = {}) : m_pacing(pacing) {}
    const LlmPacing& pacing() const { return m_pacing; }
    // LLM proposals the parent may get now, after `measurements` device measurements: what is earned and not spent,
    // at most per_parent, and no more than the parent's duplicate streak leaves (so that no parent gets more than
    // duplicate_streak duplicate answers in a row); 0 for a retired parent.
    int allowance(int64_t parent, int64_t measurements) const;
    bool retired(int64_t parent) const;
    // One LLM proposal for the parent and what its answer was. An answer without a program (prose, an edit that
    // does not apply) neither lengthens nor ends the parent's streak of duplicates: the streak counts the answers
    // since its last new program.
    enum class Answer { NewProgram, Duplicate, NoProgram };
    void note(int64_t parent, Answer answer);
    int asked(int64_t parent) const;
    int streak(int64_t parent) const;
    int64_t spent() const { return m_spent; }
    nlohmann::json state() const;
    void restore(const nlohmann::json& state);

private:
    struct Parent {
        int asked = 0, streak = 0;
    };
    LlmPacing m_pacing;
    int64_t m_spent = 0;
    std::map<int64_t, Parent> m_parents;
};

// Moves one or two tunables of a family configuration to neighbouring (sometimes random) allowed values, and
// crosses the parent with an inspiration from the same family (each tunable from either). Children satisfy the
// family's where-conditions.
class ParametricMutator : public CandidateMutator {
public:
    Mutator kind() const override { return Mutator::Parametric; }
    bool canExpand(const Candidate& candidate, const ProblemBundle& problem) const override;
    std::vector<Proposal> propose(const MutationContext& ctx, int count, SplitMix& rng) override;

private:
    // Each configuration tried so far: whether the family allows it and its content hash. Most attempts of a later
    // iteration land on configurations tried before, and hashing the family's source for each (hundreds per
    // iteration) took most of a search thread's proposal time.
    struct Tried {
        bool valid = false;
        std::string hash;
    };
    const Tried& tried(const KernelProgram& family, const std::map<std::string, int64_t>& tunables);
    std::string m_family_source;  // the family the memo is of
    std::map<std::map<std::string, int64_t>, Tried> m_tried;
};

// A family configuration as a candidate: the family source, its tunables, a label "family A=1 B=2".
Candidate family_candidate(const ProblemBundle& problem, const std::map<std::string, int64_t>& tunables,
                           const std::string* known_hash = nullptr);
// Every valid family configuration's count is small enough to enumerate; draws `count` distinct ones.
std::vector<Candidate> random_family_candidates(const ProblemBundle& problem, size_t count, SplitMix& rng);

}  // namespace kerncast
