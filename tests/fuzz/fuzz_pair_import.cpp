// libFuzzer harness: pair files in the GPU Forecasters eval-set schema (JSONL), in both import modes.
#include "core/bins.h"
#include "core/error.h"
#include "core/forecasters_import.h"

#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    const kerncast::BinScheme scheme = kerncast::BinScheme::gfV2();
    for (const auto mode : {kerncast::ImportMode::Skip, kerncast::ImportMode::Strict}) {
        std::istringstream in(text);
        try {
            const auto result = kerncast::import_forecasters_jsonl(in, "fuzz.jsonl", scheme, mode);
            std::ostringstream out;
            kerncast::export_forecasters_jsonl(out, result.pairs);
        } catch (const kerncast::Error&) {}
    }
    return 0;
}
