#include "engine/worker/worker_protocol.h"

#include "core/error.h"
#include "core/untrusted_json.h"

#include <array>
#include <cerrno>
#include <iostream>

#include <unistd.h>

namespace kerncast {

namespace {

std::string shorten(std::string_view text, size_t max = 120) {
    if (text.size() <= max)
        return std::string(text);
    return std::string(text.substr(0, max)) + "...";
}

const nlohmann::json& require_object(const nlohmann::json& j, const char* key, const std::string& what) {
    if (!j.contains(key) || !j[key].is_object())
        throw Error(what + ": expected an object field \"" + key + "\"");
    return j[key];
}

std::string require_string(const nlohmann::json& j, const char* key, const std::string& what) {
    if (!j.contains(key) || !j[key].is_string())
        throw Error(what + ": expected a string field \"" + key + "\"");
    return j[key].get<std::string>();
}

nlohmann::json program_to_json(const ProgramPayload& p) {
    return {{"source", p.source}, {"file", p.file}, {"tunables", p.tunables}, {"cubin_b64", base64_encode(p.cubin)}};
}

ProgramPayload program_from_json(const nlohmann::json& j, const std::string& what) {
    ProgramPayload p;
    p.source = require_string(j, "source", what);
    p.file = j.value("file", std::string("kernel.cu"));
    try {
        if (j.contains("tunables"))
            p.tunables = j["tunables"].get<std::map<std::string, int64_t>>();
    } catch (const nlohmann::json::exception&) {
        throw Error(what + ": \"tunables\" must map names to integers, found " + shorten(j["tunables"].dump()));
    }
    if (j.contains("cubin_b64")) {
        if (!j["cubin_b64"].is_string())
            throw Error(what + ": \"cubin_b64\" must be a base64 string");
        try {
            p.cubin = base64_decode(j["cubin_b64"].get<std::string>());
        } catch (const Error& e) {
            throw Error(what + ": \"cubin_b64\": " + e.what());
        }
    }
    return p;
}

}  // namespace

nlohmann::json make_hello_request() { return {{"op", "hello"}}; }
nlohmann::json make_ping_request(int64_t id) { return {{"op", "ping"}, {"id", id}}; }
nlohmann::json make_shutdown_request() { return {{"op", "shutdown"}}; }

nlohmann::json make_measure_request(int64_t id, const MeasurePayload& payload) {
    return {{"op", "measure"},
            {"id", id},
            {"problem", {{"json", payload.problem_json}, {"file", payload.problem_file}}},
            {"reference", program_to_json(payload.reference)},
            {"candidate", program_to_json(payload.candidate)},
            {"options", payload.options}};
}

nlohmann::json make_hello_reply(const DeviceFingerprint& device, const DeviceCeilings& ceilings) {
    return {
        {"op", "hello"}, {"ok", true}, {"version", kWorkerProtocolVersion}, {"device", device}, {"ceilings", ceilings}};
}

nlohmann::json make_hello_failure(const std::string& error) {
    return {{"op", "hello"}, {"ok", false}, {"version", kWorkerProtocolVersion}, {"error", error}};
}

nlohmann::json make_pong(int64_t id) { return {{"op", "pong"}, {"id", id}}; }

nlohmann::json make_progress(int64_t id, const std::string& stage) {
    return {{"op", "progress"}, {"id", id}, {"stage", stage}};
}

nlohmann::json make_result(int64_t id, const Measurement& measurement, bool sticky) {
    return {{"op", "result"}, {"id", id}, {"measurement", measurement}, {"sticky", sticky}};
}

nlohmann::json make_error_reply(const nlohmann::json& id, const std::string& message) {
    return {{"op", "error"}, {"id", id}, {"message", message}};
}

nlohmann::json make_bye() { return {{"op", "bye"}}; }

nlohmann::json parse_protocol_line(std::string_view line) {
    while (!line.empty() && (line.back() == '\r' || line.back() == '\n'))
        line.remove_suffix(1);
    std::string invalid;
    // Nesting is capped: a message is a few levels deep, and a deeper one would make later copies recurse.
    std::optional<nlohmann::json> parsed = try_parse_untrusted_json(line, &invalid, JsonLimits{64, size_t{512} << 20});
    if (!parsed)
        throw Error("malformed protocol line (not JSON: " + invalid + "): '" + shorten(line) + "'");
    nlohmann::json j = std::move(*parsed);
    if (!j.is_object())
        throw Error("malformed protocol line (expected a JSON object): '" + shorten(line) + "'");
    protocol_op(j);
    return j;
}

std::string protocol_op(const nlohmann::json& message) {
    if (!message.is_object() || !message.contains("op") || !message["op"].is_string())
        throw Error("malformed protocol message: expected a string field \"op\", found '" +
                    shorten(message.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)) + "'");
    return message["op"].get<std::string>();
}

std::optional<int64_t> protocol_id(const nlohmann::json& message) {
    if (message.is_object() && message.contains("id") && message["id"].is_number_integer())
        return message["id"].get<int64_t>();
    return std::nullopt;
}

MeasurePayload parse_measure_request(const nlohmann::json& request) {
    const std::string what = "measure request";
    if (protocol_op(request) != "measure")
        throw Error(what + ": expected op \"measure\", found \"" + protocol_op(request) + "\"");
    if (!protocol_id(request))
        throw Error(what + ": expected an integer field \"id\"");
    MeasurePayload p;
    const auto& problem = require_object(request, "problem", what);
    p.problem_json = require_string(problem, "json", what + " \"problem\"");
    p.problem_file = problem.value("file", std::string("problem.json"));
    p.reference = program_from_json(require_object(request, "reference", what), what + " \"reference\"");
    p.candidate = program_from_json(require_object(request, "candidate", what), what + " \"candidate\"");
    if (request.contains("options")) {
        if (!request["options"].is_object())
            throw Error(what + ": \"options\" must be an object");
        try {
            p.options = request["options"].get<MeasureOptions>();
        } catch (const nlohmann::json::exception& e) {
            throw Error(what + ": bad \"options\": " + std::string(e.what()));
        }
    }
    if (p.options.seeds < 1 || p.options.max_runs < 1 || p.options.warmup < 0)
        throw Error(what + ": options need seeds >= 1, max_runs >= 1 and warmup >= 0");
    return p;
}

HelloReply parse_hello_reply(const nlohmann::json& reply) {
    const std::string what = "hello reply";
    if (protocol_op(reply) != "hello")
        throw Error(what + ": expected op \"hello\", found \"" + protocol_op(reply) + "\"");
    if (!reply.contains("ok") || !reply["ok"].is_boolean())
        throw Error(what + ": expected a boolean field \"ok\"");
    HelloReply h;
    h.ok = reply["ok"].get<bool>();
    h.version = reply.value("version", std::string());
    if (!h.ok) {
        h.error = reply.value("error", std::string("the worker gave no reason"));
        return h;
    }
    try {
        h.device = require_object(reply, "device", what).get<DeviceFingerprint>();
        if (reply.contains("ceilings"))
            h.ceilings = reply["ceilings"].get<DeviceCeilings>();
    } catch (const nlohmann::json::exception& e) {
        throw Error(what + ": " + std::string(e.what()));
    }
    return h;
}

ResultReply parse_result_reply(const nlohmann::json& reply) {
    const std::string what = "result reply";
    if (protocol_op(reply) != "result")
        throw Error(what + ": expected op \"result\", found \"" + protocol_op(reply) + "\"");
    ResultReply r;
    const auto id = protocol_id(reply);
    if (!id)
        throw Error(what + ": expected an integer field \"id\"");
    r.id = *id;
    try {
        r.measurement = require_object(reply, "measurement", what).get<Measurement>();
    } catch (const nlohmann::json::exception& e) {
        throw Error(what + ": bad \"measurement\": " + std::string(e.what()));
    } catch (const Error& e) {
        throw Error(what + ": bad \"measurement\": " + std::string(e.what()));
    }
    r.sticky = reply.value("sticky", false);
    return r;
}

std::string to_protocol_line(const nlohmann::json& message) {
    // Invalid UTF-8 in a kernel's text must not make the engine throw mid-request; it is replaced instead.
    return message.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

bool write_protocol_line(int fd, const nlohmann::json& message) {
    const std::string line = to_protocol_line(message);
    size_t done = 0;
    while (done < line.size()) {
        const ssize_t n = ::write(fd, line.data() + done, line.size() - done);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return false;
        }
        done += static_cast<size_t>(n);
    }
    return true;
}

int WorkerLineServer::serve(std::istream& in) {
    std::string line;
    int exit_code = 0;
    while (std::getline(in, line)) {
        if (line.find_first_not_of(" \t\r") == std::string::npos)
            continue;
        if (!handleLine(line, &exit_code))
            return exit_code;
    }
    return 0;
}

void WorkerLineServer::reply(const nlohmann::json& message) {
    if (!write_protocol_line(m_reply_fd, message))
        std::cerr << "kerncast-worker: cannot write a reply (the engine went away?)\n";
}

std::optional<WorkerRequest> WorkerLineServer::readRequest(const std::string& line) {
    return read_worker_request(line, [this](const nlohmann::json& r) { reply(r); });
}

std::optional<WorkerRequest> read_worker_request(const std::string& line,
                                                 const std::function<void(const nlohmann::json&)>& reply) {
    WorkerRequest r;
    try {
        r.json = parse_protocol_line(line);
    } catch (const std::exception& e) {
        reply(make_error_reply(nullptr, e.what()));
        return std::nullopt;
    }
    r.id = protocol_id(r.json);
    r.id_json = r.id ? nlohmann::json(*r.id) : nlohmann::json(nullptr);
    try {
        r.op = protocol_op(r.json);
    } catch (const std::exception& e) {
        reply(make_error_reply(r.id_json, e.what()));
        return std::nullopt;
    }
    if (r.op == "ping") {
        reply(make_pong(r.id.value_or(0)));
        return std::nullopt;
    }
    return r;
}

}  // namespace kerncast
