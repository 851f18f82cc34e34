// libFuzzer harness: one line of the worker protocol, as either side reads it (requests and replies).
#include "core/error.h"
#include "engine/worker/worker_protocol.h"

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string_view line(reinterpret_cast<const char*>(data), size);
    try {
        const nlohmann::json j = kerncast::parse_protocol_line(line);
        const std::string op = kerncast::protocol_op(j);
        (void)kerncast::protocol_id(j);
        if (op == "measure")
            (void)kerncast::parse_measure_request(j);
        else if (op == "hello")
            (void)kerncast::parse_hello_reply(j);
        else if (op == "result")
            (void)kerncast::parse_result_reply(j);
        (void)kerncast::to_protocol_line(j);
    } catch (const kerncast::Error&) {}
    return 0;
}
