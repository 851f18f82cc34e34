// libFuzzer harness: kernel programs (the @kerncast launch plan, scratch and tunable lines, kernel names), as an LLM
// rewrite reaches the search.
#include "core/error.h"
#include "core/kernel_program.h"

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    try {
        const kerncast::KernelProgram k = kerncast::KernelProgram::parse(text, "fuzz.cu");
        (void)k.kernelNames();
        kerncast::Bindings values;
        for (const auto& t : k.tunables)
            values[t.name] = t.values.front();
        (void)k.isValid(values);
    } catch (const kerncast::Error&) {}
    return 0;
}
