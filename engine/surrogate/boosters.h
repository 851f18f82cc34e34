#pragma once
// XGBoost through its C API, as the surrogates use it: dense float matrices (NaN: missing), single-threaded seeded
// boosters for squared error, errors as kerncast::Error. Shared by the local forecaster and the space model.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace kerncast {

struct BoosterDeleter {
    void operator()(void* handle) const;
};
using Booster = std::unique_ptr<void, BoosterDeleter>;

// Throws kerncast::Error with XGBoost's last error when rc is not 0.
void check_xgboost(int rc, const char* what);

// Silences XGBoost's own warnings (a surrogate reports through its results instead); idempotent.
void quiet_xgboost();

// Predictions of `rows` rows of `cols` columns (row-major).
std::vector<float> predict_rows(const Booster& booster, const std::vector<float>& data, size_t rows, size_t cols);

// One booster for squared error on rows (optionally weighted), single-threaded, seeded, starting from the labels'
// mean; `params` are XGBoost's own parameters (max_depth, eta, subsample, ...), set after the fixed ones.
Booster train_squared_error_booster(const std::vector<float>& data, const std::vector<float>& labels,
                                    const std::vector<float>& weights, size_t cols, uint64_t seed, int rounds,
                                    const std::vector<std::pair<std::string, std::string>>& params);

}  // namespace kerncast
