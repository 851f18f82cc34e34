#pragma once
// Per-kernel resource usage read from the compiler/linker report (registers, shared memory, spills...).

#include <nlohmann/json.hpp>

#include <string>

namespace kerncast {

// Per-kernel resource usage from the linker's report.
struct StaticReport {
    std::string kernel;
    int registers = 0;
    int shared_bytes = 0;  // static shared memory
    int constant_bytes = 0;
    int stack_bytes = 0;  // stack frame
    int spill_store_bytes = 0;
    int spill_load_bytes = 0;
    int barriers = 0;
    int max_threads_per_block = 0;  // 0 when unknown
};

void to_json(nlohmann::json& j, const StaticReport& r);
void from_json(const nlohmann::json& j, StaticReport& r);

}  // namespace kerncast
