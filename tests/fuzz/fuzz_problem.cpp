// libFuzzer harness: problem.json (Problem::parse), which also parses every shape, bound, flops and bytes expression.
#include "core/error.h"
#include "core/problem.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    std::vector<kerncast::Error> errors;
    try {
        const kerncast::Problem p = kerncast::Problem::parse(text, "fuzz/problem.json", errors);
        if (errors.empty())
            for (const auto& sizes : p.allCases())
                for (const auto& b : p.buffers)
                    (void)b.elements(sizes);
    } catch (const kerncast::Error&) {
        // a readable error is the expected outcome for most inputs
    }
    return 0;
}
