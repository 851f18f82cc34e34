#include "core/kernel_program.h"

#include "core/source_scan.h"
#include "core/text_util.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <regex>
#include <set>
#include <sstream>

namespace kerncast {

namespace {

constexpr const char* kDirectives = "launch, scratch, constant, tunable, target";

// A kernel program may come from an LLM: the parse is linear and its output bounded, far above what a real launch
// plan needs.
constexpr size_t kMaxSourceBytes = size_t{1} << 20;
constexpr size_t kMaxDirectiveChars = 8192;
constexpr size_t kMaxLaunches = 64;
constexpr size_t kMaxScratch = 64;
constexpr size_t kMaxTunables = 32;
constexpr size_t kMaxTunableValues = 256;

bool is_ident_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool is_ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

bool is_identifier(const std::string& s) {
    return !s.empty() && is_ident_start(s[0]) && std::all_of(s.begin(), s.end(), is_ident_char);
}

std::string describe(const Bindings& b) {
    std::string out;
    for (const auto& [k, v] : b)
        out += (out.empty() ? "" : ", ") + k + "=" + std::to_string(v);
    return out.empty() ? "no names" : out;
}

// Reads one `// @kerncast` line after the directive word. Errors carry the 1-based column in the whole line.
class LineReader {
public:
    LineReader(const std::string& line, size_t pos, SourceLocation where)
        : m_line(line), m_pos(pos), m_where(std::move(where)) {}

    [[noreturn]] void fail(const std::string& what) const {
        throw Error(m_where, what + " at column " + std::to_string(m_pos + 1));
    }

    void skipSpace() {
        while (m_pos < m_line.size() && std::isspace(static_cast<unsigned char>(m_line[m_pos])))
            ++m_pos;
    }
    bool atEnd() {
        skipSpace();
        return m_pos >= m_line.size();
    }
    char peek() {
        skipSpace();
        return m_pos < m_line.size() ? m_line[m_pos] : '\0';
    }

    std::string identifier(const std::string& expected) {
        skipSpace();
        const size_t begin = m_pos;
        if (m_pos < m_line.size() && is_ident_start(m_line[m_pos]))
            while (m_pos < m_line.size() && is_ident_char(m_line[m_pos]))
                ++m_pos;
        if (m_pos == begin)
            fail("expected " + expected);
        return m_line.substr(begin, m_pos - begin);
    }

    // A whitespace-delimited word (for tunable values and dtypes).
    std::string word() {
        skipSpace();
        const size_t begin = m_pos;
        while (m_pos < m_line.size() && !std::isspace(static_cast<unsigned char>(m_line[m_pos])))
            ++m_pos;
        return m_line.substr(begin, m_pos - begin);
    }

    // `( ... )` with nested parentheses; returns what is inside.
    std::string parenthesised(const std::string& what) {
        skipSpace();
        if (m_pos >= m_line.size() || m_line[m_pos] != '(')
            fail("expected '(' after " + what);
        const size_t open = m_pos;
        int depth = 0;
        for (; m_pos < m_line.size(); ++m_pos) {
            if (m_line[m_pos] == '(')
                ++depth;
            else if (m_line[m_pos] == ')' && --depth == 0) {
                ++m_pos;
                return m_line.substr(open + 1, m_pos - open - 2);
            }
        }
        m_pos = open;
        fail("expected ')' closing " + what + "(");
    }

    std::string rest() {
        skipSpace();
        std::string r = m_line.substr(m_pos);
        m_pos = m_line.size();
        return r;
    }

    size_t pos() const { return m_pos; }
    void setPos(size_t p) { m_pos = p; }

private:
    const std::string& m_line;
    size_t m_pos;
    SourceLocation m_where;
};

// Splits at commas outside parentheses: "ceil_div(N, 256), M" -> {"ceil_div(N, 256)", "M"}.
std::vector<std::string> split_top_level(const std::string& s) {
    std::vector<std::string> parts;
    int depth = 0;
    std::string cur;
    for (char c : s) {
        if (c == '(')
            ++depth;
        else if (c == ')')
            --depth;
        if (c == ',' && depth == 0) {
            parts.push_back(trim(cur));
            cur.clear();
        } else {
            cur += c;
        }
    }
    parts.push_back(trim(cur));
    return parts;
}

std::array<Expr, 3> parse_dims(const std::string& content, const std::string& clause, const SourceLocation& where) {
    const auto parts = split_top_level(content);
    if (parts.size() > 3)
        throw Error(where, clause + "(...) takes 1 to 3 dimensions (x, y, z), found " + std::to_string(parts.size()));
    std::array<Expr, 3> dims{Expr::constant(1), Expr::constant(1), Expr::constant(1)};
    for (size_t i = 0; i < parts.size(); ++i) {
        if (parts[i].empty())
            throw Error(where, "expected an expression for " + clause + " dimension " + "xyz"[i] + " in " + clause +
                                   "(" + content + ")");
        dims[i] = Expr::parse(parts[i], where);
    }
    return dims;
}

// `tensormap(<buffer>, shape(...), box(...)[, swizzle(<bytes>)])`, the whole argument text.
TensorMapSpec parse_tensormap(const std::string& text, const SourceLocation& where) {
    const std::string form = "tensormap(<buffer>, shape(<d0>, ...), box(<b0>, ...)[, swizzle(0|32|64|128)])";
    const size_t open = text.find('(');
    if (text.back() != ')')
        throw Error(where, "expected " + form + ", found '" + text + "'");
    const auto parts = split_top_level(text.substr(open + 1, text.size() - open - 2));
    TensorMapSpec t;
    if (parts.empty() || !is_identifier(parts[0]))
        throw Error(where, "expected a buffer name first in " + form + ", found '" + text + "'");
    t.buffer = parts[0];
    std::set<std::string> seen;
    for (size_t i = 1; i < parts.size(); ++i) {
        const std::string& part = parts[i];
        const size_t p = part.find('(');
        const std::string key = p == std::string::npos ? part : trim(part.substr(0, p));
        if (p == std::string::npos || part.back() != ')' || (key != "shape" && key != "box" && key != "swizzle"))
            throw Error(where, "tensormap of " + t.buffer + ": expected shape(...), box(...) or swizzle(...), found '" +
                                   part + "'");
        if (!seen.insert(key).second)
            throw Error(where, "tensormap of " + t.buffer + ": " + key + "(...) is given twice");
        const std::string inner = trim(part.substr(p + 1, part.size() - p - 2));
        if (key == "swizzle") {
            if (inner != "0" && inner != "32" && inner != "64" && inner != "128")
                throw Error(where,
                            "tensormap of " + t.buffer + ": swizzle(" + inner + ") must be 0, 32, 64 or 128 (bytes)");
            t.swizzle = std::stoi(inner);
            continue;
        }
        std::vector<Expr>& dims = key == "shape" ? t.shape : t.box;
        for (const auto& d : split_top_level(inner)) {
            if (d.empty())
                throw Error(where,
                            "tensormap of " + t.buffer + ": expected an expression in " + key + "(" + inner + ")");
            dims.push_back(Expr::parse(d, where));
        }
    }
    if (t.shape.empty() || t.box.empty())
        throw Error(where, "tensormap of " + t.buffer + ": expected both shape(...) and box(...) in " + form);
    if (t.shape.size() > 5)
        throw Error(where, "tensormap of " + t.buffer + ": a tensor map has 1 to 5 dimensions, shape(...) gives " +
                               std::to_string(t.shape.size()));
    if (t.box.size() != t.shape.size())
        throw Error(where, "tensormap of " + t.buffer + ": box(...) has " + std::to_string(t.box.size()) +
                               " dimensions and shape(...) " + std::to_string(t.shape.size()) +
                               "; give one box extent per dimension");
    return t;
}

LaunchSpec parse_launch(LineReader& r, const SourceLocation& where) {
    LaunchSpec l;
    l.line = where.line;
    r.skipSpace();
    const size_t name_pos = r.pos();
    l.kernel = r.identifier("a kernel name after 'launch'");
    if (r.peek() == '(') {
        r.setPos(name_pos);
        r.fail("expected a kernel name after 'launch', found the clause " + l.kernel + "(...)");
    }
    std::set<std::string> seen;
    while (!r.atEnd()) {
        const size_t clause_pos = r.pos();
        const std::string clause =
            r.identifier("a clause grid(...), block(...), cluster(...), smem(...), when(...) or args(...)");
        if (clause != "grid" && clause != "block" && clause != "cluster" && clause != "smem" && clause != "when" &&
            clause != "args") {
            r.setPos(clause_pos);
            r.fail("unknown clause '" + clause +
                   "'; expected grid(...), block(...), cluster(...), smem(...), when(...) or args(...)");
        }
        if (!seen.insert(clause).second) {
            r.setPos(clause_pos);
            r.fail(clause + "(...) is given twice");
        }
        const std::string content = r.parenthesised(clause);
        if (clause == "grid")
            l.grid = parse_dims(content, clause, where);
        else if (clause == "block")
            l.block = parse_dims(content, clause, where);
        else if (clause == "cluster")
            l.cluster = parse_dims(content, clause, where);
        else if (clause == "when") {
            if (trim(content).empty())
                throw Error(where, "expected a condition in when(...)");
            l.when = Expr::parse(trim(content), where, true);
        } else if (clause == "smem") {
            if (trim(content).empty())
                throw Error(where, "expected a byte count in smem(...)");
            l.smem = Expr::parse(trim(content), where);
        } else {
            const std::string inner = trim(content);
            if (!inner.empty())
                for (const auto& a : split_top_level(inner)) {
                    if (a.rfind("tensormap", 0) == 0 && trim(a.substr(9)).rfind('(', 0) == 0) {
                        l.tensormaps[l.args.size()] = parse_tensormap(a, where);
                        l.args.push_back(a);
                        continue;
                    }
                    if (!is_identifier(a))
                        throw Error(where, "expected argument names separated by commas in args(" + content +
                                               "), found '" + a + "'");
                    l.args.push_back(a);
                }
        }
    }
    for (const char* required : {"grid", "block", "args"})
        if (!seen.count(required))
            throw Error(where,
                        std::string("launch ") + l.kernel + ": expected " + required +
                            (std::string(required) == "args" ? "(<name>, ...) listing the kernel's parameters in order"
                                                             : "(<x>[, <y>[, <z>]])"));
    if (!seen.count("smem"))
        l.smem = Expr::constant(0);
    if (!seen.count("cluster"))
        l.cluster = {Expr::constant(1), Expr::constant(1), Expr::constant(1)};
    return l;
}

ScratchSpec parse_scratch(LineReader& r, const SourceLocation& where) {
    ScratchSpec s;
    s.line = where.line;
    s.name = r.identifier("a scratch buffer name after 'scratch'");
    const std::string dt = r.word();
    if (dt.empty())
        r.fail("expected a dtype (f32 f16 bf16 f64 i32 u8) after the scratch name");
    try {
        s.dtype = dtype_from_string(dt);
    } catch (const Error& e) {
        throw Error(where, "scratch " + s.name + ": dtype: " + e.what());
    }
    const std::string count = trim(r.parenthesised("the dtype; expected (<element count>)"));
    if (count.empty())
        throw Error(where, "expected an element count in scratch " + s.name + " (...)");
    s.count = Expr::parse(count, where);
    if (!r.atEnd())
        r.fail("expected the end of the line after (" + count + ")");
    return s;
}

ConstantSpec parse_constant(LineReader& r, const SourceLocation& where) {
    ConstantSpec c;
    c.line = where.line;
    c.symbol = r.identifier("the name of a __constant__ variable after 'constant'");
    c.buffer = r.identifier("the buffer that fills constant " + c.symbol + " (constant <symbol> <buffer>)");
    if (!r.atEnd())
        r.fail("expected the end of the line after the buffer name");
    return c;
}

Tunable parse_tunable(LineReader& r, const SourceLocation& where) {
    Tunable t;
    t.line = where.line;
    t.name = r.identifier("a tunable name after 'tunable'");
    while (!r.atEnd()) {
        const size_t value_pos = r.pos();
        const std::string w = r.word();
        if (w == "where") {
            const std::string cond = r.rest();
            if (cond.empty())
                throw Error(where, "expected a condition after 'where'");
            t.where = Expr::parse(cond, where, true);
            break;
        }
        size_t used = 0;
        int64_t v = 0;
        try {
            v = std::stoll(w, &used);
        } catch (const std::exception&) {
            used = 0;
        }
        if (used != w.size() || w.empty()) {
            r.setPos(value_pos);
            r.fail("expected an integer value or 'where' for tunable " + t.name + ", found '" + w + "'");
        }
        if (std::find(t.values.begin(), t.values.end(), v) != t.values.end()) {
            r.setPos(value_pos);
            r.fail("tunable " + t.name + " lists the value " + w + " twice");
        }
        if (t.values.size() == kMaxTunableValues) {
            r.setPos(value_pos);
            r.fail("tunable " + t.name + " lists more than " + std::to_string(kMaxTunableValues) + " values");
        }
        t.values.push_back(v);
    }
    if (t.values.empty())
        throw Error(where, "tunable " + t.name + " has no values; expected: tunable " + t.name +
                               " <v1> <v2> ... [where <condition>]");
    return t;
}

// Names of functions declared __global__: for each `__global__`, identifiers followed by '(' up to the body or ';'
// (skipping attribute macros such as __launch_bounds__).
std::set<std::string> global_functions(const std::string& source) {
    const std::string code = code_only(source);  // a kernel in a comment or a string does not count
    std::set<std::string> out;
    const std::string key = "__global__";
    for (size_t at = code.find(key); at != std::string::npos; at = code.find(key, at + key.size())) {
        if ((at > 0 && is_ident_char(code[at - 1])) ||
            (at + key.size() < code.size() && is_ident_char(code[at + key.size()])))
            continue;
        std::string last;
        for (size_t i = at + key.size(); i < code.size() && code[i] != '{' && code[i] != ';';) {
            if (is_ident_start(code[i])) {
                const size_t b = i;
                while (i < code.size() && is_ident_char(code[i]))
                    ++i;
                const std::string ident = code.substr(b, i - b);
                size_t j = i;
                while (j < code.size() && std::isspace(static_cast<unsigned char>(code[j])))
                    ++j;
                if (j < code.size() && code[j] == '(' && ident.rfind("__", 0) != 0) {
                    out.insert(ident);
                    break;
                }
            } else {
                ++i;
            }
        }
    }
    return out;
}

// Names of variables declared __constant__ (`__constant__ float d_filter[33 * 33];`): the identifier before the
// first '[', '=' or ';' after the keyword.
std::set<std::string> constant_variables(const std::string& source) {
    const std::string code = code_only(source);  // a kernel in a comment or a string does not count
    std::set<std::string> out;
    const std::string key = "__constant__";
    for (size_t at = code.find(key); at != std::string::npos; at = code.find(key, at + key.size())) {
        if ((at > 0 && is_ident_char(code[at - 1])) ||
            (at + key.size() < code.size() && is_ident_char(code[at + key.size()])))
            continue;
        std::string last;
        for (size_t i = at + key.size(); i < code.size() && code[i] != '[' && code[i] != '=' && code[i] != ';';) {
            if (is_ident_start(code[i])) {
                const size_t b = i;
                while (i < code.size() && is_ident_char(code[i]))
                    ++i;
                last = code.substr(b, i - b);
            } else {
                ++i;
            }
        }
        if (!last.empty())
            out.insert(last);
    }
    return out;
}

void check_names(const Expr& e, const std::set<std::string>& allowed, const std::string& what, const char* allowed_desc,
                 int line, const std::string& file, std::vector<Error>& errors) {
    for (const auto& n : e.names())
        if (!allowed.count(n))
            errors.emplace_back(SourceLocation{file, line}, what + ": unknown name '" + n + "' in '" + e.text() +
                                                                "' (" + allowed_desc + ": " + join_names(allowed) +
                                                                ")");
}

}  // namespace

KernelProgram KernelProgram::parse(const std::string& source, const std::string& file_name) {
    KernelProgram p;
    p.file = file_name;
    p.source = source;
    if (source.size() > kMaxSourceBytes)
        throw Error(SourceLocation{file_name, 0}, "expected a kernel program of at most " +
                                                      std::to_string(kMaxSourceBytes >> 20) + " MiB, found " +
                                                      std::to_string(source.size()) + " bytes");
    std::set<std::string> names;  // scratch and tunables share one namespace with each other
    std::istringstream in(source);
    std::string line;
    for (int number = 1; std::getline(in, line); ++number) {
        if (!line.empty() && line.back() == '\r')
            line.pop_back();
        size_t pos = line.find_first_not_of(" \t");
        if (pos == std::string::npos || line.compare(pos, 2, "//") != 0)
            continue;
        pos = line.find_first_not_of(" \t", pos + 2);
        const std::string tag = "@kerncast";
        if (pos == std::string::npos || line.compare(pos, tag.size(), tag) != 0)
            continue;
        pos += tag.size();
        const SourceLocation where{file_name, number};
        LineReader r(line, pos, where);
        if (line.size() > kMaxDirectiveChars)
            throw Error(where, "expected a @kerncast line of at most " + std::to_string(kMaxDirectiveChars) +
                                   " characters, found " + std::to_string(line.size()));
        if (pos < line.size() && !std::isspace(static_cast<unsigned char>(line[pos])))
            r.fail("expected a space after @kerncast");
        if (r.atEnd())
            r.fail(std::string("expected a directive (") + kDirectives + ") after @kerncast");
        const size_t directive_pos = r.pos();
        const std::string directive = r.word();
        const auto at_most = [&](size_t count, size_t limit, const char* what) {
            if (count >= limit)
                throw Error(where, "expected at most " + std::to_string(limit) + " " + what + " lines");
        };
        if (directive == "launch") {
            at_most(p.launches.size(), kMaxLaunches, "launch");
            p.launches.push_back(parse_launch(r, where));
        } else if (directive == "scratch") {
            at_most(p.scratch.size(), kMaxScratch, "scratch");
            auto s = parse_scratch(r, where);
            if (!names.insert(s.name).second)
                throw Error(where, "scratch " + s.name + ": the name is already declared by a scratch or tunable line");
            p.scratch.push_back(std::move(s));
        } else if (directive == "constant") {
            at_most(p.constants.size(), kMaxScratch, "constant");
            auto c = parse_constant(r, where);
            for (const auto& other : p.constants)
                if (other.symbol == c.symbol)
                    throw Error(where, "constant " + c.symbol + " is filled twice (also on line " +
                                           std::to_string(other.line) + ")");
            p.constants.push_back(std::move(c));
        } else if (directive == "target") {
            if (!p.targets.empty())
                throw Error(where, "target is given twice (also on line " + std::to_string(p.targets_line) +
                                       "); list every architecture on one line");
            while (!r.atEnd()) {
                const size_t target_pos = r.pos();
                const std::string t = r.word();
                static const std::regex kArch(R"(^sm_[0-9]{2,3}[af]?$)");
                if (!std::regex_match(t, kArch)) {
                    r.setPos(target_pos);
                    r.fail("expected an architecture such as sm_90a, found '" + t + "'");
                }
                p.targets.push_back(t);
            }
            if (p.targets.empty())
                r.fail("expected the architectures the code needs after 'target', e.g. target sm_90a");
            p.targets_line = number;
        } else if (directive == "tunable") {
            at_most(p.tunables.size(), kMaxTunables, "tunable");
            auto t = parse_tunable(r, where);
            if (!names.insert(t.name).second)
                throw Error(where, "tunable " + t.name + " is declared twice (or clashes with a scratch buffer)");
            p.tunables.push_back(std::move(t));
        } else {
            r.setPos(directive_pos);
            r.fail("unknown directive '" + directive + "'; expected one of " + kDirectives);
        }
    }
    return p;
}

KernelProgram KernelProgram::load(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw Error(SourceLocation{path, 0}, "cannot read the kernel program");
    std::stringstream ss;
    ss << in.rdbuf();
    return parse(ss.str(), path);
}

std::vector<Error> KernelProgram::validationErrors(const Problem& problem) const {
    std::vector<Error> errors;
    if (launches.empty())
        errors.emplace_back(SourceLocation{file, 0},
                            "expected at least one '// @kerncast launch <kernel> grid(...) block(...) args(...)' line");

    std::set<std::string> sizes, buffers, scalars, scratchNames, tunableNames;
    for (const auto& s : problem.sizeNames())
        sizes.insert(s);
    for (const auto& b : problem.buffers)
        buffers.insert(b.name);
    for (const auto& s : problem.scalars)
        scalars.insert(s.name);
    auto problemKind = [&](const std::string& n) -> const char* {
        if (sizes.count(n))
            return "size";
        if (buffers.count(n))
            return "buffer";
        if (scalars.count(n))
            return "scalar";
        return nullptr;
    };
    for (const auto& s : scratch) {
        if (const char* kind = problemKind(s.name))
            errors.emplace_back(SourceLocation{file, s.line}, "scratch " + s.name + ": the name is already a " + kind +
                                                                  " of problem " + problem.name);
        scratchNames.insert(s.name);
    }
    for (const auto& t : tunables) {
        if (const char* kind = problemKind(t.name))
            errors.emplace_back(SourceLocation{file, t.line}, "tunable " + t.name + ": the name is already a " + kind +
                                                                  " of problem " + problem.name);
        tunableNames.insert(t.name);
    }

    std::set<std::string> exprNames = sizes;
    exprNames.insert(tunableNames.begin(), tunableNames.end());
    for (const auto& s : scratch)
        check_names(s.count, exprNames, "scratch " + s.name, "sizes and tunables", s.line, file, errors);
    for (const auto& t : tunables)
        if (!t.where.empty())
            check_names(t.where, tunableNames, "tunable " + t.name + " where", "tunables", t.line, file, errors);

    const auto constant_symbols = constant_variables(source);
    for (const auto& c : constants) {
        const BufferSpec* b = problem.buffer(c.buffer);
        if (!b)
            errors.emplace_back(SourceLocation{file, c.line}, "constant " + c.symbol + ": unknown buffer '" + c.buffer +
                                                                  "'; expected one of " + join_names(buffers));
        else if (b->role != Role::In)
            errors.emplace_back(SourceLocation{file, c.line},
                                "constant " + c.symbol + ": buffer " + c.buffer + " is an " + to_string(b->role) +
                                    " buffer; constant memory is read-only, so only an input (role in) can fill it");
        if (!constant_symbols.count(c.symbol))
            errors.emplace_back(SourceLocation{file, c.line},
                                "constant " + c.symbol + ": no __constant__ variable '" + c.symbol +
                                    "' in the source (found: " + join_names(constant_symbols) + ")");
    }

    const auto kernels = global_functions(source);
    for (const auto& l : launches) {
        const std::string what = "launch " + l.kernel;
        for (int d = 0; d < 3; ++d) {
            check_names(l.grid[d], exprNames, what + " grid", "sizes and tunables", l.line, file, errors);
            check_names(l.block[d], exprNames, what + " block", "sizes and tunables", l.line, file, errors);
        }
        check_names(l.smem, exprNames, what + " smem", "sizes and tunables", l.line, file, errors);
        if (!l.when.empty())
            check_names(l.when, exprNames, what + " when", "sizes and tunables", l.line, file, errors);
        for (int d = 0; d < 3; ++d)
            if (!l.cluster[d].empty())
                check_names(l.cluster[d], exprNames, what + " cluster", "sizes and tunables", l.line, file, errors);
        for (size_t i = 0; i < l.args.size(); ++i) {
            const std::string& a = l.args[i];
            if (const auto tm = l.tensormaps.find(i); tm != l.tensormaps.end()) {
                const TensorMapSpec& t = tm->second;
                const std::string of = what + ": tensormap of " + t.buffer;
                if (!buffers.count(t.buffer) && !scratchNames.count(t.buffer))
                    errors.emplace_back(SourceLocation{file, l.line},
                                        of + ": unknown buffer; a tensor map is built over a buffer (" +
                                            join_names(buffers) + ") or a scratch buffer (" + join_names(scratchNames) +
                                            ")");
                for (const auto& e : t.shape)
                    check_names(e, exprNames, of + " shape", "sizes and tunables", l.line, file, errors);
                for (const auto& e : t.box)
                    check_names(e, exprNames, of + " box", "sizes and tunables", l.line, file, errors);
                continue;
            }
            if (problemKind(a) || scratchNames.count(a))
                continue;
            if (tunableNames.count(a))
                errors.emplace_back(SourceLocation{file, l.line},
                                    what + ": argument '" + a + "' is a tunable; tunables reach the source as -D " + a +
                                        "=value, not as arguments");
            else
                errors.emplace_back(SourceLocation{file, l.line},
                                    what + ": unknown argument '" + a + "'; expected a buffer (" + join_names(buffers) +
                                        "), scratch (" + join_names(scratchNames) + "), scalar (" +
                                        join_names(scalars) + ") or size (" + join_names(sizes) + ")");
        }
        if (!kernels.count(l.kernel))
            errors.emplace_back(SourceLocation{file, l.line}, what + ": no __global__ function '" + l.kernel +
                                                                  "' in the source (found: " + join_names(kernels) +
                                                                  ")");
    }
    return errors;
}

void KernelProgram::validate(const Problem& problem) const {
    const auto errors = validationErrors(problem);
    if (!errors.empty())
        throw errors.front();
}

const Tunable* KernelProgram::tunable(const std::string& name) const {
    for (const auto& t : tunables)
        if (t.name == name)
            return &t;
    return nullptr;
}

bool KernelProgram::isValid(const Bindings& values) const {
    if (values.size() != tunables.size())
        return false;
    for (const auto& t : tunables) {
        const auto it = values.find(t.name);
        if (it == values.end() || std::find(t.values.begin(), t.values.end(), it->second) == t.values.end())
            return false;
    }
    for (const auto& t : tunables) {
        if (t.where.empty())
            continue;
        try {
            if (t.where.eval(values) == 0)
                return false;
        } catch (const Error&) {
            // A condition that cannot be evaluated (division by zero for these values) does not hold.
            return false;
        }
    }
    return !only || only->count(values) > 0;
}

namespace {

// Walks the tunables in declared order (the last varies fastest), checking each where condition as soon as every
// tunable it reads has a value, so that a subtree no condition allows is never entered. Stops when visit returns
// false. Throws Error when the walk would take more than kMaxEnumerationSteps steps.
template<typename Visit>
void for_each_valid(const KernelProgram& p, Visit visit) {
    const std::vector<Tunable>& ts = p.tunables;
    const size_t n = ts.size();
    // checks[i]: the conditions that can be decided once tunables 0..i have values. A condition that reads a name
    // that is no tunable cannot be evaluated and holds for no configuration (as in isValid()); it waits for the
    // last tunable and fails there.
    std::vector<std::vector<const Expr*>> checks(n);
    for (const Tunable& t : ts) {
        if (t.where.empty())
            continue;
        size_t level = 0;
        for (const std::string& name : t.where.names()) {
            const auto it = std::find_if(ts.begin(), ts.end(), [&](const Tunable& u) { return u.name == name; });
            level = std::max(level, it == ts.end() ? n - 1 : static_cast<size_t>(it - ts.begin()));
        }
        checks[level].push_back(&t.where);
    }
    if (n == 0) {
        if (!p.only || p.only->count(Bindings{}))
            visit(Bindings{});
        return;
    }
    auto holds = [](const Expr& e, const Bindings& b) {
        try {
            return e.eval(b) != 0;
        } catch (const Error&) {
            return false;  // cannot be evaluated for these values (division by zero, overflow): does not hold
        }
    };
    std::vector<size_t> index(n, 0);
    Bindings b;
    size_t level = 0;
    uint64_t steps = 0;
    for (;;) {
        // Assign ts[level] its current value and decide the conditions that became decidable.
        b[ts[level].name] = ts[level].values[index[level]];
        if (++steps > kMaxEnumerationSteps) {
            double product = 1;
            for (const Tunable& t : ts)
                product *= static_cast<double>(t.values.size());
            char count[32];
            std::snprintf(count, sizeof count, "%.3g", product);
            throw Error(SourceLocation{p.file, ts.front().line},
                        "enumerating the family's configurations takes more than " +
                            std::to_string(kMaxEnumerationSteps) + " steps (the tunables' values multiply to " + count +
                            " combinations and the where conditions rule out too few of them early); give "
                            "fewer values, or where conditions on the first tunables that rule out more");
        }
        bool ok = true;
        for (const Expr* e : checks[level])
            if (!holds(*e, b)) {
                ok = false;
                break;
            }
        if (ok && level + 1 < n) {
            index[++level] = 0;
            continue;
        }
        if (ok && (!p.only || p.only->count(b)) && !visit(b))
            return;
        // Next value at this level, or back up.
        while (++index[level] >= ts[level].values.size()) {
            b.erase(ts[level].name);
            if (level == 0)
                return;
            --level;
        }
    }
}

}  // namespace

std::vector<Bindings> KernelProgram::configurations(size_t limit) const {
    std::vector<Bindings> out;
    if (limit == 0)
        return out;
    for_each_valid(*this, [&](const Bindings& b) {
        out.push_back(b);
        return out.size() < limit;
    });
    return out;
}

std::vector<Bindings> KernelProgram::compileCheckConfigurations(size_t all_up_to) const {
    std::vector<Bindings> out = configurations(all_up_to + 1);
    if (out.size() <= all_up_to)
        return out;
    // Greedy cover: each configuration that brings a value not seen yet is kept, until every value of every
    // tunable has been seen (values that no valid configuration uses cost a full walk, bounded as above).
    out.clear();
    std::set<std::pair<std::string, int64_t>> missing;
    for (const Tunable& t : tunables)
        for (int64_t v : t.values)
            missing.emplace(t.name, v);
    for_each_valid(*this, [&](const Bindings& b) {
        bool brings = false;
        for (const auto& [name, value] : b)
            brings |= missing.erase({name, value}) > 0;
        if (brings)
            out.push_back(b);
        return !missing.empty();
    });
    return out;
}

size_t KernelProgram::configurationCount(size_t limit) const {
    size_t n = 0;
    if (limit == 0)
        return 0;
    for_each_valid(*this, [&](const Bindings& b) {
        (void)b;
        return ++n < limit;
    });
    return n;
}

namespace {

Bindings merged_bindings(const KernelProgram& p, const Bindings& sizes, const Bindings& tunables) {
    for (const auto& [name, value] : tunables)
        if (!p.tunable(name)) {
            std::vector<std::string> declared;
            for (const auto& t : p.tunables)
                declared.push_back(t.name);
            throw Error(SourceLocation{p.file, 0},
                        "unknown tunable '" + name + "' (declared: " + join_names(declared) + ")");
        }
    for (const auto& t : p.tunables) {
        const auto it = tunables.find(t.name);
        if (it == tunables.end())
            throw Error(SourceLocation{p.file, t.line}, "tunable " + t.name + " has no value in this configuration");
        if (std::find(t.values.begin(), t.values.end(), it->second) == t.values.end())
            throw Error(SourceLocation{p.file, t.line},
                        "tunable " + t.name + "=" + std::to_string(it->second) + " is not one of its allowed values");
    }
    if (!p.isValid(tunables))
        throw Error(SourceLocation{p.file, 0},
                    "the configuration " + describe(tunables) + " violates a where condition");
    Bindings all = sizes;
    for (const auto& [k, v] : tunables)
        all[k] = v;
    return all;
}

// The checks cuTensorMapEncodeTiled makes, said in the plan's terms, and one it cannot make: that the map stays
// inside its buffer (a map larger than the buffer would let the copy engine read and write past its end).
ResolvedTensorMap resolve_tensormap(const TensorMapSpec& t, const Problem& problem, const KernelProgram& program,
                                    const Bindings& sizes, const Bindings& all, const SourceLocation& where,
                                    const std::string& context) {
    ResolvedTensorMap m;
    m.buffer = t.buffer;
    m.swizzle = t.swizzle;
    int64_t buffer_elements = 0;
    if (const BufferSpec* b = problem.buffer(t.buffer)) {
        m.dtype = b->dtype;
        buffer_elements = b->elements(sizes);
    } else if (auto it = std::find_if(program.scratch.begin(), program.scratch.end(),
                                      [&](const ScratchSpec& s) { return s.name == t.buffer; });
               it != program.scratch.end()) {
        m.scratch = true;
        m.dtype = it->dtype;
        buffer_elements = it->count.eval(all);
    } else {
        throw Error(where, "tensormap of " + t.buffer + ": unknown buffer" + context);
    }
    const std::string of = "tensormap of " + t.buffer;
    const int64_t esize = static_cast<int64_t>(dtype_size(m.dtype));
    int64_t elements = 1;
    for (size_t d = 0; d < t.shape.size(); ++d) {
        const int64_t n = t.shape[d].eval(all);
        if (n <= 0 || n > (int64_t{1} << 32))
            throw Error(where, of + ": shape[" + std::to_string(d) + "] = " + std::to_string(n) + " from '" +
                                   t.shape[d].text() + "': expected 1..2^32" + context);
        int64_t stride = 0;  // bytes between elements of the next dimension
        if (__builtin_mul_overflow(elements, n, &elements) || __builtin_mul_overflow(elements, esize, &stride))
            throw Error(where, of + ": the shape's element count overflows 64 bits" + context);
        // The copy engine needs strides that are 16-byte multiples.
        if (d + 1 < t.shape.size() && stride % 16 != 0)
            throw Error(where, of + ": dimension " + std::to_string(d + 1) + " has a stride of " +
                                   std::to_string(stride) +
                                   " bytes; a tensor map needs strides that are multiples of 16 bytes (pad the "
                                   "rows, e.g. into a scratch buffer)" +
                                   context);
        m.shape.push_back(static_cast<uint64_t>(n));
    }
    if (elements > buffer_elements)
        throw Error(where, of + ": the shape covers " + std::to_string(elements) + " elements but " + t.buffer +
                               " has " + std::to_string(buffer_elements) + context);
    for (size_t d = 0; d < t.box.size(); ++d) {
        const int64_t b = t.box[d].eval(all);
        if (b <= 0 || b > 256)
            throw Error(where, of + ": box[" + std::to_string(d) + "] = " + std::to_string(b) + " from '" +
                                   t.box[d].text() + "': expected 1..256" + context);
        m.box.push_back(static_cast<uint32_t>(b));
    }
    const int64_t row_bytes = int64_t{m.box[0]} * esize;
    if (row_bytes % 16 != 0)
        throw Error(where, of + ": box[0] = " + std::to_string(m.box[0]) + " elements is " + std::to_string(row_bytes) +
                               " bytes; the innermost box extent must be a multiple of 16 bytes" + context);
    if (m.swizzle != 0 && row_bytes > m.swizzle)
        throw Error(where, of + ": box[0] is " + std::to_string(row_bytes) + " bytes, more than its swizzle of " +
                               std::to_string(m.swizzle) + " bytes allows" + context);
    return m;
}

}  // namespace

std::vector<ResolvedLaunch> KernelProgram::resolve(const Problem& problem, const Bindings& sizes,
                                                   const Bindings& tunableValues) const {
    const Bindings all = merged_bindings(*this, sizes, tunableValues);
    std::vector<ResolvedLaunch> out;
    for (const auto& l : launches) {
        const SourceLocation where{file, l.line};
        const std::string context = " (launch " + l.kernel + " with " + describe(all) + ")";
        if (!l.when.empty() && l.when.eval(all) == 0)
            continue;
        ResolvedLaunch r;
        r.kernel = l.kernel;
        r.line = l.line;
        static constexpr int64_t kGridMax[3] = {std::numeric_limits<int32_t>::max(), 65535, 65535};
        static constexpr int64_t kBlockMax[3] = {1024, 1024, 64};
        int64_t threads = 1;
        for (int d = 0; d < 3; ++d) {
            const char axis = "xyz"[d];
            const int64_t g = l.grid[d].eval(all);
            if (g <= 0 || g > kGridMax[d])
                throw Error(where, std::string("grid.") + axis + " = " + std::to_string(g) + " from '" +
                                       l.grid[d].text() + "': expected 1.." + std::to_string(kGridMax[d]) + context);
            const int64_t b = l.block[d].eval(all);
            if (b <= 0 || b > kBlockMax[d])
                throw Error(where, std::string("block.") + axis + " = " + std::to_string(b) + " from '" +
                                       l.block[d].text() + "': expected 1.." + std::to_string(kBlockMax[d]) + context);
            r.grid[d] = static_cast<uint32_t>(g);
            r.block[d] = static_cast<uint32_t>(b);
            threads *= b;
        }
        if (threads > 1024)
            throw Error(where, "block has " + std::to_string(threads) + " threads: expected at most 1024" + context);
        const int64_t smem = l.smem.eval(all);
        if (smem < 0 || smem > std::numeric_limits<uint32_t>::max())
            throw Error(where, "smem = " + std::to_string(smem) + " from '" + l.smem.text() +
                                   "': expected a non-negative byte count" + context);
        r.smem = static_cast<uint32_t>(smem);
        int64_t cluster_blocks = 1;
        for (int d = 0; d < 3; ++d) {
            const char axis = "xyz"[d];
            const int64_t c = l.cluster[d].empty() ? 1 : l.cluster[d].eval(all);
            if (c <= 0 || c > kMaxClusterBlocks)
                throw Error(where, std::string("cluster.") + axis + " = " + std::to_string(c) + " from '" +
                                       l.cluster[d].text() + "': expected 1.." + std::to_string(kMaxClusterBlocks) +
                                       context);
            if (r.grid[d] % c != 0)
                throw Error(where, std::string("grid.") + axis + " = " + std::to_string(r.grid[d]) +
                                       " is not a multiple of cluster." + axis + " = " + std::to_string(c) +
                                       "; a grid is made of whole clusters" + context);
            r.cluster[d] = static_cast<uint32_t>(c);
            cluster_blocks *= c;
        }
        if (cluster_blocks > kMaxClusterBlocks)
            throw Error(where, "a cluster of " + std::to_string(cluster_blocks) + " blocks: expected at most " +
                                   std::to_string(kMaxClusterBlocks) + context);
        for (size_t i = 0; i < l.args.size(); ++i) {
            const std::string& a = l.args[i];
            ResolvedArg ra;
            ra.name = a;
            if (const auto tm = l.tensormaps.find(i); tm != l.tensormaps.end()) {
                ra.kind = ResolvedArg::Kind::TensorMap;
                ra.name = tm->second.buffer;
                ra.tensormap = resolve_tensormap(tm->second, problem, *this, sizes, all, where, context);
                ra.dtype = ra.tensormap.dtype;
                r.args.push_back(std::move(ra));
                continue;
            }
            if (const auto* b = problem.buffer(a)) {
                ra.kind = ResolvedArg::Kind::Buffer;
                ra.dtype = b->dtype;
            } else if (const auto* s = problem.scalar(a)) {
                ra.kind = ResolvedArg::Kind::Scalar;
                ra.dtype = s->dtype;
                ra.scalar_value = s->value;
            } else if (auto it = std::find_if(scratch.begin(), scratch.end(),
                                              [&](const ScratchSpec& s) { return s.name == a; });
                       it != scratch.end()) {
                ra.kind = ResolvedArg::Kind::Scratch;
                ra.dtype = it->dtype;
            } else if (auto sit = sizes.find(a); sit != sizes.end()) {
                ra.kind = ResolvedArg::Kind::Size;
                ra.dtype = DType::I32;
                if (sit->second > std::numeric_limits<int32_t>::max() ||
                    sit->second < std::numeric_limits<int32_t>::min())
                    throw Error(where, "size argument " + a + " = " + std::to_string(sit->second) +
                                           " does not fit in a 32-bit int (sizes are passed as int)" + context);
                ra.size_value = sit->second;
            } else {
                throw Error(where, "launch " + l.kernel + ": unknown argument '" + a +
                                       "'; expected a buffer, scratch, scalar or size");
            }
            r.args.push_back(std::move(ra));
        }
        out.push_back(std::move(r));
    }
    if (out.empty() && !launches.empty())
        throw Error(SourceLocation{file, launches.front().line},
                    "no launch's when(...) holds with " + describe(all) + ": the plan launches nothing");
    return out;
}

std::vector<ResolvedScratch> KernelProgram::resolveScratch(const Problem&, const Bindings& sizes,
                                                           const Bindings& tunableValues) const {
    const Bindings all = merged_bindings(*this, sizes, tunableValues);
    std::vector<ResolvedScratch> out;
    for (const auto& s : scratch) {
        const int64_t n = s.count.eval(all);
        if (n <= 0)
            throw Error(SourceLocation{file, s.line}, "scratch " + s.name + " has " + std::to_string(n) +
                                                          " elements from '" + s.count.text() +
                                                          "': expected at least 1 (with " + describe(all) + ")");
        int64_t bytes = 0;
        if (__builtin_mul_overflow(n, static_cast<int64_t>(dtype_size(s.dtype)), &bytes))
            throw Error(SourceLocation{file, s.line}, "scratch " + s.name + ": byte count overflows 64 bits");
        out.push_back({s.name, s.dtype, n});
    }
    return out;
}

bool LaunchSpec::hasCluster() const {
    // Absent, the dimensions are the constant 1; cluster(1, 1) says the same.
    return std::any_of(cluster.begin(), cluster.end(), [](const Expr& e) { return !e.empty() && e.text() != "1"; });
}

std::string KernelProgram::compileArch(const std::string& device_arch) const {
    if (targets.empty())
        return device_arch;
    const auto number = [](const std::string& arch) {
        const size_t underscore = arch.find('_');
        std::string n = underscore == std::string::npos ? arch : arch.substr(underscore + 1);
        while (!n.empty() && std::isalpha(static_cast<unsigned char>(n.back())))
            n.pop_back();
        return n;
    };
    for (const std::string& t : targets)
        if (number(t) == number(device_arch))
            return t;
    throw Error(SourceLocation{file, targets_line}, "this program is written for " + join(targets) +
                                                        " (its target line) and cannot run on this device, " +
                                                        device_arch);
}

bool KernelProgram::usesTensorMaps() const {
    return std::any_of(launches.begin(), launches.end(), [](const LaunchSpec& l) { return !l.tensormaps.empty(); });
}

std::vector<std::string> KernelProgram::kernelNames() const {
    std::vector<std::string> out;
    for (const auto& l : launches)
        if (std::find(out.begin(), out.end(), l.kernel) == out.end())
            out.push_back(l.kernel);
    return out;
}

}  // namespace kerncast
