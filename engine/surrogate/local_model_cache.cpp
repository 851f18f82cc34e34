// The local forecaster's cache of frozen bases: the key (programs, options, model code), the model as a cache
// file holds it, and freezeBase() reading or writing it.

#include "engine/surrogate/local_model.h"

#include "core/error.h"
#include "core/text_util.h"
#include "engine/base64.h"

#include <xgboost/c_api.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

namespace kerncast {

namespace fs = std::filesystem;

namespace {

// Bump when what a cache file holds changes.
constexpr int kCacheFormat = 4;
// Cache files kept (the oldest beyond are removed); a base is a few megabytes.
constexpr size_t kCacheFiles = 48;

#ifndef KERNCAST_FORECASTER_CODE
#define KERNCAST_FORECASTER_CODE "unknown"
#endif

// FNV-1a, 64 bits: the cache key of a base (its programs, options and model code).
struct KeyHash {
    uint64_t h = 1469598103934665603ULL;
    void bytes(const void* data, size_t n) {
        const auto* p = static_cast<const unsigned char*>(data);
        for (size_t i = 0; i < n; ++i) {
            h ^= p[i];
            h *= 1099511628211ULL;
        }
    }
    template<typename T>
    void value(const T& v) {
        static_assert(std::is_arithmetic_v<T>);
        bytes(&v, sizeof v);
    }
    void text(const std::string& t) {
        value(t.size());
        bytes(t.data(), t.size());
    }
};

std::string booster_bytes(const Booster& booster) {
    bst_ulong len = 0;
    const char* out = nullptr;
    check_xgboost(XGBoosterSaveModelToBuffer(booster.get(), R"({"format": "ubj"})", &len, &out), "saving a booster");
    return base64_encode(std::string_view(out, len));
}

Booster booster_of(const std::string& b64) {
    const std::vector<char> bytes = base64_decode(b64);
    BoosterHandle handle = nullptr;
    check_xgboost(XGBoosterCreate(nullptr, 0, &handle), "creating a booster");
    Booster booster(handle);
    check_xgboost(XGBoosterLoadModelFromBuffer(handle, bytes.data(), bytes.size()), "loading a booster");
    check_xgboost(XGBoosterSetParam(handle, "nthread", "1"), "nthread");
    return booster;
}

// An exclusive lock on `path` (created if missing) for as long as it lives: processes and threads that freeze the same
// base take turns, so that the second reads what the first trained instead of training it again (several searches,
// the workbench and the CLI, or tests, starting on a fresh cache at once). Without the file (a read-only cache) it
// holds nothing; the base is then trained as before.
class CacheLock {
public:
    explicit CacheLock(const fs::path& path) {
        m_fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
        if (m_fd >= 0)
            while (::flock(m_fd, LOCK_EX) != 0 && errno == EINTR) {}
    }
    ~CacheLock() {
        if (m_fd >= 0)
            ::close(m_fd);  // releases the lock
    }
    CacheLock(const CacheLock&) = delete;
    CacheLock& operator=(const CacheLock&) = delete;

private:
    int m_fd = -1;
};

}  // namespace

std::string forecaster_cache_dir() {
    const std::string base = xdg_base_dir("XDG_CACHE_HOME", ".cache");
    if (base.empty())
        return {};
    return (fs::path(base) / "kerncast" / "forecaster").string();
}

std::string LocalForecaster::cacheKey() const {
    KeyHash k;
    k.value(kCacheFormat);
    k.text(KERNCAST_FORECASTER_CODE);
    int major = 0, minor = 0, patch = 0;
    XGBoostVersion(&major, &minor, &patch);
    k.value(major), k.value(minor), k.value(patch);
    const LocalForecasterOptions& o = m_options;
    k.value(o.seed), k.value(o.members), k.value(o.rounds), k.value(o.max_depth), k.value(o.eta);
    k.value(o.subsample), k.value(o.colsample), k.value(o.min_child_weight), k.value(o.lambda);
    k.value(o.pairs.all_pairs_up_to), k.value(o.pairs.neighbours), k.value(o.pairs.two_moves);
    k.value(o.pairs.random), k.value(o.pairs.max_pairs);
    k.value(o.pairs.move_elite_share), k.value(o.pairs.move_one), k.value(o.pairs.move_two);
    k.value(o.pairs.move_more), k.value(o.move_max_depth), k.value(o.siblings);
    k.text(o.scheme.id());
    k.value(m_programs.size());
    for (const Program& p : m_programs) {
        k.text(p.pack);
        k.value(p.y);
        k.value(p.features.size());
        for (double f : p.features)
            k.value(f);
        k.value(p.tunables.size());
        for (const auto& [name, value] : p.tunables) {
            k.text(name);
            k.value(value);
        }
        k.value(p.text), k.value(p.key), k.value(p.reference);
        k.value(p.anchor_key.has_value()), k.value(p.anchor_key.value_or(0));
        k.value(p.ref_log_us), k.value(p.floor_log_us);
    }
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(k.h));
    return hex;
}

namespace {

template<size_t N>
nlohmann::json array_of(const double (&v)[N]) {
    return std::vector<double>(v, v + N);
}
template<size_t N>
void read_array(const nlohmann::json& j, double (&v)[N]) {
    const auto read = j.get<std::vector<double>>();
    if (read.size() != N)
        throw Error("a calibration array has " + std::to_string(read.size()) + " values, expected " +
                    std::to_string(N));
    std::copy(read.begin(), read.end(), v);
}
// A climatology as calibrate() writes it: kBinCount frequencies summing to 1, or all 0 (a side never calibrated).
Bins read_climatology(const nlohmann::json& j) {
    const auto read = j.get<std::vector<double>>();
    if (read.size() != kBinCount)
        throw Error("a climatology has " + std::to_string(read.size()) + " bins, expected " +
                    std::to_string(kBinCount));
    double sum = 0;
    for (double v : read) {
        if (!(v >= 0 && v <= 1))
            throw Error("a climatology has a frequency of " + std::to_string(v));
        sum += v;
    }
    if (sum != 0 && std::abs(sum - 1) > 1e-6)
        throw Error("a climatology sums to " + std::to_string(sum) + ", not 1");
    Bins v;
    std::copy(read.begin(), read.end(), v.begin());
    return v;
}
// A climatology share as calibrate() writes it: one of kClimatologyShares' range.
double read_climatology_share(const nlohmann::json& j) {
    const double share = j.get<double>();
    if (!(share >= 0 && share <= kClimatologyShares[std::size(kClimatologyShares) - 1]))
        throw Error("a climatology share of " + std::to_string(share) + " is outside [0, " +
                    std::to_string(kClimatologyShares[std::size(kClimatologyShares) - 1]) + "]");
    return share;
}

}  // namespace

std::string LocalForecaster::cacheFile(const std::string& cache_dir, const std::string& key) {
    return cache_dir.empty() ? std::string() : (fs::path(cache_dir) / ("base-" + key + ".json")).string();
}

bool LocalForecaster::baseCached(const std::string& cache_dir) const {
    std::lock_guard lock(m_mutex);
    if (cache_dir.empty() || m_programs.empty())
        return false;
    std::error_code ec;
    return fs::exists(cacheFile(cache_dir, cacheKey()), ec);
}

void LocalForecaster::freezeBase(const std::string& cache_dir) {
    std::lock_guard lock(m_mutex);
    if (m_programs.empty() || m_baseCount > 0)
        return;
    const std::string key = cacheKey();
    const fs::path file = cacheFile(cache_dir, key);
    std::string why;
    std::optional<CacheLock> lock_file;
    if (!file.empty()) {
        std::error_code ec;
        fs::create_directories(file.parent_path(), ec);
        lock_file.emplace(fs::path(file) += ".lock");  // held until the base is read, or trained and written
    }
    if (!file.empty() && fs::exists(file)) {
        try {
            m_model = loadModel(nlohmann::json::parse(read_text_file(file.string(), "a cached forecaster")), key);
            if (m_options.siblings)
                m_model->siblings = Siblings::of(m_programs);
            m_pending = 0;
            m_lastRetrainSeconds = 0;
            m_baseSource = "cache " + file.string();
        } catch (const std::exception& e) {
            why = "cache " + file.string() + " unreadable, replaced: " + e.what();
        }
    }
    if (m_baseSource.empty()) {
        retrainLocked();
        m_baseSource = why.empty() ? "trained" : "trained (" + why + ")";
        if (!file.empty()) {
            try {
                write_file_atomically(file.string(), saveModel(*m_model, key).dump());
                // The oldest files beyond kCacheFiles go, with their locks.
                std::error_code ec;
                std::vector<std::pair<fs::file_time_type, fs::path>> files;
                for (const auto& entry : fs::directory_iterator(file.parent_path(), ec))
                    if (entry.path().extension() == ".json")
                        files.push_back({entry.last_write_time(ec), entry.path()});
                if (files.size() > kCacheFiles) {
                    std::sort(files.begin(), files.end());
                    for (size_t i = 0; i + kCacheFiles < files.size(); ++i) {
                        fs::remove(files[i].second, ec);
                        fs::remove(fs::path(files[i].second) += ".lock", ec);
                    }
                }
            } catch (const std::exception& e) {
                m_baseSource += "; not cached: " + std::string(e.what());
            }
        }
    }
    m_baseCount = m_programs.size();
    m_basePackPrograms = m_model->pack_programs;
    m_basePairs = m_model->pairs;
    m_correction.reset();
}

// The model as a cache file holds it.
nlohmann::json LocalForecaster::saveModel(const Model& m, const std::string& key) {
    // A head: its boosters in XGBoost's binary model format (UBJSON), in base64.
    auto head_json = [](const Model::Head& h) {
        nlohmann::json j = {{"rms", {array_of(h.rms[0]), array_of(h.rms[1])}},
                            {"slope", {array_of(h.slope[0]), array_of(h.slope[1])}},
                            {"shift", {array_of(h.shift[0]), array_of(h.shift[1])}},
                            {"temp", array_of(h.temp)},
                            {"change_share", array_of(h.change_share)},
                            {"climatology", {h.climatology[0], h.climatology[1]}},
                            {"climatology_share", array_of(h.climatology_share)},
                            {"members", nlohmann::json::array()},
                            {"stack", nlohmann::json::array()},
                            {"scale", h.scale ? nlohmann::json(booster_bytes(h.scale)) : nlohmann::json()}};
        for (const auto& member : h.members)
            j["members"].push_back(booster_bytes(member.booster));
        for (const auto& known : h.stack)
            for (const auto& st : known)
                j["stack"].push_back({{"fitted", st.fitted},
                                      {"raw_weight", st.raw_weight},
                                      {"sib_weight", st.sib_weight},
                                      {"shift", st.shift},
                                      {"agree", st.agree},
                                      {"spread_share", st.spread_share},
                                      {"rms", st.rms},
                                      {"temp", st.temp},
                                      {"change_share", st.change_share},
                                      {"climatology_share", st.climatology_share}});
        return j;
    };
    int major = 0, minor = 0, patch = 0;
    XGBoostVersion(&major, &minor, &patch);
    return {{"format", kCacheFormat},
            {"key", key},
            {"xgboost", std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch)},
            {"tunable_names", m.tunable_names},
            {"pack_programs", m.pack_programs},
            {"identical_sigma", m.identical_sigma},
            {"tau", m.tau},
            {"examples", m.examples},
            {"pairs", m.pairs},
            {"pair", head_json(m.pair)},
            {"move", head_json(m.move)}};
}

std::unique_ptr<LocalForecaster::Model> LocalForecaster::loadModel(const nlohmann::json& j, const std::string& key) {
    if (j.value("format", 0) != kCacheFormat || j.value("key", std::string()) != key)
        throw Error("written for other programs, options or model code (key " + j.value("key", std::string("none")) +
                    ", expected " + key + ")");
    auto read_head = [](const nlohmann::json& saved, Model::Head& h) {
        for (int i = 0; i < 2; ++i) {
            read_array(saved.at("rms").at(i), h.rms[i]);
            read_array(saved.at("slope").at(i), h.slope[i]);
            read_array(saved.at("shift").at(i), h.shift[i]);
        }
        read_array(saved.at("temp"), h.temp);
        read_array(saved.at("change_share"), h.change_share);
        if (saved.at("climatology").size() != 2 || saved.at("climatology_share").size() != 2)
            throw Error("the climatologies or their shares are not one for each side");
        for (int known = 0; known < 2; ++known) {
            h.climatology[known] = read_climatology(saved.at("climatology").at(known));
            h.climatology_share[known] = read_climatology_share(saved.at("climatology_share").at(known));
        }
        for (const auto& b : saved.at("members"))
            h.members.push_back({booster_of(b.get<std::string>())});
        const auto& stack = saved.at("stack");
        if (stack.size() != 4)
            throw Error("the sibling calibration has " + std::to_string(stack.size()) + " entries, expected 4");
        for (size_t i = 0; i < 4; ++i) {
            auto& st = h.stack[i / 2][i % 2];
            st.fitted = stack[i].at("fitted").get<bool>();
            st.raw_weight = stack[i].at("raw_weight").get<double>();
            st.sib_weight = stack[i].at("sib_weight").get<double>();
            st.shift = stack[i].at("shift").get<double>();
            st.agree = stack[i].at("agree").get<double>();
            st.spread_share = stack[i].at("spread_share").get<double>();
            st.rms = stack[i].at("rms").get<double>();
            st.temp = stack[i].at("temp").get<double>();
            st.change_share = stack[i].at("change_share").get<double>();
            st.climatology_share = read_climatology_share(stack[i].at("climatology_share"));
        }
        if (!saved.at("scale").is_null())
            h.scale = booster_of(saved.at("scale").get<std::string>());
    };
    auto m = std::make_unique<Model>();
    try {
        m->tunable_names = j.at("tunable_names").get<std::vector<std::string>>();
        m->pack_programs = j.at("pack_programs").get<std::map<std::string, int>>();
        m->identical_sigma = j.at("identical_sigma").get<double>();
        m->tau = j.at("tau").get<double>();
        m->examples = j.at("examples").get<size_t>();
        m->pairs = j.at("pairs").get<size_t>();
        read_head(j.at("pair"), m->pair);
        read_head(j.at("move"), m->move);
    } catch (const nlohmann::json::exception& e) {
        throw Error(std::string("malformed: ") + e.what());
    }
    return m;
}

}  // namespace kerncast
