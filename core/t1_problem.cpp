#include "core/t1_problem.h"

#include "core/error.h"
#include "core/kernel_program.h"
#include "core/problem.h"
#include "core/text_util.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>
#include <regex>
#include <set>
#include <sstream>

namespace kerncast {

namespace fs = std::filesystem;
using ojson = nlohmann::ordered_json;  // the T1 file read in its own key order

namespace {

const char* const kDimNames[3] = {"x", "y", "z"};
const char* const kBlockNames[3] = {"block_size_x", "block_size_y", "block_size_z"};

bool ident_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

std::string size_name(int d) { return std::string("problem_size_") + kDimNames[d]; }

// ---- "Values" strings ---------------------------------------------------------------------------------------

// Index of the bracket closing the one at `open`, skipping nested brackets of every kind.
size_t matching(const std::string& s, size_t open, const SourceLocation& where) {
    int depth = 0;
    for (size_t i = open; i < s.size(); ++i) {
        if (s[i] == '(' || s[i] == '[' || s[i] == '{')
            ++depth;
        else if (s[i] == ')' || s[i] == ']' || s[i] == '}') {
            if (--depth == 0)
                return i;
        }
    }
    throw Error(where,
                "expected a closing bracket for the one at column " + std::to_string(open + 1) + " in '" + s + "'");
}

// Splits at commas outside brackets.
std::vector<std::string> split_commas(const std::string& s) {
    std::vector<std::string> out;
    int depth = 0;
    size_t begin = 0;
    for (size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '(' || s[i] == '[')
            ++depth;
        else if (s[i] == ')' || s[i] == ']')
            --depth;
        else if (s[i] == ',' && depth == 0) {
            out.push_back(trim(s.substr(begin, i - begin)));
            begin = i + 1;
        }
    }
    const std::string last = trim(s.substr(begin));
    if (!last.empty())
        out.push_back(last);
    return out;
}

// Position of the keyword `word` outside brackets (as a whole word), or npos.
size_t find_keyword(const std::string& s, const std::string& word, size_t from = 0) {
    int depth = 0;
    for (size_t i = from; i < s.size(); ++i) {
        if (s[i] == '(' || s[i] == '[')
            ++depth;
        else if (s[i] == ')' || s[i] == ']')
            --depth;
        else if (depth == 0 && s.compare(i, word.size(), word) == 0 && (i == 0 || !ident_char(s[i - 1])) &&
                 (i + word.size() >= s.size() || !ident_char(s[i + word.size()])))
            return i;
    }
    return std::string::npos;
}

class ValuesParser {
public:
    ValuesParser(std::string text, const SourceLocation& where) : m_text(std::move(text)), m_where(where) {}

    std::vector<int64_t> parse() { return sum(trim(m_text), {}); }

private:
    [[noreturn]] void fail(const std::string& what) const {
        throw Error(m_where, what + " in the values '" + m_text + "' (expected integer lists: [1, 2], range(a, b, " +
                                 "step), list(range(...)), [expr for i in range(...)], joined with +)");
    }

    int64_t number(const std::string& text, const Bindings& names) const {
        if (text.find('.') != std::string::npos || text.find('"') != std::string::npos ||
            text.find('\'') != std::string::npos)
            fail("'" + text + "' is not an integer (Kerncast tunables are integers)");
        try {
            return Expr::parse(text, m_where, true).eval(names);
        } catch (const Error& e) {
            fail(std::string("'") + text + "' is not an integer expression (" + e.what() + ")");
        }
    }

    // term + term + ...
    std::vector<int64_t> sum(const std::string& s, const Bindings& names) const {
        std::vector<int64_t> out;
        int depth = 0;
        size_t begin = 0;
        for (size_t i = 0; i <= s.size(); ++i) {
            if (i < s.size() && (s[i] == '(' || s[i] == '['))
                ++depth;
            else if (i < s.size() && (s[i] == ')' || s[i] == ']'))
                --depth;
            if (i == s.size() || (s[i] == '+' && depth == 0)) {
                const auto part = term(trim(s.substr(begin, i - begin)), names);
                out.insert(out.end(), part.begin(), part.end());
                begin = i + 1;
            }
        }
        return out;
    }

    std::vector<int64_t> term(const std::string& s, const Bindings& names) const {
        if (s.empty())
            fail("an empty list term");
        if (s.front() == '[' || s.front() == '(') {
            if (matching(s, 0, m_where) != s.size() - 1)
                fail("unexpected text after the closing bracket of '" + s + "'");
            const std::string inner = s.substr(1, s.size() - 2);
            if (s.front() == '(' && find_keyword(inner, "for") == std::string::npos &&
                inner.find(',') == std::string::npos)
                return sum(trim(inner), names);  // parentheses around a list
            return display(inner, names);
        }
        for (const std::string call : {"list", "range", "tuple"}) {
            if (s.compare(0, call.size(), call) == 0) {
                const size_t open = s.find_first_not_of(" \t", call.size());
                if (open == std::string::npos || s[open] != '(')
                    continue;
                if (matching(s, open, m_where) != s.size() - 1)
                    fail("unexpected text after " + call + "(...)");
                const std::string inner = trim(s.substr(open + 1, s.size() - open - 2));
                return call == "range" ? range(inner, names) : sum(inner, names);
            }
        }
        fail("'" + s + "' is not a list");
    }

    std::vector<int64_t> range(const std::string& args_text, const Bindings& names) const {
        const auto args = split_commas(args_text);
        if (args.empty() || args.size() > 3)
            fail("range takes one to three arguments");
        int64_t start = 0, stop = 0, step = 1;
        if (args.size() == 1) {
            stop = number(args[0], names);
        } else {
            start = number(args[0], names);
            stop = number(args[1], names);
            if (args.size() == 3)
                step = number(args[2], names);
        }
        if (step == 0)
            fail("range() with a step of 0");
        std::vector<int64_t> out;
        for (int64_t v = start; step > 0 ? v < stop : v > stop; v += step) {
            out.push_back(v);
            if (out.size() > 100000)
                fail("more than 100000 values");
        }
        return out;
    }

    // The inside of [...]: items, or a comprehension `expr for name in iterable [if condition]`.
    std::vector<int64_t> display(const std::string& inner, const Bindings& names) const {
        const size_t for_at = find_keyword(inner, "for");
        if (for_at == std::string::npos) {
            std::vector<int64_t> out;
            for (const auto& item : split_commas(inner))
                out.push_back(number(item, names));
            return out;
        }
        const std::string expr = trim(inner.substr(0, for_at));
        const size_t in_at = find_keyword(inner, "in", for_at + 3);
        if (in_at == std::string::npos)
            fail("a comprehension without 'in'");
        const std::string var = trim(inner.substr(for_at + 3, in_at - for_at - 3));
        if (var.empty() || !ident_start(var[0]) ||
            !std::all_of(var.begin(), var.end(), [](char c) { return ident_char(c); }))
            fail("a comprehension variable '" + var + "'");
        const size_t if_at = find_keyword(inner, "if", in_at + 2);
        const std::string iterable =
            trim(inner.substr(in_at + 2, if_at == std::string::npos ? std::string::npos : if_at - in_at - 2));
        const std::string condition = if_at == std::string::npos ? "" : trim(inner.substr(if_at + 2));
        std::vector<int64_t> out;
        for (int64_t v : sum(iterable, names)) {
            Bindings inner_names = names;
            inner_names[var] = v;
            if (!condition.empty() && number(condition, inner_names) == 0)
                continue;
            out.push_back(number(expr, inner_names));
        }
        return out;
    }

    std::string m_text;
    SourceLocation m_where;
};

// ---- expression text ----------------------------------------------------------------------------------------

// Replaces whole identifiers found in `values` by their values.
std::string substitute(const std::string& text, const Bindings& values) {
    std::string out;
    for (size_t i = 0; i < text.size();) {
        if (ident_start(text[i]) && (i == 0 || !ident_char(text[i - 1]))) {
            size_t j = i;
            while (j < text.size() && ident_char(text[j]))
                ++j;
            const std::string ident = text.substr(i, j - i);
            const auto it = values.find(ident);
            out += it == values.end() ? ident : "(" + std::to_string(it->second) + ")";
            i = j;
        } else {
            out += text[i++];
        }
    }
    return out;
}

// A T1 expression (a JSON string or number) as text.
std::string expr_text(const ojson& v, const std::string& pointer, const std::string& file) {
    if (v.is_number_integer())
        return std::to_string(v.get<int64_t>());
    if (v.is_string())
        return trim(v.get<std::string>());
    throw Error(SourceLocation{file, 0}, pointer + ": expected an integer or an expression string, found " + v.dump());
}

// Kernel Tuner evaluates argument sizes with each tunable bound to its list of values and ProblemSize to the
// list: `ProblemSize[0]` is a size, `max(filter_width)` the largest value of a tunable.
std::string size_expression(const std::string& text, const std::map<std::string, std::vector<int64_t>>& tunables,
                            size_t dims) {
    static const std::regex problem_size(R"(ProblemSize\s*\[\s*([0-2])\s*\])");
    std::string out;
    std::sregex_iterator it(text.begin(), text.end(), problem_size), end;
    size_t last = 0;
    for (; it != end; ++it) {
        const int d = std::stoi((*it)[1].str());
        if (static_cast<size_t>(d) >= dims)
            throw Error("ProblemSize[" + std::to_string(d) + "] in '" + text + "', but ProblemSize has " +
                        std::to_string(dims) + " entries");
        out += text.substr(last, it->position() - last) + size_name(d);
        last = it->position() + it->length();
    }
    out += text.substr(last);
    static const std::regex over_values(R"(\b(max|min)\s*\(\s*([A-Za-z_][A-Za-z0-9_]*)\s*\))");
    std::string result;
    last = 0;
    for (std::sregex_iterator m(out.begin(), out.end(), over_values); m != end; ++m) {
        const auto t = tunables.find((*m)[2].str());
        if (t == tunables.end())
            continue;
        const bool is_max = (*m)[1].str() == "max";
        const int64_t v = is_max ? *std::max_element(t->second.begin(), t->second.end())
                                 : *std::min_element(t->second.begin(), t->second.end());
        result += out.substr(last, m->position() - last) + std::to_string(v);
        last = m->position() + m->length();
    }
    return result + out.substr(last);
}

// ---- the kernel source --------------------------------------------------------------------------------------

// The source with local `#include "file"` lines replaced by the file (found beside the including file), each file
// once; `#include <...>` lines stay (NVRTC provides the CUDA headers).
std::string inline_local_includes(const fs::path& file, std::set<std::string>& seen, int depth = 0) {
    if (depth > 16)
        throw Error(SourceLocation{file.string(), 0}, "includes nest more than 16 deep");
    const std::string text = read_text_file(file.string(), "the kernel source");
    static const std::regex include(R"(^\s*#\s*include\s*"([^"]+)\"\s*$)");
    std::istringstream in(text);
    std::string line, out;
    for (int number = 1; std::getline(in, line); ++number) {
        std::smatch m;
        if (std::regex_match(line, m, include)) {
            const fs::path header = file.parent_path() / m[1].str();
            const std::string lower = m[1].str();
            if (lower.find("hip/") == 0 || lower.find("hip_runtime") != std::string::npos)
                throw Error(SourceLocation{file.string(), number},
                            "the kernel is HIP source (#include \"" + lower +
                                "\"); Kerncast compiles CUDA with NVRTC: give the CUDA version with --kernel-file");
            if (!fs::exists(header))
                throw Error(SourceLocation{file.string(), number},
                            "#include \"" + lower + "\": no such file beside the kernel (" + header.string() + ")");
            const std::string key = fs::weakly_canonical(header).string();
            out += "// #include \"" + lower + "\" (inlined by the import)\n";
            if (seen.insert(key).second)
                out += inline_local_includes(header, seen, depth + 1) + "\n";
            continue;
        }
        if (std::regex_search(line, std::regex(R"(^\s*#\s*include\s*<hip/)")))
            throw Error(SourceLocation{file.string(), number},
                        "the kernel is HIP source (" + trim(line) +
                            "); Kerncast compiles CUDA with NVRTC: give the CUDA version with --kernel-file");
        out += line + "\n";
    }
    return out;
}

// Kerncast looks kernels up by their name in the module, so the kernel must have C linkage. T1 kernels are often
// plain C++ (`__global__ void convolution_kernel(...)`): a declaration with extern "C" before the definition gives
// the definition C linkage without touching it.
std::string declare_extern_c(const std::string& source, const std::string& kernel, const std::string& file) {
    const std::regex name_call("\\b" + kernel + "\\s*\\(");
    for (std::sregex_iterator m(source.begin(), source.end(), name_call), end; m != end; ++m) {
        const size_t at = m->position();
        // The __global__ of this declaration: the nearest one before the name with no ';', '{' or '}' between.
        const size_t global = source.rfind("__global__", at);
        if (global == std::string::npos)
            continue;
        const std::string between = source.substr(global, at - global);
        if (between.find_first_of(";{}") != std::string::npos)
            continue;
        const size_t prefix_end = source.rfind('\n', global);
        const size_t line_start = prefix_end == std::string::npos ? 0 : prefix_end + 1;
        if (source.substr(line_start, at - line_start).find("extern \"C\"") != std::string::npos)
            return source;  // already C linkage
        if (between.find("template") != std::string::npos ||
            source.substr(line_start, global - line_start).find("template") != std::string::npos)
            throw Error(SourceLocation{file, 0}, "kernel " + kernel +
                                                     " is a template; Kerncast launches kernels by "
                                                     "name, which needs a non-template kernel");
        const size_t open = at + m->length() - 1;
        const size_t close = matching(source, open, SourceLocation{file, 0});
        const std::string params = source.substr(open, close - open + 1);
        return source.substr(0, line_start) + "extern \"C\" __global__ void " + kernel + params +
               ";  // C linkage, so that the kernel is found by name\n" + source.substr(line_start);
    }
    throw Error(SourceLocation{file, 0}, "no __global__ function '" + kernel + "' (the T1 KernelName) in the source");
}

// ---- the T1 file --------------------------------------------------------------------------------------------

const ojson& require(const ojson& object, const std::string& key, const std::string& pointer, const std::string& file) {
    if (!object.is_object() || !object.contains(key))
        throw Error(SourceLocation{file, 0}, pointer + ": expected a field \"" + key + "\"");
    return object[key];
}

std::string sanitize_name(const std::string& name) {
    std::string out;
    for (char c : name)
        out += ident_char(c) ? static_cast<char>(std::tolower(static_cast<unsigned char>(c))) : '_';
    if (out.empty() || !ident_start(out[0]))
        out = "t1_" + out;
    return out;
}

DType vector_dtype(const std::string& type, const std::string& pointer, const std::string& file) {
    if (type == "float" || type == "float32")
        return DType::F32;
    throw Error(SourceLocation{file, 0},
                pointer + "/Type: a vector of \"" + type +
                    "\": Kernel Tuner's T1 reader supports float vectors only, so no cache of this file has another "
                    "type; give the argument as \"float\"");
}

struct Argument {
    std::string name;
    bool scalar = false;
    bool constant_memory = false;
};

}  // namespace

std::vector<int64_t> t1_values(const std::string& text, const SourceLocation& where) {
    return ValuesParser(text, where).parse();
}

T1Problem import_t1(const std::string& t1_path, const T1ImportOptions& options) {
    const std::string file = t1_path;
    ojson root;
    try {
        root = ojson::parse(read_text_file(t1_path, "the T1 file"));
    } catch (const ojson::parse_error& e) {
        throw Error(SourceLocation{file, 0}, std::string("not JSON: ") + e.what());
    }
    T1Problem out;
    const ojson& space = require(root, "ConfigurationSpace", "", file);
    const ojson& kernel = require(root, "KernelSpecification", "", file);

    // Language and kernel source.
    const std::string language = kernel.value("Language", std::string("CUDA"));
    std::string upper = language;
    std::transform(upper.begin(), upper.end(), upper.begin(), [](unsigned char c) { return std::toupper(c); });
    if (upper != "CUDA" && options.kernel_file.empty())
        throw Error(SourceLocation{file, 0},
                    "/KernelSpecification/Language: the kernel is " + language +
                        "; Kerncast compiles CUDA with NVRTC. A CUDA translation of it (for example an OpenCL kernel "
                        "joined with a CUDA shim such as cl_to_cuda.h into one .cu file) can be imported with "
                        "--kernel-file");
    const std::string kernel_name = require(kernel, "KernelName", "/KernelSpecification", file).get<std::string>();
    fs::path source_path = options.kernel_file;
    if (source_path.empty()) {
        const fs::path given = require(kernel, "KernelFile", "/KernelSpecification", file).get<std::string>();
        const fs::path dir = fs::path(t1_path).parent_path();
        for (const fs::path& candidate : {given, dir / given, dir.parent_path() / given})
            if (fs::exists(candidate)) {
                source_path = candidate;
                break;
            }
        if (source_path.empty())
            throw Error(SourceLocation{file, 0}, "/KernelSpecification/KernelFile: " + given.string() +
                                                     " is neither beside the T1 file nor in its parent folder");
    }
    out.kernel_file = source_path.string();
    std::set<std::string> seen;
    std::string source = inline_local_includes(source_path, seen);
    source = declare_extern_c(source, kernel_name, out.kernel_file);

    // Tunables, in declared order.
    std::vector<std::pair<std::string, std::vector<int64_t>>> tunables;
    std::map<std::string, std::vector<int64_t>> values_of;
    Bindings defaults;
    const ojson& params = require(space, "TuningParameters", "/ConfigurationSpace", file);
    for (size_t i = 0; i < params.size(); ++i) {
        const std::string ptr = "/ConfigurationSpace/TuningParameters/" + std::to_string(i);
        const ojson& p = params[i];
        const std::string name = require(p, "Name", ptr, file).get<std::string>();
        const std::string type = p.value("Type", std::string("int"));
        if (type != "int")
            throw Error(SourceLocation{file, 0}, ptr + "/Type: tunable " + name + " is of type \"" + type +
                                                     "\"; Kerncast tunables are integers (passed as -D " + name +
                                                     "=value)");
        const ojson& v = require(p, "Values", ptr, file);
        std::vector<int64_t> values;
        if (v.is_array()) {
            for (const auto& x : v) {
                if (!x.is_number_integer())
                    throw Error(SourceLocation{file, 0}, ptr + "/Values: " + x.dump() + " is not an integer");
                values.push_back(x.get<int64_t>());
            }
        } else {
            values = t1_values(v.get<std::string>(), SourceLocation{file + " " + ptr + "/Values", 0});
        }
        std::vector<int64_t> unique;
        for (int64_t x : values)
            if (std::find(unique.begin(), unique.end(), x) == unique.end())
                unique.push_back(x);
        if (unique.empty())
            throw Error(SourceLocation{file, 0}, ptr + "/Values: tunable " + name + " has no values");
        if (p.contains("Default")) {
            const ojson& d = p["Default"];
            const ojson& first = d.is_array() && !d.empty() ? d[0] : d;
            if (!first.is_number_integer())
                throw Error(SourceLocation{file, 0}, ptr + "/Default: expected an integer, found " + d.dump());
            defaults[name] = first.get<int64_t>();
        }
        values_of[name] = unique;
        tunables.emplace_back(name, std::move(unique));
    }
    if (tunables.empty())
        throw Error(SourceLocation{file, 0}, "/ConfigurationSpace/TuningParameters: no tunables");

    // Conditions: each goes to the last-declared tunable it reads, so that enumeration prunes as early as possible.
    std::map<std::string, std::vector<std::string>> where;
    if (space.contains("Conditions")) {
        const ojson& conditions = space["Conditions"];
        for (size_t i = 0; i < conditions.size(); ++i) {
            const std::string ptr = "/ConfigurationSpace/Conditions/" + std::to_string(i);
            const ojson& c = conditions[i];
            const ojson& e = c.is_string() ? c : require(c, "Expression", ptr, file);
            if (!e.is_string())
                throw Error(SourceLocation{file, 0}, ptr + "/Expression: expected a Python expression string");
            const std::string text = trim(e.get<std::string>());
            const Expr parsed = Expr::parse(text, SourceLocation{file + " " + ptr, 0}, true);
            size_t last = 0;
            for (const auto& n : parsed.names()) {
                const auto it =
                    std::find_if(tunables.begin(), tunables.end(), [&](const auto& t) { return t.first == n; });
                if (it == tunables.end())
                    throw Error(SourceLocation{file, 0},
                                ptr + ": condition '" + text + "' reads '" + n + "', which is not a tunable");
                last = std::max(last, static_cast<size_t>(it - tunables.begin()));
            }
            where[tunables[last].first].push_back(text);
        }
    }

    // Sizes: ProblemSize, one per dimension.
    const ojson& problem_size = require(kernel, "ProblemSize", "/KernelSpecification", file);
    if (!problem_size.is_array() || problem_size.empty() || problem_size.size() > 3)
        throw Error(SourceLocation{file, 0}, "/KernelSpecification/ProblemSize: expected 1 to 3 integers");
    Bindings sizes;
    for (size_t d = 0; d < problem_size.size(); ++d) {
        if (!problem_size[d].is_number_integer())
            throw Error(SourceLocation{file, 0}, "/KernelSpecification/ProblemSize/" + std::to_string(d) +
                                                     ": expected an integer (a size), found " + problem_size[d].dump());
        sizes[size_name(static_cast<int>(d))] = problem_size[d].get<int64_t>();
    }

    // Launch: as Kernel Tuner computes it from a T1 file (GlobalSize is not used by tune_kernel_T1).
    std::string block[3], grid[3];
    for (int d = 0; d < 3; ++d) {
        const ojson* local = kernel.contains("LocalSize") && kernel["LocalSize"].contains(std::string(1, 'X' + d))
                                 ? &kernel["LocalSize"][std::string(1, 'X' + d)]
                                 : nullptr;
        block[d] = local ? expr_text(*local, "/KernelSpecification/LocalSize", file)
                         : (values_of.count(kBlockNames[d]) ? kBlockNames[d] : "1");
        std::string divisor;
        const std::string key = std::string("GridDiv") + static_cast<char>('X' + d);
        if (kernel.contains(key) && kernel[key].is_array() && !kernel[key].empty()) {
            for (const auto& part : kernel[key])
                divisor += (divisor.empty() ? "" : " * ") + expr_text(part, "/KernelSpecification/" + key, file);
        } else {
            divisor = values_of.count(kBlockNames[d]) ? kBlockNames[d] : "1";
        }
        grid[d] =
            static_cast<size_t>(d) < problem_size.size() ? "ceil_div(" + size_name(d) + ", " + divisor + ")" : "1";
    }
    if (kernel.contains("GlobalSize"))
        out.notes.push_back("GlobalSize is not used: the grid is ceil(ProblemSize / GridDiv) in each dimension, as "
                            "Kernel Tuner's tune_kernel_T1 (which measured the caches of such files) computes it");
    std::string smem = "0";
    if (kernel.contains("SharedMemory") && !kernel["SharedMemory"].is_null())
        smem = expr_text(kernel["SharedMemory"], "/KernelSpecification/SharedMemory", file);

    // Arguments: buffers and scalars, in kernel parameter order.
    ojson buffers = ojson::array(), scalars = ojson::array();
    std::vector<Argument> arguments;
    std::string output_bytes;
    const ojson& args = require(kernel, "Arguments", "/KernelSpecification", file);
    for (size_t i = 0; i < args.size(); ++i) {
        const std::string ptr = "/KernelSpecification/Arguments/" + std::to_string(i);
        const ojson& a = args[i];
        Argument arg;
        arg.name = require(a, "Name", ptr, file).get<std::string>();
        const std::string memory = require(a, "MemoryType", ptr, file).get<std::string>();
        const std::string type = require(a, "Type", ptr, file).get<std::string>();
        if (memory == "Scalar") {
            arg.scalar = true;
            const ojson& v = require(a, "FillValue", ptr, file);
            if (type == "float" || type == "float32")
                scalars.push_back({{"name", arg.name}, {"dtype", "f32"}, {"value", v.get<double>()}});
            else if (type == "int32" || type == "int")
                scalars.push_back({{"name", arg.name}, {"dtype", "i32"}, {"value", v.get<int64_t>()}});
            else
                throw Error(SourceLocation{file, 0}, ptr + "/Type: a scalar of \"" + type +
                                                         "\"; Kernel Tuner's T1 reader supports float and int32");
        } else if (memory == "Vector") {
            vector_dtype(type, ptr, file);
            const std::string size_text = size_expression(expr_text(require(a, "Size", ptr, file), ptr + "/Size", file),
                                                          values_of, problem_size.size());
            const Expr size = Expr::parse(size_text, SourceLocation{file + " " + ptr + "/Size", 0});
            for (const auto& n : size.names())
                if (!sizes.count(n))
                    throw Error(SourceLocation{file, 0},
                                ptr + "/Size: '" + size_text + "' reads '" + n +
                                    "'; a buffer's size may read ProblemSize and the largest or smallest value of a "
                                    "tunable (max(name)), not one configuration's value");
            const std::string access = a.value("AccessType", std::string("ReadWrite"));
            const std::string fill = a.value("FillType", std::string("Random"));
            const double fill_value = a.contains("FillValue") ? a["FillValue"].get<double>() : 0.0;
            arg.constant_memory = a.value("MemType", std::string()) == "Constant";
            ojson b = {{"name", arg.name}, {"dtype", "f32"}, {"shape", ojson::array({size_text})}};
            // Kernel Tuner fills "Random" vectors with numpy.random.randn: normal(0, 1). A "Constant" input is
            // spread over [v - 1, v + 1] instead, because an input whose elements are all equal hides indexing
            // errors from verification; outputs are poisoned before every run and need no fill.
            ojson init = fill == "Constant" ? ojson{{"dist", "uniform"}, {"lo", fill_value - 1}, {"hi", fill_value + 1}}
                                            : ojson{{"dist", "normal"}, {"mean", 0}, {"std", 1}};
            if (fill != "Constant" && fill != "Random")
                throw Error(SourceLocation{file, 0}, ptr + "/FillType: \"" + fill +
                                                         "\"; expected Random or Constant (Kernel Tuner's T1 reader)");
            if (access == "WriteOnly" && !arg.constant_memory) {
                b["role"] = "out";
            } else if (access == "ReadOnly" || arg.constant_memory) {
                b["role"] = "in";
                b["init"] = init;
            } else {
                b["role"] = "inout";
                b["init"] = init;
            }
            if (fill == "Constant" && b["role"] != "out")
                out.notes.push_back("argument " + arg.name + ": the constant fill " + std::to_string(fill_value) +
                                    " is spread over [value - 1, value + 1] (inputs must not be all equal)");
            if (b["role"] != "in")
                output_bytes += (output_bytes.empty() ? "" : " + ") + std::string("4 * (") + size_text + ")";
            buffers.push_back(std::move(b));
        } else {
            throw Error(SourceLocation{file, 0}, ptr + "/MemoryType: \"" + memory + "\"; expected Vector or Scalar");
        }
        arguments.push_back(std::move(arg));
    }
    if (output_bytes.empty())
        throw Error(SourceLocation{file, 0}, "/KernelSpecification/Arguments: no output (an argument with "
                                             "AccessType WriteOnly or ReadWrite); nothing could be verified");

    out.name = options.name.empty()
                   ? sanitize_name(root.contains("General") ? root["General"].value("BenchmarkName", kernel_name)
                                                            : kernel_name)
                   : options.name;

    // The family: the kernel source, then the launch plan.
    std::string arg_names;
    for (const auto& a : arguments)
        arg_names += (arg_names.empty() ? "" : ", ") + a.name;
    const std::string launch = "// @kerncast launch " + kernel_name + " grid(" + grid[0] + ", " + grid[1] + ", " +
                               grid[2] + ") block(" + block[0] + ", " + block[1] + ", " + block[2] + ") smem(" + smem +
                               ") args(" + arg_names + ")\n";
    std::string constants;
    for (const auto& a : arguments) {
        if (!a.constant_memory)
            continue;
        // Kernel Tuner copies a "MemType": "Constant" argument into the module's variable of that name; a kernel
        // without one gets the argument as a pointer only (Kernel Tuner itself would stop at the missing symbol).
        if (!std::regex_search(source, std::regex("__constant__[^;]*\\b" + a.name + "\\b"))) {
            out.notes.push_back("argument " + a.name +
                                " is marked \"MemType\": \"Constant\", but the kernel declares "
                                "no __constant__ " +
                                a.name + "; it is passed as a pointer only");
            continue;
        }
        constants += "// @kerncast constant " + a.name + " " + a.name + "\n";
    }
    // Kernel Tuner defines the block size names (from LocalSize) and `kernel_tuner` for every compile.
    std::string preamble = "#define kernel_tuner 1\n";
    for (int d = 0; d < 3; ++d)
        if (!values_of.count(kBlockNames[d]))
            preamble += "#define " + std::string(kBlockNames[d]) + " (" + block[d] + ")\n";
    const std::string header = "// " + out.name + ": imported from the T1 file " +
                               fs::path(t1_path).filename().string() + " (kernel " +
                               fs::path(out.kernel_file).filename().string() + ")\n";
    std::string tunable_lines;
    for (const auto& [name, values] : tunables) {
        tunable_lines += "// @kerncast tunable " + name;
        for (int64_t v : values)
            tunable_lines += " " + std::to_string(v);
        if (where.count(name)) {
            std::string cond;
            for (const auto& c : where[name])
                cond += (cond.empty() ? "" : " and ") + ("(" + c + ")");
            tunable_lines += " where " + cond;
        }
        tunable_lines += "\n";
    }
    out.family = header + launch + constants + tunable_lines + "\n" + preamble + "\n" + source;

    // Problem.json (validated below together with the programs).
    ojson problem = {{"name", out.name},
                     {"description", "Imported from the T1 file " + fs::path(t1_path).filename().string() +
                                         ": kernel " + kernel_name + " of " +
                                         fs::path(out.kernel_file).filename().string() +
                                         "; the reference is the family at the T1 default configuration"},
                     {"sizes", {{"benchmark", sizes}, {"correctness", ojson::array({sizes, sizes})}}},
                     {"buffers", buffers}};
    if (!scalars.empty())
        problem["scalars"] = scalars;
    problem["tolerance"] = {{"rtol", 1e-4}, {"atol", 1e-5}, {"scale_atol_by_rms", true}};
    problem["flops"] = "0";
    problem["bytes"] = output_bytes;
    out.notes.push_back("the kernel's sizes are fixed in its source, so both correctness cases use the benchmark "
                        "sizes (with their own random inputs); flops are unknown (0) and bytes are the outputs' "
                        "bytes, the least any implementation writes");

    // The family parses and enumerates; the reference is the default configuration (or the nearest valid one).
    const KernelProgram family = KernelProgram::parse(out.family, "family.cu");
    const auto configurations = family.configurations();
    out.configurations = configurations.size();
    if (configurations.empty())
        throw Error(SourceLocation{file, 0}, "no configuration satisfies every condition");
    Bindings reference = defaults;
    for (const auto& [name, value] : options.reference_config) {
        if (!values_of.count(name))
            throw Error("--reference-config: '" + name + "' is not a tunable of " + out.name);
        reference[name] = value;
    }
    for (const auto& [name, values] : tunables)
        if (!reference.count(name))
            reference[name] = values.front();
    if (!family.isValid(reference)) {
        if (!options.reference_config.empty())
            throw Error("--reference-config: the configuration is not valid for the family (a value outside a "
                        "tunable's list, or a condition that does not hold)");
        const Bindings wanted = reference;
        size_t best = SIZE_MAX;
        for (const auto& c : configurations) {
            size_t differ = 0;
            for (const auto& [name, value] : c)
                differ += wanted.at(name) != value;
            if (differ < best) {
                best = differ;
                reference = c;
            }
        }
        std::string changed;
        for (const auto& [name, value] : reference)
            if (wanted.at(name) != value)
                changed += (changed.empty() ? "" : ", ") + name + " " + std::to_string(wanted.at(name)) + " -> " +
                           std::to_string(value);
        out.notes.push_back("the T1 default configuration breaks a condition; the reference is the valid "
                            "configuration nearest to it (" +
                            changed + ")");
    }
    out.reference_configuration = reference;
    problem["reference_configuration"] = reference;
    out.problem_json = problem.dump(2) + "\n";

    // The reference: the same source with the configuration's values defined, and the launch with them filled in.
    std::string defines;
    for (const auto& [name, value] : reference)
        defines += "#define " + name + " " + std::to_string(value) + "\n";
    out.reference = "// " + out.name + " reference: the family at the configuration " +
                    nlohmann::json(reference).dump() + "\n" + substitute(launch, reference) + constants + "\n" +
                    defines + preamble + "\n" + source;

    const Problem parsed = Problem::parse(out.problem_json, "problem.json");
    family.validate(parsed);
    KernelProgram::parse(out.reference, "reference.cu").validate(parsed);
    return out;
}

void write_t1_problem(const T1Problem& problem, const std::string& folder) {
    std::error_code ec;
    fs::create_directories(folder, ec);
    if (ec)
        throw Error(SourceLocation{folder, 0}, "cannot create the problem folder: " + ec.message());
    write_file_atomically((fs::path(folder) / "problem.json").string(), problem.problem_json);
    write_file_atomically((fs::path(folder) / "family.cu").string(), problem.family);
    write_file_atomically((fs::path(folder) / "reference.cu").string(), problem.reference);
}

}  // namespace kerncast
