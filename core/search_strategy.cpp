#include "core/search_strategy.h"

#include "core/error.h"

#include <algorithm>
#include <cmath>

namespace kerncast {

const char* to_string(StrategyKind kind) {
    switch (kind) {
    case StrategyKind::Puct:
        return "puct";
    case StrategyKind::Islands:
        return "islands";
    case StrategyKind::Greedy:
        return "greedy";
    }
    return "puct";
}

StrategyKind strategy_kind_from_string(const std::string& name) {
    for (auto k : {StrategyKind::Puct, StrategyKind::Islands, StrategyKind::Greedy})
        if (name == to_string(k))
            return k;
    throw Error("unknown search strategy '" + name + "' (expected puct, islands or greedy)");
}

void to_json(nlohmann::json& j, const StrategyConfig& c) {
    j = {{"strategy", to_string(c.kind)},    {"c_puct", c.c_puct},         {"islands", c.islands},
         {"migrate_every", c.migrate_every}, {"tournament", c.tournament}, {"greedy_patience", c.greedy_patience}};
}

StrategyConfig strategy_config_from_json(const nlohmann::json& j) {
    StrategyConfig c;
    if (!j.is_object())
        throw Error("strategy settings must be a JSON object");
    if (j.contains("strategy"))
        c.kind = strategy_kind_from_string(j.at("strategy").get<std::string>());
    c.c_puct = j.value("c_puct", c.c_puct);
    c.islands = std::max(1, j.value("islands", c.islands));
    c.migrate_every = std::max(1, j.value("migrate_every", c.migrate_every));
    c.tournament = std::max(1, j.value("tournament", c.tournament));
    c.greedy_patience = std::max(1, j.value("greedy_patience", c.greedy_patience));
    return c;
}

SearchStrategy::SearchStrategy(StrategyConfig config) : m_config(config) {
    m_islands.resize(static_cast<size_t>(std::max(1, m_config.islands)));
}

void SearchStrategy::addMeasured(int64_t id, int64_t parent_id, double speedup, bool expandable) {
    Node n;
    n.parent = parent_id;
    n.speedup = speedup;
    n.subtree_best = speedup;
    n.expandable = expandable;
    auto parent = m_nodes.find(parent_id);
    // Children live on their parent's island; roots are dealt round-robin.
    n.island = parent != m_nodes.end() ? parent->second.island : static_cast<int>(m_nodes.size() % m_islands.size());
    m_nodes[id] = n;
    m_islands[static_cast<size_t>(n.island)].insert(id);
    // Max-reward backup: every ancestor's subtree best.
    for (int64_t p = parent_id; p != 0;) {
        auto it = m_nodes.find(p);
        if (it == m_nodes.end() || it->second.subtree_best >= speedup)
            break;
        it->second.subtree_best = speedup;
        p = it->second.parent;
    }
}

void SearchStrategy::noteExpanded(int64_t id, bool improved) {
    ++m_total_visits;
    auto it = m_nodes.find(id);
    if (it == m_nodes.end())
        return;
    ++it->second.visits;
    it->second.stale = improved ? 0 : it->second.stale + 1;
}

void SearchStrategy::markExhausted(int64_t id) {
    auto it = m_nodes.find(id);
    if (it != m_nodes.end())
        it->second.exhausted = true;
    if (m_pinned == id)
        m_pinned.reset();
}

void SearchStrategy::pin(int64_t id) { m_pinned = id; }
void SearchStrategy::unpin() { m_pinned.reset(); }
void SearchStrategy::ban(int64_t id) {
    m_banned.insert(id);
    if (m_pinned == id)
        m_pinned.reset();
}
void SearchStrategy::unban(int64_t id) { m_banned.erase(id); }

double SearchStrategy::speedup(int64_t id) const {
    auto it = m_nodes.find(id);
    return it == m_nodes.end() ? 0 : it->second.speedup;
}

int64_t SearchStrategy::expansions(int64_t id) const {
    auto it = m_nodes.find(id);
    return it == m_nodes.end() ? 0 : it->second.visits;
}

std::optional<int64_t> SearchStrategy::best() const {
    std::optional<int64_t> out;
    double best = -1;
    for (const auto& [id, n] : m_nodes)
        if (n.speedup > best) {
            best = n.speedup;
            out = id;
        }
    return out;
}

std::vector<int64_t> SearchStrategy::elites(size_t count) const {
    std::vector<int64_t> ids;
    for (const auto& [id, n] : m_nodes)
        ids.push_back(id);
    std::stable_sort(ids.begin(), ids.end(),
                     [&](int64_t a, int64_t b) { return m_nodes.at(a).speedup > m_nodes.at(b).speedup; });
    if (ids.size() > count)
        ids.resize(count);
    return ids;
}

bool SearchStrategy::selectable(int64_t id, const Node& n) const {
    return n.expandable && !n.exhausted && !m_banned.count(id);
}

std::optional<int64_t> SearchStrategy::selectParent(SplitMix& rng) {
    ++m_selections;
    if (m_pinned) {
        auto it = m_nodes.find(*m_pinned);
        if (it != m_nodes.end() && selectable(*m_pinned, it->second))
            return m_pinned;
    }
    switch (m_config.kind) {
    case StrategyKind::Puct:
        return selectPuct();
    case StrategyKind::Islands:
        return selectIslands(rng);
    case StrategyKind::Greedy:
        return selectGreedy();
    }
    return std::nullopt;
}

// score = Q + c * scale * P_rank * sqrt(1 + T) / (1 + n): Q the best log-speedup in the node's subtree, scale the
// spread of Q over the candidates, P_rank a prior from the node's own rank (1 / (rank + 1), normalised).
std::optional<int64_t> SearchStrategy::selectPuct() {
    std::vector<int64_t> ids;
    for (const auto& [id, n] : m_nodes)
        if (selectable(id, n))
            ids.push_back(id);
    if (ids.empty())
        return std::nullopt;
    std::vector<int64_t> ranked = ids;
    std::stable_sort(ranked.begin(), ranked.end(),
                     [&](int64_t a, int64_t b) { return m_nodes.at(a).speedup > m_nodes.at(b).speedup; });
    std::map<int64_t, double> prior;
    double norm = 0;
    for (size_t r = 0; r < ranked.size(); ++r) {
        prior[ranked[r]] = 1.0 / static_cast<double>(r + 1);
        norm += prior[ranked[r]];
    }
    double qmin = 1e300, qmax = -1e300;
    for (int64_t id : ids) {
        const double q = std::log(std::max(m_nodes.at(id).subtree_best, 1e-9));
        qmin = std::min(qmin, q);
        qmax = std::max(qmax, q);
    }
    const double scale = qmax - qmin > 1e-9 ? qmax - qmin : 1.0;
    std::optional<int64_t> out;
    double best = -1e300;
    for (int64_t id : ids) {
        const Node& n = m_nodes.at(id);
        const double q = std::log(std::max(n.subtree_best, 1e-9));
        const double score = q + m_config.c_puct * scale * (prior[id] / norm) *
                                     std::sqrt(1.0 + static_cast<double>(m_total_visits)) /
                                     (1.0 + static_cast<double>(n.visits));
        if (score > best) {
            best = score;
            out = id;
        }
    }
    return out;
}

std::optional<int64_t> SearchStrategy::selectIslands(SplitMix& rng) {
    const size_t count = m_islands.size();
    // Migration: the best of each island joins the next one.
    if (m_selections % m_config.migrate_every == 0 && count > 1) {
        std::vector<std::optional<int64_t>> bests(count);
        for (size_t i = 0; i < count; ++i)
            for (int64_t id : m_islands[i])
                if (!bests[i] || m_nodes.at(id).speedup > m_nodes.at(*bests[i]).speedup)
                    bests[i] = id;
        for (size_t i = 0; i < count; ++i)
            if (bests[i])
                m_islands[(i + 1) % count].insert(*bests[i]);
    }
    for (size_t tries = 0; tries < count; ++tries) {
        const size_t island = static_cast<size_t>(m_next_island++) % count;
        std::vector<int64_t> ids;
        for (int64_t id : m_islands[island])
            if (selectable(id, m_nodes.at(id)))
                ids.push_back(id);
        if (ids.empty())
            continue;
        std::optional<int64_t> winner;
        for (int t = 0; t < m_config.tournament; ++t) {
            const int64_t id = ids[rng.below(ids.size())];
            if (!winner || m_nodes.at(id).speedup > m_nodes.at(*winner).speedup)
                winner = id;
        }
        return winner;
    }
    return std::nullopt;
}

// Hill-climb: the best candidate, until it has been expanded `greedy_patience` times without a new best; then the
// next best that is still fresh, and so on.
std::optional<int64_t> SearchStrategy::selectGreedy() {
    std::vector<int64_t> ids;
    for (const auto& [id, n] : m_nodes)
        if (selectable(id, n))
            ids.push_back(id);
    std::stable_sort(ids.begin(), ids.end(),
                     [&](int64_t a, int64_t b) { return m_nodes.at(a).speedup > m_nodes.at(b).speedup; });
    for (int64_t id : ids)
        if (m_nodes.at(id).stale < m_config.greedy_patience)
            return id;
    if (ids.empty())
        return std::nullopt;
    return ids.front();
}

}  // namespace kerncast
