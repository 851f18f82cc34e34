// The local forecaster's pair sampling: the pairs of programs a head learns from (local_training_pairs(),
// LocalForecaster::pairsOf()) and the moves from the best programs of each pack (local_move_pairs()).

#include "engine/surrogate/local_model.h"
#include "engine/surrogate/local_program.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <optional>
#include <random>
#include <set>

namespace kerncast {

std::vector<ProgramPair> local_training_pairs(const std::vector<LabelledExample>& examples, uint64_t seed,
                                              const LocalPairOptions& options) {
    std::vector<LocalForecaster::Program> programs;
    programs.reserve(examples.size());
    for (const auto& e : examples)
        programs.push_back(LocalForecaster::Program::of(e.query));
    return LocalForecaster::pairsOf(programs, seed, options);
}

std::vector<ProgramPair> LocalForecaster::pairsOf(const std::vector<Program>& programs, uint64_t seed,
                                                  const LocalPairOptions& options) {
    std::mt19937_64 rng(seed * 0x9e3779b97f4a7c15ULL + 17);
    std::map<std::string, std::vector<size_t>> packs;
    for (size_t i = 0; i < programs.size(); ++i)
        packs[programs[i].pack].push_back(i);
    std::vector<ProgramPair> out;
    for (const auto& [pack, members] : packs) {
        const size_t n = members.size();
        if (n < 2)
            continue;
        std::set<std::pair<size_t, size_t>> chosen;  // unordered: (lower index, higher index)
        auto add = [&](size_t a, size_t b) {
            if (a == b || programs[a].key == programs[b].key)
                return;  // the same program measured twice teaches only the noise, which the identity rule knows
            chosen.insert({std::min(a, b), std::max(a, b)});
        };
        if (n <= options.all_pairs_up_to) {
            for (size_t i = 0; i < n; ++i)
                for (size_t j = i + 1; j < n; ++j)
                    add(members[i], members[j]);
        } else {
            std::map<size_t, size_t> by_key;
            std::optional<size_t> reference;
            for (size_t i : members) {
                by_key.emplace(programs[i].key, i);
                if (programs[i].reference && !reference)
                    reference = i;
            }
            // Programs of one text whose tunables differ in exactly one name: what a parametric move makes.
            std::map<std::pair<size_t, std::string>, std::vector<size_t>> without;
            for (size_t i : members) {
                for (const auto& [name, value] : programs[i].tunables) {
                    size_t h = programs[i].text;
                    for (const auto& [other, v] : programs[i].tunables)
                        if (other != name)
                            h ^= std::hash<std::string>{}(other)*31 + std::hash<int64_t>{}(v) + (h << 6) + (h >> 2);
                    without[{h, name}].push_back(i);
                }
            }
            std::map<size_t, std::vector<size_t>> neighbours;
            for (const auto& [k, group] : without)
                for (size_t i : group)
                    for (size_t j : group)
                        if (i != j)
                            neighbours[i].push_back(j);
            for (size_t i : members) {
                if (reference)
                    add(i, *reference);
                if (programs[i].anchor_key)
                    if (const auto it = by_key.find(*programs[i].anchor_key); it != by_key.end())
                        add(i, it->second);
                if (auto it = neighbours.find(i); it != neighbours.end()) {
                    auto& list = it->second;
                    for (size_t k = 0; k < list.size() && k < options.neighbours; ++k) {
                        const size_t j = k + static_cast<size_t>(rng() % (list.size() - k));
                        std::swap(list[k], list[j]);
                        add(i, list[k]);
                    }
                }
                // Two moves away: a neighbour's neighbour (what two moves or a crossover make).
                if (auto it = neighbours.find(i); it != neighbours.end())
                    for (size_t k = 0; k < options.two_moves; ++k) {
                        const size_t j = it->second[static_cast<size_t>(rng() % it->second.size())];
                        const auto& next = neighbours[j];
                        if (!next.empty())
                            add(i, next[static_cast<size_t>(rng() % next.size())]);
                    }
                for (size_t k = 0; k < options.random; ++k)
                    add(i, members[static_cast<size_t>(rng() % n)]);
            }
        }
        for (const auto& [a, b] : chosen) {
            // A seeded orientation: which side is the anchor carries no information.
            if (rng() & 1)
                out.push_back({a, b});
            else
                out.push_back({b, a});
        }
    }
    if (options.max_pairs > 0 && out.size() > options.max_pairs) {
        std::vector<ProgramPair> small, large;
        for (const ProgramPair& pr : out)
            (packs[programs[pr.candidate].pack].size() <= options.all_pairs_up_to ? small : large).push_back(pr);
        const size_t keep = options.max_pairs > small.size() ? options.max_pairs - small.size() : 0;
        for (size_t i = 0; i < keep && i < large.size(); ++i)
            std::swap(large[i], large[i + static_cast<size_t>(rng() % (large.size() - i))]);
        large.resize(std::min(keep, large.size()));
        out = std::move(small);
        out.insert(out.end(), large.begin(), large.end());
    }
    return out;
}

namespace local_model {

// Moves from the best programs of each pack, directed from the better program: the pairs a search forecasts (it
// expands its best measured programs; a parametric move steps one tunable to a neighbouring value mostly, two
// sometimes, and a crossover or a jump goes further). Steps are counted in each tunable's values as the pack has
// them, sorted. The anchors are the top options.move_elite_share of a pack's programs (at least one); each gets up
// to move_one, move_two and move_more programs of its own text 1, 2 and 3 or more steps away.
std::vector<ProgramPair> elite_move_pairs(const std::vector<LocalForecaster::Program>& programs, uint64_t seed,
                                          const LocalPairOptions& options) {
    std::vector<ProgramPair> out;
    if (options.move_one + options.move_two + options.move_more == 0)
        return out;
    std::mt19937_64 rng(seed * 0x2545f4914f6cdd1dULL + 29);
    std::map<std::string, std::vector<size_t>> packs;
    for (size_t i = 0; i < programs.size(); ++i)
        if (!programs[i].tunables.empty())
            packs[programs[i].pack].push_back(i);
    for (auto& [pack, members] : packs) {
        std::sort(members.begin(), members.end(), [&](size_t a, size_t b) { return programs[a].y > programs[b].y; });
        std::map<std::string, std::vector<int64_t>> values;  // each tunable's values in the pack, sorted
        for (size_t i : members)
            for (const auto& [name, value] : programs[i].tunables)
                values[name].push_back(value);
        for (auto& [name, v] : values) {
            std::sort(v.begin(), v.end());
            v.erase(std::unique(v.begin(), v.end()), v.end());
        }
        auto steps = [&](const LocalForecaster::Program& c, const LocalForecaster::Program& a) {
            size_t n = 0;
            for (const auto& [name, value] : c.tunables) {
                const auto it = a.tunables.find(name);
                if (it == a.tunables.end()) {
                    ++n;
                    continue;
                }
                const auto& v = values[name];
                const auto at = [&](int64_t x) { return std::lower_bound(v.begin(), v.end(), x) - v.begin(); };
                n += static_cast<size_t>(std::abs(at(value) - at(it->second)));
            }
            for (const auto& [name, value] : a.tunables)
                n += c.tunables.count(name) ? 0 : 1;
            return n;
        };
        const size_t anchors = std::max<size_t>(
            1, static_cast<size_t>(std::ceil(options.move_elite_share * static_cast<double>(members.size()))));
        for (size_t k = 0; k < anchors && k < members.size(); ++k) {
            const LocalForecaster::Program& a = programs[members[k]];
            std::vector<size_t> by_changes[3];
            for (size_t i : members)
                if (programs[i].text == a.text && programs[i].key != a.key)
                    by_changes[std::clamp<size_t>(steps(programs[i], a), 1, 3) - 1].push_back(i);
            const size_t want[3] = {options.move_one, options.move_two, options.move_more};
            for (int c = 0; c < 3; ++c) {
                auto& list = by_changes[c];
                for (size_t j = 0; j < want[c] && j < list.size(); ++j) {
                    std::swap(list[j], list[j + static_cast<size_t>(rng() % (list.size() - j))]);
                    out.push_back({list[j], members[k]});
                }
            }
        }
    }
    return out;
}

}  // namespace local_model

std::vector<ProgramPair> local_move_pairs(const std::vector<LabelledExample>& examples, uint64_t seed,
                                          const LocalPairOptions& options) {
    std::vector<LocalForecaster::Program> programs;
    programs.reserve(examples.size());
    for (const auto& e : examples)
        programs.push_back(LocalForecaster::Program::of(e));
    return elite_move_pairs(programs, seed, options);
}

}  // namespace kerncast
