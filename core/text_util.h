#pragma once
// Text and file helpers shared by every layer: trimming, joining names for messages, reading a whole file with an
// error that names it, and writing a file so that a reader never sees half of it.

#include <string>
#include <string_view>
#include <vector>

namespace kerncast {

// Without leading and trailing white space (std::isspace).
std::string trim(std::string_view text);

// "a, b, c"; `empty` when there are no items (e.g. "none" in a message listing what is allowed).
template<typename Container>
std::string join(const Container& items, std::string_view separator = ", ", std::string_view empty = {}) {
    std::string out;
    bool first = true;
    for (const auto& item : items) {
        if (!first)
            out += separator;
        out += std::string_view(item);
        first = false;
    }
    return first ? std::string(empty) : out;
}

// "a, b, c", or "none" when there are none: names listed in a message.
template<typename Container>
std::string join_names(const Container& names) {
    return join(names, ", ", "none");
}

// The text's lines, without their '\n' (a last line without one counts; no empty line after a final '\n').
std::vector<std::string> split_lines(const std::string& text);

// The whole file. Throws kerncast::Error at (path, line 0): "cannot read <what>".
std::string read_text_file(const std::string& path, const std::string& what = "the file");

// The text goes to <path>.partial-<process>-<thread> beside the target, which is renamed over it only when every
// byte was written: a full disk leaves the old file (or none) in place, and writers of the same file at once never
// mix their bytes (the last rename wins). Throws kerncast::Error naming the file when it cannot be written
// (disk full, no permission, missing folder).
void write_file_atomically(const std::string& path, const std::string& text);
// The lines, each ended by '\n', written as write_file_atomically writes a text (split_lines' inverse).
void write_lines_atomically(const std::string& path, const std::vector<std::string>& lines);

// A base folder of the XDG rules: $<variable> (e.g. XDG_CACHE_HOME), else $HOME/<home_folder> (e.g. ".cache"); ""
// when neither is set.
std::string xdg_base_dir(const char* variable, const char* home_folder);

}  // namespace kerncast
