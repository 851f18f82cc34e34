#include "engine/search/mutators.h"

#include <algorithm>
#include <map>

namespace kerncast {

Candidate family_candidate(const ProblemBundle& problem, const std::map<std::string, int64_t>& tunables) {
    Candidate c;
    c.mutator = Mutator::Parametric;
    c.source = problem.family->source;
    c.tunables = tunables;
    c.label = "family";
    for (const auto& t : problem.family->tunables) {
        auto it = tunables.find(t.name);
        if (it != tunables.end())
            c.label += " " + t.name + "=" + std::to_string(it->second);
    }
    c.source_hash = content_hash(c.source, c.tunables);
    return c;
}

std::vector<Candidate> random_family_candidates(const ProblemBundle& problem, size_t count, SplitMix& rng) {
    std::vector<Candidate> out;
    if (!problem.family)
        return out;
    auto configs = problem.family->configurations();
    // Partial Fisher-Yates: the first `count` entries become a uniform sample without repeats.
    for (size_t i = 0; i < configs.size() && i < count; ++i) {
        const size_t j = i + static_cast<size_t>(rng.below(configs.size() - i));
        std::swap(configs[i], configs[j]);
        out.push_back(family_candidate(problem, configs[i]));
    }
    return out;
}

bool ParametricMutator::canExpand(const Candidate& candidate, const ProblemBundle& problem) const {
    return problem.family && !problem.family->tunables.empty() && candidate.source == problem.family->source &&
           problem.family->isValid(candidate.tunables);
}

namespace {

// One step of a tunable: mostly to a neighbouring allowed value (values are ordered as declared), sometimes to any.
int64_t step_value(const Tunable& t, int64_t current, SplitMix& rng) {
    const auto& v = t.values;
    auto it = std::find(v.begin(), v.end(), current);
    const size_t at = it == v.end() ? 0 : static_cast<size_t>(it - v.begin());
    if (v.size() < 2)
        return v.empty() ? current : v[0];
    if (rng.uniform() < 0.2)
        return v[rng.below(v.size())];
    if (at == 0)
        return v[1];
    if (at + 1 == v.size())
        return v[at - 1];
    return rng.uniform() < 0.5 ? v[at - 1] : v[at + 1];
}

}  // namespace

std::vector<Proposal> ParametricMutator::propose(const MutationContext& ctx, int count, SplitMix& rng) {
    std::vector<Proposal> out;
    const ProblemBundle& problem = *ctx.problem;
    if (!canExpand(ctx.parent.candidate, problem))
        return out;
    const KernelProgram& family = *problem.family;
    std::vector<const MutationExample*> mates;
    for (const auto& e : ctx.inspirations)
        if (e.speedup > 0 && canExpand(e.candidate, problem) && e.candidate.id != ctx.parent.candidate.id)
            mates.push_back(&e);
    std::set<std::string> proposed;
    const int attempts = 40 * std::max(count, 1);
    for (int a = 0; a < attempts && static_cast<int>(out.size()) < count; ++a) {
        std::map<std::string, int64_t> t = ctx.parent.candidate.tunables;
        std::string how;
        if (!mates.empty() && rng.uniform() < 0.25) {
            const MutationExample& mate = *mates[rng.below(mates.size())];
            for (auto& [name, value] : t) {
                auto m = mate.candidate.tunables.find(name);
                if (m != mate.candidate.tunables.end() && rng.uniform() < 0.5)
                    value = m->second;
            }
            how = "crossover with #" + std::to_string(mate.candidate.id);
        } else {
            const int moves = rng.uniform() < 0.7 ? 1 : 2;
            for (int m = 0; m < moves; ++m) {
                const Tunable& tun = family.tunables[rng.below(family.tunables.size())];
                t[tun.name] = step_value(tun, t[tun.name], rng);
            }
            how = "move";
        }
        if (!family.isValid(t))
            continue;
        Candidate c = family_candidate(problem, t);
        if (ctx.seen && ctx.seen->count(c.source_hash))
            continue;
        if (!proposed.insert(c.source_hash).second)
            continue;
        c.parent_id = ctx.parent.candidate.id;
        c.generation = ctx.generation;
        c.label += " (" + how + ")";
        Proposal p;
        p.child = std::move(c);
        out.push_back(std::move(p));
    }
    return out;
}

}  // namespace kerncast
