#pragma once
// A cubin's sections compared without the debug sections: two compiles of one program may differ there only.

#include <cstdint>
#include <cstring>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace kerncast::test {

// A cubin's sections that the GPU runs and the static report reads (code, resources, constants; a NOBITS section by
// its size), by name. The debug sections -lineinfo adds are left out, and with them the symbol and string tables that
// name them: the embedded PTX's section, its name and the SASS line table change with the compiling process's heap
// addresses (with address randomisation, or a heap that served other requests before a fork), the machine code not.
inline std::map<std::string, std::string> code_sections(const std::vector<char>& cubin) {
    const auto read = [&](size_t at, size_t bytes) {
        if (at + bytes > cubin.size())
            throw std::runtime_error("the cubin ends inside its headers");
        uint64_t v = 0;
        std::memcpy(&v, cubin.data() + at, bytes);  // ELF64, little-endian like the host
        return v;
    };
    constexpr char kMagic[] = {0x7f, 'E', 'L', 'F'};
    if (cubin.size() < 64 || std::memcmp(cubin.data(), kMagic, sizeof kMagic) != 0 || cubin[4] != 2)
        throw std::runtime_error("not a 64-bit ELF file");
    const uint64_t table = read(0x28, 8), entry = read(0x3A, 2), count = read(0x3C, 2), names = read(0x3E, 2);
    const auto header = [&](uint64_t i) { return table + i * entry; };
    const uint64_t strings = read(header(names) + 0x18, 8);
    std::map<std::string, std::string> out;
    for (uint64_t i = 1; i < count; ++i) {
        const uint64_t at = header(i);
        const uint64_t name_at = strings + read(at, 4);
        if (name_at >= cubin.size())
            throw std::runtime_error("a section name lies outside the cubin");
        const std::string name(cubin.data() + name_at, strnlen(cubin.data() + name_at, cubin.size() - name_at));
        const uint64_t type = read(at + 4, 4), offset = read(at + 0x18, 8), size = read(at + 0x20, 8);
        if (name.find("debug") != std::string::npos || name == ".symtab" || name == ".strtab" || name == ".shstrtab")
            continue;
        if (type == 8) {  // SHT_NOBITS: nothing in the file
            out[name] = "nobits " + std::to_string(size);
            continue;
        }
        if (offset + size > cubin.size())
            throw std::runtime_error("section " + name + " lies outside the cubin");
        out[name] = std::string(cubin.data() + offset, size);
    }
    return out;
}

}  // namespace kerncast::test
