#pragma once
// Parsing JSON that comes from outside the program (problem files, pair files, LLM replies, the worker's pipe).
// nlohmann's DOM parser itself is iterative, but copying, comparing and dumping a value recurse once per level of
// nesting: a few hundred thousand '[' in a file would overflow the stack later, far from the parse. So nesting and
// length are capped while parsing, and every failure (syntax, a number past the largest double, too deep, too long)
// becomes an Error that names the source, the line and the column, with the offending text shortened.

#include "core/error.h"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace kerncast {

struct JsonLimits {
    size_t max_depth = 64;                // nested objects and arrays
    size_t max_bytes = size_t{64} << 20;  // the whole text
};

// Parses `text`; `where.file` names the source in errors (a file, "the reply of <url>", "worker stdout") and
// `where.line` is the line of the text's first character in that source (1 for a whole file; the line number of a
// JSONL line). Throws Error.
nlohmann::json parse_untrusted_json(std::string_view text, const SourceLocation& where, JsonLimits limits = {});

// The same without exceptions: the value, or nullopt with the reason in `error` (without the location prefix).
std::optional<nlohmann::json> try_parse_untrusted_json(std::string_view text, std::string* error = nullptr,
                                                       JsonLimits limits = {});

// At most `max_chars` of `text`, with "… (N more characters)" when it was cut: for quoting untrusted text in errors.
std::string shorten_for_message(std::string_view text, size_t max_chars = 120);

}  // namespace kerncast
