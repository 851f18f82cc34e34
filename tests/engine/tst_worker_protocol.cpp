// The engine <-> worker line protocol: what one side writes the other must read back exactly, and broken input must
// be an error that says what was wrong.
#include "core/error.h"
#include "engine/worker/worker_protocol.h"

#include <QTest>

using namespace kerncast;

class TestWorkerProtocol : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void base64KnownVectors_data() {
        QTest::addColumn<QByteArray>("plain");
        QTest::addColumn<QString>("encoded");
        // RFC 4648 section 10.
        QTest::newRow("empty") << QByteArray("") << "";
        QTest::newRow("f") << QByteArray("f") << "Zg==";
        QTest::newRow("fo") << QByteArray("fo") << "Zm8=";
        QTest::newRow("foo") << QByteArray("foo") << "Zm9v";
        QTest::newRow("foob") << QByteArray("foob") << "Zm9vYg==";
        QTest::newRow("fooba") << QByteArray("fooba") << "Zm9vYmE=";
        QTest::newRow("foobar") << QByteArray("foobar") << "Zm9vYmFy";
    }
    void base64KnownVectors() {
        QFETCH(QByteArray, plain);
        QFETCH(QString, encoded);
        QCOMPARE(QString::fromStdString(base64_encode(std::string_view(plain.constData(), plain.size()))), encoded);
        const auto back = base64_decode(encoded.toStdString());
        QCOMPARE(QByteArray(back.data(), static_cast<int>(back.size())), plain);
    }

    void base64BinaryRoundTrip_data() {
        QTest::addColumn<int>("size");
        for (int n : {1, 2, 3, 255, 256, 257, 65537})
            QTest::newRow(qPrintable(QString::number(n))) << n;
    }
    void base64BinaryRoundTrip() {
        QFETCH(int, size);
        // Every byte value, NUL and 0xff included, as in a cubin.
        std::vector<char> bytes(static_cast<size_t>(size));
        for (int i = 0; i < size; ++i)
            bytes[static_cast<size_t>(i)] = static_cast<char>((i * 151 + 7) & 0xff);
        QCOMPARE(base64_decode(base64_encode(bytes)), bytes);
    }

    void base64RejectsGarbage_data() {
        QTest::addColumn<QString>("text");
        QTest::newRow("bad length") << "Zm9";
        QTest::newRow("bad character") << "Zm9v!mFy";
        QTest::newRow("padding in the middle") << "Zg==Zm9v";
        QTest::newRow("padding first") << "=Zm9";
        QTest::newRow("data after padding") << "Zm=v";
    }
    void base64RejectsGarbage() {
        QFETCH(QString, text);
        QVERIFY_THROWS_EXCEPTION(Error, base64_decode(text.toStdString()));
    }

    void measureRequestRoundTrip() {
        MeasurePayload p;
        p.problem_json = "{\"name\":\"saxpy\"}\n";
        p.problem_file = "/abs/saxpy/problem.json";
        p.reference.source = "// ref\n__global__ void k() {}\n";
        p.reference.file = "reference.cu";
        p.reference.cubin = {'\0', '\x01', '\xfe', '\xff'};
        p.candidate.source = "// \"quoted\" and a\ttab\n";
        p.candidate.file = "vec4.cu";
        p.candidate.tunables = {{"BLOCK", 256}, {"VEC", 4}};
        p.candidate.cubin = std::vector<char>(1000, '\x7f');
        p.options.seeds = 5;
        p.options.verify_only = true;
        p.options.target_rse = 0.01;

        const std::string line = to_protocol_line(make_measure_request(8, p));
        // One line per message: the text's newlines are escaped.
        QCOMPARE(line.find('\n'), line.size() - 1);
        const auto parsed = parse_measure_request(parse_protocol_line(line));
        QCOMPARE(parsed.problem_json, p.problem_json);
        QCOMPARE(parsed.problem_file, p.problem_file);
        QCOMPARE(parsed.reference.cubin, p.reference.cubin);
        QCOMPARE(parsed.candidate.source, p.candidate.source);
        QCOMPARE(parsed.candidate.file, std::string("vec4.cu"));
        QCOMPARE(parsed.candidate.tunables, p.candidate.tunables);
        QCOMPARE(parsed.candidate.cubin, p.candidate.cubin);
        QCOMPARE(parsed.options.seeds, 5);
        QVERIFY(parsed.options.verify_only);
        QCOMPARE(parsed.options.target_rse, 0.01);
        QCOMPARE(parsed.options.max_runs, MeasureOptions{}.max_runs);
    }

    void malformedLines_data() {
        QTest::addColumn<QString>("line");
        QTest::addColumn<QString>("expected");
        QTest::newRow("not json") << "hello worker"
                                  << "not JSON";
        QTest::newRow("array") << "[1,2]"
                               << "expected a JSON object";
        QTest::newRow("no op") << R"({"id":3})"
                               << "\"op\"";
        QTest::newRow("op not a string") << R"({"op":7})"
                                         << "\"op\"";
        QTest::newRow("nested too deep")
            << QString(R"({"op":"measure","id":1,"x":)") + QString(100000, '[')
            << "not JSON: invalid JSON at line 1, column 91: objects and arrays nest deeper "
               "than 64 levels";
        QTest::newRow("number past the largest double") << R"({"op":"ping","id":1e999})"
                                                        << "the number 1e999 is not finite (too large for a double)";
    }
    void malformedLines() {
        QFETCH(QString, line);
        QFETCH(QString, expected);
        try {
            parse_protocol_line(line.toStdString());
            QFAIL("expected an error");
        } catch (const Error& e) {
            QVERIFY2(std::string(e.what()).find(expected.toStdString()) != std::string::npos, e.what());
        }
    }

    void badMeasureRequests_data() {
        QTest::addColumn<QString>("json");
        QTest::addColumn<QString>("expected");
        const QString ok_prog = R"({"source":"x","file":"k.cu","tunables":{},"cubin_b64":""})";
        QTest::newRow("no id") << R"({"op":"measure","problem":{"json":"{}"},"reference":)" + ok_prog +
                                      R"(,"candidate":)" + ok_prog + "}"
                               << "\"id\"";
        QTest::newRow("no problem") << R"({"op":"measure","id":1,"reference":)" + ok_prog + R"(,"candidate":)" +
                                           ok_prog + "}"
                                    << "\"problem\"";
        QTest::newRow("no candidate") << R"({"op":"measure","id":1,"problem":{"json":"{}"},"reference":)" + ok_prog +
                                             "}"
                                      << "\"candidate\"";
        QTest::newRow("bad cubin") << R"({"op":"measure","id":1,"problem":{"json":"{}"},"reference":)" + ok_prog +
                                          R"(,"candidate":{"source":"x","cubin_b64":"@@@@"}})"
                                   << "cubin_b64";
        QTest::newRow("bad tunables") << R"({"op":"measure","id":1,"problem":{"json":"{}"},"reference":)" + ok_prog +
                                             R"(,"candidate":{"source":"x","tunables":{"BLOCK":"big"}}})"
                                      << "tunables";
        QTest::newRow("zero seeds") << R"({"op":"measure","id":1,"problem":{"json":"{}"},"reference":)" + ok_prog +
                                           R"(,"candidate":)" + ok_prog + R"(,"options":{"seeds":0}})"
                                    << "seeds";
    }
    void badMeasureRequests() {
        QFETCH(QString, json);
        QFETCH(QString, expected);
        try {
            parse_measure_request(parse_protocol_line(json.toStdString()));
            QFAIL("expected an error");
        } catch (const Error& e) {
            QVERIFY2(std::string(e.what()).find(expected.toStdString()) != std::string::npos, e.what());
        }
    }

    void helloReplies() {
        DeviceFingerprint fp;
        fp.name = "NVIDIA H100 80GB HBM3";
        fp.cc_major = 9;
        const auto ok = parse_hello_reply(parse_protocol_line(to_protocol_line(make_hello_reply(fp, {3000, 60, 1}))));
        QVERIFY(ok.ok);
        QCOMPARE(ok.device.name, fp.name);
        QCOMPARE(ok.device.cc_major, 9);
        QCOMPARE(ok.ceilings.dram_gbps, 3000.0);
        QCOMPARE(ok.version, std::string(kWorkerProtocolVersion));

        const auto no = parse_hello_reply(make_hello_failure("no NVIDIA driver"));
        QVERIFY(!no.ok);
        QCOMPARE(no.error, std::string("no NVIDIA driver"));

        QVERIFY_THROWS_EXCEPTION(Error, parse_hello_reply(nlohmann::json{{"op", "hello"}}));
        QVERIFY_THROWS_EXCEPTION(Error, parse_hello_reply(nlohmann::json{{"op", "pong"}, {"id", 1}}));
        QVERIFY_THROWS_EXCEPTION(Error, parse_hello_reply(nlohmann::json{{"op", "hello"}, {"ok", true}}));
    }

    void resultReplies() {
        Measurement m;
        m.status = Status::Crashed;
        m.reason = "an illegal memory access was encountered";
        const auto r = parse_result_reply(parse_protocol_line(to_protocol_line(make_result(8, m, true))));
        QCOMPARE(r.id, int64_t{8});
        QVERIFY(r.sticky);
        QCOMPARE(r.measurement.status, Status::Crashed);
        QCOMPARE(r.measurement.reason, m.reason);

        auto bad = make_result(8, m, false);
        bad["measurement"]["status"] = "fast";
        try {
            parse_result_reply(bad);
            QFAIL("expected an error");
        } catch (const Error& e) {
            QVERIFY2(std::string(e.what()).find("fast") != std::string::npos, e.what());
        }
        QVERIFY_THROWS_EXCEPTION(Error, parse_result_reply(nlohmann::json{{"op", "result"}, {"id", 1}}));
        QVERIFY_THROWS_EXCEPTION(Error, parse_result_reply(nlohmann::json{{"op", "result"}, {"measurement", m}}));
    }

    void idsAndOps() {
        QCOMPARE(protocol_id(make_ping_request(7)).value(), int64_t{7});
        QVERIFY(!protocol_id(make_hello_request()).has_value());
        QCOMPARE(protocol_op(make_progress(3, "verify")), std::string("progress"));
        QVERIFY(make_error_reply(nullptr, "bad line")["id"].is_null());
    }

    void invalidUtf8DoesNotThrow() {
        MeasurePayload p;
        p.candidate.source = std::string("// caf\xe9\n");
        const std::string line = to_protocol_line(make_measure_request(1, p));
        QVERIFY(!line.empty());
        QVERIFY(parse_measure_request(parse_protocol_line(line)).candidate.source.find("caf") == 3);
    }
};

QTEST_GUILESS_MAIN(TestWorkerProtocol)
#include "tst_worker_protocol.moc"
