#include "engine/search/mutators.h"

#include "core/error.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace kerncast {

void to_json(nlohmann::json& j, const LlmPacing& p) {
    j = {{"per_measurement", p.per_measurement},
         {"initial", p.initial},
         {"per_parent", p.per_parent},
         {"elite_parents", p.elite_parents},
         {"duplicate_streak", p.duplicate_streak},
         {"parents", p.parents}};
}

LlmPacing llm_pacing_from_json(const nlohmann::json& j) {
    LlmPacing p;
    try {
        p.per_measurement = j.value("per_measurement", p.per_measurement);
        p.initial = j.value("initial", p.initial);
        p.per_parent = j.value("per_parent", p.per_parent);
        p.elite_parents = j.value("elite_parents", p.elite_parents);
        p.duplicate_streak = j.value("duplicate_streak", p.duplicate_streak);
        p.parents = j.value("parents", p.parents);  // runs stored before the field: the best measured
    } catch (const nlohmann::json::exception& e) {
        throw Error(std::string("llm_pacing: ") + e.what());
    }
    if (!(p.per_measurement >= 0) || p.initial < 0 || p.per_parent < 1 || p.elite_parents < 0 || p.duplicate_streak < 1)
        throw Error("llm_pacing: per_measurement, initial and elite_parents must not be negative, per_parent and "
                    "duplicate_streak must be at least 1; got " +
                    j.dump());
    if (p.parents != "best" && p.parents != "forecast")
        throw Error("llm_pacing: parents must be \"best\" or \"forecast\"; got \"" + p.parents + "\"");
    return p;
}

int LlmProposalLedger::allowance(int64_t parent, int64_t measurements) const {
    if (retired(parent))
        return 0;
    int64_t left = m_pacing.per_parent;
    if (m_pacing.per_measurement > 0) {
        const auto earned = static_cast<int64_t>(
            std::floor(m_pacing.initial + m_pacing.per_measurement * static_cast<double>(measurements)));
        left = std::min(left, earned - m_spent);
    }
    left = std::min<int64_t>(left, m_pacing.duplicate_streak - streak(parent));
    return static_cast<int>(std::max<int64_t>(left, 0));
}

bool LlmProposalLedger::retired(int64_t parent) const { return streak(parent) >= m_pacing.duplicate_streak; }

void LlmProposalLedger::note(int64_t parent, Answer answer) {
    Parent& p = m_parents[parent];
    ++p.asked;
    if (answer == Answer::Duplicate)
        ++p.streak;
    else if (answer == Answer::NewProgram)
        p.streak = 0;
    ++m_spent;
}

int LlmProposalLedger::asked(int64_t parent) const {
    auto it = m_parents.find(parent);
    return it == m_parents.end() ? 0 : it->second.asked;
}

int LlmProposalLedger::streak(int64_t parent) const {
    auto it = m_parents.find(parent);
    return it == m_parents.end() ? 0 : it->second.streak;
}

nlohmann::json LlmProposalLedger::state() const {
    nlohmann::json parents = nlohmann::json::array();
    for (const auto& [id, p] : m_parents)
        parents.push_back({id, p.asked, p.streak});
    return {{"spent", m_spent}, {"parents", parents}};
}

void LlmProposalLedger::restore(const nlohmann::json& state) {
    m_spent = state.value("spent", int64_t{0});
    m_parents.clear();
    for (const auto& p : state.value("parents", nlohmann::json::array()))
        if (p.is_array() && p.size() == 3)
            m_parents[p[0].get<int64_t>()] = {p[1].get<int>(), p[2].get<int>()};
}

Candidate family_candidate(const ProblemBundle& problem, const std::map<std::string, int64_t>& tunables,
                           const std::string* known_hash) {
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
    c.source_hash = known_hash ? *known_hash : content_hash(c.source, c.tunables);
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

const ParametricMutator::Tried& ParametricMutator::tried(const KernelProgram& family,
                                                         const std::map<std::string, int64_t>& tunables) {
    auto [it, added] = m_tried.try_emplace(tunables);
    if (added) {
        it->second.valid = family.isValid(tunables);
        if (it->second.valid)
            it->second.hash = content_hash(family.source, tunables);
    }
    return it->second;
}

std::vector<Proposal> ParametricMutator::propose(const MutationContext& ctx, int count, SplitMix& rng) {
    std::vector<Proposal> out;
    const ProblemBundle& problem = *ctx.problem;
    if (!canExpand(ctx.parent.candidate, problem))
        return out;
    const KernelProgram& family = *problem.family;
    if (family.source != m_family_source) {  // the memo is of one family
        m_tried.clear();
        m_family_source = family.source;
    }
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
        const Tried& known = tried(family, t);
        if (!known.valid)
            continue;
        if (ctx.seen && ctx.seen->count(known.hash))
            continue;
        if (!proposed.insert(known.hash).second)
            continue;
        Candidate c = family_candidate(problem, t, &known.hash);
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
