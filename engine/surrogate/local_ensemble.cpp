// The local forecaster's booster ensembles: the members trained on the sampled pairs, one head for every pair
// and one for the moves, each then calibrated (local_calibration.cpp).

#include "engine/surrogate/local_model.h"

#include "core/error.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <functional>
#include <map>
#include <random>
#include <set>
#include <thread>

namespace kerncast {

namespace local_model {

// One booster for squared error on rows (optionally weighted), single-threaded and seeded.
Booster train_booster(const std::vector<float>& data, const std::vector<float>& labels,
                      const std::vector<float>& weights, size_t cols, const LocalForecasterOptions& o, uint64_t seed,
                      int rounds) {
    return train_squared_error_booster(data, labels, weights, cols, seed, rounds,
                                       {{"max_depth", std::to_string(o.max_depth)},
                                        {"eta", std::to_string(o.eta)},
                                        {"subsample", std::to_string(o.subsample)},
                                        {"colsample_bytree", std::to_string(o.colsample)},
                                        {"min_child_weight", std::to_string(o.min_child_weight)},
                                        {"lambda", std::to_string(o.lambda)}});
}

// fn(0) ... fn(count - 1), on up to `threads` threads at once (each job on one thread: the results do not depend on
// how many).
void for_each_parallel(int count, int threads, const std::function<void(int)>& fn) {
    const int workers = std::max(1, std::min(threads, count));
    if (workers == 1) {
        for (int k = 0; k < count; ++k)
            fn(k);
        return;
    }
    std::vector<std::thread> pool;
    std::atomic<int> next{0};
    for (int w = 0; w < workers; ++w)
        pool.emplace_back([&] {
            for (int k = next++; k < count; k = next++)
                fn(k);
        });
    for (auto& t : pool)
        t.join();
}

}  // namespace local_model

void LocalForecaster::retrainLocked() {
    if (m_baseCount > 0) {
        retrainCorrectionLocked();
        return;
    }
    m_pending = 0;
    const auto started = std::chrono::steady_clock::now();
    auto model = std::make_unique<Model>();
    model->examples = m_programs.size();
    std::set<std::string> tunable_names;
    std::vector<double> self_noise;  // log speedup of the reference timed against itself
    for (const auto& p : m_programs) {
        ++model->pack_programs[p.pack];
        for (const auto& [name, value] : p.tunables)
            tunable_names.insert(name);
        if (p.reference)
            self_noise.push_back(p.y);
    }
    model->tunable_names.assign(tunable_names.begin(), tunable_names.end());
    if (m_options.siblings)
        model->siblings = Siblings::of(m_programs);
    if (!self_noise.empty()) {
        double s2 = 0;
        for (double v : self_noise)
            s2 += v * v;
        // Shrunk towards the default with one pseudo-measurement; kept within a sane range of timing noise.
        model->identical_sigma =
            std::clamp(std::sqrt((s2 + kIdenticalSigma * kIdenticalSigma) / (self_noise.size() + 1)), 0.002, 0.02);
    }
    const std::vector<ProgramPair> pairs = pairsOf(m_programs, m_options.seed, m_options.pairs);
    model->pairs = pairs.size();
    if (pairs.size() < 2) {
        // Too little to learn a relation: the prior (and the identity rule, with the measured noise) stay.
        model->pair.members.clear();
        m_model = std::move(model);
        m_lastRetrainSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
        return;
    }
    const size_t cols = model->columns();
    const int folds = static_cast<int>(std::min<size_t>(static_cast<size_t>(m_options.members), pairs.size()));

    // Folds. Half of the packs (seeded) are held out whole by one fold: their out-of-fold forecasts are of a pack the
    // member never saw, which is what a new problem is. The other packs' pairs are dealt at random: their
    // out-of-fold forecasts are of a known pack. Each kind calibrates its own spread.
    std::mt19937_64 rng(m_options.seed);
    std::vector<std::string> pack_names;
    for (const auto& [pack, count] : model->pack_programs)
        pack_names.push_back(pack);
    std::shuffle(pack_names.begin(), pack_names.end(), rng);
    std::map<std::string, int> held_whole;  // pack -> its fold
    if (pack_names.size() >= 3)
        for (size_t i = 0; i < pack_names.size(); i += 2)
            held_whole[pack_names[i]] = static_cast<int>((i / 2) % static_cast<size_t>(folds));
    auto stage_of = [&](std::vector<ProgramPair> rows, Model::Head& head) {
        TrainingStage stage;
        stage.pairs = std::move(rows);
        stage.head = &head;
        const size_t n = stage.pairs.size();
        std::map<std::string, int> pack_rows;
        for (const auto& pr : stage.pairs)
            ++pack_rows[m_programs[pr.candidate].pack];
        stage.fold.resize(n);
        stage.seen.resize(n);
        stage.weight.resize(n);
        stage.oof.assign(n, kNaN);
        for (size_t r = 0; r < n; ++r) {
            const std::string& pack = m_programs[stage.pairs[r].candidate].pack;
            const auto whole = held_whole.find(pack);
            stage.fold[r] =
                whole != held_whole.end() ? whole->second : static_cast<int>(rng() % static_cast<uint64_t>(folds));
            stage.seen[r] = whole == held_whole.end();
            // A pack with few pairs (the run's own measurements) keeps some weight beside the recordings' thousands.
            stage.weight[r] = static_cast<float>(std::clamp(kSmallPackRows / pack_rows[pack], 1.0, 8.0));
        }
        return stage;
    };
    std::vector<TrainingStage> stages;
    stages.push_back(stage_of(pairs, model->pair));
    // The move head learns only when there are enough moves from packs' best programs to hold some out.
    if (std::vector<ProgramPair> moves = elite_move_pairs(m_programs, m_options.seed, m_options.pairs);
        moves.size() >= 20 * static_cast<size_t>(folds)) {
        model->pairs += moves.size();
        stages.push_back(stage_of(std::move(moves), model->move));
    }

    for (TrainingStage& stage : stages)
        stage.head->members.resize(static_cast<size_t>(folds));
    const int jobs = folds * static_cast<int>(stages.size());
    std::vector<std::string> errors(static_cast<size_t>(jobs));
    auto train_member = [&](int job) {
        const int k = job % folds;
        TrainingStage& stage = stages[static_cast<size_t>(job / folds)];
        try {
            const size_t n = stage.pairs.size();
            std::vector<float> data, labels, weights, held;
            std::vector<size_t> held_rows;
            data.reserve(n * cols);
            for (size_t r = 0; r < n; ++r) {
                const Program& c = m_programs[stage.pairs[r].candidate];
                const Program& a = m_programs[stage.pairs[r].anchor];
                if (stage.fold[r] == k && folds > 1) {
                    model->appendRow(held, c, a);
                    held_rows.push_back(r);
                    continue;
                }
                model->appendRow(data, c, a);
                labels.push_back(static_cast<float>(c.y - a.y));
                weights.push_back(stage.weight[r]);
            }
            if (labels.empty())
                throw Error("a fold holds every pair");
            Model::Member& member = stage.head->members[static_cast<size_t>(k)];
            LocalForecasterOptions o = m_options;
            if (stage.head == &model->move)
                o.max_depth = m_options.move_max_depth;
            member.booster =
                train_booster(data, labels, weights, cols, o,
                              m_options.seed * 1000003ULL + static_cast<uint64_t>(job) * 7919ULL, m_options.rounds);
            if (!held_rows.empty()) {
                const auto pred = predict_rows(member.booster, held, held_rows.size(), cols);
                for (size_t j = 0; j < held_rows.size(); ++j)
                    stage.oof[held_rows[j]] = static_cast<double>(pred[j]);
            }
        } catch (const Error& e) {
            errors[static_cast<size_t>(job)] = e.what();
        }
    };
    for_each_parallel(jobs, m_options.threads, train_member);
    for (const auto& e : errors)
        if (!e.empty())
            throw Error(e);

    // The rows are those a search asks about: a search anchors its children on its best measured programs, so only
    // pairs whose anchor is among the top kEliteShare of its pack's programs calibrate the pair head (a sweep's poor
    // configurations differ from each other far more than an elite's neighbours do); every row of the move head is
    // anchored so.
    std::map<std::string, std::vector<double>> pack_speedups;
    for (const auto& p : m_programs)
        pack_speedups[p.pack].push_back(p.y);
    std::map<std::string, double> elite_from;
    for (auto& [pack, ys] : pack_speedups) {
        std::sort(ys.begin(), ys.end());
        elite_from[pack] =
            ys[static_cast<size_t>(std::floor((1.0 - kEliteShare) * static_cast<double>(ys.size() - 1)))];
    }
    for (TrainingStage& stage : stages) {
        stage.calibrates.resize(stage.pairs.size());
        for (size_t r = 0; r < stage.pairs.size(); ++r) {
            const Program& a = m_programs[stage.pairs[r].anchor];
            stage.calibrates[r] = stage.head == &model->move || a.y >= elite_from[a.pack];
        }
        calibrate(*model, stage, cols);
    }
    model->tau = model->pair.temp[0];

    m_model = std::move(model);
    m_lastRetrainSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
}

}  // namespace kerncast
