#include "core/source_scan.h"

#include <cctype>

namespace kerncast {

namespace {

bool is_ident(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// The end of the line splice that starts at `at` (a backslash, spaces or tabs, an optional CR, a newline), or npos.
size_t splice_end(const std::string& text, size_t at) {
    if (at >= text.size() || text[at] != '\\')
        return std::string::npos;
    size_t i = at + 1;
    while (i < text.size() && (text[i] == ' ' || text[i] == '\t'))
        ++i;
    if (i < text.size() && text[i] == '\r')
        ++i;
    return i < text.size() && text[i] == '\n' ? i + 1 : std::string::npos;
}

// Whether an R at `at` followed by a quote opens a raw string: R stands alone or after one of the encoding prefixes
// u8, u, U, L (not at the end of a longer name).
bool raw_prefix(const std::string& text, size_t at) {
    size_t start = at;
    while (start > 0 && is_ident(text[start - 1]))
        --start;
    const std::string before = text.substr(start, at - start);
    return before.empty() || before == "u8" || before == "u" || before == "U" || before == "L";
}

}  // namespace

bool is_digit_separator(const std::string& text, size_t at) {
    const auto is = [&](size_t i, int (*f)(int)) { return i < text.size() && f(static_cast<unsigned char>(text[i])); };
    if (at == 0 || !is(at - 1, std::isxdigit) || !is(at + 1, std::isxdigit))
        return false;
    size_t start = at;
    while (start > 0 &&
           (is(start - 1, std::isalnum) || text[start - 1] == '_' || text[start - 1] == '.' || text[start - 1] == '\''))
        --start;
    return is(start, std::isdigit) || (text[start] == '.' && is(start + 1, std::isdigit));
}

std::vector<SourceChar> classify_source(const std::string& text) {
    enum class State { Code, LineComment, BlockComment, String, Char, RawString };
    const size_t n = text.size();
    std::vector<SourceChar> out(n, SourceChar::Code);
    State state = State::Code;
    std::string raw_end;  // )delimiter" of the raw string being read
    // Past any splices from `at` on (marking them): where the next character the compiler sees stands.
    const auto logical = [&](size_t at) {
        for (size_t end; (end = splice_end(text, at)) != std::string::npos; at = end)
            for (size_t k = at; k < end; ++k)
                out[k] = SourceChar::Splice;
        return at;
    };
    for (size_t i = 0; i < n;) {
        if (state != State::RawString && splice_end(text, i) != std::string::npos) {
            i = logical(i);
            continue;
        }
        const char c = text[i];
        switch (state) {
        case State::Code: {
            const size_t j = c == '/' ? logical(i + 1) : n;
            if (j < n && (text[j] == '/' || text[j] == '*')) {
                const SourceChar kind = text[j] == '/' ? SourceChar::LineComment : SourceChar::BlockComment;
                out[i] = out[j] = kind;
                state = text[j] == '/' ? State::LineComment : State::BlockComment;
                i = j + 1;
            } else if (c == 'R' && i + 1 < n && text[i + 1] == '"' && raw_prefix(text, i)) {
                // R"delimiter( ... )delimiter": a delimiter of up to 16 characters, none of them white space, a
                // parenthesis or a backslash. An ill-formed one leaves the rest a literal.
                size_t open = i + 2;
                while (open < n && open - (i + 2) <= 16 && text[open] != '(' && text[open] != ')' &&
                       text[open] != '\\' && !std::isspace(static_cast<unsigned char>(text[open])))
                    ++open;
                const bool ok = open < n && text[open] == '(' && open - (i + 2) <= 16;
                for (size_t k = i; k < (ok ? open + 1 : n); ++k)
                    out[k] = SourceChar::Literal;
                if (!ok)
                    return out;
                raw_end = ")" + text.substr(i + 2, open - i - 2) + "\"";
                state = State::RawString;
                i = open + 1;
            } else if (c == '"' || (c == '\'' && !is_digit_separator(text, i))) {
                out[i] = SourceChar::Literal;
                state = c == '"' ? State::String : State::Char;
                ++i;
            } else {
                ++i;
            }
            break;
        }
        case State::LineComment:
            if (c == '\n')
                state = State::Code;
            else
                out[i] = SourceChar::LineComment;
            ++i;
            break;
        case State::BlockComment: {
            out[i] = SourceChar::BlockComment;
            const size_t j = c == '*' ? logical(i + 1) : n;
            if (j < n && text[j] == '/') {
                out[j] = SourceChar::BlockComment;
                state = State::Code;
                i = j + 1;
            } else {
                ++i;
            }
            break;
        }
        case State::String:
        case State::Char:
            if (c == '\n') {
                state = State::Code;  // unterminated: the literal ends with its line
                ++i;
            } else if (c == '\\') {
                out[i] = SourceChar::Literal;
                const size_t j = logical(i + 1);  // the escaped character, past any splice
                if (j < n && text[j] != '\n')
                    out[j] = SourceChar::Literal;
                i = j < n && text[j] != '\n' ? j + 1 : j;
            } else {
                out[i] = SourceChar::Literal;
                if (c == (state == State::String ? '"' : '\''))
                    state = State::Code;
                ++i;
            }
            break;
        case State::RawString:
            if (text.compare(i, raw_end.size(), raw_end) == 0) {
                for (size_t k = i; k < i + raw_end.size(); ++k)
                    out[k] = SourceChar::Literal;
                i += raw_end.size();
                state = State::Code;
            } else {
                out[i] = SourceChar::Literal;
                ++i;
            }
            break;
        }
    }
    return out;
}

std::string code_only(const std::string& text) {
    const std::vector<SourceChar> kind = classify_source(text);
    std::string out;
    out.reserve(text.size());
    for (size_t i = 0; i < text.size(); ++i) {
        if (kind[i] == SourceChar::Splice)
            continue;
        out += kind[i] == SourceChar::Code || text[i] == '\n' ? text[i] : ' ';
    }
    return out;
}

}  // namespace kerncast
