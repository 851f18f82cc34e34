#pragma once
// Launch-plan expressions as C++, for the host launch functions of exported kernels (docs/formats.md "Exporting a
// kernel"): the translated expression gives the value Expr::eval gives, and an error where eval throws one
// (division or remainder by zero, 64-bit overflow, a negative exponent), in the same order of evaluation, with the
// same short-circuits (`B > 0 && N / B > 4` never divides by zero).

#include "core/expr.h"

#include <functional>
#include <string>

namespace kerncast {

// The C++ that reads a name of the expression (a size parameter, a tunable constant); the name itself when empty.
using CppNameMap = std::function<std::string(const std::string& name)>;

// A C++ expression over the names whose value converts to int64_t. It calls the functions of expr_cpp_support() and
// records the first error in `status`, a `kerncast_expr::Status` lvalue in scope (its `error` stays null when all went
// well). Throws Error for an empty expression.
std::string expr_to_cpp(const Expr& e, const std::string& status, const CppNameMap& name = {});

// The support functions (namespace kerncast_expr, header-only C++17, GCC/Clang builtins for overflow), guarded by a
// macro so that several exported units can share one translation unit.
std::string expr_cpp_support();

}  // namespace kerncast
