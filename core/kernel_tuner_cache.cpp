#include "core/kernel_tuner_cache.h"

#include "core/error.h"
#include "core/gzip_file.h"
#include "core/untrusted_json.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <set>

namespace kerncast {

namespace {

constexpr const char* kErrorNames[] = {"CompilationFailedConfig", "RuntimeFailedConfig", "InvalidConfig",
                                       "ErrorConfig"};
// Entry fields this module reads and writes itself; everything else is kept in `extra`.
constexpr const char* kEntryFields[] = {"time",           "times",         "compile_time",   "verification_time",
                                        "benchmark_time", "strategy_time", "framework_time", "timestamp",
                                        "__error__"};

bool is_error_name(const std::string& s) {
    return std::find(std::begin(kErrorNames), std::end(kErrorNames), s) != std::end(kErrorNames);
}

std::string join_values(const std::vector<int64_t>& values) {
    std::string key;
    for (size_t i = 0; i < values.size(); ++i)
        key += (i ? "," : "") + std::to_string(values[i]);
    return key;
}

int line_of_offset(const std::string& text, size_t offset) {
    offset = std::min(offset, text.size());
    return 1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(offset), '\n'));
}

// The lines where cache keys are written ("key": {), looked up in file order: each search starts where the last
// one ended and lines are counted once, so a hub cache of 11,000 entries (tens of MB) is read in one pass.
class KeyLines {
public:
    explicit KeyLines(const std::string& text) : m_text(text) {}
    int line(const std::string& key) {
        const std::string needle = "\"" + key + "\": {";
        auto at = m_text.find(needle, m_at);
        if (at == std::string::npos) {  // out of file order (a repeated key): from the start
            at = m_text.find(needle);
            if (at == std::string::npos)
                return 0;
            m_at = 0;
            m_line = 1;
        }
        m_line += static_cast<int>(std::count(m_text.begin() + static_cast<std::ptrdiff_t>(m_at),
                                              m_text.begin() + static_cast<std::ptrdiff_t>(at), '\n'));
        m_at = at;
        return m_line;
    }

private:
    const std::string& m_text;
    size_t m_at = 0;
    int m_line = 1;
};

// Kernel Tuner's correct_open_cache(): a file without its closing brackets is closed (a trailing comma dropped).
std::string close_open_cache(const std::string& text) {
    const auto first = text.find_first_not_of(" \t\r\n");
    if (first == std::string::npos)
        return {};
    std::string s = text.substr(first, text.find_last_not_of(" \t\r\n") - first + 1);
    const std::string tail = s.size() >= 3 ? s.substr(s.size() - 3) : s;
    if (tail != "}\n}" && tail != "}}}") {
        if (s.back() == ',')
            s.pop_back();
        s += "}\n}";
    }
    return s;
}

// Python's repr() of a float: the shortest digits that read back the same (nlohmann's Grisu2 is not always
// shortest), in fixed notation unless the decimal point falls more than 4 places left or 16 right of the first
// digit, where it uses d.ddde+XX; integral values keep ".0"; non-finite ones are NaN and Infinity as json.dumps
// writes them.
std::string python_float_repr(double d) {
    if (std::isnan(d))
        return "NaN";
    if (std::isinf(d))
        return d > 0 ? "Infinity" : "-Infinity";
    if (d == 0)
        return std::signbit(d) ? "-0.0" : "0.0";
    char buf[64];
    const auto res = std::to_chars(buf, buf + sizeof buf, d, std::chars_format::scientific);
    std::string sci(buf, res.ptr);
    std::string sign;
    if (sci[0] == '-') {
        sign = "-";
        sci.erase(0, 1);
    }
    const auto e = sci.find('e');
    std::string digits = sci.substr(0, e);
    digits.erase(std::remove(digits.begin(), digits.end(), '.'), digits.end());
    const int decpt = std::stoi(sci.substr(e + 1)) + 1;  // value = 0.<digits> x 10^decpt
    const int n = static_cast<int>(digits.size());
    if (decpt <= -4 || decpt > 16) {
        std::string out = sign + digits.substr(0, 1);
        if (n > 1)
            out += "." + digits.substr(1);
        const int exp = decpt - 1;
        char ebuf[16];
        std::snprintf(ebuf, sizeof ebuf, "e%c%02d", exp < 0 ? '-' : '+', std::abs(exp));
        return out + ebuf;
    }
    if (decpt <= 0)
        return sign + "0." + std::string(static_cast<size_t>(-decpt), '0') + digits;
    if (decpt >= n)
        return sign + digits + std::string(static_cast<size_t>(decpt - n), '0') + ".0";
    return sign + digits.substr(0, static_cast<size_t>(decpt)) + "." + digits.substr(static_cast<size_t>(decpt));
}

}  // namespace

std::string KernelTunerEntry::key() const { return join_values(values); }

void KernelTunerCache::validate(const std::string& file_name) const {
    const SourceLocation where{file_name, 0};
    if (keys.empty())
        throw Error(where, "tune_params_keys is empty: a Kernel Tuner cache holds tunable configurations");
    if (values.size() != keys.size())
        throw Error(where, "tune_params has " + std::to_string(values.size()) + " value lists for " +
                               std::to_string(keys.size()) + " tune_params_keys");
    for (size_t k = 0; k < keys.size(); ++k)
        if (values[k].empty())
            throw Error(where, "tune_params[\"" + keys[k] + "\"] has no values");
    std::set<std::string> seen;
    for (const auto& e : entries) {
        const SourceLocation at{file_name, e.line};
        if (e.values.size() != keys.size())
            throw Error(at, "configuration \"" + e.key() + "\" has " + std::to_string(e.values.size()) +
                                " values; expected one per tune_params_keys entry (" + std::to_string(keys.size()) +
                                ")");
        for (size_t k = 0; k < keys.size(); ++k)
            if (std::find(values[k].begin(), values[k].end(), e.values[k]) == values[k].end())
                throw Error(at, "configuration \"" + e.key() + "\": " + keys[k] + " = " + std::to_string(e.values[k]) +
                                    " is not among tune_params[\"" + keys[k] + "\"]");
        if (!seen.insert(e.key()).second)
            throw Error(at, "configuration \"" + e.key() + "\" appears twice");
        if (!e.time_ms && !is_error_name(e.error))
            throw Error(at, "configuration \"" + e.key() + "\" has neither a time nor a failure name");
        if (e.time_ms && !(std::isfinite(*e.time_ms) && *e.time_ms >= 0))
            throw Error(at, "configuration \"" + e.key() + "\" has a time that is not a finite number >= 0");
    }
}

const KernelTunerEntry* KernelTunerCache::find(const std::vector<int64_t>& v) const {
    for (const auto& e : entries)
        if (e.values == v)
            return &e;
    return nullptr;
}

std::string python_json_dumps(const nlohmann::ordered_json& value) {
    if (value.is_object()) {
        std::string s = "{";
        bool first = true;
        for (auto it = value.begin(); it != value.end(); ++it) {
            s += (first ? "" : ", ") + nlohmann::ordered_json(it.key()).dump(-1, ' ', true) + ": " +
                 python_json_dumps(it.value());
            first = false;
        }
        return s + "}";
    }
    if (value.is_array()) {
        std::string s = "[";
        for (size_t i = 0; i < value.size(); ++i)
            s += (i ? ", " : "") + python_json_dumps(value[i]);
        return s + "]";
    }
    if (value.is_number_float())
        return python_float_repr(value.get<double>());
    return value.dump(-1, ' ', true);
}

std::string write_kernel_tuner_cache(const KernelTunerCache& cache) {
    cache.validate("(cache being written)");
    nlohmann::ordered_json header;
    header["device_name"] = cache.device_name;
    header["kernel_name"] = cache.kernel_name;
    header["problem_size"] = cache.problem_size;
    header["tune_params_keys"] = cache.keys;
    nlohmann::ordered_json params = nlohmann::ordered_json::object();
    for (size_t k = 0; k < cache.keys.size(); ++k)
        params[cache.keys[k]] = cache.values[k];
    header["tune_params"] = params;
    header["objective"] = cache.objective;
    for (auto it = cache.extra.begin(); it != cache.extra.end(); ++it)
        if (!header.contains(it.key()) && it.key() != "cache")
            header[it.key()] = it.value();
    header["cache"] = nlohmann::ordered_json::object();
    // json.dumps(indent="") is nlohmann's dump(0): a newline before every item, no indentation, ": " after keys.
    std::string text = header.dump(0, ' ', true);
    text.resize(text.size() - 3);  // Kernel Tuner writes the header without its closing "}\n}"
    for (const auto& e : cache.entries) {
        nlohmann::ordered_json j;
        for (size_t k = 0; k < cache.keys.size(); ++k)
            j[cache.keys[k]] = e.values[k];
        // Kernel Tuner 1.x marks a failed configuration with "__error__" and writes no time for it.
        if (e.time_ms)
            j["time"] = *e.time_ms;
        else
            j["__error__"] = e.error;
        if (!e.times_ms.empty())
            j["times"] = e.times_ms;
        auto time = [&](const char* field, double ms) {
            if (ms == 0 && !e.float_zero_times.count(field))
                j[field] = 0;
            else
                j[field] = ms;
        };
        time("compile_time", e.compile_time_ms);
        time("verification_time", e.verification_time_ms);
        time("benchmark_time", e.benchmark_time_ms);
        // Metrics and other fields, then the tuning loop's own, in the order Kernel Tuner's runner adds them.
        for (auto it = e.extra.begin(); it != e.extra.end(); ++it)
            if (!j.contains(it.key()))
                j[it.key()] = it.value();
        time("strategy_time", e.strategy_time_ms);
        time("framework_time", e.framework_time_ms);
        if (!e.timestamp.empty())
            j["timestamp"] = e.timestamp;
        nlohmann::ordered_json line;
        line[e.key()] = j;
        const std::string dumped = python_json_dumps(line);
        text += "\n" + dumped.substr(1, dumped.size() - 2) + ",";
    }
    // close_cache(): the trailing comma becomes the closing brackets. An empty cache keeps its header's "{".
    if (!cache.entries.empty())
        text.pop_back();
    return text + "}\n}";  // no newline after the last bracket, as close_cache() leaves it
}

KernelTunerCache parse_kernel_tuner_cache(const std::string& text, const std::string& file_name) {
    const std::string closed = close_open_cache(text);
    // Nesting, length and numbers past the largest double are checked by the limited parser; the ordered parse keeps
    // the key order the file is written in (and reports its syntax errors).
    std::string beyond_limits;
    const bool within_limits = try_parse_untrusted_json(closed, &beyond_limits).has_value();
    nlohmann::ordered_json doc;
    try {
        doc = nlohmann::ordered_json::parse(closed);
    } catch (const nlohmann::json::parse_error& e) {
        std::string what = e.what();
        if (const auto at = what.find("] "); at != std::string::npos)
            what = what.substr(at + 2);
        throw Error(SourceLocation{file_name, line_of_offset(closed, e.byte > 0 ? e.byte - 1 : 0)},
                    "not a Kernel Tuner cache: " + shorten_for_message(what, 200));
    } catch (const nlohmann::json::exception&) {
        // a number past the largest double: reported below with its line
    }
    if (!within_limits)
        throw Error(SourceLocation{file_name, 0}, "not a Kernel Tuner cache: " + beyond_limits);
    const SourceLocation top{file_name, 1};
    if (!doc.is_object())
        throw Error(top, "not a Kernel Tuner cache: expected a JSON object");
    auto require = [&](const char* field, auto check, const char* what) -> const nlohmann::ordered_json& {
        const auto it = doc.find(field);
        if (it == doc.end())
            throw Error(top, std::string("missing header field \"") + field + "\" (" + what + ")");
        if (!check(*it))
            throw Error(SourceLocation{file_name, line_of_offset(closed, closed.find(std::string("\"") + field))},
                        std::string("header field \"") + field + "\" must be " + what);
        return *it;
    };
    KernelTunerCache cache;
    cache.device_name = require(
                            "device_name", [](const auto& v) { return v.is_string(); }, "a string")
                            .template get<std::string>();
    cache.kernel_name = require(
                            "kernel_name", [](const auto& v) { return v.is_string(); }, "a string")
                            .template get<std::string>();
    if (const auto ps = doc.find("problem_size"); ps != doc.end()) {
        if (ps->is_number_integer())
            cache.problem_size = {ps->get<int64_t>()};
        else if (ps->is_array() &&
                 std::all_of(ps->begin(), ps->end(), [](const auto& v) { return v.is_number_integer(); }))
            cache.problem_size = ps->get<std::vector<int64_t>>();
        else if (!ps->is_string())  // "callable" when Kernel Tuner was given a function
            throw Error(top, "header field \"problem_size\" must be an integer or a list of integers");
    }
    const auto& keys = require(
        "tune_params_keys",
        [](const auto& v) {
        return v.is_array() && std::all_of(v.begin(), v.end(), [](const auto& k) { return k.is_string(); });
        },
        "a list of tunable names");
    cache.keys = keys.template get<std::vector<std::string>>();
    const auto& params = require(
        "tune_params", [](const auto& v) { return v.is_object(); }, "an object of value lists");
    for (const auto& k : cache.keys) {
        const auto it = params.find(k);
        if (it == params.end() || !it->is_array())
            throw Error(top, "tune_params has no value list for \"" + k + "\"");
        std::vector<int64_t> vs;
        for (const auto& v : *it) {
            if (!v.is_number_integer())
                throw Error(top, "tune_params[\"" + k + "\"] holds " + v.dump() + "; Kerncast tunables are integers");
            vs.push_back(v.get<int64_t>());
        }
        cache.values.push_back(std::move(vs));
    }
    cache.objective = doc.value("objective", std::string("time"));
    for (auto it = doc.begin(); it != doc.end(); ++it)
        if (it.key() != "device_name" && it.key() != "kernel_name" && it.key() != "problem_size" &&
            it.key() != "tune_params_keys" && it.key() != "tune_params" && it.key() != "objective" &&
            it.key() != "cache")
            cache.extra[it.key()] = it.value();
    const auto& entries = require(
        "cache", [](const auto& v) { return v.is_object(); }, "an object");
    KeyLines key_lines(closed);
    cache.entries.reserve(entries.size());
    for (auto it = entries.begin(); it != entries.end(); ++it) {
        const SourceLocation at{file_name, key_lines.line(it.key())};
        const auto& j = it.value();
        if (!j.is_object())
            throw Error(at, "configuration \"" + it.key() + "\" must be an object");
        KernelTunerEntry e;
        e.line = at.line;
        for (const auto& k : cache.keys) {
            const auto v = j.find(k);
            if (v == j.end() || !v->is_number_integer())
                throw Error(at, "configuration \"" + it.key() + "\" has no integer \"" + k + "\"");
            e.values.push_back(v->get<int64_t>());
        }
        if (e.key() != it.key())
            throw Error(at, "configuration key \"" + it.key() + "\" does not match its values (" + e.key() +
                                ") in tune_params_keys order");
        // A failure is a failure name in any field ("__error__" since Kernel Tuner 1.0, "time" before), as Kernel
        // Tuner's own reader takes it; otherwise "time" is the objective.
        for (auto f = j.begin(); f != j.end(); ++f)
            if (e.error.empty() && f.value().is_string() && is_error_name(f.value().get<std::string>()))
                e.error = f.value().get<std::string>();
        const auto time = j.find("time");
        if (e.error.empty()) {
            if (time == j.end())
                throw Error(at, "configuration \"" + it.key() + "\" has neither a \"time\" nor an \"__error__\"");
            if (!time->is_number())
                throw Error(at, "configuration \"" + it.key() +
                                    "\": \"time\" must be a number or a failure name "
                                    "(CompilationFailedConfig, RuntimeFailedConfig, InvalidConfig), found " +
                                    time->dump());
            e.time_ms = time->get<double>();
        }
        if (const auto ts = j.find("times"); ts != j.end() && ts->is_array())
            for (const auto& t : *ts)
                if (t.is_number())
                    e.times_ms.push_back(t.get<double>());
        auto ms = [&](const char* field) {
            const auto f = j.find(field);
            if (f == j.end() || !f->is_number())
                return 0.0;
            const double v = f->template get<double>();
            if (v == 0 && f->is_number_float())
                e.float_zero_times.insert(field);
            return v;
        };
        e.compile_time_ms = ms("compile_time");
        e.verification_time_ms = ms("verification_time");
        e.benchmark_time_ms = ms("benchmark_time");
        e.strategy_time_ms = ms("strategy_time");
        e.framework_time_ms = ms("framework_time");
        if (const auto ts = j.find("timestamp"); ts != j.end() && ts->is_string())
            e.timestamp = ts->get<std::string>();
        for (auto f = j.begin(); f != j.end(); ++f) {
            const bool own =
                std::find(std::begin(kEntryFields), std::end(kEntryFields), f.key()) != std::end(kEntryFields) ||
                std::find(cache.keys.begin(), cache.keys.end(), f.key()) != cache.keys.end();
            if (!own)
                e.extra[f.key()] = f.value();
        }
        cache.entries.push_back(std::move(e));
    }
    cache.validate(file_name);
    return cache;
}

KernelTunerCache load_kernel_tuner_cache(const std::string& path) {
    return parse_kernel_tuner_cache(read_maybe_gzipped_file(path, "the Kernel Tuner cache"), path);
}

std::string kernel_tuner_timestamp(double unix_seconds) {
    const double whole = std::floor(unix_seconds);
    const auto t = static_cast<std::time_t>(whole);
    int micro = static_cast<int>(std::llround((unix_seconds - whole) * 1e6));
    std::tm tm{};
    gmtime_r(&t, &tm);
    if (micro >= 1000000)
        micro = 999999;
    char buf[64];
    std::snprintf(buf, sizeof buf, "%04d-%02d-%02d %02d:%02d:%02d.%06d+00:00", tm.tm_year + 1900, tm.tm_mon + 1,
                  tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, micro);
    return buf;
}

std::string kernel_tuner_timestamp_of_iso(const std::string& iso) {
    // YYYY-MM-DDTHH:MM:SS[.fff...]Z
    if (iso.size() < 20 || iso[10] != 'T' || iso.back() != 'Z')
        return iso;
    std::string date = iso.substr(0, 10), time = iso.substr(11, 8);
    std::string fraction = iso.size() > 21 && iso[19] == '.' ? iso.substr(20, iso.size() - 21) : "";
    if (!std::all_of(fraction.begin(), fraction.end(), [](char c) { return c >= '0' && c <= '9'; }))
        return iso;
    fraction.resize(6, '0');
    return date + " " + time + "." + fraction + "+00:00";
}

}  // namespace kerncast
