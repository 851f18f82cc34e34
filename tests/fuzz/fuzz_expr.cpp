// libFuzzer harness: launch-plan and size expressions (parse, names, evaluation with 64-bit checked arithmetic).
#include "core/error.h"
#include "core/expr.h"

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    for (const bool conditions : {false, true}) {
        try {
            const kerncast::Expr e = kerncast::Expr::parse(text, {"fuzz.cu", 1}, conditions);
            kerncast::Bindings names;
            for (const auto& n : e.names())
                names[n] = static_cast<int64_t>(n.size()) * 1000 - 3;
            (void)e.eval(names);
        } catch (const kerncast::Error&) {}
    }
    return 0;
}
