#pragma once
// A unified diff of two program texts (dtl), for prompts that show a candidate against its anchor.

#include <cstdint>
#include <map>
#include <string>

namespace kerncast {

// "--- <from_name>\n+++ <to_name>\n@@ -a,b +c,d @@\n..." with three lines of context around each change; "" when the
// texts are equal.
std::string unified_diff(const std::string& from, const std::string& to, const std::string& from_name,
                         const std::string& to_name);

// A program as it stands alone: its tunable values as #define lines, then its text (a family configuration's
// tunables reach the compiler as -D defines, so two configurations differ only there).
std::string program_with_defines(const std::string& source, const std::map<std::string, int64_t>& tunables);

}  // namespace kerncast
