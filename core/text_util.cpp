#include "core/text_util.h"

#include "core/error.h"

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <unistd.h>

namespace kerncast {

std::string trim(std::string_view s) {
    size_t b = 0, e = s.size();
    while (b < e && std::isspace(static_cast<unsigned char>(s[b])))
        ++b;
    while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1])))
        --e;
    return std::string(s.substr(b, e - b));
}

std::vector<std::string> split_lines(const std::string& text) {
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);)
        out.push_back(line);
    return out;
}

std::string read_text_file(const std::string& path, const std::string& what) {
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw Error(SourceLocation{path, 0}, "cannot read " + what);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

void write_file_atomically(const std::string& path, const std::string& text) {
    // A name of this process's and thread's own: two writers of the same file each rename a whole file of theirs.
    const std::string tmp = path + ".partial-" + std::to_string(::getpid()) + "-" +
                            std::to_string(std::hash<std::thread::id>{}(std::this_thread::get_id()));
    std::error_code ec;
    {
        std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
        f << text;
        f.flush();
        if (!f) {
            std::filesystem::remove(tmp, ec);
            throw Error(SourceLocation{path, 0}, "cannot write the file (disk full, no permission or no such folder)");
        }
    }
    std::filesystem::rename(tmp, path, ec);
    if (ec) {
        std::filesystem::remove(tmp, ec);
        throw Error(SourceLocation{path, 0}, "cannot replace the file: " + ec.message());
    }
}

void write_lines_atomically(const std::string& path, const std::vector<std::string>& lines) {
    std::string joined;
    for (const auto& line : lines)
        joined += line + "\n";
    write_file_atomically(path, joined);
}

std::string xdg_base_dir(const char* variable, const char* home_folder) {
    if (const char* xdg = std::getenv(variable); xdg && *xdg)
        return xdg;
    if (const char* home = std::getenv("HOME"); home && *home)
        return (std::filesystem::path(home) / home_folder).string();
    return {};
}

}  // namespace kerncast
