#include "core/t4_results.h"

#include "core/error.h"
#include "core/gzip_file.h"
#include "core/untrusted_json.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#ifndef KERNCAST_VERSION
#define KERNCAST_VERSION "unknown"
#endif

namespace kerncast {

namespace {

constexpr const char* kStatusField = "kerncast_status";
constexpr const char* kInvalidities[] = {"correct", "compile", "runtime", "constraints", "timeout", "correctness"};

// Milliseconds per unit of the file's metadata.timeunit; 0 for a unit not known. Kernel Tuner writes
// "milliseconds" (before 1.1, "miliseconds").
double ms_per_unit(const std::string& unit) {
    static const std::map<std::string, double> units = {
        {"milliseconds", 1.0}, {"miliseconds", 1.0}, {"millisecond", 1.0},  {"ms", 1.0},
        {"seconds", 1000.0},   {"second", 1000.0},   {"s", 1000.0},         {"microseconds", 1e-3},
        {"microsecond", 1e-3}, {"us", 1e-3},         {"nanoseconds", 1e-6}, {"ns", 1e-6}};
    std::string lower;
    for (char ch : unit)
        lower += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    const auto it = units.find(lower);
    return it == units.end() ? 0.0 : it->second;
}

nlohmann::ordered_json ordered(const nlohmann::json& j) { return nlohmann::ordered_json::parse(j.dump()); }

// The kind of failure a cache entry records, as T4 names it.
std::string invalidity_of(const KernelTunerEntry& e) {
    if (e.time_ms)
        return "correct";
    if (const auto s = e.extra.find(kStatusField); s != e.extra.end() && s->is_string()) {
        const std::string status = s->get<std::string>();
        if (status == "compile_error")
            return "compile";
        if (status == "timeout")
            return "timeout";
        if (status == "incorrect")
            return "correctness";
        if (status != "ok")
            return "runtime";
    }
    if (e.error == "CompilationFailedConfig")
        return "compile";
    if (e.error == "InvalidConfig")
        return "constraints";
    return "runtime";
}

}  // namespace

std::string describe_configuration(const std::vector<std::string>& keys, const std::vector<int64_t>& values) {
    std::string s;
    for (size_t k = 0; k < keys.size() && k < values.size(); ++k)
        s += (k ? " " : "") + keys[k] + "=" + std::to_string(values[k]);
    return s;
}

T4Results parse_t4_results(const std::string& text, const std::string& file_name,
                           const std::vector<std::string>& key_order) {
    const SourceLocation top{file_name, 0};
    const nlohmann::json doc = parse_untrusted_json(text, SourceLocation{file_name, 1});
    if (!doc.is_object() || !doc.contains("results") || !doc["results"].is_array())
        throw Error(top, "not T4 results: expected a JSON object with a \"results\" list");
    const auto& results = doc["results"];
    if (results.empty())
        throw Error(top, "the T4 results file holds no result");

    T4Results out;
    KernelTunerCache& c = out.cache;
    c.objective = "time";
    out.time_unit = "milliseconds";
    if (doc.contains("metadata") && doc["metadata"].is_object()) {
        const auto& meta = doc["metadata"];
        if (meta.contains("timeunit")) {
            if (!meta["timeunit"].is_string())
                throw Error(top, "metadata.timeunit must be a string such as \"milliseconds\"");
            out.time_unit = meta["timeunit"].get<std::string>();
        }
        if (meta.contains("kerncast") && meta["kerncast"].is_object()) {
            c.extra["kerncast"] = ordered(meta["kerncast"]);
            const auto& own = meta["kerncast"];
            if (own.contains("device") && own["device"].is_object() && own["device"].contains("name") &&
                own["device"]["name"].is_string())
                c.device_name = own["device"]["name"].get<std::string>();
        }
    }
    const double scale = ms_per_unit(out.time_unit);
    if (!(scale > 0))
        throw Error(top, "metadata.timeunit \"" + shorten_for_message(out.time_unit, 40) +
                             "\" is not a time unit Kerncast knows (milliseconds, seconds, microseconds, "
                             "nanoseconds)");

    // The tunables: the first result's, in the given order when it names the same ones.
    {
        const auto& first = results.front();
        if (!first.is_object() || !first.contains("configuration") || !first["configuration"].is_object() ||
            first["configuration"].empty())
            throw Error(top, "results[0] has no \"configuration\" object of tunable values");
        for (const auto& [name, value] : first["configuration"].items())
            c.keys.push_back(name);  // nlohmann::json keeps names sorted
        auto sorted_order = key_order;
        std::sort(sorted_order.begin(), sorted_order.end());
        if (sorted_order == c.keys)
            c.keys = key_order;
    }
    const std::set<std::string> key_set(c.keys.begin(), c.keys.end());
    std::vector<std::set<int64_t>> seen_values(c.keys.size());
    std::map<std::string, size_t> seen;  // key -> result index

    c.entries.reserve(results.size());
    for (size_t i = 0; i < results.size(); ++i) {
        const auto& r = results[i];
        const std::string at = "results[" + std::to_string(i) + "]";
        if (!r.is_object() || !r.contains("configuration") || !r["configuration"].is_object())
            throw Error(top, at + " has no \"configuration\" object of tunable values");
        const auto& config = r["configuration"];
        KernelTunerEntry e;
        std::set<std::string> names;
        for (const auto& [name, value] : config.items())
            names.insert(name);
        if (names != key_set) {
            std::string have, want;
            for (const auto& n : names)
                have += (have.empty() ? "" : ", ") + n;
            for (const auto& n : key_set)
                want += (want.empty() ? "" : ", ") + n;
            throw Error(top, at + " tunes " + have + "; results[0] tunes " + want);
        }
        for (size_t k = 0; k < c.keys.size(); ++k) {
            const auto& v = config[c.keys[k]];
            if (!v.is_number_integer())
                throw Error(top, at + ": " + c.keys[k] + " = " + shorten_for_message(v.dump(), 40) +
                                     "; Kerncast tunables are integers");
            e.values.push_back(v.get<int64_t>());
            seen_values[k].insert(e.values.back());
        }
        const std::string label = at + " (" + describe_configuration(c.keys, e.values) + ")";
        if (const auto [it, fresh] = seen.emplace(e.key(), i); !fresh)
            throw Error(top, label + " appears twice: results[" + std::to_string(it->second) +
                                 "] is the same "
                                 "configuration");

        if (!r.contains("invalidity") || !r["invalidity"].is_string())
            throw Error(top, label + " has no \"invalidity\" (\"correct\" or the kind of failure)");
        const std::string invalidity = r["invalidity"].get<std::string>();
        if (std::find(std::begin(kInvalidities), std::end(kInvalidities), invalidity) == std::end(kInvalidities))
            throw Error(top, label + ": invalidity \"" + shorten_for_message(invalidity, 40) +
                                 "\" is none of correct, compile, runtime, constraints, timeout, correctness");

        // Times: every field is optional in the schema; absent ones are 0.
        const nlohmann::json times =
            r.contains("times") && r["times"].is_object() ? r["times"] : nlohmann::json::object();
        auto time_field = [&](std::initializer_list<const char*> names) -> std::optional<double> {
            for (const char* n : names)
                if (times.contains(n)) {
                    if (!times[n].is_number())
                        throw Error(top, label + ": times." + n + " must be a number");
                    return times[n].get<double>() * scale;
                }
            return std::nullopt;
        };
        e.compile_time_ms = time_field({"compilation", "compilation_time"}).value_or(0.0);
        e.verification_time_ms = time_field({"validation"}).value_or(0.0);
        e.strategy_time_ms = time_field({"search_algorithm"}).value_or(0.0);
        e.framework_time_ms = time_field({"framework"}).value_or(0.0);
        if (times.contains("runtimes")) {
            if (!times["runtimes"].is_array())
                throw Error(top, label + ": times.runtimes must be a list of numbers");
            for (const auto& t : times["runtimes"]) {
                if (!t.is_number())
                    throw Error(top, label + ": times.runtimes holds " + shorten_for_message(t.dump(), 40));
                e.times_ms.push_back(t.get<double>() * scale);
            }
        }
        if (const auto benchmark = time_field({"benchmark"})) {
            e.benchmark_time_ms = *benchmark;
        } else {
            double sum = 0;
            for (double t : e.times_ms)
                sum += t;
            e.benchmark_time_ms = sum;
            ++out.benchmark_from_runtimes;
        }
        if (r.contains("timestamp") && r["timestamp"].is_string())
            e.timestamp = r["timestamp"].get<std::string>();

        // Measurements: the objective's value, and everything else kept as an entry field (as get_t4_results
        // made them from the cache entry's fields).
        std::optional<nlohmann::json> time_value;
        if (r.contains("measurements")) {
            if (!r["measurements"].is_array())
                throw Error(top, label + ": \"measurements\" must be a list");
            for (const auto& m : r["measurements"]) {
                if (!m.is_object() || !m.contains("name") || !m["name"].is_string() || !m.contains("value"))
                    throw Error(top, label + ": a measurement needs a \"name\" and a \"value\"");
                const std::string name = m["name"].get<std::string>();
                if (name == "time")
                    time_value = m["value"];
                else if (name != "__error__" && !key_set.count(name))
                    e.extra[name] = ordered(m["value"]);
            }
        }
        if (invalidity == "correct") {
            if (!time_value || !time_value->is_number())
                throw Error(top, label + " is \"correct\" but has no numeric \"time\" measurement");
            e.time_ms = time_value->get<double>() * scale;
            if (!(std::isfinite(*e.time_ms) && *e.time_ms > 0))
                throw Error(top, label + " has a time that is not a number > 0");
        } else {
            e.error = invalidity == "compile"       ? "CompilationFailedConfig"
                      : invalidity == "constraints" ? "InvalidConfig"
                                                    : "RuntimeFailedConfig";
            if (!e.extra.contains(kStatusField)) {
                if (invalidity == "timeout")
                    e.extra[kStatusField] = "timeout";
                else if (invalidity == "correctness")
                    e.extra[kStatusField] = "incorrect";
            }
        }
        c.entries.push_back(std::move(e));
    }
    for (const auto& vs : seen_values)
        c.values.emplace_back(vs.begin(), vs.end());
    c.validate(file_name);
    return out;
}

T4Results load_t4_results(const std::string& path, const std::vector<std::string>& key_order) {
    return parse_t4_results(read_maybe_gzipped_file(path, "the T4 results file"), path, key_order);
}

nlohmann::ordered_json t4_results_json(const KernelTunerCache& cache) {
    nlohmann::ordered_json results = nlohmann::ordered_json::array();
    for (const auto& e : cache.entries) {
        nlohmann::ordered_json r;
        if (!e.timestamp.empty())
            r["timestamp"] = e.timestamp;
        nlohmann::ordered_json config = nlohmann::ordered_json::object();
        for (size_t k = 0; k < cache.keys.size() && k < e.values.size(); ++k)
            config[cache.keys[k]] = e.values[k];
        r["configuration"] = config;
        nlohmann::ordered_json times;
        times["compilation"] = e.compile_time_ms;
        times["benchmark"] = e.benchmark_time_ms;
        times["framework"] = e.framework_time_ms;
        times["search_algorithm"] = e.strategy_time_ms;
        times["validation"] = e.verification_time_ms;
        times["runtimes"] = e.times_ms;
        r["times"] = times;
        r["invalidity"] = invalidity_of(e);
        // As get_t4_results writes it: 1 unless the configuration failed the correctness check (a configuration
        // that did not compile or run was not checked).
        r["correctness"] = r["invalidity"] == "correctness" ? 0 : 1;
        nlohmann::ordered_json measurements = nlohmann::ordered_json::array();
        nlohmann::ordered_json time = {{"name", cache.objective.empty() ? "time" : cache.objective}};
        if (e.time_ms)
            time["value"] = *e.time_ms;
        else
            time["value"] = e.error;
        time["unit"] = "ms";
        measurements.push_back(time);
        for (auto it = e.extra.begin(); it != e.extra.end(); ++it) {
            const auto& v = it.value();
            // The schema's measurement values are numbers, strings or lists.
            nlohmann::ordered_json value =
                v.is_number() || v.is_string() || v.is_array() ? v : nlohmann::ordered_json(v.dump());
            measurements.push_back(
                {{"name", it.key()}, {"value", value}, {"unit", it.key().rfind("time", 0) == 0 ? "ms" : ""}});
        }
        r["measurements"] = measurements;
        r["objectives"] = {cache.objective.empty() ? "time" : cache.objective};
        results.push_back(std::move(r));
    }
    nlohmann::ordered_json meta = {{"timeunit", "milliseconds"}};
    if (const auto own = cache.extra.find("kerncast"); own != cache.extra.end())
        meta["kerncast"] = *own;
    nlohmann::ordered_json doc;
    doc["results"] = std::move(results);
    doc["schema_version"] = kT4SchemaVersion;
    doc["metadata"] = std::move(meta);
    return doc;
}

nlohmann::ordered_json t4_metadata_json(const KernelTunerCache& cache) {
    nlohmann::ordered_json gpu = {{"class", "display"}, {"product", cache.device_name}};
    nlohmann::ordered_json query = nlohmann::ordered_json::object();
    nlohmann::ordered_json own = nlohmann::ordered_json::object();
    if (const auto it = cache.extra.find("kerncast"); it != cache.extra.end() && it->is_object()) {
        if (it->contains("device") && (*it)["device"].is_object()) {
            const auto& d = (*it)["device"];
            if (d.contains("uuid") && d["uuid"].is_string() && !d["uuid"].get<std::string>().empty())
                gpu["serial"] = d["uuid"];
            query["kerncast"]["device"] = d;
        }
        if (it->contains("ceilings"))
            query["kerncast"]["ceilings"] = (*it)["ceilings"];
        if (it->contains("problem"))
            own["problem"] = (*it)["problem"];
    }
    own["kernel_name"] = cache.kernel_name;
    own["problem_size"] = cache.problem_size;
    own["tune_params_keys"] = cache.keys;
    nlohmann::ordered_json params = nlohmann::ordered_json::object();
    for (size_t k = 0; k < cache.keys.size() && k < cache.values.size(); ++k)
        params[cache.keys[k]] = cache.values[k];
    own["tune_params"] = params;
    own["objective"] = cache.objective;
    nlohmann::ordered_json metadata;
    metadata["hardware"] = {{"hardware_description", nlohmann::ordered_json::array({gpu})}};
    metadata["environment"] = {{"device_query", query},
                               {"requirements", nlohmann::ordered_json::array({"kerncast==" KERNCAST_VERSION})}};
    metadata["kerncast"] = own;
    nlohmann::ordered_json doc;
    doc["metadata"] = std::move(metadata);
    doc["schema_version"] = kT4SchemaVersion;
    return doc;
}

}  // namespace kerncast
