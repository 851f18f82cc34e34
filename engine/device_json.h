#pragma once
// The Device types that travel as JSON: in the worker protocol, in recordings and in forecast queries.

#include "engine/device.h"

#include <nlohmann/json.hpp>

namespace kerncast {

// DeviceCeilings (engine/device.h) as JSON.
void to_json(nlohmann::json& j, const DeviceCeilings& c);
void from_json(const nlohmann::json& j, DeviceCeilings& c);

void to_json(nlohmann::json& j, const MeasureOptions& o);
// Missing fields keep their defaults, so older engines can talk to newer workers.
void from_json(const nlohmann::json& j, MeasureOptions& o);

}  // namespace kerncast
