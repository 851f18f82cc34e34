#pragma once

#include <string>
#include <vector>

namespace kerncast {

// What each character of a C++ / CUDA source is once the compiler's first phases have run: code, part of a line
// or block comment, part of a string or character literal (raw strings included, with their prefix R and
// delimiters), or part of a line splice (a backslash, optionally followed by spaces or tabs, then the line's end:
// the compiler joins the next line to this one before it looks for comments, everywhere but inside a raw string).
// The newline that ends a line comment, or an unterminated string or character literal, is code. A quote inside a
// number (1'000, 0xff'ff) is a digit separator, so code; after a name (u8'a', case'b') it opens a character
// literal. Every consumer of "where are the comments" goes through this one scanner, so that a program cannot be
// read one way by one part of Kerncast and another way by another, or by the compiler.
enum class SourceChar : unsigned char { Code, LineComment, BlockComment, Literal, Splice };

std::vector<SourceChar> classify_source(const std::string& text);

// Whether the quote at `at` is a digit separator: inside a number (a token of letters, digits, '_', '.' and quotes
// that starts with a digit, or a '.' and a digit), and between two of its digits.
bool is_digit_separator(const std::string& text, size_t at);

// The text with every comment and every literal replaced by spaces (their newlines kept) and every line splice
// removed: the identifiers and punctuation the compiler sees as code, nothing a comment or a string only mentions.
std::string code_only(const std::string& text);

}  // namespace kerncast
