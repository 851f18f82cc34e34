// The LLM forecaster against a real HTTP server on loopback, with the shipped prompt templates
// (resources/prompts): the request it sends, how it reads tool calls and JSON blocks, renormalisation, samples,
// failures as results, the cache, and the templates a user may edit.
#include "core/error.h"
#include "engine/surrogate/llm_forecaster.h"
#include "tests/support/chat_replies.h"
#include "tests/support/error_of.h"
#include "tests/support/llm_servers.h"
#include "tests/support/loopback_http_server.h"

#include <QTemporaryDir>
#include <QTest>

#include <limits>

#include <fstream>

using namespace kerncast;
using kerncast::test::HttpAnswer;
using kerncast::test::HttpRequestSeen;
using kerncast::test::LoopbackHttpServer;
using nlohmann::json;

namespace {

const std::string kPrompts = std::string(KERNCAST_SOURCE_DIR) + "/resources/prompts";
const std::string kKey = "sk-forecast-9d2e-SECRET";

LlmConfig configFor(const LoopbackHttpServer& server) {
    LlmConfig c = kerncast::test::loopbackLlmConfig(server);
    c.max_retries = 0;
    c.price_in_per_mtok = 1.0;
    c.price_out_per_mtok = 4.0;
    return c;
}

ForecastQuery saxpyQuery(const std::string& candidate = "__global__ void saxpy_v4(...) { /* float4 */ }") {
    ForecastQuery q;
    q.pack = "saxpy";
    q.problem_name = "saxpy";
    q.problem_description = "y = a*x + y over N floats";
    q.reference_source = "__global__ void saxpy(int n, float a, const float* x, float* y) { /* reference */ }";
    q.candidate_source = candidate;
    q.tunables = {{"BLOCK", 256}, {"ITEMS", 4}};
    q.static_report = {{"saxpy_v4", 24, 0, 0, 0, 0, 0, 0, 1024}};
    q.reference_static_report = {{"saxpy", 16, 0, 0, 0, 0, 0, 0, 0}};
    LaunchShape l;
    l.kernel = "saxpy_v4";
    l.grid[0] = 65536;
    l.block[0] = 256;
    q.launches = {l};
    q.problem_bytes = 805306368;
    q.problem_flops = 134217728;
    q.reference_time_us = 270.5;
    q.parent_speedup = 1.12;
    q.hardware = "NVIDIA H200 (cc 9.0, 132 SMs)";
    q.hardware_table = {{"dram_gbps", 4800}, {"fp32_tflops", 67}};
    return q;
}

json estimate(std::array<double, 8> p, int predictedBin, const std::string& reasoning = "memory bound; float4 helps") {
    json j = {{"reasoning", reasoning}, {"predicted_bin", predictedBin}};
    for (int b = 0; b < 8; ++b)
        j[LlmForecaster::probabilityKeys()[b]] = p[b];
    return j;
}

std::string toolReply(const json& args, int tokensIn = 1200, int tokensOut = 300) {
    const json call = {{"id", "call_0"},
                       {"type", "function"},
                       {"function", {{"name", LlmForecaster::kToolName}, {"arguments", args.dump()}}}};
    return kerncast::test::chatCompletionBody(nullptr, tokensIn, tokensOut, json::array({call}));
}

std::string textReply(const std::string& content, int tokensIn = 1200, int tokensOut = 300) {
    return kerncast::test::chatCompletionBody(content, tokensIn, tokensOut);
}

ChatResult replyWithText(const std::string& content) {
    ChatResult r;
    r.ok = true;
    r.content = content;
    return r;
}

void writeFile(const QString& path, const std::string& text) { std::ofstream(path.toStdString()) << text; }

const std::array<double, 8> kOneHot5 = {0, 0, 0, 0, 1, 0, 0, 0};

}  // namespace

class TestLlmForecaster : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void toolIsFlatAndNamesEveryField() {
        const auto tool = LlmForecaster::toolDefinition(BinScheme::gfV2());
        QVERIFY(tool.dump().find("$ref") == std::string::npos);
        QCOMPARE(tool["type"].get<std::string>(), std::string("function"));
        const auto& fn = tool["function"];
        QCOMPARE(fn["name"].get<std::string>(), std::string("submit_kernel_runtime_estimate"));
        const auto& params = fn["parameters"];
        QCOMPARE(params["type"].get<std::string>(), std::string("object"));
        const std::vector<std::string> expected = {
            "reasoning",         "p_severe_slowdown", "p_significant_slowdown", "p_moderate_slowdown",
            "p_minor_slowdown",  "p_minor_speedup",   "p_significant_speedup",  "p_high_speedup",
            "p_extreme_speedup", "predicted_bin"};
        QCOMPARE(params["required"].get<std::vector<std::string>>(), expected);
        std::vector<std::string> order;
        for (const auto& [key, value] : params["properties"].items()) {
            order.push_back(key);
            QVERIFY2(value.is_object() && value.contains("type") && !value.contains("$ref"), key.c_str());
        }
        QCOMPARE(order, expected);  // generation order for servers that constrain decoding to the schema
        QCOMPARE(params["properties"]["predicted_bin"]["type"].get<std::string>(), std::string("integer"));
        QCOMPARE(params["properties"]["predicted_bin"]["minimum"].get<int>(), 1);
        QCOMPARE(params["properties"]["predicted_bin"]["maximum"].get<int>(), 8);
        QCOMPARE(params["properties"]["p_minor_speedup"]["type"].get<std::string>(), std::string("number"));
        QCOMPARE(params["properties"]["p_minor_speedup"]["description"].get<std::string>(),
                 std::string("Probability of bin 5 (minor speedup): 1.00x < S <= 1.41x"));
        QCOMPARE(params["additionalProperties"].get<bool>(), false);
    }

    void sendsThePromptAndTheTool() {
        LoopbackHttpServer server;
        server.enqueue(HttpAnswer::json(toolReply(estimate(kOneHot5, 5))));
        LlmForecaster forecaster(configFor(server), kPrompts);
        const ForecastQuery q = saxpyQuery();
        const auto results = forecaster.forecast({q});
        QVERIFY2(results[0].forecast, results[0].error.c_str());

        const json body = json::parse(server.requests().at(0).body);
        QCOMPARE(body["model"].get<std::string>(), std::string("test-model"));
        QCOMPARE(body["tools"].size(), size_t{1});
        QCOMPARE(body["tools"][0]["function"]["name"].get<std::string>(), std::string(LlmForecaster::kToolName));
        QCOMPARE(body["tool_choice"]["function"]["name"].get<std::string>(), std::string(LlmForecaster::kToolName));
        const std::string system = body["messages"][0]["content"];
        const std::string user = body["messages"][1]["content"];
        const ForecastPrompt p = forecaster.prompt(q);
        QCOMPARE(system, p.system);
        QCOMPARE(user, p.user);
        QVERIFY(system.find(BinScheme::gfV2().promptTable()) != std::string::npos);
        QVERIFY(system.find("submit_kernel_runtime_estimate") != std::string::npos);
        QVERIFY(system.find("\"p_extreme_speedup\": probability of bin 8 (extreme speedup): S > 4.00x") !=
                std::string::npos);
        for (const std::string& part :
             {q.reference_source, q.candidate_source, std::string("saxpy: y = a*x + y over N floats"),
              std::string("NVIDIA H200 (cc 9.0, 132 SMs)"), std::string("- dram_gbps: 4800"),
              std::string("BLOCK=256, ITEMS=4"), std::string("- saxpy_v4: grid(65536, 1, 1) block(256, 1, 1)"),
              std::string("- saxpy_v4: 24 registers/thread"), std::string("- saxpy: 16 registers/thread"),
              std::string("270.50 us"), std::string("805306368 (805.3 M) bytes"),
              std::string("134217728 (134.2 M) floating-point")})
            QVERIFY2(user.find(part) != std::string::npos, part.c_str());
        QVERIFY(user.find("{{") == std::string::npos);

        const std::string shown = forecaster.renderPrompt(q);
        QVERIFY(shown.find(p.system) != std::string::npos && shown.find(p.user) != std::string::npos);
        QCOMPARE(results[0].forecast->prompt_hash, p.hash);
        QVERIFY(forecaster.prompt(saxpyQuery("other")).hash != p.hash);
    }

    void readsTheToolCall() {
        LoopbackHttpServer server;
        const std::array<double, 8> p = {0.0, 0.0, 0.05, 0.1, 0.5, 0.3, 0.05, 0.0};
        server.enqueue(HttpAnswer::json(toolReply(estimate(p, 5, "float4 loads halve the transactions"), 1000, 250)));
        LlmForecaster forecaster(configFor(server), kPrompts);
        const auto results = forecaster.forecast({saxpyQuery()});
        QCOMPARE(results.size(), size_t{1});
        QVERIFY2(results[0].forecast, results[0].error.c_str());
        const Forecast& f = *results[0].forecast;
        for (int b = 0; b < 8; ++b)
            QCOMPARE(f.probabilities[b], p[b]);
        QCOMPARE(f.raw_sum, 1.0);
        QCOMPARE(f.predicted_bin, 5);
        QCOMPARE(f.reasoning, std::string("float4 loads halve the transactions"));
        QCOMPARE(f.surrogate_id, std::string("llm:test-model"));
        QCOMPARE(forecaster.id(), std::string("llm:test-model"));
        QCOMPARE(f.scheme_id, std::string("gf-v2"));
        QCOMPARE(f.tokens_in, int64_t{1000});
        QCOMPARE(f.tokens_out, int64_t{250});
        QCOMPARE(f.cost_usd, (1000 * 1.0 + 250 * 4.0) / 1e6);
        QVERIFY(f.latency_ms > 0);
    }

    void readsAJsonBlockWhenThereIsNoToolCall_data() {
        QTest::addColumn<QString>("content");
        QTest::addColumn<int>("bin");  // the bin holding all the mass
        const std::string bin6 = estimate({0, 0, 0, 0, 0, 1, 0, 0}, 6).dump();
        const std::string bin2 = estimate({0, 1, 0, 0, 0, 0, 0, 0}, 2).dump();
        QTest::newRow("fenced json") << QString::fromStdString("Looking at the loads...\n```json\n" + bin6 + "\n```\n")
                                     << 6;
        QTest::newRow("the last of two fenced blocks")
            << QString::fromStdString("First guess:\n```json\n" + bin2 + "\n```\nOn reflection:\n```json\n" + bin6 +
                                      "\n```")
            << 6;
        QTest::newRow("bare object after prose")
            << QString::fromStdString("The answer {roughly} is " + bin6 + " as computed.") << 6;
        QTest::newRow("a fenced cuda block with braces before")
            << QString::fromStdString("```cuda\n__global__ void k() { if (x) { y(); } }\n```\n```json\n" + bin2 +
                                      "\n```")
            << 2;
        json strings = estimate({0, 0, 0, 0, 0, 1, 0, 0}, 6);
        strings["p_significant_speedup"] = "1.0";
        QTest::newRow("numbers written as strings")
            << QString::fromStdString("```json\n" + strings.dump() + "\n```") << 6;
    }
    void readsAJsonBlockWhenThereIsNoToolCall() {
        QFETCH(QString, content);
        QFETCH(int, bin);
        LoopbackHttpServer server;
        server.enqueue(HttpAnswer::json(textReply(content.toStdString())));
        LlmForecasterOptions o;
        o.use_tools = false;
        LlmForecaster forecaster(configFor(server), kPrompts, o);
        const auto results = forecaster.forecast({saxpyQuery()});
        QVERIFY2(results[0].forecast, results[0].error.c_str());
        QCOMPARE(results[0].forecast->probabilities[bin - 1], 1.0);
        QCOMPARE(results[0].forecast->predicted_bin, bin);
        QVERIFY(!json::parse(server.requests().at(0).body).contains("tools"));
    }

    void renormalisesAndKeepsTheRawSum_data() {
        QTest::addColumn<double>("scale");
        QTest::newRow("sums to 2") << 2.0;
        QTest::newRow("percentages") << 100.0;
        QTest::newRow("sums to 0.8") << 0.8;
    }
    void renormalisesAndKeepsTheRawSum() {
        QFETCH(double, scale);
        const std::array<double, 8> p = {0, 0, 0.1, 0.2, 0.4, 0.2, 0.1, 0};
        std::array<double, 8> raw{};
        for (int b = 0; b < 8; ++b)
            raw[b] = p[b] * scale;
        LoopbackHttpServer server;
        server.enqueue(HttpAnswer::json(toolReply(estimate(raw, 5))));
        LlmForecaster forecaster(configFor(server), kPrompts);
        const auto results = forecaster.forecast({saxpyQuery()});
        QVERIFY2(results[0].forecast, results[0].error.c_str());
        const Forecast& f = *results[0].forecast;
        QVERIFY(std::abs(f.raw_sum - scale) < 1e-9);
        double sum = 0;
        for (int b = 0; b < 8; ++b) {
            QVERIFY(std::abs(f.probabilities[b] - p[b]) < 1e-12);
            sum += f.probabilities[b];
        }
        QVERIFY(std::abs(sum - 1.0) < 1e-12);
    }

    void keepsTheModelsStatedBin() {
        // The GPU Forecasters data keeps the model's own predicted_bin; so do we (here it is not the argmax).
        const RuntimeEstimate e = LlmForecaster::parseReply(
            replyWithText("```json\n" + estimate({0, 0, 0, 0.45, 0.55, 0, 0, 0}, 4).dump() + "\n```"));
        QCOMPARE(e.predicted_bin, 4);
        LoopbackHttpServer server;
        server.enqueue(HttpAnswer::json(toolReply(estimate({0, 0, 0, 0.45, 0.55, 0, 0, 0}, 4))));
        LlmForecaster forecaster(configFor(server), kPrompts);
        QCOMPARE(forecaster.forecast({saxpyQuery()})[0].forecast->predicted_bin, 4);
    }

    void unparseableRepliesAreErrors_data() {
        QTest::addColumn<QString>("content");
        QTest::addColumn<QString>("toolArguments");  // empty: no tool call
        QTest::addColumn<QString>("expected");
        json missing = estimate(kOneHot5, 5);
        missing.erase("p_high_speedup");
        json negative = estimate({0, 0, 0, 0, 1, -0.2, 0, 0}, 5);
        json badBin = estimate(kOneHot5, 9);
        json zeros = estimate({0, 0, 0, 0, 0, 0, 0, 0}, 5);
        json word = estimate(kOneHot5, 5);
        word["p_minor_speedup"] = "likely";
        QTest::newRow("prose only") << "I think it will be somewhat faster."
                                    << ""
                                    << "I think it will be";
        QTest::newRow("broken json block") << "```json\n{\"p_minor_speedup\": 0.5,\n```"
                                           << ""
                                           << "the last ```json block is not a JSON object";
        QTest::newRow("missing key") << QString::fromStdString(missing.dump()) << ""
                                     << "missing \"p_high_speedup\"";
        QTest::newRow("negative probability") << QString::fromStdString(negative.dump()) << ""
                                              << "probability of bin 6 must be a finite non-negative number";
        QTest::newRow("all zero") << QString::fromStdString(zeros.dump()) << ""
                                  << "every probability is zero";
        QTest::newRow("bin out of range") << QString::fromStdString(badBin.dump()) << ""
                                          << "\"predicted_bin\" must be an integer from 1 to 8, found 9";
        QTest::newRow("a word for a number") << QString::fromStdString(word.dump()) << ""
                                             << "\"p_minor_speedup\" must be a number, found \"likely\"";
        QTest::newRow("garbage tool arguments") << ""
                                                << "{\"p_severe_slowdown\": 0.1, oops"
                                                << "the arguments of tool call 'submit_kernel_runtime_estimate'";
        // Hostile replies: each fails its own forecast with a readable error, without a crash or a hang.
        QTest::newRow("deeply nested tool arguments") << "" << QString(100000, '[') + QString(100000, ']')
                                                      << "the arguments of tool call 'submit_kernel_runtime_estimate'";
        QTest::newRow("1e999 in tool arguments") << ""
                                                 << "{\"p_severe_slowdown\": 1e999}"
                                                 << "the arguments of tool call 'submit_kernel_runtime_estimate'";
        QTest::newRow("deeply nested fenced block") << "```json\n" + QString(100000, '[') + "\n```"
                                                    << ""
                                                    << "nest deeper than 64 levels";
        QTest::newRow("deeply nested object in prose")
            << "see " + QString("{\"a\": ").repeated(50000) + "1" + QString(50000, '}') << ""
            << "no tool call and no JSON object in the reply";
        QTest::newRow("a million unclosed braces") << QString(1000000, '{') << ""
                                                   << "no tool call and no JSON object in the reply";
        const double huge = std::numeric_limits<double>::max();
        QTest::newRow("probabilities past the largest double")
            << QString::fromStdString(estimate({huge, huge, 0, 0, 0, 0, 0, 0}, 1).dump()) << ""
            << "the probabilities sum past the largest double";
    }
    void unparseableRepliesAreErrors() {
        QFETCH(QString, content);
        QFETCH(QString, toolArguments);
        QFETCH(QString, expected);
        LoopbackHttpServer server;
        if (toolArguments.isEmpty()) {
            server.enqueue(HttpAnswer::json(textReply(content.toStdString())));
        } else {
            json reply = json::parse(toolReply(json::object()));
            reply["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"] = toolArguments.toStdString();
            server.enqueue(HttpAnswer::json(reply.dump()));
        }
        LlmForecaster forecaster(configFor(server), kPrompts);
        std::vector<LlmForecastOutcome> outcomes;
        try {
            outcomes = forecaster.forecastWithDetails({saxpyQuery()});
        } catch (...) {
            QFAIL("an unparseable reply must be the result's error, not an exception");
        }
        const ForecastResult& r = outcomes[0].result;
        QVERIFY(!r.forecast);
        QVERIFY2(r.error.starts_with("reply did not parse: "), r.error.c_str());
        QVERIFY2(r.error.find(expected.toStdString()) != std::string::npos, r.error.c_str());
        // The reply itself stays inspectable.
        QCOMPARE(outcomes[0].samples.size(), size_t{1});
        QCOMPARE(outcomes[0].samples[0].reply.content, content.toStdString());
        QCOMPARE(outcomes[0].samples[0].parse_error, r.error);
    }

    void endpointFailuresAreThatQuerysError() {
        LoopbackHttpServer server;
        server.setHandler([](const HttpRequestSeen& req) {
            if (req.body.find("broken_kernel") != std::string::npos)
                return HttpAnswer::json(R"({"error": "context length exceeded"})", 400);
            return HttpAnswer::json(toolReply(estimate(kOneHot5, 5)));
        });
        LlmForecaster forecaster(configFor(server), kPrompts);
        const auto results = forecaster.forecast(
            {saxpyQuery("good_kernel"), saxpyQuery("broken_kernel"), saxpyQuery("another_good_kernel")});
        QCOMPARE(results.size(), size_t{3});
        QVERIFY(results[0].forecast);
        QVERIFY(!results[1].forecast);
        QVERIFY2(results[1].error.find("HTTP 400") != std::string::npos, results[1].error.c_str());
        QVERIFY2(results[1].error.find("context length exceeded") != std::string::npos, results[1].error.c_str());
        QVERIFY(results[2].forecast);
    }

    // One malformed reply in a batch fails that query alone: a tool name that is a number, a body past the size cap.
    void malformedRepliesFailOnlyTheirQuery() {
        LoopbackHttpServer server;
        server.setHandler([](const HttpRequestSeen& req) {
            if (req.body.find("numbered_tool") != std::string::npos) {
                json reply = json::parse(toolReply(estimate(kOneHot5, 5)));
                reply["choices"][0]["message"]["tool_calls"][0]["function"]["name"] = 42;
                return HttpAnswer::json(reply.dump());
            }
            if (req.body.find("endless_reply") != std::string::npos)
                return HttpAnswer::json(textReply(std::string(200000, 'x')));
            return HttpAnswer::json(toolReply(estimate(kOneHot5, 5)));
        });
        LlmConfig config = configFor(server);
        config.max_response_bytes = 100000;
        LlmForecaster forecaster(config, kPrompts);
        std::vector<ForecastResult> results;
        try {
            results = forecaster.forecast({saxpyQuery("good_kernel"), saxpyQuery("numbered_tool"),
                                           saxpyQuery("endless_reply"), saxpyQuery("another_good_kernel")});
        } catch (const std::exception& e) {
            QFAIL(qPrintable(QString("one malformed reply aborted the batch: ") + e.what()));
        }
        QCOMPARE(results.size(), size_t{4});
        QVERIFY(results[0].forecast);
        QVERIFY(!results[1].forecast);
        QVERIFY2(results[1].error.find("tool_calls[0].function.name is number, not a string") != std::string::npos,
                 results[1].error.c_str());
        QVERIFY(!results[2].forecast);
        QVERIFY2(results[2].error.find("is longer than 100000 bytes (max_response_bytes)") != std::string::npos,
                 results[2].error.c_str());
        QVERIFY(results[3].forecast);
    }

    void averagesSamples() {
        LoopbackHttpServer server;
        // One at a time, so that the scripted answers meet the samples in order.
        server.enqueue(HttpAnswer::json(toolReply(estimate(kOneHot5, 5, "first sample"), 100, 10)));
        server.enqueue(HttpAnswer::json(textReply("no idea", 100, 20)));
        server.enqueue(HttpAnswer::json(toolReply(estimate({0, 0, 0, 0, 0, 2, 0, 0}, 6, "second"), 100, 30)));
        server.enqueue(HttpAnswer::json(toolReply(estimate({0, 0, 0, 0, 0, 0.5, 0.5, 0}, 6, "third"), 100, 40)));
        LlmConfig c = configFor(server);
        c.concurrency = 1;
        c.temperature = 0.8;
        LlmForecasterOptions o;
        o.samples = 4;
        LlmForecaster forecaster(c, kPrompts, o);
        const auto outcomes = forecaster.forecastWithDetails({saxpyQuery()});
        QCOMPARE(server.requestCount(), size_t{4});  // distinct samples, not one cached answer
        const auto& r = outcomes[0].result;
        QVERIFY2(r.forecast, r.error.c_str());
        const Forecast& f = *r.forecast;
        // Averaged over the three samples that parsed, each renormalised first.
        const std::array<double, 8> expected = {0, 0, 0, 0, 1.0 / 3, 1.0 / 3 + 0.5 / 3, 0.5 / 3, 0};
        for (int b = 0; b < 8; ++b)
            QVERIFY2(std::abs(f.probabilities[b] - expected[b]) < 1e-12, std::to_string(b).c_str());
        QVERIFY(std::abs(f.raw_sum - (1.0 + 2.0 + 1.0) / 3) < 1e-12);
        QCOMPARE(f.predicted_bin, 6);  // the samples state 5, 6, 6: the argmax of the average
        QCOMPARE(f.reasoning, std::string("first sample"));
        QCOMPARE(f.tokens_in, int64_t{400});  // every sample was paid for, the one that did not parse too
        QCOMPARE(f.tokens_out, int64_t{100});
        QCOMPARE(f.cost_usd, (400 * 1.0 + 100 * 4.0) / 1e6);
        QCOMPARE(outcomes[0].samples.size(), size_t{4});
        QVERIFY(outcomes[0].samples[1].parse_error.starts_with("reply did not parse"));
        QVERIFY(outcomes[0].samples[0].parse_error.empty());

        // Asked again, every sample comes from the cache.
        const auto again = forecaster.forecast({saxpyQuery()});
        QCOMPARE(server.requestCount(), size_t{4});
        QVERIFY(again[0].forecast);
        QVERIFY(again[0].forecast->probabilities == f.probabilities);
        QCOMPARE(again[0].forecast->cost_usd, 0.0);
    }

    void failsOnlyWhenNoSampleParses() {
        LoopbackHttpServer server;
        server.enqueue(HttpAnswer::json(textReply("hmm")));
        server.enqueue(HttpAnswer::json(R"({"error": "overloaded"})", 503));
        LlmConfig c = configFor(server);
        c.concurrency = 1;
        LlmForecasterOptions o;
        o.samples = 2;
        LlmForecaster forecaster(c, kPrompts, o);
        const auto results = forecaster.forecast({saxpyQuery()});
        QVERIFY(!results[0].forecast);
        const std::string& e = results[0].error;
        QVERIFY2(e.starts_with("none of the 2 samples gave a forecast"), e.c_str());
        QVERIFY2(e.find("[1] reply did not parse") != std::string::npos, e.c_str());
        QVERIFY2(e.find("[2] HTTP 503") != std::string::npos, e.c_str());
    }

    void aCustomSchemeKeepsTheKeysAndItsOwnRanges() {
        const BinScheme scheme(
            "fine", {0.5, 0.8, 0.95, 1.05, 1.25, 1.6, 2.5},
            {"much slower", "slower", "a bit slower", "same", "a bit faster", "faster", "much faster", "far faster"});
        LoopbackHttpServer server;
        server.enqueue(HttpAnswer::json(toolReply(estimate({0, 0, 0, 1, 0, 0, 0, 0}, 4))));
        LlmForecasterOptions o;
        o.scheme = scheme;
        LlmForecaster forecaster(configFor(server), kPrompts, o);
        const auto results = forecaster.forecast({saxpyQuery()});
        QVERIFY2(results[0].forecast, results[0].error.c_str());
        QCOMPARE(results[0].forecast->scheme_id, std::string("fine"));
        QCOMPARE(results[0].forecast->predicted_bin, 4);
        const json body = json::parse(server.requests().at(0).body);
        const json& props = body["tools"][0]["function"]["parameters"]["properties"];
        QCOMPARE(props["p_minor_slowdown"]["description"].get<std::string>(),
                 std::string("Probability of bin 4 (same): 0.95x < S <= 1.05x"));
        QVERIFY(body["messages"][0]["content"].get<std::string>().find(scheme.promptTable()) != std::string::npos);
    }

    void templatesAreEditable() {
        QTemporaryDir dir;
        writeFile(dir.filePath("forecast_system.txt"), "Bins:\n{{bin_table}}");
        writeFile(
            dir.filePath("forecast_user.txt"),
            "Problem {{ problem_name }} on {{hardware}}.\nCandidate:\n{{candidate_code}}\nTunables: {{tunables}}");
        LoopbackHttpServer server;
        LlmForecaster forecaster(configFor(server), dir.path().toStdString());
        // A kernel that happens to contain placeholder syntax is sent as written.
        ForecastQuery q = saxpyQuery("// see {{problem}}\n__global__ void k() {}");
        q.tunables.clear();
        q.hardware.clear();
        const ForecastPrompt p = forecaster.prompt(q);
        QCOMPARE(p.system, "Bins:\n" + BinScheme::gfV2().promptTable());
        QCOMPARE(p.user, std::string("Problem saxpy on (not given).\nCandidate:\n// see {{problem}}\n"
                                     "__global__ void k() {}\nTunables: (none)"));
        QCOMPARE(server.requestCount(), size_t{0});  // rendering asks nobody
    }

    void badTemplatesAreReadableErrors_data() {
        QTest::addColumn<QString>("user");  // forecast_user.txt; "(missing)" for none
        QTest::addColumn<QString>("expected");
        QTest::newRow("unknown placeholder") << "line one\nCode: {{candidate_source}}\n"
                                             << "forecast_user.txt:2: unknown placeholder {{candidate_source}}; "
                                                "expected one of {{problem}}";
        QTest::newRow("missing file") << "(missing)"
                                      << "forecast_user.txt: cannot be read";
    }
    void badTemplatesAreReadableErrors() {
        QFETCH(QString, user);
        QFETCH(QString, expected);
        QTemporaryDir dir;
        writeFile(dir.filePath("forecast_system.txt"), "{{bin_table}}");
        if (user != "(missing)")
            writeFile(dir.filePath("forecast_user.txt"), user.toStdString());
        LlmConfig c;
        c.endpoint = "http://127.0.0.1:1/v1";
        c.model = "m";
        const std::string error =
            kerncast::test::errorOf([&] { LlmForecaster forecaster(c, dir.path().toStdString()); });
        QVERIFY2(error.find(expected.toStdString()) != std::string::npos, error.c_str());
    }

    void theShippedTemplatesUseEveryQueryField() {
        // Placeholders the shipped templates must use, so that no part of a query is silently left out.
        std::string all;
        for (const char* f : {"/forecast_system.txt", "/forecast_user.txt"}) {
            std::ifstream in(kPrompts + f);
            all += std::string(std::istreambuf_iterator<char>(in), {});
        }
        for (const char* name :
             {"bin_table", "probability_keys", "tool_name", "problem", "anchor_code", "candidate_code",
              "candidate_diff", "static_report", "anchor_static_report", "launches", "tunables", "hardware",
              "hardware_table", "problem_bytes", "problem_flops", "reference_time", "anchor_time", "anchor_speedup"})
            QVERIFY2(all.find(std::string("{{") + name + "}}") != std::string::npos, name);
    }

    void misconfigurationThrows() {
        LlmConfig c;
        c.endpoint = "http://127.0.0.1:1/v1";
        QVERIFY(kerncast::test::errorOf([&] { LlmForecaster f(c, kPrompts); }).find("LLM model is not set") !=
                std::string::npos);
        c.model = "m";
        LlmForecasterOptions o;
        o.samples = 0;
        QVERIFY(kerncast::test::errorOf([&] { LlmForecaster f(c, kPrompts, o); }).find("samples must be at least 1") !=
                std::string::npos);
    }

    void theApiKeyStaysOutOfForecasts() {
        QTemporaryDir dir;
        LoopbackHttpServer server;
        server.setHandler([](const HttpRequestSeen& req) {
            return HttpAnswer::json(toolReply(estimate(kOneHot5, 5, "auth was " + req.header("authorization"))));
        });
        LlmConfig c = configFor(server);
        c.api_key = kKey;
        c.cache_dir = dir.filePath("cache").toStdString();
        LlmForecaster forecaster(c, kPrompts);
        const auto outcomes = forecaster.forecastWithDetails({saxpyQuery()});
        QCOMPARE(server.requests().at(0).header("authorization"), "Bearer " + kKey);
        QVERIFY2(outcomes[0].result.forecast, outcomes[0].result.error.c_str());
        const json dumped = *outcomes[0].result.forecast;
        QVERIFY(dumped.dump().find(kKey) == std::string::npos);
        QVERIFY(outcomes[0].prompt.text().find(kKey) == std::string::npos);
        QVERIFY(outcomes[0].samples[0].reply.tool_calls[0].arguments.find(kKey) == std::string::npos);
    }

    // Predict or defer: two tools; a call of defer_to_measurement is an abstention with its reason, not a failure,
    // and every call is kept for the run's llm_calls with prompt, reply, reasoning and tokens.
    void abstainModeOffersTwoToolsAndReadsADeferral() {
        int n = 0;
        test::EmulatedLlmServer server(test::LlmProduct::Vllm, [&](test::LlmTask, const json& body, int) {
            ++n;
            if (body["tools"].size() != 2)
                return std::string("{}");
            if (body["messages"][1]["content"].get<std::string>().find("defer_me") != std::string::npos)
                return json{{"tool", LlmForecaster::kDeferToolName},
                            {"arguments", {{"reasoning", "tensor cores or not: cannot tell"}}}}
                    .dump();
            return test::estimate_arguments(6);
        });
        LlmConfig c = configFor(server.http());
        c.model = server.model();
        c.profile = LlmProfile::Vllm;
        LlmForecasterOptions o;
        o.abstain = true;
        LlmForecaster forecaster(c, kPrompts, o);
        const auto results = forecaster.forecast({saxpyQuery("defer_me"), saxpyQuery("answer_me")});
        const json body = server.acceptedBodies().at(0);
        QCOMPARE(body["tools"].size(), size_t{2});
        QCOMPARE(body["tools"][1]["function"]["name"].get<std::string>(), std::string(LlmForecaster::kDeferToolName));
        QCOMPARE(body["tool_choice"].get<std::string>(), std::string("required"));  // two tools: the model picks

        QVERIFY(!results[0].forecast);
        QVERIFY(results[0].deferred);
        QVERIFY2(results[0].error.find("tensor cores or not") != std::string::npos, results[0].error.c_str());
        QCOMPARE(results[0].calls.size(), size_t{1});
        QCOMPARE(results[0].calls[0].outcome, std::string("deferred"));
        QVERIFY(results[1].forecast);
        QVERIFY(!results[1].deferred);
        QCOMPARE(results[1].forecast->predicted_bin, 6);
        const LlmCall& call = results[1].calls.at(0);
        QCOMPARE(call.kind, std::string("forecast"));
        QCOMPARE(call.outcome, std::string("ok"));
        QVERIFY(call.prompt.find("answer_me") != std::string::npos);
        QVERIFY(call.reply.find("p_significant_speedup") != std::string::npos);
        QVERIFY2(call.reasoning.starts_with("Thinking about request"), call.reasoning.c_str());  // reasoning_content
        QCOMPARE(call.tokens_out, results[1].forecast->tokens_out);
        QCOMPARE(call.cost_usd, results[1].forecast->cost_usd);
        QVERIFY(call.cost_usd > 0);
    }

    // Abstain mode where tools are refused: the object names the tool in the content, and the deferral still reads.
    void abstainModeWithoutToolsReadsTheContent() {
        test::EmulatedLlmServer server(test::LlmProduct::Ollama, [](test::LlmTask, const json&, int) {
            return json{{"tool", LlmForecaster::kDeferToolName}, {"arguments", {{"reasoning", "no idea"}}}}.dump();
        });
        LlmConfig c = configFor(server.http());
        c.model = server.model();
        LlmForecasterOptions o;
        o.abstain = true;
        LlmForecaster forecaster(c, kPrompts, o);
        const auto results = forecaster.forecast({saxpyQuery()});
        QVERIFY2(results[0].deferred, results[0].error.c_str());
        QCOMPARE(server.refused(), 1);  // "does not support tools", then JSON content
        QVERIFY(server.acceptedBodies().at(0).contains("response_format"));
    }

    void theReasoningFieldIsTheForecastsReasoningWhenTheToolGivesNone() {
        test::EmulatedLlmServer server(test::LlmProduct::VllmGptOss, [](test::LlmTask, const json&, int) {
            json args = json::parse(test::estimate_arguments(3));
            args.erase("reasoning");
            return args.dump();
        });
        LlmConfig c = configFor(server.http());
        c.model = server.model();
        LlmForecaster forecaster(c, kPrompts);
        const auto results = forecaster.forecast({saxpyQuery()});
        QVERIFY2(results[0].forecast, results[0].error.c_str());
        QVERIFY2(results[0].forecast->reasoning.starts_with("Thinking about request"),
                 results[0].forecast->reasoning.c_str());
        // gpt-oss ignored the named tool_choice once; the first answer's tokens count too.
        QCOMPARE(server.answered(), 2);
        QCOMPARE(results[0].forecast->tokens_out, server.completionTokens());
    }

    void aTruncatedReplyFailsWithTheLimitAndIsCounted() {
        test::EmulatedLlmServer server(test::LlmProduct::LlamaCpp,
                                       [](test::LlmTask, const json&, int) { return test::estimate_arguments(5); });
        LlmConfig c = configFor(server.http());
        c.model = server.model();
        c.profile = LlmProfile::LlamaCpp;
        c.max_tokens = 30;
        LlmForecaster forecaster(c, kPrompts);
        const auto results = forecaster.forecast({saxpyQuery()});
        QVERIFY(!results[0].forecast);
        QCOMPARE(results[0].error, std::string("reply cut at 30 tokens; raise --max-tokens"));
        QCOMPARE(results[0].truncated, 1);
        QCOMPARE(results[0].calls.at(0).outcome, std::string("truncated"));
        QCOMPARE(results[0].calls.at(0).tokens_out, int64_t{30});
    }
};

QTEST_GUILESS_MAIN(TestLlmForecaster)
#include "tst_llm_forecaster.moc"
