#include "core/bins.h"

#include "core/error.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <set>

namespace kerncast {

namespace {

// Two decimals reads best in a prompt ("1.41x"); custom edges that need more keep their precision.
std::string format_edge(double e) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.2f", e);
    if (std::strtod(buf, nullptr) != e)
        std::snprintf(buf, sizeof buf, "%.6g", e);
    return buf;
}

void check_bin(int bin) {
    if (bin < 1 || bin > kBinCount)
        throw Error("bin " + std::to_string(bin) + " is out of range: expected 1.." + std::to_string(kBinCount));
}

}  // namespace

BinScheme BinScheme::gfV2() {
    return BinScheme("gf-v2", {0.25, 0.5, 0.71, 1.0, 1.41, 2.0, 4.0},
                     {"severe slowdown", "significant slowdown", "moderate slowdown", "minor slowdown", "minor speedup",
                      "significant speedup", "high speedup", "extreme speedup"});
}

BinScheme::BinScheme(std::string id, std::array<double, kBinCount - 1> edges, std::array<std::string, kBinCount> names)
    : m_id(std::move(id)), m_edges(edges), m_names(std::move(names)) {
    if (m_id.empty())
        throw Error("bin scheme: expected a non-empty id");
    for (size_t i = 0; i < m_edges.size(); ++i) {
        const double e = m_edges[i];
        if (!std::isfinite(e) || e <= 0)
            throw Error("bin scheme '" + m_id + "': edge " + std::to_string(i + 1) +
                        " must be a positive finite number, found " + format_edge(e));
        if (i > 0 && e <= m_edges[i - 1])
            throw Error("bin scheme '" + m_id + "': edges must be strictly increasing, but edge " +
                        std::to_string(i + 1) + " (" + format_edge(e) + ") <= edge " + std::to_string(i) + " (" +
                        format_edge(m_edges[i - 1]) + ")");
    }
    std::set<std::string> seen;
    for (size_t i = 0; i < m_names.size(); ++i) {
        if (m_names[i].empty())
            throw Error("bin scheme '" + m_id + "': bin " + std::to_string(i + 1) + " needs a name");
        if (!seen.insert(m_names[i]).second)
            throw Error("bin scheme '" + m_id + "': bin name '" + m_names[i] + "' is used twice");
    }
}

int BinScheme::binOf(double speedup) const {
    if (!std::isfinite(speedup) || speedup <= 0)
        return 0;
    for (int b = 1; b < kBinCount; ++b)
        if (speedup <= m_edges[b - 1])
            return b;
    return kBinCount;
}

double BinScheme::lowerEdge(int bin) const {
    check_bin(bin);
    return bin == 1 ? 0.0 : m_edges[bin - 2];
}

double BinScheme::upperEdge(int bin) const {
    check_bin(bin);
    return bin == kBinCount ? std::numeric_limits<double>::infinity() : m_edges[bin - 1];
}

std::string BinScheme::name(int bin) const {
    if (bin == 0)
        return "failure";
    check_bin(bin);
    return m_names[bin - 1];
}

std::string BinScheme::promptTable() const {
    std::string out;
    for (int b = 1; b <= kBinCount; ++b) {
        out += "bin " + std::to_string(b) + " (" + m_names[b - 1] + "): ";
        if (b == 1)
            out += "S <= " + format_edge(m_edges[0]) + "x";
        else if (b == kBinCount)
            out += "S > " + format_edge(m_edges[kBinCount - 2]) + "x";
        else
            out += format_edge(m_edges[b - 2]) + "x < S <= " + format_edge(m_edges[b - 1]) + "x";
        out += "\n";
    }
    return out;
}

void to_json(nlohmann::json& j, const BinScheme& s) {
    j = nlohmann::json{{"id", s.id()}, {"edges", s.edges()}, {"names", s.names()}};
}

BinScheme bin_scheme_from_json(const nlohmann::json& j) {
    if (!j.is_object())
        throw Error("bin scheme: expected an object with id, edges and names, found " + std::string(j.type_name()));
    for (const char* key : {"id", "edges", "names"})
        if (!j.contains(key))
            throw Error(std::string("bin scheme: missing \"") + key + "\"");
    if (!j["id"].is_string())
        throw Error("bin scheme: \"id\" must be a string");
    const auto id = j["id"].get<std::string>();
    const auto& edges = j["edges"];
    if (!edges.is_array() || edges.size() != kBinCount - 1)
        throw Error("bin scheme '" + id + "': \"edges\" must be an array of " + std::to_string(kBinCount - 1) +
                    " numbers, found " +
                    (edges.is_array() ? std::to_string(edges.size()) + " entries" : edges.type_name()));
    const auto& names = j["names"];
    if (!names.is_array() || names.size() != kBinCount)
        throw Error("bin scheme '" + id + "': \"names\" must be an array of " + std::to_string(kBinCount) +
                    " strings, found " +
                    (names.is_array() ? std::to_string(names.size()) + " entries" : names.type_name()));
    std::array<double, kBinCount - 1> e{};
    for (size_t i = 0; i < e.size(); ++i) {
        if (!edges[i].is_number())
            throw Error("bin scheme '" + id + "': edge " + std::to_string(i + 1) + " must be a number");
        e[i] = edges[i].get<double>();
    }
    std::array<std::string, kBinCount> n{};
    for (size_t i = 0; i < n.size(); ++i) {
        if (!names[i].is_string())
            throw Error("bin scheme '" + id + "': name of bin " + std::to_string(i + 1) + " must be a string");
        n[i] = names[i].get<std::string>();
    }
    return BinScheme(id, e, n);
}

}  // namespace kerncast
