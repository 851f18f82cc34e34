#include "core/expr_cpp.h"

#include "core/expr_tree.h"

#include <cstdint>
#include <limits>

namespace kerncast {

namespace {

constexpr const char* kNs = "kerncast_expr::";

std::string number(int64_t v) {
    // INT64_MIN has no literal; an expression cannot spell it either (a literal is at most INT64_MAX), but a
    // constant Expr can hold it.
    if (v == std::numeric_limits<int64_t>::min())
        return "(-9223372036854775807LL - 1)";
    return v < 0 ? "(" + std::to_string(v) + "LL)" : std::to_string(v) + (v > 2147483647 ? "LL" : "");
}

struct Translator {
    const std::string& status;
    const CppNameMap& name;

    std::string call(const std::string& fn, const std::vector<std::string>& args) const {
        std::string out = std::string(kNs) + fn + "(" + status;
        for (const auto& a : args)
            out += ", " + a;
        return out + ")";
    }

    std::string cpp(const ExprTree& t) const {
        using Kind = ExprTree::Kind;
        switch (t.kind) {
        case Kind::Number:
            return number(t.value);
        case Kind::Name:
            return name ? name(t.name) : t.name;
        case Kind::Unary:
            if (t.name == "!")
                return "(" + cpp(t.children[0]) + " == 0)";
            return call("neg", {cpp(t.children[0])});
        case Kind::List:
            throw Error("a list is only allowed after 'in'");
        case Kind::Call: {
            if (t.name == "ceil_div")
                return call("ceil_div", {cpp(t.children[0]), cpp(t.children[1])});
            // Every argument is evaluated, left to right (a braced list guarantees the order), as eval does.
            std::string list = "{";
            for (size_t i = 0; i < t.children.size(); ++i)
                list += (i ? ", " : "") + cpp(t.children[i]);
            return std::string(kNs) + (t.name == "min" ? "min_of(" : "max_of(") + list + "})";
        }
        case Kind::Binary:
            return binary(t);
        }
        return {};
    }

    std::string binary(const ExprTree& t) const {
        const std::string& op = t.name;
        if (op == "in" || op == "not in") {
            // The value once, then the items in order until one matches (later items are not evaluated).
            std::string test;
            for (const auto& item : t.children[1].children)
                test += (test.empty() ? "" : " || ") + std::string("kerncast_in_value == ") + cpp(item);
            if (test.empty())  // the value is still evaluated (it may fail), then nothing is in the empty list
                return "(static_cast<void>(" + cpp(t.children[0]) + "), " + (op == "in" ? "false" : "true") + ")";
            return std::string("[&] { const int64_t kerncast_in_value = ") + cpp(t.children[0]) + "; return " +
                   (op == "in" ? "" : "!") + "(" + test + "); }()";
        }
        const std::string a = cpp(t.children[0]);
        const std::string b = cpp(t.children[1]);
        if (op == "&&" || op == "||")
            return "((" + a + ") != 0 " + op + " (" + b + ") != 0)";
        if (op == "<" || op == "<=" || op == ">" || op == ">=" || op == "==" || op == "!=")
            return "(" + a + " " + op + " " + b + ")";
        static const std::pair<const char*, const char*> kFunctions[] = {
            {"+", "add"}, {"-", "sub"}, {"*", "mul"}, {"/", "div"}, {"%", "mod"}, {"//", "floordiv"}, {"**", "pow"}};
        for (const auto& [symbol, fn] : kFunctions)
            if (op == symbol)
                return call(fn, {a, b});
        throw Error("unknown operator '" + op + "'");
    }
};

}  // namespace

std::string expr_to_cpp(const Expr& e, const std::string& status, const CppNameMap& name) {
    return Translator{status, name}.cpp(expr_tree(e));
}

std::string expr_cpp_support() {
    return R"(#ifndef KERNCAST_EXPR_SUPPORT
#define KERNCAST_EXPR_SUPPORT
// Launch-plan arithmetic as Kerncast evaluates it: 64-bit integers, `/` and `%` truncating as in C, `floordiv` as
// Python's `//`, every overflow and division by zero an error. The first error is kept in a Status.
#include <cstdint>
#include <initializer_list>
#include <limits>

namespace kerncast_expr {

struct Status {
    const char* error = nullptr;
};

inline int64_t fail(Status& s, const char* what) {
    if (!s.error)
        s.error = what;
    return 0;
}
inline int64_t add(Status& s, int64_t a, int64_t b) {
    int64_t r = 0;
    return __builtin_add_overflow(a, b, &r) ? fail(s, "integer overflow") : r;
}
inline int64_t sub(Status& s, int64_t a, int64_t b) {
    int64_t r = 0;
    return __builtin_sub_overflow(a, b, &r) ? fail(s, "integer overflow") : r;
}
inline int64_t mul(Status& s, int64_t a, int64_t b) {
    int64_t r = 0;
    return __builtin_mul_overflow(a, b, &r) ? fail(s, "integer overflow") : r;
}
inline int64_t neg(Status& s, int64_t a) { return sub(s, 0, a); }
inline bool bad_division(Status& s, int64_t a, int64_t b, const char* by_zero) {
    if (b == 0)
        return fail(s, by_zero), true;
    if (a == std::numeric_limits<int64_t>::min() && b == -1)
        return fail(s, "integer overflow"), true;
    return false;
}
inline int64_t div(Status& s, int64_t a, int64_t b) { return bad_division(s, a, b, "division by zero") ? 0 : a / b; }
inline int64_t mod(Status& s, int64_t a, int64_t b) { return bad_division(s, a, b, "remainder by zero") ? 0 : a % b; }
inline int64_t floordiv(Status& s, int64_t a, int64_t b) {
    if (bad_division(s, a, b, "division by zero"))
        return 0;
    return a / b - (a % b != 0 && ((a < 0) != (b < 0)) ? 1 : 0);
}
inline int64_t ceil_div(Status& s, int64_t a, int64_t b) {
    if (bad_division(s, a, b, "division by zero"))
        return 0;
    return a / b + (a % b != 0 && ((a < 0) == (b < 0)) ? 1 : 0);
}
inline int64_t pow(Status& s, int64_t a, int64_t b) {
    if (b < 0)
        return fail(s, "negative exponent");
    if (a == -1)
        return b % 2 == 0 ? 1 : -1;
    int64_t r = 1;
    for (int64_t i = 0; i < b && r != 0 && !(r == 1 && i > 0); ++i)
        if (__builtin_mul_overflow(r, a, &r))
            return fail(s, "integer overflow");
    return r;
}
inline int64_t min_of(std::initializer_list<int64_t> v) {
    int64_t r = *v.begin();
    for (int64_t x : v)
        r = x < r ? x : r;
    return r;
}
inline int64_t max_of(std::initializer_list<int64_t> v) {
    int64_t r = *v.begin();
    for (int64_t x : v)
        r = x > r ? x : r;
    return r;
}

}  // namespace kerncast_expr
#endif  // KERNCAST_EXPR_SUPPORT
)";
}

}  // namespace kerncast
