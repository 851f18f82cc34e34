#pragma once
// The local forecaster's model (its heads: the booster ensembles, their calibration, climatology and stacks) and
// the rows a head is trained on; private to the local forecaster's units.

#include "engine/surrogate/boosters.h"
#include "engine/surrogate/local_program.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <map>

namespace kerncast {

namespace local_model {

// Moves from the best programs of each pack, directed from the better program (local_pairs.cpp).
std::vector<ProgramPair> elite_move_pairs(const std::vector<LocalForecaster::Program>& programs, uint64_t seed,
                                          const LocalPairOptions& options);

// One booster for squared error on rows (optionally weighted), single-threaded and seeded (local_ensemble.cpp).
Booster train_booster(const std::vector<float>& data, const std::vector<float>& labels,
                      const std::vector<float>& weights, size_t cols, const LocalForecasterOptions& o, uint64_t seed,
                      int rounds);
// fn(0) ... fn(count - 1), on up to `threads` threads at once (each job on one thread: the results do not depend on
// how many).
void for_each_parallel(int count, int threads, const std::function<void(int)>& fn);

using Bins = std::array<double, kBinCount>;

// The shares of the climatology in a forecast's bins that calibrate() tries (Model::Head::climatology_share).
constexpr double kClimatologyShares[] = {0.0, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5};

inline Bins mix(const Bins& p, const Bins& climatology, double share) {
    if (share == 0)
        return p;
    Bins out;
    for (size_t b = 0; b < kBinCount; ++b)
        out[b] = (1 - share) * p[b] + share * climatology[b];
    return out;
}

}  // namespace local_model

// Every field is kept in the model cache (saveModel() and loadModel() below): a new field goes there too.
struct LocalForecaster::Model {
    struct Member {
        Booster booster;
    };
    std::vector<std::string> tunable_names;    // sorted; the c:<NAME> and d:<NAME> columns
    std::map<std::string, int> pack_programs;  // learned programs per pack
    // Sibling packs: the learned programs' log speedups by their tunables, for packs whose programs have one set of
    // tunable names. Problems written on one family template at the same sizes (softmax, log_softmax, layernorm and
    // rmsnorm, all on rows of 4096) share much of its landscape: on the H200 the same two configurations of rmsnorm
    // and softmax differ by the same log time to a correlation of 0.92. A pair whose two configurations were measured
    // in sibling packs is forecast from the boosters' mu and the siblings' log S together (Head::stack). Built from
    // the learned programs (which the cache key covers), never saved; the boosters do not see it, so a pair without
    // siblings is forecast as if there were none. Only programs with tunables can be siblings: recordings (a Kernel
    // Tuner cache imported as one included), never imported pair files, which carry none. A recording made to
    // mislead misleads as any training data does; the stack's weights are fitted out of fold, and siblings that
    // disagree widen sigma.
    std::shared_ptr<const Siblings> siblings;
    // Pair classes, whose errors differ by an order of magnitude: programs of different texts (0), or of one text
    // with 1, 2, or 3 and more tunables changed (what a parametric move or a crossover makes is 1 or 2).
    static constexpr int kPairClasses = 4;
    static int pairClass(const Program& c, const Program& a) {
        if (c.text != a.text)
            return 0;
        return std::clamp(tunables_changed(c.tunables, a.tunables), 1, 3);
    }
    // One ensemble of boosters and how its forecasts become distributions.
    struct Head {
        std::vector<Member> members;
        // The error scale of a pack never seen, learned from the out-of-fold residuals of the packs held out whole:
        // log(|error| + kScaleFloor) from the same row as mu. How much a move matters differs by an order of
        // magnitude between kinds of kernels (an element-wise kernel's block size against a reduction's), and the
        // row's features say which kind it is. Empty when too few packs were held out.
        Booster scale;
        // Out-of-fold RMS of log S by class: [pack seen][pair class].
        double rms[2][kPairClasses] = {{kPriorSigma, kPriorSigma, kPriorSigma, kPriorSigma},
                                       {kPriorSigma, kPriorSigma, kPriorSigma, kPriorSigma}};
        // Calibration, for a pack never seen [0] and a known one [1], of other pairs [.][0] and moves [.][1]:
        // mu = slope * raw + shift, and the temperature of sigma.
        double slope[2][2] = {{1.0, 1.0}, {1.0, 1.0}};
        double shift[2][2] = {{0.0, 0.0}, {0.0, 0.0}};
        double temp[2] = {1.0, 1.0};
        double change_share[2] = {0.0, 0.0};  // b: the share of |mu| added to sigma
        // The training packs' climatology (the bin frequencies of their out-of-fold truths, every pack weighing the
        // same), for a pack never seen [0] and a known one [1], and its share in a forecast's bins: fitted out of
        // fold, each row mixed with the climatology of the packs other than its own. Where the boosters transfer
        // badly to a problem (its landscape hangs on what no other problem shows) a sharp forecast is confidently
        // wrong; the mixture keeps mass where the other problems' moves land.
        std::array<double, kBinCount> climatology[2] = {};
        double climatology_share[2] = {0.0, 0.0};
        // A pair with sibling packs, for a pack never seen [0] and a known one [1], of other pairs [.][0] and moves
        // [.][1]: mu = raw_weight * raw + sib_weight * trust * sib + shift, where sib is the sibling packs' mean log S
        // and trust = agree^2 / (agree^2 + spread^2) falls as they disagree (their spread foretells the sibling's
        // error: a correlation of 0.68 to 0.94 on the problems with siblings), fitted on the out-of-fold rows with
        // siblings. sigma = sqrt((temp * rms)^2 + (change_share * mu)^2 + (spread_share * spread)^2), rms being its
        // out-of-fold RMS. Not fitted (fewer than kStackRows rows): such a pair is forecast as one without siblings.
        struct Stack {
            bool fitted = false;
            double raw_weight = 1.0, sib_weight = 0.0, shift = 0.0, agree = 1.0;
            double rms = kPriorSigma, temp = 1.0, change_share = 0.0, spread_share = 0.0;
            double climatology_share = 0.0;  // of the head's climatology, fitted on the stack's own rows
            double trust(double spread) const { return agree * agree / (agree * agree + spread * spread); }
            double mu(double raw, const Siblings::Match& sib) const {
                return raw_weight * raw + sib_weight * trust(sib.spread) * sib.log_speedup + shift;
            }
            double sigma(double mu, const Siblings::Match& sib) const {
                return std::sqrt(temp * temp * rms * rms + change_share * change_share * mu * mu +
                                 spread_share * spread_share * sib.spread * sib.spread);
            }
        };
        Stack stack[2][2];
    };
    // Every sampled pair, in both orientations: any candidate against any anchor.
    Head pair;
    // Moves from the best programs of each pack, directed (elite_move_pairs()): what a search asks, a child of one
    // of its best programs. Forecasts pairs of one text; empty when there were too few such moves to learn from.
    Head move;
    double identical_sigma = kIdenticalSigma;
    double tau = 1.0;  // the temperature of an unknown pack (reported)
    size_t examples = 0;
    size_t pairs = 0;

    size_t columns() const { return layout().pack.size() + 2 * layout().program.size() + 6 + 2 * tunable_names.size(); }
    std::vector<std::string> columnNames() const {
        std::vector<std::string> names;
        const auto& all = local_feature_names();
        for (size_t i : layout().pack)
            names.push_back(all[i]);
        for (size_t i : layout().program)
            names.push_back("candidate." + all[i]);
        for (size_t i : layout().program)
            names.push_back("diff." + all[i]);
        names.insert(names.end(), {"pair.same_text", "pair.tunables_changed", "candidate.is_reference",
                                   "anchor.is_reference", "anchor.log_speedup", "anchor.roofline_log"});
        for (const auto& t : tunable_names) {
            names.push_back("c:" + t);
            names.push_back("d:" + t);
        }
        return names;
    }

    // One row: the candidate c against the anchor a.
    void appendRow(std::vector<float>& out, const Program& c, const Program& a) const {
        auto put = [&](double v) { out.push_back(static_cast<float>(v)); };
        for (size_t i : layout().pack)
            put(c.features[i]);
        for (size_t i : layout().program)
            put(c.features[i]);
        for (size_t i : layout().program) {
            const double x = c.features[i], y = a.features[i];
            put(std::isfinite(x) && std::isfinite(y) ? slog(x) - slog(y) : kNaN);
        }
        put(c.text == a.text ? 1.0 : 0.0);
        put(static_cast<double>(tunables_changed(c.tunables, a.tunables)));
        put(c.reference ? 1.0 : 0.0);
        put(a.reference ? 1.0 : 0.0);
        // How good the anchor already is: its speedup over the reference, and how close it is to the roofline floor
        // (0 = at the floor). A parent near the floor has little room left, whatever the problem.
        put(a.y);
        put(std::isfinite(a.floor_log_us) && std::isfinite(a.ref_log_us) && std::isfinite(a.y)
                ? a.floor_log_us - (a.ref_log_us - a.y)
                : kNaN);
        for (const auto& name : tunable_names) {
            const auto ci = c.tunables.find(name);
            const auto ai = a.tunables.find(name);
            const double cv = ci == c.tunables.end() ? kNaN : static_cast<double>(ci->second);
            const double av = ai == a.tunables.end() ? kNaN : static_cast<double>(ai->second);
            put(slog(cv));
            put(std::isfinite(cv) && std::isfinite(av) ? slog(cv) - slog(av) : kNaN);
        }
    }

    // The mean prediction of log S over the head's members.
    double predictPair(const Head& head, const Program& c, const Program& a,
                       std::vector<double>* each = nullptr) const {
        std::vector<float> rows;
        appendRow(rows, c, a);
        double sum = 0;
        const auto& members = head.members;
        for (const auto& m : members) {
            const auto out = predict_rows(m.booster, rows, 1, columns());
            const double v = static_cast<double>(out.at(0));
            sum += v;
            if (each)
                each->push_back(v);
        }
        return members.empty() ? 0.0 : sum / static_cast<double>(members.size());
    }

    // The learned error scale of the pair for a pack never seen; NaN without a scale model.
    double unseenScale(const Head& head, const Program& c, const Program& a) const {
        if (!head.scale)
            return kNaN;
        std::vector<float> row;
        appendRow(row, c, a);
        // Shrunk towards the class's RMS (their geometric mean): a new problem can be unlike every kind learned (tensor
        // cores), and a scale learned from a few dozen packs then extrapolates far too narrow or too wide.
        const double learned = std::exp(static_cast<double>(predict_rows(head.scale, row, 1, columns()).at(0)));
        return std::sqrt(learned * head.rms[0][pairClass(c, a)]);
    }

    // How much a query's pack is known: 0 for a pack never learned, towards 1 with more programs of it.
    double seenWeight(const std::string& pack) const {
        const auto it = pack_programs.find(pack);
        const double m = it == pack_programs.end() ? 0.0 : static_cast<double>(it->second);
        return m / (m + kSeenPrograms);
    }

    // The stack of a pair with sibling packs (Head::Stack) for a pack never seen (known 0) or a known one (1); none
    // without siblings or without a fit.
    const Head::Stack* stackOf(const Head& h, int known, int move, const Siblings::Match& sib) const {
        const Head::Stack& st = h.stack[known][move];
        return sib.packs > 0 && st.fitted ? &st : nullptr;
    }
    // Whether a pair is forecast from its sibling packs: the correction (a search's own measurements) then corrects the
    // stacked forecast itself, not the boosters' raw mu that the stack weighs against the siblings.
    bool stacked(const Head& h, int move, const Siblings::Match& sib) const {
        return stackOf(h, 0, move, sib) || stackOf(h, 1, move, sib);
    }
    // The calibrated forecast of log S from a head's raw mu: mixed between the calibrations of a pack never seen and
    // a known one by w (seenWeight()). `correction` is added to raw where a side has no stack and to that side's
    // forecast where it has one.
    double calibrated(const Head& h, double raw, double correction, double w, int move,
                      const Siblings::Match& sib) const {
        auto one = [&](int known) {
            if (const Head::Stack* st = stackOf(h, known, move, sib))
                return st->mu(raw, sib) + correction;
            return h.slope[known][move] * (raw + correction) + h.shift[known][move];
        };
        return w * one(1) + (1 - w) * one(0);
    }
};

// The rows one head learns from and is calibrated on.
struct LocalForecaster::TrainingStage {
    std::vector<ProgramPair> pairs;
    std::vector<int> fold;
    std::vector<char> seen;  // the pack is not held out whole by the row's fold
    std::vector<float> weight;
    std::vector<double> oof;       // out-of-fold mu
    std::vector<char> calibrates;  // anchored as a search anchors
    Model::Head* head = nullptr;
};

}  // namespace kerncast
