// The engine's folders include one another without a circle, each only the floors below it (ARCHITECTURE §1): a type
// that two folders share lives in the lower one. The includes are read from the source tree, so a file that reaches
// up a floor fails here with the include that does it.

#include <QTemporaryDir>
#include <QtTest>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

// The engine's floors, lowest first: "." is the files at the top of engine/ (the Device interface and its JSON,
// base64, unified diffs), below every folder.
const std::vector<std::string> kFloors = {".", "gpu", "replay", "llm", "surrogate", "worker", "search", "cli"};

// folder -> included folder -> the includes that make the arrow ("file -> header")
using Arrows = std::map<std::string, std::map<std::string, std::vector<std::string>>>;

std::string folderOf(const std::string& path_in_engine) {
    const size_t slash = path_in_engine.find('/');
    return slash == std::string::npos ? "." : path_in_engine.substr(0, slash);
}

// Every #include "engine/..." of the .h and .cpp files under `engine_dir` between two different folders.
Arrows arrowsOf(const fs::path& engine_dir) {
    static const std::regex include("^\\s*#\\s*include\\s+\"engine/([^\"]+)\"");
    Arrows out;
    for (const auto& entry : fs::recursive_directory_iterator(engine_dir)) {
        const std::string ext = entry.path().extension().string();
        if (!entry.is_regular_file() || (ext != ".h" && ext != ".cpp"))
            continue;
        const std::string file = fs::relative(entry.path(), engine_dir).generic_string();
        std::ifstream in(entry.path());
        std::string line;
        std::smatch m;
        while (std::getline(in, line))
            if (std::regex_search(line, m, include) && folderOf(m[1].str()) != folderOf(file))
                out[folderOf(file)][folderOf(m[1].str())].push_back(file + " -> engine/" + m[1].str());
    }
    return out;
}

// A circle of folders (the first repeated at the end), or none.
std::vector<std::string> circleOf(const Arrows& arrows) {
    std::map<std::string, int> state;  // 1: on the path, 2: done
    std::vector<std::string> path;
    std::vector<std::string> found;
    std::function<bool(const std::string&)> visit = [&](const std::string& folder) {
        state[folder] = 1;
        path.push_back(folder);
        if (const auto it = arrows.find(folder); it != arrows.end())
            for (const auto& [to, why] : it->second) {
                if (state[to] == 1) {
                    found.assign(std::find(path.begin(), path.end(), to), path.end());
                    found.push_back(to);
                    return true;
                }
                if (state[to] == 0 && visit(to))
                    return true;
            }
        path.pop_back();
        state[folder] = 2;
        return false;
    };
    for (const auto& [folder, to] : arrows)
        if (state[folder] == 0 && visit(folder))
            break;
    return found;
}

std::string describe(const Arrows& arrows, const std::vector<std::string>& circle) {
    std::string text;
    for (size_t i = 0; i + 1 < circle.size(); ++i)
        text +=
            "\n  " + circle[i] + " -> " + circle[i + 1] + " (" + arrows.at(circle[i]).at(circle[i + 1]).front() + ")";
    return text;
}

void writeFile(const fs::path& path, const std::string& text) {
    fs::create_directories(path.parent_path());
    std::ofstream(path) << text;
}

}  // namespace

class TestEngineLayers : public QObject {
    Q_OBJECT

private slots:
    void foldersIncludeOneAnotherWithoutACircle() {
        const fs::path engine = fs::path(KERNCAST_TEST_DATA) / ".." / ".." / "engine";
        QVERIFY(fs::is_directory(engine));
        const Arrows arrows = arrowsOf(engine);
        QVERIFY2(!arrows.empty(), "no include between engine folders found: the test reads the wrong tree");
        const std::vector<std::string> circle = circleOf(arrows);
        QVERIFY2(circle.empty(), ("the engine's folders include one another in a circle:" +
                                  (circle.empty() ? std::string() : describe(arrows, circle)))
                                     .c_str());
    }

    void everyFolderIncludesOnlyTheFloorsBelowIt() {
        const fs::path engine = fs::path(KERNCAST_TEST_DATA) / ".." / ".." / "engine";
        const auto floor = [](const std::string& folder) {
            return std::find(kFloors.begin(), kFloors.end(), folder) - kFloors.begin();
        };
        std::string climbing;
        for (const auto& [from, to_all] : arrowsOf(engine)) {
            QVERIFY2(floor(from) < static_cast<long>(kFloors.size()),
                     ("engine/" + from + " is on no floor: add it to kFloors and to ARCHITECTURE §1").c_str());
            for (const auto& [to, why] : to_all)
                if (floor(to) >= floor(from))
                    climbing += "\n  " + why.front() + " (" + from + " is not above " + to + ")";
        }
        QVERIFY2(climbing.empty(), ("includes that reach up a floor:" + climbing).c_str());
    }

    // The check itself: a tree whose two folders include each other is a circle, and one arrow alone is none.
    void aCircleIsNamedWithItsIncludes() {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const fs::path engine = fs::path(dir.path().toStdString()) / "engine";
        writeFile(engine / "a" / "a.h", "#pragma once\n#include \"engine/b/b.h\"\n");
        writeFile(engine / "b" / "b.cpp", "#include \"engine/b/b.h\"\n");
        writeFile(engine / "b" / "b.h", "#pragma once\n");
        QVERIFY(circleOf(arrowsOf(engine)).empty());
        writeFile(engine / "b" / "b.cpp", "#include \"engine/b/b.h\"\n  #include \"engine/a/a.h\"\n");
        const Arrows arrows = arrowsOf(engine);
        const std::vector<std::string> circle = circleOf(arrows);
        QCOMPARE(circle.size(), size_t{3});
        QCOMPARE(circle.front(), circle.back());
        QVERIFY(describe(arrows, circle).find("b/b.cpp -> engine/a/a.h") != std::string::npos);
    }
};

QTEST_GUILESS_MAIN(TestEngineLayers)
#include "tst_engine_layers.moc"
