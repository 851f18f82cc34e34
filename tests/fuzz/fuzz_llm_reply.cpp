// libFuzzer harness: an LLM's reply to a forecast request: the raw HTTP body as JSON, the message text (fenced JSON
// blocks and bare objects) and tool-call arguments. The first byte chooses where the rest goes.
#include "core/error.h"
#include "core/forecast.h"
#include "core/untrusted_json.h"
#include "engine/surrogate/llm_forecaster.h"

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size == 0)
        return 0;
    const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
    (void)kerncast::try_parse_untrusted_json(text);
    kerncast::ChatResult reply;
    reply.ok = true;
    if (data[0] & 1) {
        kerncast::ToolCall call;
        call.name = data[0] & 2 ? kerncast::LlmForecaster::kToolName : "other_tool";
        call.arguments = text;
        reply.tool_calls.push_back(call);
    } else {
        reply.content = text;
    }
    try {
        const kerncast::RuntimeEstimate e = kerncast::LlmForecaster::parseReply(reply);
        (void)kerncast::Forecast::fromRaw(e.probabilities);
    } catch (const kerncast::Error&) {}
    return 0;
}
