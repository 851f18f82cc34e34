#pragma once
// The engine <-> kerncast-worker protocol (ARCHITECTURE §5): newline-delimited JSON, one object per line. The engine
// writes requests to the worker's stdin and reads replies from its stdout; stderr is free-form diagnostics. Both sides
// build and parse their lines here, so the two ends cannot drift apart.
//
//   {"op":"hello"}                         -> {"op":"hello","ok":true,"version":..,"device":{..},"ceilings":{..}}
//   {"op":"ping","id":7}                   -> {"op":"pong","id":7}
//   {"op":"measure","id":8,...}            -> {"op":"progress","id":8,"stage":..}* then {"op":"result","id":8,...}
//   {"op":"shutdown"}                      -> {"op":"bye"}, exit 0
//   a line that is not a valid request    -> {"op":"error","id":..,"message":..}

#include "core/measurement.h"
#include "engine/base64.h"
#include "engine/device.h"
#include "engine/device_json.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <istream>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kerncast {

inline constexpr const char* kWorkerProtocolVersion = "0.1.0";

// The worker exits with this code after a reply marked sticky: its CUDA context is unusable and must be replaced.
inline constexpr int kWorkerStickyExitCode = 3;

// One kernel program inside a measure request, compiled by the engine.
struct ProgramPayload {
    std::string source;
    std::string file = "kernel.cu";
    std::map<std::string, int64_t> tunables;
    std::vector<char> cubin;
};

struct MeasurePayload {
    std::string problem_json;  // problem.json text; the worker re-parses it
    std::string problem_file;  // its path, for error messages
    ProgramPayload reference;
    ProgramPayload candidate;
    MeasureOptions options;
};

struct HelloReply {
    bool ok = false;
    std::string error;  // why the worker cannot measure (ok == false)
    std::string version;
    DeviceFingerprint device;
    DeviceCeilings ceilings;
};

struct ResultReply {
    int64_t id = 0;
    Measurement measurement;
    bool sticky = false;  // the worker's context is poisoned; it exits after this reply
};

// Requests (engine side).
nlohmann::json make_hello_request();
nlohmann::json make_ping_request(int64_t id);
nlohmann::json make_shutdown_request();
nlohmann::json make_measure_request(int64_t id, const MeasurePayload& payload);

// Replies (worker side).
nlohmann::json make_hello_reply(const DeviceFingerprint& device, const DeviceCeilings& ceilings);
nlohmann::json make_hello_failure(const std::string& error);
nlohmann::json make_pong(int64_t id);
nlohmann::json make_progress(int64_t id, const std::string& stage);
nlohmann::json make_result(int64_t id, const Measurement& measurement, bool sticky);
nlohmann::json make_error_reply(const nlohmann::json& id, const std::string& message);
nlohmann::json make_bye();

// Parsing. Each throws Error with what was expected and what was found; the worker answers those with an error
// reply, the engine treats them as a broken worker.
nlohmann::json parse_protocol_line(std::string_view line);
MeasurePayload parse_measure_request(const nlohmann::json& request);
HelloReply parse_hello_reply(const nlohmann::json& reply);
ResultReply parse_result_reply(const nlohmann::json& reply);
// The "op" field, or throws Error when it is absent or not a string.
std::string protocol_op(const nlohmann::json& message);
// The "id" field as an integer, or nullopt when absent.
std::optional<int64_t> protocol_id(const nlohmann::json& message);

// One protocol line: compact JSON and a trailing newline. Strings are escaped, so the line holds no other newline.
std::string to_protocol_line(const nlohmann::json& message);

// Worker side: writes one protocol line to fd (retrying short writes); false when the engine went away.
bool write_protocol_line(int fd, const nlohmann::json& message);
// Worker side: one request line, parsed. read_worker_request answers what every worker answers alike (a line that
// is not a request gets an error reply, ping gets pong) and returns nullopt for those; the rest is the caller's.
struct WorkerRequest {
    nlohmann::json json;
    std::string op;
    std::optional<int64_t> id;
    nlohmann::json id_json;  // the id, or null, for error replies
};
std::optional<WorkerRequest> read_worker_request(const std::string& line,
                                                 const std::function<void(const nlohmann::json&)>& reply);

// Worker side: the request loop every kind of worker shares. serve() feeds each non-blank line of `in` to
// handleLine() until it returns false (its exit code) or the input ends (0: the engine closed the worker's stdin).
class WorkerLineServer {
public:
    explicit WorkerLineServer(int reply_fd) : m_reply_fd(reply_fd) {}
    virtual ~WorkerLineServer() = default;
    int serve(std::istream& in);
    // Handles one request line (replies included). Returns false when the worker must stop; *exit_code says how.
    virtual bool handleLine(const std::string& line, int* exit_code) = 0;

protected:
    void reply(const nlohmann::json& message);
    // read_worker_request with this server's reply.
    std::optional<WorkerRequest> readRequest(const std::string& line);

private:
    int m_reply_fd;
};

}  // namespace kerncast
