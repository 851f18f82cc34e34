#include "engine/unified_diff.h"

#include "core/text_util.h"

#include <dtl/dtl.hpp>

#include <sstream>
#include <vector>

namespace kerncast {

std::string unified_diff(const std::string& from, const std::string& to, const std::string& from_name,
                         const std::string& to_name) {
    if (from == to)
        return {};
    const std::vector<std::string> a = split_lines(from), b = split_lines(to);
    dtl::Diff<std::string, std::vector<std::string>> diff(a, b);
    diff.compose();
    diff.composeUnifiedHunks();
    std::ostringstream out;
    out << "--- " << from_name << "\n+++ " << to_name << "\n";
    diff.printUnifiedFormat(out);
    return out.str();
}

std::string program_with_defines(const std::string& source, const std::map<std::string, int64_t>& tunables) {
    std::string head;
    for (const auto& [name, value] : tunables)
        head += "#define " + name + " " + std::to_string(value) + "\n";
    return head + source;
}

}  // namespace kerncast
