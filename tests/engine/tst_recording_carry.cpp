// kerncast-cli carry on a copy of the replay fixture (its problem folder and its recording): a family whose tunable
// lines changed keeps the recorded configurations its new space holds, re-keyed so that the replay device finds
// them; every other line stays byte for byte; a second run changes nothing; a family whose code changed, a problem
// whose definition changed and a problem with no recording are clear errors that leave the file as it was.
#include "engine/replay/recording_carry.h"
#include "engine/replay/replay_device.h"
#include "tests/support/cli_runner.h"

#include "core/candidate.h"
#include "core/text_util.h"

#include <QTemporaryDir>
#include <QTest>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

using kerncast::test::run_cli;
namespace fs = std::filesystem;

namespace {

const std::string kProblem = KERNCAST_TEST_DATA "/problems/replay_saxpy";
const std::string kRecording = KERNCAST_TEST_DATA "/recordings/test-h100/replay_saxpy.jsonl";

std::string read(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

std::string replace(std::string text, const std::string& from, const std::string& to) {
    const auto at = text.find(from);
    if (at == std::string::npos)
        throw std::runtime_error("fixture changed: '" + from + "' not found");
    return text.replace(at, from.size(), to);
}

}  // namespace

class TestRecordingCarry : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;
    std::string m_problem, m_recordings, m_file, m_earlier, m_widened;

private slots:
    void init() {
        QVERIFY(m_dir.isValid());
        const fs::path root = m_dir.path().toStdString();
        fs::remove_all(root / "replay_saxpy");
        fs::remove_all(root / "recordings");
        fs::copy(kProblem, root / "replay_saxpy", fs::copy_options::recursive);
        fs::create_directories(root / "recordings" / "test-h100");
        fs::copy_file(kRecording, root / "recordings" / "test-h100" / "replay_saxpy.jsonl");
        m_problem = (root / "replay_saxpy").string();
        m_recordings = (root / "recordings").string();
        m_file = m_recordings + "/test-h100/replay_saxpy.jsonl";
        m_earlier = (root / "family_was.cu").string();
        std::ofstream(m_earlier) << read(kProblem + "/family.cu");
        // BLOCK 128 leaves the space, 512 and ITEMS 2 join it, a where-condition is added: the code is the same.
        m_widened = replace(replace(read(kProblem + "/family.cu"), "// @kerncast tunable BLOCK 128 256\n",
                                    "// @kerncast tunable BLOCK 256 512\n"),
                            "// @kerncast tunable ITEMS 1 4\n",
                            "// @kerncast tunable ITEMS 1 2 4 where BLOCK * ITEMS <= 2048\n");
        std::ofstream(m_problem + "/family.cu") << m_widened;
    }

    void carriesTheConfigurationsTheNewSpaceHolds() {
        const std::string before = read(m_file);
        // A dry run says what would happen and leaves the file alone.
        const auto dry = run_cli(
            {"carry", "--problem", m_problem, "--family-was", m_earlier, "--recordings", m_recordings, "--dry-run"});
        QVERIFY2(dry.code == 0, dry.err.c_str());
        QVERIFY2(dry.out.find("2 configuration(s) would be carried over") != std::string::npos, dry.out.c_str());
        QCOMPARE(read(m_file), before);

        const auto r =
            run_cli({"carry", "--problem", m_problem, "--family-was", m_earlier, "--recordings", m_recordings});
        QVERIFY2(r.code == 0, r.err.c_str());
        QVERIFY2(r.out.find("2 configuration(s) carried over, 0 current already, 2 no longer in the space (kept), "
                            "2 other program(s) kept") != std::string::npos,
                 r.out.c_str());

        const std::string after = read(m_file);
        const auto old_lines = kerncast::split_lines(before), new_lines = kerncast::split_lines(after);
        QCOMPARE(new_lines.size(), old_lines.size());
        size_t rekeyed = 0;
        for (size_t i = 0; i < old_lines.size(); ++i) {
            if (old_lines[i] == new_lines[i])
                continue;
            // A changed line is a BLOCK=256 configuration whose key, and nothing else, is now the new family's.
            auto was = nlohmann::json::parse(old_lines[i]), now = nlohmann::json::parse(new_lines[i]);
            const auto tunables = now["tunables"].get<std::map<std::string, int64_t>>();
            QCOMPARE(tunables.at("BLOCK"), int64_t{256});
            QCOMPARE(now["source_hash"].get<std::string>(), kerncast::content_hash(m_widened, tunables));
            was.erase("source_hash");
            now.erase("source_hash");
            QCOMPARE(now.dump(), was.dump());
            ++rekeyed;
        }
        QCOMPARE(rekeyed, size_t{2});

        // What the replay device looks up: the new family's configurations that were recorded, and only those.
        const auto recording = kerncast::Recording::parse(after, m_file);
        QVERIFY(recording.find(kerncast::content_hash(m_widened, {{"BLOCK", 256}, {"ITEMS", 4}})));
        QVERIFY(recording.find(kerncast::content_hash(m_widened, {{"BLOCK", 256}, {"ITEMS", 1}})));
        QVERIFY(!recording.find(kerncast::content_hash(m_widened, {{"BLOCK", 512}, {"ITEMS", 1}})));

        // Once carried, a second run finds them current and writes nothing.
        const auto again = run_cli(
            {"--json", "carry", "--problem", m_problem, "--family-was", m_earlier, "--recordings", m_recordings});
        QVERIFY2(again.code == 0, again.err.c_str());
        const auto j = nlohmann::json::parse(again.out)["recordings"][0];
        QCOMPARE(j["carried"].get<int>(), 0);
        QCOMPARE(j["already"].get<int>(), 2);
        QCOMPARE(j["outside"].get<int>(), 2);
        QCOMPARE(read(m_file), after);
    }

    void refusesAFamilyWhoseCodeChanged() {
        std::ofstream(m_problem + "/family.cu")
            << replace(m_widened, "y[i] = a * x[i] + y[i];", "y[i] = a * x[i] + 2.0f * y[i];");
        const std::string before = read(m_file);
        const auto r =
            run_cli({"carry", "--problem", m_problem, "--family-was", m_earlier, "--recordings", m_recordings});
        QCOMPARE(r.code, 1);
        QVERIFY2(r.err.find("changed beyond its tunable lines") != std::string::npos, r.err.c_str());
        QVERIFY2(r.err.find("2.0f * y[i]") != std::string::npos, r.err.c_str());  // the line that differs
        QCOMPARE(read(m_file), before);
    }

    void refusesARecordingOfAnotherDefinition() {
        // A changed reference is another definition: the fingerprint in the header no longer matches.
        std::ofstream(m_problem + "/reference.cu", std::ios::app) << "\n// changed\n";
        const std::string before = read(m_file);
        const auto r =
            run_cli({"carry", "--problem", m_problem, "--family-was", m_earlier, "--recordings", m_recordings});
        QCOMPARE(r.code, 1);
        QVERIFY2(r.err.find("another definition") != std::string::npos, r.err.c_str());
        QCOMPARE(read(m_file), before);
    }

    void saysWhenThereIsNothingToCarry() {
        fs::remove(m_file);
        const auto r =
            run_cli({"carry", "--problem", m_problem, "--family-was", m_earlier, "--recordings", m_recordings});
        QCOMPARE(r.code, 1);
        QVERIFY2(r.err.find("no recording of problem 'replay_saxpy'") != std::string::npos, r.err.c_str());
    }

    // Every family of the library keeps its recordings when its tunable lines change: none of them is read as code.
    void everyLibraryFamilyCanWidenItsSpace() {
        size_t families = 0;
        for (const auto& dir : fs::directory_iterator(KERNCAST_SOURCE_DIR "/resources/problems")) {
            const fs::path file = dir.path() / "family.cu";
            if (!fs::exists(file))
                continue;
            const std::string text = read(file.string());
            std::string widened;
            size_t tunables = 0;
            for (const auto& line : kerncast::split_lines(text)) {
                const bool tunable = line.rfind("// @kerncast tunable ", 0) == 0;
                tunables += tunable;
                widened += (tunable ? std::string("// @kerncast tunable WIDENED 1 2 3") : line) + "\n";
            }
            QVERIFY2(tunables > 0, file.c_str());
            QVERIFY2(kerncast::family_difference_beyond_tunables(widened, text).empty(), file.c_str());
            ++families;
        }
        QVERIFY(families >= 30);
    }

    void theDifferenceIsNamedByItsLine() {
        QCOMPARE(kerncast::family_difference_beyond_tunables(m_widened, read(m_earlier)), std::string());
        // Line endings are the text's own: a family saved with CRLF compares with one saved so too.
        auto crlf = [](const std::string& text) {
            std::string out;
            for (char c : text)
                out += c == '\n' ? std::string("\r\n") : std::string(1, c);
            return out;
        };
        QCOMPARE(kerncast::family_difference_beyond_tunables(crlf(m_widened), crlf(read(m_earlier))), std::string());
        // A tunable line ending with a backslash would take the code line after it into its comment: the code
        // compiled would differ from what was measured although every other line is the same.
        const std::string swallowing =
            replace(m_widened, "// @kerncast tunable BLOCK 256 512\n", "// @kerncast tunable BLOCK 256 512 \\\n");
        QVERIFY(!kerncast::family_difference_beyond_tunables(swallowing, read(m_earlier)).empty());
        QVERIFY(!kerncast::family_difference_beyond_tunables(m_widened, swallowing).empty());
        // Tunable lines inside a block comment or a raw string are part of the comment or the string: changing one
        // can change the code (its "*/" closed the comment; the string's text is the program's).
        const std::string earlier = read(m_earlier);
        const std::string commented = replace(
            replace(earlier, "// @kerncast tunable BLOCK 128 256\n", "/*\n// @kerncast tunable BLOCK 128 256\n"),
            "// @kerncast tunable ITEMS 1 4\n", "// @kerncast tunable ITEMS 1 4 */\n");
        const std::string unclosed =
            replace(commented, "// @kerncast tunable ITEMS 1 4 */\n", "// @kerncast tunable ITEMS 1 2 4\n");
        QVERIFY(!kerncast::family_difference_beyond_tunables(unclosed, commented).empty());
        const std::string quoted =
            replace(replace(earlier, "// @kerncast tunable BLOCK 128 256\n",
                            "static const char* note = R\"x(\n// @kerncast tunable BLOCK 128 256\n"),
                    "// @kerncast tunable ITEMS 1 4\n", "// @kerncast tunable ITEMS 1 4\n)x\";\n");
        const std::string requoted =
            replace(quoted, "// @kerncast tunable ITEMS 1 4\n)", "// @kerncast tunable ITEMS 1 2 4\n)");
        QVERIFY(!kerncast::family_difference_beyond_tunables(requoted, quoted).empty());
        // A digit separator is no character literal: the block comment after it still counts.
        const std::string separated = replace(commented, "/*\n", "static const int kBig = 1'000; /*\n");
        const std::string separatedUnclosed = replace(unclosed, "/*\n", "static const int kBig = 1'000; /*\n");
        QVERIFY(!kerncast::family_difference_beyond_tunables(separatedUnclosed, separated).empty());
        // A character literal after a name is one, though hex digits stand on both sides of its first quote.
        for (const std::string literal : {"u8'a'", "u8'7'"}) {
            const std::string before = "static const char kA = " + literal + "; /*\n";
            QVERIFY2(!kerncast::family_difference_beyond_tunables(replace(unclosed, "/*\n", before),
                                                                  replace(commented, "/*\n", before))
                          .empty(),
                     literal.c_str());
        }
        // The same change to tunable lines that are comments of their own is no difference.
        QCOMPARE(
            kerncast::family_difference_beyond_tunables(
                replace(earlier, "// @kerncast tunable ITEMS 1 4\n", "// @kerncast tunable ITEMS 1 2 4\n"), earlier),
            std::string());
        const std::string changed = replace(m_widened, "threadIdx.x;", "threadIdx.x + 0;");
        const std::string diff = kerncast::family_difference_beyond_tunables(changed, read(m_earlier));
        QVERIFY2(diff.rfind("line 6 of the current family: ", 0) == 0, diff.c_str());
    }
};

QTEST_GUILESS_MAIN(TestRecordingCarry)
#include "tst_recording_carry.moc"
