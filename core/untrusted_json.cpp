#include "core/untrusted_json.h"

#include <algorithm>

namespace kerncast {

namespace {

using json = nlohmann::json;

struct Failure {
    size_t byte = 0;  // offset of the offending character
    std::string message;
};

// nlohmann's own DOM builder, with a depth count in front of it. A handler returning false stops the parse.
class LimitedSax {
public:
    LimitedSax(json& result, size_t max_depth) : m_dom(result, true), m_maxDepth(max_depth) {}

    bool null() { return m_dom.null(); }
    bool boolean(bool v) { return m_dom.boolean(v); }
    bool number_integer(json::number_integer_t v) { return m_dom.number_integer(v); }
    bool number_unsigned(json::number_unsigned_t v) { return m_dom.number_unsigned(v); }
    bool number_float(json::number_float_t v, const json::string_t& s) { return m_dom.number_float(v, s); }
    bool string(json::string_t& v) { return m_dom.string(v); }
    bool binary(json::binary_t& v) { return m_dom.binary(v); }
    bool key(json::string_t& v) { return m_dom.key(v); }
    bool start_object(size_t n) { return enter() && m_dom.start_object(n); }
    bool end_object() {
        --m_depth;
        return m_dom.end_object();
    }
    bool start_array(size_t n) { return enter() && m_dom.start_array(n); }
    bool end_array() {
        --m_depth;
        return m_dom.end_array();
    }
    bool parse_error(size_t position, const std::string& last_token, const json::exception& e) {
        // A number too large is reported at its first character, other errors at the character that broke them.
        const size_t back = e.id == 406 ? last_token.size() : 1;
        m_failure = Failure{position >= back ? position - back : 0, describe(e, last_token)};
        return false;
    }

    bool tooDeep() const { return m_tooDeep; }
    const std::optional<Failure>& failure() const { return m_failure; }

private:
    bool enter() {
        if (++m_depth > m_maxDepth) {
            m_tooDeep = true;
            return false;
        }
        return true;
    }

    // The library's reason without its "[json.exception.parse_error.101] parse error at line 1, column 9: " prefix
    // (our own position replaces it) and with the quoted token shortened: an unterminated string of a megabyte would
    // otherwise be quoted whole.
    static std::string describe(const json::exception& e, const std::string& last_token) {
        std::string what = e.what();
        if (const auto at = what.find("] "); at != std::string::npos)
            what = what.substr(at + 2);
        if (const auto column = what.find(", column "); column != std::string::npos)
            if (const auto colon = what.find(": ", column); colon != std::string::npos)
                what = what.substr(colon + 2);
        if (e.id == 406)  // out_of_range: number overflow
            return "the number " + shorten_for_message(last_token, 40) + " is not finite (too large for a double)";
        if (const auto token = what.find("; last read: '"); token != std::string::npos) {
            const std::string rest = what.substr(0, token);
            return rest + "; last read: '" + shorten_for_message(last_token, 60) + "'";
        }
        return shorten_for_message(what, 200);
    }

    nlohmann::detail::json_sax_dom_parser<json> m_dom;
    size_t m_maxDepth;
    size_t m_depth = 0;
    bool m_tooDeep = false;
    std::optional<Failure> m_failure;
};

// The first byte at which objects and arrays nest deeper than `max_depth` (strings skipped).
size_t depth_exceeded_at(std::string_view text, size_t max_depth) {
    size_t depth = 0;
    bool in_string = false;
    for (size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (in_string) {
            if (c == '\\')
                ++i;
            else if (c == '"')
                in_string = false;
        } else if (c == '"') {
            in_string = true;
        } else if (c == '[' || c == '{') {
            if (++depth > max_depth)
                return i;
        } else if ((c == ']' || c == '}') && depth > 0) {
            --depth;
        }
    }
    return text.size();
}

// Line (relative, 0-based) and column (1-based) of a byte offset.
std::pair<int, size_t> line_and_column(std::string_view text, size_t byte) {
    byte = std::min(byte, text.size());
    int line = 0;
    size_t line_start = 0;
    for (size_t i = 0; i < byte; ++i)
        if (text[i] == '\n') {
            ++line;
            line_start = i + 1;
        }
    return {line, byte - line_start + 1};
}

// nullopt and a located failure, or the value.
std::optional<json> parse(std::string_view text, JsonLimits limits, Failure& failure) {
    if (text.size() > limits.max_bytes) {
        failure = {0, "the text is " + std::to_string(text.size()) + " bytes long; at most " +
                          std::to_string(limits.max_bytes) + " are accepted"};
        return std::nullopt;
    }
    json result;
    LimitedSax sax(result, limits.max_depth);
    const bool ok = json::sax_parse(text.begin(), text.end(), &sax, nlohmann::detail::input_format_t::json, true);
    if (ok && !sax.tooDeep() && !sax.failure())
        return result;
    if (sax.tooDeep())
        failure = {depth_exceeded_at(text, limits.max_depth),
                   "objects and arrays nest deeper than " + std::to_string(limits.max_depth) + " levels"};
    else if (sax.failure())
        failure = *sax.failure();
    else
        failure = {text.size(), "invalid JSON"};
    return std::nullopt;
}

}  // namespace

json parse_untrusted_json(std::string_view text, const SourceLocation& where, JsonLimits limits) {
    Failure failure;
    if (auto j = parse(text, limits, failure))
        return std::move(*j);
    const auto [line, column] = line_and_column(text, failure.byte);
    const int first = where.line > 0 ? where.line : 1;
    throw Error(SourceLocation{where.file, first + line},
                "invalid JSON at column " + std::to_string(column) + ": " + failure.message);
}

std::optional<json> try_parse_untrusted_json(std::string_view text, std::string* error, JsonLimits limits) {
    Failure failure;
    if (auto j = parse(text, limits, failure))
        return j;
    if (error) {
        const auto [line, column] = line_and_column(text, failure.byte);
        *error = "invalid JSON at line " + std::to_string(line + 1) + ", column " + std::to_string(column) + ": " +
                 failure.message;
    }
    return std::nullopt;
}

std::string shorten_for_message(std::string_view text, size_t max_chars) {
    if (text.size() <= max_chars)
        return std::string(text);
    return std::string(text.substr(0, max_chars)) + "… (" + std::to_string(text.size() - max_chars) +
           " more characters)";
}

}  // namespace kerncast
