// The local forecaster's incremental training: a frozen base (local_model_cache.cpp) and a correction per member
// fitted on the programs learned after it, taken at the share that holds up out of fold.

#include "engine/surrogate/local_model.h"

#include "core/error.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <mutex>
#include <set>
#include <tuple>

namespace kerncast {

// ---------------------------------------------------------------------------------------------------------------
// Incremental training: a frozen base, a correction per member, and the cache of bases.

namespace {

// The correction's boosters: shallower and fewer than a member, since they learn one or a few packs' residuals.
constexpr int kCorrectionRounds = 60;
constexpr int kCorrectionDepth = 4;
// The correction's share (LocalForecaster::correctionShareOf()): folds of the run's programs, and the held-out pairs
// below which the whole correction is taken (too few to tell).
constexpr int kShareFolds = 3;
constexpr size_t kShareMinPairs = 8;
// The least share taken (kerncast-bench-leave-one-out and kerncast-bench-gated-vs-baseline: with no floor the gated
// search on the H100 recording of stencil2d fell short of measure-all, 1.538x against 1.542x; with 0.5 both
// benchmarks improve on taking the whole correction).
constexpr double kShareFloor = 0.5;
}  // namespace

std::string LocalForecaster::baseSource() const {
    std::lock_guard lock(m_mutex);
    return m_baseSource;
}

double LocalForecaster::correctionShare() const {
    std::lock_guard lock(m_mutex);
    return m_correction ? m_correctionShare : 1.0;
}

size_t LocalForecaster::baseExampleCount() const {
    std::lock_guard lock(m_mutex);
    return m_baseCount;
}

void LocalForecaster::retrainCorrectionLocked() {
    m_pending = 0;
    const auto started = std::chrono::steady_clock::now();
    const std::vector<Program> late(m_programs.begin() + static_cast<std::ptrdiff_t>(m_baseCount), m_programs.end());
    Model& base = *m_model;
    base.pack_programs = m_basePackPrograms;
    for (const Program& p : late)
        ++base.pack_programs[p.pack];
    base.examples = m_programs.size();
    m_correction.reset();
    const std::vector<ProgramPair> pairs = pairsOf(late, m_options.seed, m_options.pairs);
    base.pairs = m_basePairs + pairs.size();
    if (pairs.size() < 2 || base.pair.members.empty()) {
        m_lastRetrainSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
        return;
    }
    auto correction = std::make_unique<Model>();
    std::set<std::string> names(base.tunable_names.begin(), base.tunable_names.end());
    for (const Program& p : late)
        for (const auto& [name, value] : p.tunables)
            names.insert(name);
    correction->tunable_names.assign(names.begin(), names.end());
    correction->siblings = base.siblings;
    const size_t n = pairs.size();
    std::vector<float> base_rows, rows, weights;
    std::map<std::string, int> pack_rows;
    for (const ProgramPair& pr : pairs)
        ++pack_rows[late[pr.candidate].pack];
    for (const ProgramPair& pr : pairs) {
        base.appendRow(base_rows, late[pr.candidate], late[pr.anchor]);
        correction->appendRow(rows, late[pr.candidate], late[pr.anchor]);
        weights.push_back(
            static_cast<float>(std::clamp(kSmallPackRows / pack_rows[late[pr.candidate].pack], 1.0, 8.0)));
    }
    // The pairs the base forecasts from their sibling packs: the pack's weight as known, the move class and the match
    // (move -1: not stacked).
    std::vector<std::tuple<double, int, Siblings::Match>> stacked_rows(n, {0.0, -1, Siblings::Match{}});
    if (base.siblings)
        for (size_t r = 0; r < n; ++r) {
            const Program& c = late[pairs[r].candidate];
            const Program& a = late[pairs[r].anchor];
            const int move = Model::pairClass(c, a) > 0 ? 1 : 0;
            const Siblings::Match sib = base.siblings->logSpeedup(c, a);
            if (base.stacked(base.pair, move, sib))
                stacked_rows[r] = {base.seenWeight(c.pack), move, sib};
        }
    LocalForecasterOptions o = m_options;
    o.max_depth = kCorrectionDepth;
    correction->pair.members.resize(base.pair.members.size());
    std::vector<std::string> errors(base.pair.members.size());
    std::vector<std::vector<float>> base_said(base.pair.members.size());
    for_each_parallel(static_cast<int>(base.pair.members.size()), m_options.threads, [&](int k) {
        try {
            // What member k still gets wrong on these pairs.
            const auto member = static_cast<size_t>(k);
            base_said[member] = predict_rows(base.pair.members[member].booster, base_rows, n, base.columns());
            std::vector<float>& said = base_said[member];
            // A pair forecast from its sibling packs: what the stacked forecast gets wrong.
            for (size_t r = 0; r < n; ++r)
                if (const auto& [w, move, sib] = stacked_rows[r]; move >= 0)
                    said[r] = static_cast<float>(base.calibrated(base.pair, said[r], 0.0, w, move, sib));
            std::vector<float> labels;
            for (size_t r = 0; r < n; ++r)
                labels.push_back(static_cast<float>(late[pairs[r].candidate].y - late[pairs[r].anchor].y) - said[r]);
            correction->pair.members[member].booster =
                train_booster(rows, labels, weights, correction->columns(), o,
                              m_options.seed * 1000033ULL + member * 7927ULL + 5, kCorrectionRounds);
        } catch (const Error& e) {
            errors[static_cast<size_t>(k)] = e.what();
        }
    });
    for (const auto& e : errors)
        if (!e.empty())
            throw Error(e);
    // What the base ensemble gets wrong on each pair, for the correction's share.
    std::vector<double> residual(n, 0.0);
    for (size_t r = 0; r < n; ++r) {
        for (const auto& said : base_said)
            residual[r] += static_cast<double>(said[r]);
        residual[r] =
            late[pairs[r].candidate].y - late[pairs[r].anchor].y - residual[r] / static_cast<double>(base_said.size());
    }
    m_correctionShare = correctionShareOf(pairs, residual, rows, weights, *correction);
    correction->examples = late.size();
    correction->pairs = n;
    m_correction = std::move(correction);
    m_lastRetrainSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
}

double LocalForecaster::correctionShareOf(const std::vector<ProgramPair>& pairs, const std::vector<double>& residual,
                                          const std::vector<float>& rows, const std::vector<float>& weights,
                                          const Model& correction) const {
    const size_t n = pairs.size();
    const size_t cols = correction.columns();
    // Folds by program: a pair is held out by fold f when its candidate is in f and its anchor is not (a child never
    // learned, against a measured parent: what a search asks), and learned from when neither is.
    struct Fold {
        double rc = 0, cc = 0;
        size_t held = 0;
    };
    std::vector<Fold> folds(kShareFolds);
    std::vector<std::string> errors(kShareFolds);
    LocalForecasterOptions o = m_options;
    o.max_depth = kCorrectionDepth;
    auto fold = [&](int f) {
        std::vector<float> train, labels, w, test;
        std::vector<size_t> test_rows;
        for (size_t r = 0; r < n; ++r) {
            const bool candidate_in = pairs[r].candidate % kShareFolds == static_cast<size_t>(f);
            const bool anchor_in = pairs[r].anchor % kShareFolds == static_cast<size_t>(f);
            const auto row = rows.begin() + static_cast<std::ptrdiff_t>(r * cols);
            if (!candidate_in && !anchor_in) {
                train.insert(train.end(), row, row + static_cast<std::ptrdiff_t>(cols));
                labels.push_back(static_cast<float>(residual[r]));
                w.push_back(weights[r]);
            } else if (candidate_in && !anchor_in) {
                test.insert(test.end(), row, row + static_cast<std::ptrdiff_t>(cols));
                test_rows.push_back(r);
            }
        }
        if (labels.size() < 2 || test_rows.empty())
            return;
        const Booster b =
            train_booster(train, labels, w, cols, o,
                          m_options.seed * 1000037ULL + static_cast<uint64_t>(f) * 7933ULL + 3, kCorrectionRounds);
        const auto said = predict_rows(b, test, test_rows.size(), cols);
        Fold& out = folds[static_cast<size_t>(f)];
        for (size_t j = 0; j < test_rows.size(); ++j) {
            const double c = static_cast<double>(said[j]), wr = weights[test_rows[j]];
            out.rc += wr * residual[test_rows[j]] * c;
            out.cc += wr * c * c;
            ++out.held;
        }
    };
    for_each_parallel(kShareFolds, m_options.threads, [&](int f) {
        try {
            fold(f);
        } catch (const Error& e) {
            errors[static_cast<size_t>(f)] = e.what();
        }
    });
    for (const auto& e : errors)
        if (!e.empty())
            throw Error(e);
    double rc = 0, cc = 0;
    size_t held = 0;
    for (const Fold& f : folds) {
        rc += f.rc;
        cc += f.cc;
        held += f.held;
    }
    // The least-squares share of the out-of-fold correction in the residual, within [kShareFloor, 1]. An out-of-fold
    // correction learned from under half the pairs (those with neither program in the fold) is noisier than the
    // correction itself, which pulls its least-squares share down: at least kShareFloor is taken.
    if (held < kShareMinPairs || !(cc > 0))
        return 1.0;
    return std::clamp(rc / cc, kShareFloor, 1.0);
}

double LocalForecaster::correctionOf(const Program& c, const Program& a, std::vector<double>* each) const {
    if (!m_correction || m_correction->pair.members.empty())
        return 0.0;
    std::vector<float> row;
    m_correction->appendRow(row, c, a);
    double sum = 0;
    const auto& members = m_correction->pair.members;
    for (size_t k = 0; k < members.size(); ++k) {
        const double v = m_correctionShare *
                         static_cast<double>(predict_rows(members[k].booster, row, 1, m_correction->columns()).at(0));
        sum += v;
        if (each && k < each->size())
            (*each)[k] += v;
    }
    return sum / static_cast<double>(members.size());
}

}  // namespace kerncast
