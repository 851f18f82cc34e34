#include "engine/device_json.h"

namespace kerncast {

void to_json(nlohmann::json& j, const DeviceCeilings& c) {
    j = {{"dram_gbps", c.dram_gbps}, {"fp32_tflops", c.fp32_tflops}, {"l2_bytes", c.l2_bytes}};
}

void from_json(const nlohmann::json& j, DeviceCeilings& c) {
    c.dram_gbps = j.value("dram_gbps", 0.0);
    c.fp32_tflops = j.value("fp32_tflops", 0.0);
    c.l2_bytes = j.value("l2_bytes", int64_t{0});
}

void to_json(nlohmann::json& j, const MeasureOptions& o) {
    j = {{"seeds", o.seeds},
         {"warmup", o.warmup},
         {"max_runs", o.max_runs},
         {"target_rse", o.target_rse},
         {"time_cap_ms", o.time_cap_ms},
         {"reverify_above", o.reverify_above},
         {"verify_only", o.verify_only},
         {"seed_base", o.seed_base}};
}

void from_json(const nlohmann::json& j, MeasureOptions& o) {
    const MeasureOptions d;
    o.seeds = j.value("seeds", d.seeds);
    o.warmup = j.value("warmup", d.warmup);
    o.max_runs = j.value("max_runs", d.max_runs);
    o.target_rse = j.value("target_rse", d.target_rse);
    o.time_cap_ms = j.value("time_cap_ms", d.time_cap_ms);
    o.reverify_above = j.value("reverify_above", d.reverify_above);
    o.verify_only = j.value("verify_only", d.verify_only);
    o.seed_base = j.value("seed_base", d.seed_base);
    // The deadline belongs to the engine (it kills the worker); the worker never sees it.
}

}  // namespace kerncast
