#pragma once
// Speedup bins (ARCHITECTURE §4): one scheme for prompts, parsing and scoring.

#include <nlohmann/json.hpp>

#include <array>
#include <string>
#include <vector>

namespace kerncast {

inline constexpr int kBinCount = 8;  // forecast outcomes 1..8; bin 0 is failure and never forecast

class BinScheme {
public:
    // The default scheme `gf-v2`: edges 0.25 0.5 0.71 1.0 1.41 2.0 4.0.
    static BinScheme gfV2();
    // A custom scheme: exactly 7 strictly increasing positive edges and 8 names. Throws kerncast::Error otherwise.
    BinScheme(std::string id, std::array<double, kBinCount - 1> edges, std::array<std::string, kBinCount> names);

    const std::string& id() const { return m_id; }
    const std::array<double, kBinCount - 1>& edges() const { return m_edges; }
    const std::array<std::string, kBinCount>& names() const { return m_names; }

    // Bin b in 1..8 holds e(b-1) < S <= e(b) (upper-inclusive), e(0) = 0, e(8) = inf. Non-finite or S <= 0: 0.
    int binOf(double speedup) const;
    // Lower/upper edge of bin b (1..8); lower of bin 1 is 0, upper of bin 8 is +inf.
    double lowerEdge(int bin) const;
    double upperEdge(int bin) const;
    // Name of bin b (1..8), "failure" for 0.
    std::string name(int bin) const;
    // The bin table used in prompts, generated from the edges (one line per bin).
    std::string promptTable() const;

private:
    std::string m_id;
    std::array<double, kBinCount - 1> m_edges{};
    std::array<std::string, kBinCount> m_names{};
};

void to_json(nlohmann::json& j, const BinScheme& s);
BinScheme bin_scheme_from_json(const nlohmann::json& j);  // throws kerncast::Error with what is wrong

}  // namespace kerncast
