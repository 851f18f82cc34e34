#pragma once
// Parent selection over the elite archive (ARCHITECTURE §7): PUCT max-reward, islands with migration, greedy
// hill-climb. Only measured, correct candidates enter the archive; nothing trusted on a forecast alone does. Pure
// logic: the same archive, visits and random state give the same parent.

#include "core/gating.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace kerncast {

enum class StrategyKind { Puct, Islands, Greedy };
const char* to_string(StrategyKind kind);
StrategyKind strategy_kind_from_string(const std::string& name);  // "puct", "islands", "greedy"

struct StrategyConfig {
    StrategyKind kind = StrategyKind::Puct;
    double c_puct = 1.0;      // exploration weight
    int islands = 4;          // islands: how many
    int migrate_every = 6;    // islands: selections between migrations (the best of each moves to the next)
    int tournament = 3;       // islands: tournament size inside an island
    int greedy_patience = 4;  // greedy: expansions of a parent without a new best before trying the next one
};
void to_json(nlohmann::json& j, const StrategyConfig& c);
StrategyConfig strategy_config_from_json(const nlohmann::json& j);

class SearchStrategy {
public:
    explicit SearchStrategy(StrategyConfig config = {});

    const StrategyConfig& config() const { return m_config; }

    // A measured, correct candidate. expandable: a mutator can make children of it (e.g. it has tunables).
    void addMeasured(int64_t id, int64_t parent_id, double speedup, bool expandable);
    // One more expansion of id (children proposed from it); improved: it produced a new best.
    void noteExpanded(int64_t id, bool improved);
    // No mutator can make anything new from id: never select it again.
    void markExhausted(int64_t id);
    void pin(int64_t id);  // select this parent next, until unpinned
    void unpin();
    void ban(int64_t id);  // never select it
    void unban(int64_t id);

    // The next parent, or nothing when no expandable, unbanned, unexhausted candidate exists.
    std::optional<int64_t> selectParent(SplitMix& rng);

    bool contains(int64_t id) const { return m_nodes.count(id) != 0; }
    double speedup(int64_t id) const;
    std::optional<int64_t> best() const;          // highest measured speedup (ties: lower id)
    std::vector<int64_t> elites(size_t n) const;  // the n best, best first
    size_t size() const { return m_nodes.size(); }
    int64_t expansions(int64_t id) const;

private:
    struct Node {
        int64_t parent = 0;
        double speedup = 0;
        double subtree_best = 0;  // max speedup over the node and its measured descendants
        bool expandable = false;
        bool exhausted = false;
        int64_t visits = 0;
        int stale = 0;  // greedy: expansions since it last improved the best
        int island = 0;
    };
    bool selectable(int64_t id, const Node& n) const;
    std::optional<int64_t> selectPuct();
    std::optional<int64_t> selectIslands(SplitMix& rng);
    std::optional<int64_t> selectGreedy();

    StrategyConfig m_config;
    std::map<int64_t, Node> m_nodes;
    std::vector<std::set<int64_t>> m_islands;
    std::set<int64_t> m_banned;
    std::optional<int64_t> m_pinned;
    int64_t m_total_visits = 0;
    int64_t m_selections = 0;
    int m_next_island = 0;
};

}  // namespace kerncast
