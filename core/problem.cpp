#include "core/problem.h"
#include "core/text_util.h"
#include "core/untrusted_json.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <regex>
#include <set>
#include <sstream>

namespace kerncast {

using nlohmann::json;

namespace {

// "levelL/N_Name.py" (L 1-9, N digits, Name of letters, digits and '_'). Checked by hand rather than with
// std::regex, whose matcher recurses once per character and overflows the stack on a long untrusted string.
bool is_kernelbench_file(const std::string& s) {
    const auto digit = [](char ch) { return ch >= '0' && ch <= '9'; };
    const auto word = [&](char ch) {
        return digit(ch) || ch == '_' || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z');
    };
    if (s.size() < 12 || s.compare(0, 5, "level") != 0 || s[5] < '1' || s[5] > '9' || s[6] != '/' ||
        s.compare(s.size() - 3, 3, ".py") != 0)
        return false;
    size_t i = 7;
    const size_t end = s.size() - 3;
    const size_t digits_from = i;
    while (i < end && digit(s[i]))
        ++i;
    if (i == digits_from || i + 1 >= end || s[i] != '_')
        return false;
    for (++i; i < end; ++i)
        if (!word(s[i]))
            return false;
    return true;
}

}  // namespace

namespace {

constexpr const char* kDTypeNames = "f32 f16 bf16 f64 i32 u8";

// Maps JSON pointers ("/buffers/1/dtype") to the line where that value starts, because nlohmann keeps no
// positions and a person fixing problem.json needs the line. Only runs on text nlohmann has already accepted.
class LineMap {
public:
    explicit LineMap(const std::string& text) : m_text(text) {
        skipSpace();
        value("");
    }

    // The line of the value at `pointer`, or of its nearest ancestor when it does not exist (a missing field is
    // reported at the object that should hold it).
    int line(std::string pointer) const {
        for (;;) {
            if (auto it = m_lines.find(pointer); it != m_lines.end())
                return it->second;
            if (pointer.empty())
                return 1;
            pointer.erase(pointer.rfind('/'));
        }
    }

private:
    void skipSpace() {
        while (m_pos < m_text.size() && std::isspace(static_cast<unsigned char>(m_text[m_pos]))) {
            if (m_text[m_pos] == '\n')
                ++m_line;
            ++m_pos;
        }
    }

    std::string string() {
        std::string out;
        ++m_pos;  // opening quote
        while (m_pos < m_text.size() && m_text[m_pos] != '"') {
            if (m_text[m_pos] == '\\')
                ++m_pos;
            if (m_pos < m_text.size())
                out += m_text[m_pos++];
        }
        ++m_pos;  // closing quote
        return out;
    }

    void value(const std::string& pointer) {
        m_lines[pointer] = m_line;
        if (m_pos >= m_text.size())
            return;
        const char c = m_text[m_pos];
        if (c == '{') {
            ++m_pos;
            skipSpace();
            while (m_pos < m_text.size() && m_text[m_pos] != '}') {
                const std::string key = string();
                skipSpace();
                ++m_pos;  // ':'
                skipSpace();
                value(pointer + "/" + key);
                skipSpace();
                if (m_pos < m_text.size() && m_text[m_pos] == ',') {
                    ++m_pos;
                    skipSpace();
                }
            }
            ++m_pos;
        } else if (c == '[') {
            ++m_pos;
            skipSpace();
            for (size_t i = 0; m_pos < m_text.size() && m_text[m_pos] != ']'; ++i) {
                value(pointer + "/" + std::to_string(i));
                skipSpace();
                if (m_pos < m_text.size() && m_text[m_pos] == ',') {
                    ++m_pos;
                    skipSpace();
                }
            }
            ++m_pos;
        } else if (c == '"') {
            string();
        } else {
            while (m_pos < m_text.size() && !std::isspace(static_cast<unsigned char>(m_text[m_pos])) &&
                   m_text[m_pos] != ',' && m_text[m_pos] != ']' && m_text[m_pos] != '}')
                ++m_pos;
        }
    }

    const std::string& m_text;
    size_t m_pos = 0;
    int m_line = 1;
    std::map<std::string, int> m_lines;
};

// "/buffers/1/dtype" -> "buffers[1].dtype": how a person reads the field.
std::string display(const std::string& pointer) {
    std::string out;
    size_t pos = 1;
    while (pos <= pointer.size() && !pointer.empty()) {
        size_t next = pointer.find('/', pos);
        if (next == std::string::npos)
            next = pointer.size();
        const std::string seg = pointer.substr(pos, next - pos);
        const bool index = !seg.empty() && std::all_of(seg.begin(), seg.end(), [](char c) {
            return std::isdigit(static_cast<unsigned char>(c));
        });
        if (index)
            out += "[" + seg + "]";
        else
            out += (out.empty() ? "" : ".") + seg;
        pos = next + 1;
    }
    return out.empty() ? "(top level)" : out;
}

bool is_identifier(const std::string& s) {
    if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_'))
        return false;
    return std::all_of(s.begin(), s.end(),
                       [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

std::string describe(const json& v) {
    if (v.is_string())
        return v.dump();
    if (v.is_object())
        return "an object";
    if (v.is_array())
        return "an array";
    return v.dump();
}

// The message of an Error without its "file:line: " prefix, to re-report it at a more precise field.
std::string bare(const Error& e) { return std::string(e.what()).substr(Error::format(e.where(), "").size()); }

// Thrown inside one field's check and turned into an Error at that field; lets the checks stay linear.
struct FieldError {
    std::string pointer;
    std::string message;
};

class Checker {
public:
    Checker(const std::string& file, const LineMap& lines, std::vector<Error>& errors)
        : m_file(file), m_lines(lines), m_errors(errors) {}

    SourceLocation at(const std::string& pointer) const { return {m_file, m_lines.line(pointer)}; }

    void report(const std::string& pointer, const std::string& message) {
        m_errors.push_back(Error(at(pointer), display(pointer) + ": " + message));
    }

    // Runs one check; a FieldError or Error from it is recorded and the remaining checks still run.
    template<typename F>
    void check(F&& f) {
        try {
            f();
        } catch (const FieldError& e) {
            report(e.pointer, e.message);
        }
    }

    void onlyKeys(const json& obj, const std::string& pointer, std::initializer_list<const char*> known) {
        std::set<std::string> names(known.begin(), known.end());
        for (const auto& [key, v] : obj.items())
            if (!names.count(key))
                report(pointer + "/" + key, "unknown field; expected one of " + join_names(names));
    }

    const json& require(const json& obj, const std::string& pointer, const char* key) {
        if (!obj.contains(key))
            throw FieldError{pointer, std::string("missing field \"") + key + "\""};
        return obj.at(key);
    }

    std::string string(const json& v, const std::string& pointer) {
        if (!v.is_string())
            throw FieldError{pointer, "expected a string, found " + describe(v)};
        return v.get<std::string>();
    }

    double number(const json& v, const std::string& pointer) {
        if (!v.is_number())
            throw FieldError{pointer, "expected a number, found " + describe(v)};
        return v.get<double>();
    }

    int64_t integer(const json& v, const std::string& pointer) {
        if (!v.is_number_integer() ||
            (v.is_number_unsigned() && v.get<uint64_t>() > uint64_t(std::numeric_limits<int64_t>::max())))
            throw FieldError{pointer, "expected an integer, found " + describe(v)};
        return v.get<int64_t>();
    }

    // An expression field: a string in the expression language or a plain integer. `allowed` names it may read.
    Expr expr(const json& v, const std::string& pointer, const std::set<std::string>& allowed, const char* what) {
        Expr e;
        if (v.is_number_integer())
            e = Expr::constant(integer(v, pointer));
        else if (v.is_string()) {
            const auto text = v.get<std::string>();
            try {
                Expr::parse(text);
            } catch (const Error& err) {
                throw FieldError{pointer, err.what()};
            }
            e = Expr::parse(text, at(pointer));
        } else
            throw FieldError{pointer, std::string("expected ") + what +
                                          " (a string like \"2 * N\" or an integer), found " + describe(v)};
        for (const auto& name : e.names())
            if (!allowed.count(name))
                throw FieldError{pointer, "unknown size '" + name + "' in '" + e.text() +
                                              "' (sizes: " + join_names(allowed) + ")"};
        return e;
    }

private:
    const std::string& m_file;
    const LineMap& m_lines;
    std::vector<Error>& m_errors;
};

Bindings parse_case(Checker& c, const json& v, const std::string& pointer) {
    if (!v.is_object())
        throw FieldError{pointer, "expected an object of named integer sizes like {\"N\": 1000}, found " + describe(v)};
    Bindings out;
    for (const auto& [key, value] : v.items()) {
        const std::string p = pointer + "/" + key;
        if (!is_identifier(key))
            throw FieldError{p, "size name \"" + key + "\" is not an identifier (letters, digits, _)"};
        const int64_t n = c.integer(value, p);
        if (n < 0)
            throw FieldError{p, "expected a non-negative size, found " + std::to_string(n)};
        out[key] = n;
    }
    if (out.empty())
        throw FieldError{pointer, "expected at least one named size"};
    return out;
}

std::set<std::string> keys(const Bindings& b) {
    std::set<std::string> out;
    for (const auto& [k, v] : b)
        out.insert(k);
    return out;
}

void parse_init(Checker& c, const json& v, const std::string& p, BufferSpec& b, const std::set<std::string>& sizes) {
    if (!v.is_object())
        throw FieldError{p, "expected an object like {\"dist\": \"uniform\", \"lo\": -1, \"hi\": 1}, found " +
                                describe(v)};
    const std::string dist = c.string(c.require(v, p, "dist"), p + "/dist");
    b.init.dist = dist;
    if (dist == "uniform" || dist == "normal") {
        if (is_integer(b.dtype))
            throw FieldError{p + "/dist", std::string("an ") + to_string(b.dtype) +
                                              " buffer needs {\"dist\": \"randint\", \"lo\": a, \"hi\": b}, found \"" +
                                              dist + "\""};
        if (dist == "uniform") {
            c.onlyKeys(v, p, {"dist", "lo", "hi"});
            b.init.lo = c.number(c.require(v, p, "lo"), p + "/lo");
            b.init.hi = c.number(c.require(v, p, "hi"), p + "/hi");
            if (!(b.init.lo < b.init.hi))
                throw FieldError{p + "/hi", "expected hi > lo for a uniform distribution"};
        } else {
            c.onlyKeys(v, p, {"dist", "mean", "std"});
            b.init.mean = c.number(c.require(v, p, "mean"), p + "/mean");
            b.init.std = c.number(c.require(v, p, "std"), p + "/std");
            if (!(b.init.std > 0))
                throw FieldError{p + "/std", "expected std > 0 (inputs must never be all equal)"};
        }
    } else if (dist == "randint") {
        // On a float buffer: whole numbers, so that values repeat (ties for an argmax, equal keys for a sort).
        c.onlyKeys(v, p, {"dist", "lo", "hi"});
        b.init.lo_expr = c.expr(c.require(v, p, "lo"), p + "/lo", sizes, "an integer bound");
        b.init.hi_expr = c.expr(c.require(v, p, "hi"), p + "/hi", sizes, "an integer bound");
        if (b.init.lo_expr.names().empty() && b.init.hi_expr.names().empty()) {
            b.init.lo = static_cast<double>(b.init.lo_expr.eval({}));
            b.init.hi = static_cast<double>(b.init.hi_expr.eval({}));
        }
    } else {
        throw FieldError{p + "/dist", "expected one of uniform normal randint, found \"" + dist + "\""};
    }
}

}  // namespace

size_t dtype_size(DType t) {
    switch (t) {
    case DType::F32:
        return 4;
    case DType::F16:
        return 2;
    case DType::BF16:
        return 2;
    case DType::F64:
        return 8;
    case DType::I32:
        return 4;
    case DType::U8:
        return 1;
    }
    return 0;
}

const char* to_string(DType t) {
    switch (t) {
    case DType::F32:
        return "f32";
    case DType::F16:
        return "f16";
    case DType::BF16:
        return "bf16";
    case DType::F64:
        return "f64";
    case DType::I32:
        return "i32";
    case DType::U8:
        return "u8";
    }
    return "?";
}

DType dtype_from_string(const std::string& s, const SourceLocation& where) {
    for (DType t : {DType::F32, DType::F16, DType::BF16, DType::F64, DType::I32, DType::U8})
        if (s == to_string(t))
            return t;
    throw Error(where, std::string("expected one of ") + kDTypeNames + ", found \"" + s + "\"");
}

bool is_integer(DType t) { return t == DType::I32 || t == DType::U8; }

const char* to_string(Role r) {
    switch (r) {
    case Role::In:
        return "in";
    case Role::Out:
        return "out";
    case Role::InOut:
        return "inout";
    }
    return "?";
}

Role role_from_string(const std::string& s, const SourceLocation& where) {
    for (Role r : {Role::In, Role::Out, Role::InOut})
        if (s == to_string(r))
            return r;
    throw Error(where, "expected one of in out inout, found \"" + s + "\"");
}

int64_t BufferSpec::elements(const Bindings& sizes) const {
    int64_t n = 1;
    for (const auto& dim : shape) {
        const int64_t d = dim.eval(sizes);
        if (d < 0)
            throw Error(dim.where(), "buffer '" + name + "': dimension '" + dim.text() + "' is negative (" +
                                         std::to_string(d) + ")");
        if (__builtin_mul_overflow(n, d, &n))
            throw Error(dim.where(), "buffer '" + name + "': element count overflows 64 bits");
    }
    return n;
}

Problem Problem::parse(const std::string& json_text, const std::string& file_name) {
    std::vector<Error> errors;
    Problem p = parse(json_text, file_name, errors);
    if (!errors.empty())
        throw errors.front();
    return p;
}

Problem Problem::parse(const std::string& json_text, const std::string& file_name, std::vector<Error>& errors) {
    Problem p;
    p.file = file_name;
    p.json_text = json_text;

    json root;
    try {
        // A problem file is small; nesting and length are capped so that nothing after the parse recurses deeply.
        root = parse_untrusted_json(json_text, SourceLocation{file_name, 1}, JsonLimits{64, size_t{1} << 20});
    } catch (const Error& e) {
        errors.push_back(e);
        return p;
    }

    const LineMap lines(json_text);
    Checker c(file_name, lines, errors);
    if (!root.is_object()) {
        c.report("", "expected a JSON object with name, sizes, buffers, flops and bytes, found " + describe(root));
        return p;
    }
    c.onlyKeys(root, "",
               {"name", "description", "sizes", "buffers", "scalars", "tolerance", "flops", "bytes", "reference",
                "pytorch", "kernelbench", "reference_configuration"});

    c.check([&] {
        p.name = c.string(c.require(root, "", "name"), "/name");
        if (p.name.empty())
            throw FieldError{"/name", "expected a non-empty name"};
    });
    c.check([&] {
        if (root.contains("description"))
            p.description = c.string(root["description"], "/description");
    });
    c.check([&] {
        if (root.contains("reference"))
            p.reference_file = c.string(root["reference"], "/reference");
        if (p.reference_file.empty())
            throw FieldError{"/reference", "expected a file name relative to the problem folder"};
    });
    c.check([&] {
        if (root.contains("pytorch"))
            p.pytorch = c.string(root["pytorch"], "/pytorch");
    });
    c.check([&] {
        // The family configuration the reference program is (problems imported from a T1 file, whose reference is
        // the file's default configuration): caches of the family give the reference's time from its entry.
        if (!root.contains("reference_configuration"))
            return;
        const json& v = root["reference_configuration"];
        if (!v.is_object() || v.empty())
            throw FieldError{"/reference_configuration",
                             "expected an object of tunable values like {\"BLOCK\": 256}, found " + describe(v)};
        for (const auto& [name, value] : v.items())
            p.reference_configuration[name] = c.integer(value, "/reference_configuration/" + name);
    });
    c.check([&] {
        // Documentation for readers comparing with KernelBench; only its form is checked.
        if (!root.contains("kernelbench"))
            return;
        const std::string file = c.string(root["kernelbench"], "/kernelbench");
        if (!is_kernelbench_file(file))
            throw FieldError{"/kernelbench",
                             "expected a KernelBench problem file like \"level1/23_Softmax.py\", found \"" +
                                 shorten_for_message(file) + "\""};
    });

    // Sizes first: every expression below is checked against their names.
    bool sizes_ok = false;
    std::vector<json> case_inits;  // each correctness case's "init", parsed once the buffers are known
    c.check([&] {
        const json& sizes = c.require(root, "", "sizes");
        if (!sizes.is_object())
            throw FieldError{"/sizes",
                             "expected an object with \"benchmark\" and \"correctness\", found " + describe(sizes)};
        c.onlyKeys(sizes, "/sizes", {"benchmark", "correctness"});
        p.benchmark = parse_case(c, c.require(sizes, "/sizes", "benchmark"), "/sizes/benchmark");
        sizes_ok = true;
        const json& corr = c.require(sizes, "/sizes", "correctness");
        if (!corr.is_array())
            throw FieldError{"/sizes/correctness", "expected an array of at least 2 cases, found " + describe(corr)};
        p.correctness_init.resize(corr.size());
        case_inits.resize(corr.size());
        for (size_t i = 0; i < corr.size(); ++i) {
            const std::string ptr = "/sizes/correctness/" + std::to_string(i);
            c.check([&] {
                json sizes_only = corr[i];
                if (sizes_only.is_object() && sizes_only.contains("init")) {
                    case_inits[i] = sizes_only["init"];
                    sizes_only.erase("init");
                }
                Bindings b = parse_case(c, sizes_only, ptr);
                if (keys(b) != keys(p.benchmark))
                    throw FieldError{ptr, "names sizes {" + join_names(keys(b)) + "}, but the benchmark case names {" +
                                              join_names(keys(p.benchmark)) + "}; every case names the same sizes"};
                p.correctness.push_back(std::move(b));
            });
        }
        if (corr.size() < 2)
            throw FieldError{"/sizes/correctness",
                             "expected at least 2 correctness cases (odd sizes that do not divide "
                             "block sizes), found " +
                                 std::to_string(corr.size())};
    });
    const std::set<std::string> sizeNames = keys(p.benchmark);
    std::set<std::string> declared = sizeNames;  // sizes, buffers and scalars share the kernel-argument namespace

    c.check([&] {
        const json& buffers = c.require(root, "", "buffers");
        if (!buffers.is_array() || buffers.empty())
            throw FieldError{"/buffers", "expected a non-empty array of buffers, found " + describe(buffers)};
        for (size_t i = 0; i < buffers.size(); ++i) {
            const std::string ptr = "/buffers/" + std::to_string(i);
            c.check([&] {
                const json& v = buffers[i];
                if (!v.is_object())
                    throw FieldError{ptr, "expected an object with name, dtype, shape and role, found " + describe(v)};
                c.onlyKeys(v, ptr, {"name", "dtype", "shape", "role", "init"});
                BufferSpec b;
                b.line = lines.line(ptr);
                b.name = c.string(c.require(v, ptr, "name"), ptr + "/name");
                if (!is_identifier(b.name))
                    throw FieldError{ptr + "/name",
                                     "expected an identifier (letters, digits, _), found \"" + b.name + "\""};
                if (!declared.insert(b.name).second)
                    throw FieldError{ptr + "/name",
                                     "the name '" + b.name + "' is already used by a size, buffer or scalar"};
                const std::string dt = c.string(c.require(v, ptr, "dtype"), ptr + "/dtype");
                try {
                    b.dtype = dtype_from_string(dt);
                } catch (const Error& e) {
                    throw FieldError{ptr + "/dtype", e.what()};
                }
                const json& shape = c.require(v, ptr, "shape");
                if (!shape.is_array() || shape.empty())
                    throw FieldError{ptr + "/shape",
                                     "expected a non-empty array of expressions over sizes, found " + describe(shape)};
                for (size_t d = 0; d < shape.size(); ++d)
                    b.shape.push_back(c.expr(shape[d], ptr + "/shape/" + std::to_string(d), sizeNames, "a dimension"));
                const std::string role = c.string(c.require(v, ptr, "role"), ptr + "/role");
                try {
                    b.role = role_from_string(role);
                } catch (const Error& e) {
                    throw FieldError{ptr + "/role", e.what()};
                }
                if (v.contains("init")) {
                    if (b.role == Role::Out)
                        throw FieldError{
                            ptr + "/init",
                            "an out buffer is poisoned before every run; remove \"init\" or make it inout"};
                    parse_init(c, v["init"], ptr + "/init", b, sizeNames);
                } else if (b.role != Role::Out && is_integer(b.dtype)) {
                    throw FieldError{ptr,
                                     std::string("an ") + to_string(b.dtype) +
                                         " input needs \"init\": {\"dist\": "
                                         "\"randint\", \"lo\": a, \"hi\": b} (integers often index other buffers)"};
                }
                if (sizes_ok) {
                    for (const auto& sizes : p.allCases()) {
                        int64_t n = 0;
                        try {
                            n = b.elements(sizes);
                            if (!b.init.lo_expr.empty() && b.init.lo_expr.eval(sizes) >= b.init.hi_expr.eval(sizes))
                                throw FieldError{ptr + "/init", "expected hi > lo for randint"};
                        } catch (const Error& e) {
                            throw FieldError{ptr + "/shape", bare(e)};
                        }
                        if (n <= 0)
                            throw FieldError{ptr + "/shape",
                                             "has no elements for sizes " + nlohmann::json(sizes).dump()};
                    }
                }
                p.buffers.push_back(std::move(b));
            });
        }
        const bool checked =
            std::any_of(p.buffers.begin(), p.buffers.end(), [](const BufferSpec& b) { return b.role != Role::In; });
        // Only when every buffer parsed: a broken out buffer must not also be reported as a missing one.
        if (p.buffers.size() == buffers.size() && !checked)
            throw FieldError{"/buffers",
                             "expected at least one buffer with role out or inout (the result that is checked)"};
    });

    // A correctness case's own input distributions: {"N": 1000, "init": {"x": {"dist": "normal", ...}}}.
    for (size_t i = 0; i < case_inits.size(); ++i) {
        if (case_inits[i].is_null() || i >= p.correctness.size())
            continue;
        const std::string ptr = "/sizes/correctness/" + std::to_string(i) + "/init";
        c.check([&] {
            const json& inits = case_inits[i];
            if (!inits.is_object() || inits.empty())
                throw FieldError{ptr, "expected an object naming input buffers, like {\"x\": {\"dist\": "
                                      "\"normal\", \"mean\": 0, \"std\": 100}}, found " +
                                          describe(inits)};
            for (const auto& [name, spec] : inits.items()) {
                const BufferSpec* buffer = p.buffer(name);
                if (!buffer)
                    throw FieldError{ptr + "/" + name, "names no buffer of the problem"};
                if (buffer->role == Role::Out)
                    throw FieldError{ptr + "/" + name, "an out buffer is poisoned before every run; only inputs "
                                                       "and inouts take \"init\""};
                BufferSpec copy = *buffer;
                copy.init = InitSpec{};
                parse_init(c, spec, ptr + "/" + name, copy, sizeNames);
                if (!copy.init.lo_expr.empty() &&
                    copy.init.lo_expr.eval(p.correctness[i]) >= copy.init.hi_expr.eval(p.correctness[i]))
                    throw FieldError{ptr + "/" + name, "expected hi > lo for randint at this case's sizes"};
                p.correctness_init[i][name] = copy.init;
            }
        });
    }

    c.check([&] {
        if (!root.contains("scalars"))
            return;
        const json& scalars = root["scalars"];
        if (!scalars.is_array())
            throw FieldError{"/scalars", "expected an array of scalars, found " + describe(scalars)};
        for (size_t i = 0; i < scalars.size(); ++i) {
            const std::string ptr = "/scalars/" + std::to_string(i);
            c.check([&] {
                const json& v = scalars[i];
                if (!v.is_object())
                    throw FieldError{ptr, "expected an object with name, dtype and value, found " + describe(v)};
                c.onlyKeys(v, ptr, {"name", "dtype", "value"});
                ScalarSpec s;
                s.line = lines.line(ptr);
                s.name = c.string(c.require(v, ptr, "name"), ptr + "/name");
                if (!is_identifier(s.name))
                    throw FieldError{ptr + "/name",
                                     "expected an identifier (letters, digits, _), found \"" + s.name + "\""};
                if (!declared.insert(s.name).second)
                    throw FieldError{ptr + "/name",
                                     "the name '" + s.name + "' is already used by a size, buffer or scalar"};
                const std::string dt = c.string(c.require(v, ptr, "dtype"), ptr + "/dtype");
                if (dt != "f32" && dt != "f64" && dt != "i32")
                    throw FieldError{ptr + "/dtype",
                                     "expected one of f32 f64 i32 (scalars are passed by value), found \"" + dt + "\""};
                s.dtype = dtype_from_string(dt);
                if (s.dtype == DType::I32) {
                    const int64_t iv = c.integer(c.require(v, ptr, "value"), ptr + "/value");
                    if (iv < std::numeric_limits<int32_t>::min() || iv > std::numeric_limits<int32_t>::max())
                        throw FieldError{ptr + "/value", "expected a 32-bit integer, found " + std::to_string(iv)};
                    s.value = static_cast<double>(iv);
                } else {
                    s.value = c.number(c.require(v, ptr, "value"), ptr + "/value");
                }
                p.scalars.push_back(std::move(s));
            });
        }
    });

    c.check([&] {
        if (!root.contains("tolerance"))
            return;
        const json& t = root["tolerance"];
        if (!t.is_object())
            throw FieldError{"/tolerance",
                             "expected an object with rtol, atol and scale_atol_by_rms, found " + describe(t)};
        c.onlyKeys(t, "/tolerance", {"rtol", "atol", "scale_atol_by_rms"});
        if (t.contains("rtol"))
            p.tolerance.rtol = c.number(t["rtol"], "/tolerance/rtol");
        if (t.contains("atol"))
            p.tolerance.atol = c.number(t["atol"], "/tolerance/atol");
        if (p.tolerance.rtol < 0)
            throw FieldError{"/tolerance/rtol", "expected a non-negative number"};
        if (p.tolerance.atol < 0)
            throw FieldError{"/tolerance/atol", "expected a non-negative number"};
        if (t.contains("scale_atol_by_rms")) {
            if (!t["scale_atol_by_rms"].is_boolean())
                throw FieldError{"/tolerance/scale_atol_by_rms",
                                 "expected true or false, found " + describe(t["scale_atol_by_rms"])};
            p.tolerance.scale_atol_by_rms = t["scale_atol_by_rms"].get<bool>();
        }
    });

    for (const auto& field : {std::pair<const char*, Expr*>{"flops", &p.flops}, {"bytes", &p.bytes}}) {
        const char* key = field.first;  // named locals: clang before 16 cannot capture structured bindings
        Expr* target = field.second;
        c.check([&] {
            const std::string ptr = std::string("/") + key;
            *target = c.expr(c.require(root, "", key), ptr, sizeNames, "an expression over sizes");
            if (!sizes_ok)
                return;
            for (const auto& sizes : p.allCases()) {
                int64_t v = 0;
                try {
                    v = target->eval(sizes);
                } catch (const Error& e) {
                    throw FieldError{ptr, bare(e)};
                }
                if (v < 0)
                    throw FieldError{ptr, "is negative (" + std::to_string(v) + ") for sizes " +
                                              nlohmann::json(sizes).dump()};
            }
        });
    }
    return p;
}

Problem Problem::load(const std::string& path) {
    std::vector<Error> errors;
    Problem p = load(path, errors);
    if (!errors.empty())
        throw errors.front();
    return p;
}

Problem Problem::load(const std::string& path, std::vector<Error>& errors) {
    namespace fs = std::filesystem;
    std::string file = path;
    std::error_code ec;
    if (fs::is_directory(path, ec))
        file = (fs::path(path) / "problem.json").string();
    std::ifstream in(file, std::ios::binary);
    if (!in) {
        errors.emplace_back(SourceLocation{file, 0}, "cannot read the file (a problem folder needs a problem.json)");
        Problem p;
        p.file = file;
        p.dir = fs::path(file).parent_path().string();
        return p;
    }
    std::stringstream ss;
    ss << in.rdbuf();
    Problem p = parse(ss.str(), file, errors);
    p.dir = fs::path(file).parent_path().string();
    if (p.dir.empty())
        p.dir = ".";
    return p;
}

const BufferSpec* Problem::buffer(const std::string& name) const {
    for (const auto& b : buffers)
        if (b.name == name)
            return &b;
    return nullptr;
}

const ScalarSpec* Problem::scalar(const std::string& name) const {
    for (const auto& s : scalars)
        if (s.name == name)
            return &s;
    return nullptr;
}

std::vector<std::string> Problem::sizeNames() const {
    std::vector<std::string> out;
    for (const auto& [k, v] : benchmark)
        out.push_back(k);
    return out;
}

std::vector<Bindings> Problem::allCases() const {
    std::vector<Bindings> out = correctness;
    out.push_back(benchmark);
    return out;
}

std::string Problem::referencePath() const {
    return (std::filesystem::path(dir.empty() ? "." : dir) / reference_file).string();
}

}  // namespace kerncast
