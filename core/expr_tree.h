#pragma once
// The parse tree of an expression as plain values, for code that turns expressions into other languages (the C++ of
// an exported kernel's launch function, core/expr_cpp.h). Chained comparisons arrive expanded (`a < b < c` is
// `a < b && b < c`), Python's `and`/`or`/`not` as `&&`/`||`/`!`, `True`/`False` as 1/0.

#include "core/expr.h"

#include <cstdint>
#include <string>
#include <vector>

namespace kerncast {

struct ExprTree {
    enum class Kind { Number, Name, Unary, Binary, Call, List } kind = Kind::Number;
    int64_t value = 0;  // Number
    // Name: the identifier; Unary: "-" or "!"; Binary: "+ - * / % // ** < <= > >= == != && || in", "not in";
    // Call: "min", "max" or "ceil_div".
    std::string name;
    std::vector<ExprTree> children;  // Binary: left, right (a List for in / not in); Call: the arguments
};

// The tree of a parsed expression (conditions included). Throws Error for an empty expression.
ExprTree expr_tree(const Expr& e);

}  // namespace kerncast
