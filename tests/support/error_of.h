#pragma once
// The message of the kerncast::Error a callable throws, or "(no error)": tests compare what a user would read.

#include "core/error.h"

#include <string>

namespace kerncast::test {

template<typename F>
std::string errorOf(F&& f) {
    try {
        f();
    } catch (const Error& e) {
        return e.what();
    }
    return "(no error)";
}

}  // namespace kerncast::test
