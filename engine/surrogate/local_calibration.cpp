// The local forecaster's calibration of a head: its spread by pair class, the temperature, the climatology and
// its share, and the stacks of pairs with sibling packs, all fitted on out-of-fold forecasts.

#include "engine/surrogate/local_model.h"

#include "core/metrics.h"

#include <Eigen/Dense>

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <limits>
#include <map>

namespace kerncast {

namespace {

// The temperature and share of |mu| of sigma (LocalForecaster::calibrate()) with the least loss(tau, b) on a grid,
// and that loss.
struct GridFit {
    double tau = 1.0, b = 0.0, loss = 0.0;
};
GridFit grid_search(const std::function<double(double, double)>& loss) {
    double best_tau = 1.0, best_b = 0.0, best = loss(1.0, 0.0);
    for (int g = 0; g <= 24; ++g) {
        const double tau = std::exp(std::log(0.05) + g * (std::log(3.0) - std::log(0.05)) / 24.0);
        for (double b : {0.0, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0}) {
            const double v = loss(tau, b);
            if (v < best) {
                best = v;
                best_tau = tau;
                best_b = b;
            }
        }
    }
    return {best_tau, best_b, best};
}

}  // namespace

void LocalForecaster::calibrate(Model& model, TrainingStage& stage, size_t cols) const {
    Model::Head& head = *stage.head;
    const size_t n = stage.pairs.size();
    auto truth_of = [&](size_t r) {
        return m_programs[stage.pairs[r].candidate].y - m_programs[stage.pairs[r].anchor].y;
    };
    auto class_of = [&](size_t r) {
        return Model::pairClass(m_programs[stage.pairs[r].candidate], m_programs[stage.pairs[r].anchor]);
    };
    // What the calibration minimises for one row: its pack-weighted Brier score plus ranked probability score.
    auto bins_of = [&](double mu, double sigma) {
        return speedup_bins(mu, std::max(sigma, 1e-3), m_options.scheme, kFloor);
    };
    auto score_of_bins = [](const Bins& p, int bin, const std::pair<double, double>& weight) {
        return weight.first * brier_score(p, bin) + weight.second * ranked_probability_score(p, bin);
    };
    auto score_of = [&](double mu, double sigma, int bin, const std::pair<double, double>& weight) {
        return score_of_bins(bins_of(mu, sigma), bin, weight);
    };
    std::vector<Siblings::Match> sib_of(n);  // the sibling packs' log S of the rows that calibrate
    if (model.siblings)
        for (size_t r = 0; r < n; ++r)
            if (std::isfinite(stage.oof[r]) && stage.calibrates[r])
                sib_of[r] =
                    model.siblings->logSpeedup(m_programs[stage.pairs[r].candidate], m_programs[stage.pairs[r].anchor]);
    // The error scale of unseen packs (see Model::Head::scale), on the rows anchored like a search's.
    {
        std::vector<float> data, labels;
        for (size_t r = 0; r < n; ++r)
            if (!stage.seen[r] && std::isfinite(stage.oof[r]) && stage.calibrates[r]) {
                model.appendRow(data, m_programs[stage.pairs[r].candidate], m_programs[stage.pairs[r].anchor]);
                labels.push_back(static_cast<float>(std::log(std::fabs(truth_of(r) - stage.oof[r]) + kScaleFloor)));
            }
        if (labels.size() >= 200) {
            LocalForecasterOptions o = m_options;
            o.max_depth = 3;
            o.eta = 0.1;
            o.min_child_weight = 20;
            head.scale = train_booster(data, labels, {}, cols, o, m_options.seed * 7907ULL + 11, kScaleRounds);
        }
    }

    // Spread by class, from the out-of-fold residuals; a class with few residuals leans on the pooled RMS.
    double sums[2][Model::kPairClasses] = {};
    int counts[2][Model::kPairClasses] = {};
    double pooled = 0;
    int scored = 0;
    for (size_t r = 0; r < n; ++r) {
        if (!std::isfinite(stage.oof[r]))
            continue;
        const double e = truth_of(r) - stage.oof[r];
        sums[stage.seen[r] != 0][class_of(r)] += e * e;
        ++counts[stage.seen[r] != 0][class_of(r)];
        pooled += e * e;
        ++scored;
    }
    const double pooled_rms = scored > 0 ? std::sqrt(pooled / scored) : kPriorSigma;
    for (int s = 0; s < 2; ++s)
        for (int t = 0; t < Model::kPairClasses; ++t)
            head.rms[s][t] =
                std::max(std::sqrt((sums[s][t] + kShrink * pooled_rms * pooled_rms) / (counts[s][t] + kShrink)), 1e-3);
    // A pack never seen is never easier than a known one; with no pack held out whole (fewer than three packs) its
    // spread is the known one's widened by half the prior's.
    for (int t = 0; t < Model::kPairClasses; ++t)
        head.rms[0][t] = counts[0][t] == 0
                             ? std::sqrt(head.rms[1][t] * head.rms[1][t] + 0.25 * kPriorSigma * kPriorSigma)
                             : std::max(head.rms[0][t], head.rms[1][t]);

    // Calibration of a pack never seen and of a known one, each on its own out-of-fold rows: mu becomes a slope and an
    // intercept of the truth on it, fitted separately for moves (same text, tunables changed) and for other pairs (a
    // move from a pack's best program is slower on average than a model trained on both orientations says; a model
    // that transfers badly is pulled towards "as fast as the anchor"), and sigma = sqrt((tau * rms)^2 + (b * mu)^2):
    // a temperature of the class's RMS plus a share of the predicted change itself (a pair forecast to differ little
    // mostly differs little; the RMS alone would be as wide for an element-wise kernel's moves as for a reduction's).
    // tau and b minimise the Brier score plus the ranked probability score of the out-of-fold true bins, the scores
    // a forecast is judged by.
    bool calibrated[2] = {false, false};
    for (int known = 0; known < 2; ++known) {
        std::vector<size_t> rows;
        for (size_t r = 0; r < n; ++r)
            if (std::isfinite(stage.oof[r]) && stage.calibrates[r] && stage.seen[r] == known)
                rows.push_back(r);
        if (rows.size() < 20)
            continue;
        // Forecasts are judged per problem against that problem's own climatology, so each pack weighs the same in
        // the loss below, relative to its climatology's score: a pack whose moves barely matter (its truth in one
        // bin) is as costly to get wrong as one whose moves matter a lot.
        std::map<std::string, std::array<double, kBinCount>> frequencies;
        std::map<std::string, double> pack_rows;
        for (size_t r : rows) {
            const std::string& pack = m_programs[stage.pairs[r].anchor].pack;
            frequencies[pack][static_cast<size_t>(m_options.scheme.binOf(std::exp(truth_of(r))) - 1)] += 1;
            pack_rows[pack] += 1;
        }
        std::map<std::string, std::pair<double, double>> pack_weight;  // 1 / (rows * climatology's brier, rps)
        for (auto& [pack, f] : frequencies) {
            for (double& v : f)
                v /= pack_rows[pack];
            double brier = 0, rps = 0;
            for (int b = 1; b <= kBinCount; ++b) {
                brier += f[static_cast<size_t>(b - 1)] * brier_score(f, b);
                rps += f[static_cast<size_t>(b - 1)] * ranked_probability_score(f, b);
            }
            pack_weight[pack] = {1.0 / (pack_rows[pack] * std::max(brier, 0.02)),
                                 1.0 / (pack_rows[pack] * std::max(rps, 0.005))};
        }
        calibrated[known] = true;
        // The climatology of the packs and the share of it (Head::climatology) with the least loss on rows whose bins
        // without it are `p`: each row is mixed with the climatology of the other packs, so that a pack's own truths
        // never make its forecasts look better.
        std::array<double, kBinCount> frequency_sum{};
        for (const auto& [pack, f] : frequencies)
            for (size_t b = 0; b < kBinCount; ++b)
                frequency_sum[b] += f[b];
        const double packs = static_cast<double>(frequencies.size());
        for (size_t b = 0; b < kBinCount; ++b)
            head.climatology[known][b] = frequency_sum[b] / packs;
        auto climatology_share_of = [&](const std::vector<size_t>& at, const std::vector<Bins>& p,
                                        const std::vector<int>& bins,
                                        const std::vector<std::pair<double, double>>& weights) {
            if (packs < 3)
                return 0.0;
            std::vector<Bins> others(at.size());
            for (size_t j = 0; j < at.size(); ++j) {
                const auto& own = frequencies.at(m_programs[stage.pairs[at[j]].anchor].pack);
                for (size_t b = 0; b < kBinCount; ++b)
                    others[j][b] = (frequency_sum[b] - own[b]) / (packs - 1);
            }
            double least = std::numeric_limits<double>::infinity(), share = 0;
            for (double trial : kClimatologyShares) {
                double total = 0;
                for (size_t j = 0; j < at.size(); ++j)
                    total += score_of_bins(mix(p[j], others[j], trial), bins[j], weights[j]);
                if (total < least) {
                    least = total;
                    share = trial;
                }
            }
            return share;
        };
        double xy = 0, xx = 0;
        for (size_t r : rows) {
            xy += stage.oof[r] * truth_of(r);
            xx += stage.oof[r] * stage.oof[r];
        }
        const double slope = xx > 0 ? std::clamp(xy / xx, 0.0, 1.0) : 1.0;
        for (int move = 0; move < 2; ++move) {
            head.slope[known][move] = slope;
            head.shift[known][move] = 0;
            // Weighted least squares, each pack weighing as its climatology's Brier score says (see above).
            double n1 = 0, w1 = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
            for (size_t r : rows) {
                if ((class_of(r) > 0) != (move == 1))
                    continue;
                const double x = stage.oof[r], y = truth_of(r);
                const double w = pack_weight[m_programs[stage.pairs[r].anchor].pack].first;
                n1 += 1;
                w1 += w;
                sx += w * x;
                sy += w * y;
                sxx += w * x * x;
                sxy += w * x * y;
            }
            const double var = sxx - sx * sx / std::max(w1, 1e-300);
            if (n1 >= 20 && var > 0) {
                head.slope[known][move] = std::clamp((sxy - sx * sy / w1) / var, 0.0, 1.0);
                head.shift[known][move] = (sy - head.slope[known][move] * sx) / w1;
            }
        }
        // Pairs with sibling packs (Head::stack), on their own rows: for each agreement scale, the weighted least
        // squares of the truth on mu and the trusted sibling log S; the scale that leaves the least; then the spread
        // of what it leaves.
        for (int move = 0; move < 2; ++move) {
            Model::Head::Stack& st = head.stack[known][move];
            st = {};
            std::vector<size_t> with;
            for (size_t r : rows)
                if ((class_of(r) > 0) == (move == 1) && sib_of[r].packs > 0)
                    with.push_back(r);
            if (with.size() < kStackRows)
                continue;
            std::vector<std::pair<double, double>> weights;  // of the rows in `with`, as pack_weight gives them
            for (size_t r : with)
                weights.push_back(pack_weight[m_programs[stage.pairs[r].anchor].pack]);
            double least = std::numeric_limits<double>::infinity();
            for (double agree : {0.03, 0.06, 0.12, 0.25, 0.5, 1.0}) {
                Model::Head::Stack fit = st;
                fit.agree = agree;
                Eigen::MatrixXd x(static_cast<Eigen::Index>(with.size()), 3);
                Eigen::VectorXd y(x.rows());
                for (Eigen::Index i = 0; i < x.rows(); ++i) {
                    const size_t r = with[static_cast<size_t>(i)];
                    const double root = std::sqrt(weights[static_cast<size_t>(i)].first);
                    x.row(i) << root * stage.oof[r], root * fit.trust(sib_of[r].spread) * sib_of[r].log_speedup, root;
                    y(i) = root * truth_of(r);
                }
                const Eigen::ColPivHouseholderQR<Eigen::MatrixXd> qr(x);
                if (qr.rank() < 3)
                    continue;  // mu and the siblings' log S move together: nothing tells their weights apart
                const Eigen::Vector3d beta = qr.solve(y);
                fit.raw_weight = std::clamp(beta(0), 0.0, 2.0);
                fit.sib_weight = std::clamp(beta(1), 0.0, 2.0);
                // The intercept again, for the weights as clamped.
                fit.shift = 0;
                double sw = 0, se = 0;
                for (size_t i = 0; i < with.size(); ++i) {
                    sw += weights[i].first;
                    se += weights[i].first * (truth_of(with[i]) - fit.mu(stage.oof[with[i]], sib_of[with[i]]));
                }
                fit.shift = se / sw;
                double sse = 0;
                for (size_t i = 0; i < with.size(); ++i) {
                    const double e = truth_of(with[i]) - fit.mu(stage.oof[with[i]], sib_of[with[i]]);
                    sse += weights[i].first * e * e;
                }
                if (sse < least) {
                    least = sse;
                    st = fit;
                }
            }
            if (!std::isfinite(least))
                continue;
            double e2 = 0;
            for (size_t r : with) {
                const double e = truth_of(r) - st.mu(stage.oof[r], sib_of[r]);
                e2 += e * e;
            }
            st.rms = std::max(std::sqrt(e2 / static_cast<double>(with.size())), 1e-3);
            // At most kStackCalibrationRows rows, evenly spaced, for the spread's grid; what every point of it needs
            // (mu, the true bin, the weights) is worked out once.
            const size_t kept = std::min(with.size(), kStackCalibrationRows);
            std::vector<double> mu(kept);
            std::vector<int> bin(kept);
            std::vector<size_t> at(kept);
            for (size_t i = 0; i < kept; ++i) {
                at[i] = i * with.size() / kept;
                const size_t r = with[at[i]];
                mu[i] = st.mu(stage.oof[r], sib_of[r]);
                bin[i] = m_options.scheme.binOf(std::exp(truth_of(r)));
            }
            double best = std::numeric_limits<double>::infinity();
            for (double k : {0.0, 0.5, 1.0, 2.0}) {
                Model::Head::Stack trial = st;
                trial.spread_share = k;
                const GridFit fit = grid_search([&](double tau, double b) {
                    trial.temp = tau;
                    trial.change_share = b;
                    double total = 0;
                    for (size_t i = 0; i < kept; ++i)
                        total += score_of(mu[i], trial.sigma(mu[i], sib_of[with[at[i]]]), bin[i], weights[at[i]]);
                    return total;
                });
                if (fit.loss < best) {
                    best = fit.loss;
                    st.temp = fit.tau;
                    st.change_share = fit.b;
                    st.spread_share = k;
                }
            }
            std::vector<Bins> p(kept);
            std::vector<size_t> kept_rows(kept);
            std::vector<std::pair<double, double>> kept_weights(kept);
            for (size_t i = 0; i < kept; ++i) {
                kept_rows[i] = with[at[i]];
                p[i] = bins_of(mu[i], st.sigma(mu[i], sib_of[kept_rows[i]]));
                kept_weights[i] = weights[at[i]];
            }
            st.climatology_share = climatology_share_of(kept_rows, p, bin, kept_weights);
            st.fitted = true;
        }
        // At most kCalibrationRows rows, evenly spaced, keep the grid search cheap.
        if (rows.size() > kCalibrationRows) {
            std::vector<size_t> thin;
            for (size_t i = 0; i < kCalibrationRows; ++i)
                thin.push_back(rows[i * rows.size() / kCalibrationRows]);
            rows = std::move(thin);
        }
        std::vector<double> mu, rms;
        std::vector<int> truth_bin;
        std::vector<std::pair<double, double>> row_weight;
        for (size_t r : rows) {
            const Program& c = m_programs[stage.pairs[r].candidate];
            const Program& a = m_programs[stage.pairs[r].anchor];
            row_weight.push_back(pack_weight[a.pack]);
            const int move = class_of(r) > 0;
            mu.push_back(head.slope[known][move] * stage.oof[r] + head.shift[known][move]);
            const double learned = known ? kNaN : model.unseenScale(head, c, a);
            rms.push_back(std::isfinite(learned) ? learned : head.rms[known][class_of(r)]);
            truth_bin.push_back(m_options.scheme.binOf(std::exp(truth_of(r))));
        }
        auto sigma_of = [&](size_t j, double tau, double b) {
            return std::sqrt(tau * tau * rms[j] * rms[j] + b * b * mu[j] * mu[j]);
        };
        const GridFit fit = grid_search([&](double tau, double b) {
            double total = 0;
            for (size_t j = 0; j < rows.size(); ++j)
                total += score_of(mu[j], sigma_of(j, tau, b), truth_bin[j], row_weight[j]);
            return total;
        });
        head.temp[known] = fit.tau;
        head.change_share[known] = fit.b;
        std::vector<Bins> p(rows.size());
        for (size_t j = 0; j < rows.size(); ++j)
            p[j] = bins_of(mu[j], sigma_of(j, fit.tau, fit.b));
        head.climatology_share[known] = climatology_share_of(rows, p, truth_bin, row_weight);
    }
    if (!calibrated[0] && std::none_of(stage.seen.begin(), stage.seen.end(), [](char v) { return v == 0; })) {
        for (int move = 0; move < 2; ++move) {
            head.slope[0][move] = head.slope[1][move];
            head.shift[0][move] = head.shift[1][move];
        }
        head.temp[0] = head.temp[1];
        head.change_share[0] = head.change_share[1];
        head.climatology_share[0] = head.climatology_share[1];
        head.stack[0][0] = head.stack[1][0];
        head.stack[0][1] = head.stack[1][1];
    }
    // A side with too few rows of its own takes the other side's climatology, so that the blend of both sides in
    // predictLocked() stays a distribution.
    for (int known = 0; known < 2; ++known)
        if (!calibrated[known] && calibrated[1 - known])
            head.climatology[known] = head.climatology[1 - known];
}

}  // namespace kerncast
