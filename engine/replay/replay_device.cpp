#include "engine/replay/replay_device.h"
#include "core/text_util.h"

#include "core/candidate.h"
#include "core/error.h"
#include "core/problem_fingerprint.h"
#include "core/untrusted_json.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

namespace fs = std::filesystem;

namespace kerncast {

namespace {

// The problem's name as problem.json gives it. Only the name is needed to find a recording, so a replay does not
// depend on the rest of the problem being valid on this machine.
std::string problem_name(const std::string& problem_dir) {
    fs::path file = problem_dir;
    if (fs::is_directory(file))
        file /= "problem.json";
    const nlohmann::json j = parse_untrusted_json(read_text_file(file.string()), SourceLocation{file.string(), 1});
    if (!j.is_object() || !j.contains("name") || !j["name"].is_string())
        throw Error(SourceLocation{file.string(), 0}, "expected a string field \"name\"");
    return j["name"].get<std::string>();
}

RecordingHeader parse_header(const nlohmann::json& j, const SourceLocation& where) {
    if (j.value("kind", std::string()) != "header")
        throw Error(where, "expected the header line {\"kind\":\"header\",...} first");
    RecordingHeader h;
    if (!j.contains("problem") || !j["problem"].is_string())
        throw Error(where, "the header needs a string field \"problem\"");
    h.problem = j["problem"].get<std::string>();
    try {
        if (j.contains("device"))
            h.device = j["device"].get<DeviceFingerprint>();
        if (j.contains("ceilings"))
            h.ceilings = j["ceilings"].get<DeviceCeilings>();
        if (j.contains("problem_fingerprint"))
            h.problem_fingerprint = j["problem_fingerprint"].get<std::string>();
        if (j.contains("pytorch_eager_us") && j["pytorch_eager_us"].is_number())
            h.pytorch_eager_us = j["pytorch_eager_us"].get<double>();
    } catch (const nlohmann::json::exception& e) {
        throw Error(where, std::string("bad header field: ") + e.what());
    }
    return h;
}

RecordingEntry parse_entry(const nlohmann::json& j, const SourceLocation& where) {
    const std::string kind = j.value("kind", std::string());
    if (kind != "measurement")
        throw Error(where, "expected \"kind\":\"measurement\", found \"" + kind + "\"");
    RecordingEntry e;
    e.line = where.line;
    if (!j.contains("source_hash") || !j["source_hash"].is_string())
        throw Error(where, "a measurement line needs a string field \"source_hash\"");
    if (!j.contains("measurement") || !j["measurement"].is_object())
        throw Error(where, "a measurement line needs an object field \"measurement\"");
    e.source_hash = j["source_hash"].get<std::string>();
    e.label = j.value("label", std::string());
    try {
        if (j.contains("tunables"))
            e.tunables = j["tunables"].get<std::map<std::string, int64_t>>();
        if (j.contains("static"))
            e.static_report = j["static"].get<std::vector<StaticReport>>();
        e.measurement = j["measurement"].get<Measurement>();
    } catch (const nlohmann::json::exception& ex) {
        throw Error(where, std::string("bad measurement line: ") + ex.what());
    } catch (const Error& ex) {
        throw Error(where, std::string("bad measurement line: ") + ex.what());
    }
    return e;
}

}  // namespace

Recording Recording::load(const std::string& path) { return parse(read_text_file(path), path); }

Recording Recording::parse(const std::string& text, const std::string& file_name) {
    Recording r;
    r.file = file_name;
    std::istringstream in(text);
    std::string line;
    int number = 0;
    bool have_header = false;
    std::map<std::string, size_t> index;
    while (std::getline(in, line)) {
        ++number;
        if (line.find_first_not_of(" \t\r") == std::string::npos)
            continue;
        const SourceLocation where{file_name, number};
        std::string invalid;
        std::optional<nlohmann::json> parsed = try_parse_untrusted_json(line, &invalid);
        if (!parsed)
            throw Error(where, "not a JSON object (" + invalid + "); each line of a recording is one JSON object");
        nlohmann::json j = std::move(*parsed);
        if (!j.is_object())
            throw Error(where, "expected a JSON object");
        if (!have_header) {
            r.header = parse_header(j, where);
            have_header = true;
            continue;
        }
        auto entry = parse_entry(j, where);
        if (auto it = index.find(entry.source_hash); it != index.end()) {
            r.entries[it->second] = std::move(entry);
        } else {
            index.emplace(entry.source_hash, r.entries.size());
            r.entries.push_back(std::move(entry));
        }
    }
    if (!have_header)
        throw Error(SourceLocation{file_name, 0}, "empty recording: expected a header line");
    return r;
}

const RecordingEntry* Recording::find(const std::string& source_hash) const {
    for (const auto& e : entries)
        if (e.source_hash == source_hash)
            return &e;
    return nullptr;
}

// A recording holds a family configuration when it holds its program, by content hash: all of them for a complete
// recording, some for one made with record --limit or cut short.
std::optional<PartialFamily> partially_recorded_family(const Device& device, const std::string& problem,
                                                       const KernelProgram& family) {
    if (device.recordingsFolder().empty() || family.tunables.empty())
        return std::nullopt;
    const auto recording = device.recording(problem);
    if (!recording)
        return std::nullopt;
    try {
        PartialFamily partial;
        std::set<std::string> hashes;
        for (const auto& e : recording->entries)
            hashes.insert(e.source_hash);
        for (const Bindings& b : family.configurations()) {
            ++partial.configurations;
            if (hashes.count(content_hash(family.source, b)))
                partial.recorded.insert(b);
        }
        if (partial.recorded.size() >= partial.configurations)
            return std::nullopt;
        return partial;
    } catch (const Error&) {
        return std::nullopt;  // too many configurations to enumerate: the search says so itself
    }
}

nlohmann::json recording_header_json(const RecordingHeader& header) {
    nlohmann::json j = {
        {"kind", "header"}, {"problem", header.problem}, {"device", header.device}, {"ceilings", header.ceilings}};
    if (!header.problem_fingerprint.empty())
        j["problem_fingerprint"] = header.problem_fingerprint;
    if (header.pytorch_eager_us)
        j["pytorch_eager_us"] = *header.pytorch_eager_us;
    return j;
}

nlohmann::json recording_entry_json(const RecordingEntry& entry) {
    return {{"kind", "measurement"},      {"label", entry.label},          {"source_hash", entry.source_hash},
            {"tunables", entry.tunables}, {"static", entry.static_report}, {"measurement", entry.measurement}};
}

ReplayDevice::ReplayDevice(std::string folder) : m_folder(std::move(folder)) {
    if (!fs::is_directory(m_folder))
        throw Error("no recording folder '" + m_folder + "'");
    m_slug = fs::path(m_folder).filename().string();
    if (m_slug.empty())
        m_slug = fs::path(m_folder).parent_path().filename().string();
    const auto names = problems();
    if (names.empty())
        throw Error("recording folder '" + m_folder + "' holds no <problem>.jsonl recording");
    // The fingerprint comes from the first header; only that line is read now, the rest on demand.
    const std::string first = (fs::path(m_folder) / (names.front() + ".jsonl")).string();
    std::ifstream in(first);
    std::string line;
    std::getline(in, line);
    m_header = parse_header(parse_untrusted_json(line, SourceLocation{first, 1}), SourceLocation{first, 1});
}

std::optional<std::vector<StaticReport>> ReplayDevice::recordedStaticReport(const std::string& problem,
                                                                            const std::string& source_hash) const {
    if (const auto rec = recording(problem))
        if (const RecordingEntry* entry = rec->find(source_hash))
            return entry->static_report;
    return std::nullopt;
}

std::string ReplayDevice::id() const { return "replay:" + m_slug; }

DeviceFingerprint ReplayDevice::fingerprint() const { return m_header.device; }

std::vector<std::string> ReplayDevice::problems() const {
    std::vector<std::string> names;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(m_folder, ec))
        if (entry.is_regular_file() && entry.path().extension() == ".jsonl")
            names.push_back(entry.path().stem().string());
    std::sort(names.begin(), names.end());
    return names;
}

std::shared_ptr<const Recording> ReplayDevice::recording(const std::string& problem_name) const {
    std::lock_guard lock(m_mutex);
    if (auto it = m_loaded.find(problem_name); it != m_loaded.end())
        return it->second;
    const fs::path file = fs::path(m_folder) / (problem_name + ".jsonl");
    if (!fs::is_regular_file(file))
        return nullptr;
    auto rec = std::make_shared<const Recording>(Recording::load(file.string()));
    if (rec->header.problem != problem_name)
        throw Error(SourceLocation{file.string(), 1}, "the header names problem '" + rec->header.problem +
                                                          "' but the file is named for '" + problem_name + "'");
    m_loaded.emplace(problem_name, rec);
    return rec;
}

MeasureOutcome ReplayDevice::measure(const MeasureRequest& request, const ProgressFn& progress) {
    MeasureOutcome out = lookup(
        problem_name(request.problem_dir), [&] { return kerncast::problem_fingerprint(request.problem_dir); },
        request.candidate);
    if (progress)
        progress("done");
    return out;
}

MeasureOutcome ReplayDevice::lookup(const std::string& name, const std::function<std::string()>& problem_fingerprint,
                                    const ProgramRef& candidate) const {
    MeasureOutcome out;
    out.measurement.device = m_header.device;
    out.measurement.device_kind = "replay";
    const auto rec = recording(name);
    if (!rec) {
        out.measurement.status = Status::NotRecorded;
        out.measurement.reason = "no recording of problem '" + name + "' on " + id() + " (looked for " +
                                 (fs::path(m_folder) / (name + ".jsonl")).string() + ")";
        return out;
    }
    const std::string fingerprint = problem_fingerprint();
    if (fingerprint != rec->header.problem_fingerprint) {
        out.measurement.status = Status::NotRecorded;
        out.measurement.reason =
            rec->header.problem_fingerprint.empty()
                ? "the recording " + rec->file + " does not say which definition of problem '" + name +
                      "' it measured (no problem_fingerprint in its header); record it again"
                : "problem '" + name + "' is not the one recorded on " + id() + ": its definition (problem.json or " +
                      "reference) has fingerprint " + fingerprint + ", the recording's is " +
                      rec->header.problem_fingerprint + "; the replay device answers only for the recorded definition";
        return out;
    }
    const std::string hash = content_hash(candidate.source, candidate.tunables);
    const RecordingEntry* entry = rec->find(hash);
    if (!entry) {
        out.measurement.status = Status::NotRecorded;
        out.measurement.reason = "this kernel program (source hash " + hash + ") was not recorded on " + id() +
                                 " for problem '" + name + "'; the replay device answers only the " +
                                 std::to_string(rec->entries.size()) + " recorded programs";
        return out;
    }
    out.measurement = entry->measurement;
    out.measurement.device_kind = "replay";
    if (out.measurement.device.name.empty())
        out.measurement.device = rec->header.device;
    out.static_report = entry->static_report;
    return out;
}

}  // namespace kerncast
