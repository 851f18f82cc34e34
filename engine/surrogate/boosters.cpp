#include "engine/surrogate/boosters.h"

#include "core/error.h"

#include <xgboost/c_api.h>

#include <limits>
#include <mutex>
#include <numeric>

namespace kerncast {

void check_xgboost(int rc, const char* what) {
    if (rc != 0)
        throw Error(std::string("XGBoost: ") + what + ": " + XGBGetLastError());
}

namespace {

void check(int rc, const char* what) { check_xgboost(rc, what); }

struct DMatrix {
    DMatrixHandle handle = nullptr;
    DMatrix(const std::vector<float>& data, size_t rows, size_t cols) {
        check(XGDMatrixCreateFromMat(data.data(), rows, cols, std::numeric_limits<float>::quiet_NaN(), &handle),
              "creating a data matrix");
    }
    ~DMatrix() {
        if (handle)
            XGDMatrixFree(handle);
    }
    DMatrix(const DMatrix&) = delete;
    DMatrix& operator=(const DMatrix&) = delete;
};

}  // namespace

void BoosterDeleter::operator()(void* handle) const {
    if (handle)
        XGBoosterFree(handle);
}

void quiet_xgboost() {
    static std::once_flag once;
    std::call_once(once, [] { XGBSetGlobalConfig(R"({"verbosity": 0})"); });
}

std::vector<float> predict_rows(const Booster& booster, const std::vector<float>& data, size_t rows, size_t cols) {
    DMatrix m(data, rows, cols);
    bst_ulong len = 0;
    const float* out = nullptr;
    check(XGBoosterPredict(booster.get(), m.handle, 0, 0, 0, &len, &out), "predicting");
    return std::vector<float>(out, out + len);
}

Booster train_squared_error_booster(const std::vector<float>& data, const std::vector<float>& labels,
                                    const std::vector<float>& weights, size_t cols, uint64_t seed, int rounds,
                                    const std::vector<std::pair<std::string, std::string>>& params) {
    DMatrix train(data, labels.size(), cols);
    check(XGDMatrixSetFloatInfo(train.handle, "label", labels.data(), labels.size()), "setting labels");
    if (!weights.empty())
        check(XGDMatrixSetFloatInfo(train.handle, "weight", weights.data(), weights.size()), "setting weights");
    BoosterHandle handle = nullptr;
    check(XGBoosterCreate(&train.handle, 1, &handle), "creating a booster");
    Booster booster(handle);
    const double base = labels.empty() ? 0.0 : std::accumulate(labels.begin(), labels.end(), 0.0) / labels.size();
    std::vector<std::pair<std::string, std::string>> all = {
        {"booster", "gbtree"},
        {"objective", "reg:squarederror"},
        {"tree_method", "hist"},
        {"nthread", "1"},
        {"verbosity", "0"},
        {"seed", std::to_string(seed)},
        {"base_score", std::to_string(base)},
    };
    all.insert(all.end(), params.begin(), params.end());
    for (const auto& [name, value] : all)
        check(XGBoosterSetParam(handle, name.c_str(), value.c_str()), name.c_str());
    for (int round = 0; round < rounds; ++round)
        check(XGBoosterUpdateOneIter(handle, round, train.handle), "boosting");
    return booster;
}

}  // namespace kerncast
