// The OpenAI-compatible client against a real HTTP server on loopback: what it sends, what it reads back, how it
// retries, times out, runs requests side by side, caches, and keeps the API key out of everything but the header.
#include "core/error.h"
#include "engine/llm/llm_client.h"
#include "tests/support/chat_replies.h"
#include "tests/support/error_of.h"
#include "tests/support/llm_servers.h"
#include "tests/support/loopback_http_server.h"

#include <QTemporaryDir>
#include <QTest>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>

using namespace kerncast;
using kerncast::test::HttpAnswer;
using kerncast::test::HttpRequestSeen;
using kerncast::test::LoopbackHttpServer;
using nlohmann::json;

namespace {

const std::string kKey = "sk-test-7f3a9c1e-SECRET";

LlmConfig configFor(const LoopbackHttpServer& server) { return kerncast::test::loopbackLlmConfig(server); }

std::string chatReply(const std::string& content, int promptTokens = 10, int completionTokens = 5,
                      const json& toolCalls = nullptr) {
    return kerncast::test::chatCompletionBody(content, promptTokens, completionTokens, toolCalls);
}

// One tool whose arguments are {"answer": <integer>}: what every product below is asked for.
ChatRequest toolRequest(const std::string& text) {
    ChatRequest r;
    r.messages = {{"system", "You answer with the tool."}, {"user", text}};
    r.tools = nlohmann::ordered_json::array({{{"type", "function"},
                                              {"function",
                                               {{"name", "submit_answer"},
                                                {"description", "The answer."},
                                                {"parameters",
                                                 {{"type", "object"},
                                                  {"properties", {{"answer", {{"type", "integer"}}}}},
                                                  {"required", nlohmann::ordered_json::array({"answer"})}}}}}}});
    return r;
}

ChatRequest userRequest(const std::string& text, int sample = 0) {
    ChatRequest r;
    r.messages = {{"system", "You answer briefly."}, {"user", text}};
    r.sample_index = sample;
    return r;
}

// The user message of a recorded request, so that a handler can answer each request with its own text.
std::string userText(const HttpRequestSeen& req) {
    return json::parse(req.body)["messages"][1]["content"].get<std::string>();
}

std::string readAll(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

double seconds(std::chrono::steady_clock::time_point since) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

// Sets an environment variable for one test and puts the old value back.
class EnvGuard {
public:
    EnvGuard(const char* name, const std::string& value) : m_name(name) {
        if (const char* old = std::getenv(name))
            m_old = old;
        if (value.empty())
            ::unsetenv(name);
        else
            ::setenv(name, value.c_str(), 1);
    }
    ~EnvGuard() {
        if (m_old)
            ::setenv(m_name, m_old->c_str(), 1);
        else
            ::unsetenv(m_name);
    }

private:
    const char* m_name;
    std::optional<std::string> m_old;
};

}  // namespace

class TestLlmClient : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void sendsAChatCompletionAndReadsTheAnswer_data() {
        QTest::addColumn<QString>("endpointSuffix");
        QTest::newRow("base url") << "";
        QTest::newRow("trailing slash") << "/";
        QTest::newRow("full path") << "/chat/completions";
    }
    void sendsAChatCompletionAndReadsTheAnswer() {
        QFETCH(QString, endpointSuffix);
        LoopbackHttpServer server;
        server.enqueue(HttpAnswer::json(chatReply("The kernel is memory bound.", 1000, 500)));
        LlmConfig c = configFor(server);
        c.endpoint += endpointSuffix.toStdString();
        c.temperature = 0.7;
        c.max_tokens = 321;
        c.price_in_per_mtok = 2.0;
        c.price_out_per_mtok = 6.0;
        LlmClient client(c);

        const ChatResult r = client.completeOne(userRequest("Why is it slow?"));
        QVERIFY2(r.ok, r.error.c_str());
        QCOMPARE(r.content, std::string("The kernel is memory bound."));
        QCOMPARE(r.http_status, 200);
        QCOMPARE(r.tokens_in, int64_t{1000});
        QCOMPARE(r.tokens_out, int64_t{500});
        QCOMPARE(r.cost_usd, (1000 * 2.0 + 500 * 6.0) / 1e6);
        QCOMPARE(r.attempts, 1);
        QVERIFY(!r.from_cache);
        QVERIFY(r.latency_ms > 0);
        QVERIFY(r.tool_calls.empty());

        const auto seen = server.requests();
        QCOMPARE(seen.size(), size_t{1});
        QCOMPARE(seen[0].method, std::string("POST"));
        QCOMPARE(seen[0].target, std::string("/v1/chat/completions"));
        QCOMPARE(seen[0].header("content-type"), std::string("application/json"));
        QCOMPARE(seen[0].header("authorization"), std::string());  // no key configured: no header
        const json body = json::parse(seen[0].body);
        QCOMPARE(body["model"].get<std::string>(), std::string("test-model"));
        QCOMPARE(body["temperature"].get<double>(), 0.7);
        QCOMPARE(body["max_tokens"].get<int>(), 321);
        QCOMPARE(body["messages"].size(), size_t{2});
        QCOMPARE(body["messages"][0]["role"].get<std::string>(), std::string("system"));
        QCOMPARE(body["messages"][1]["content"].get<std::string>(), std::string("Why is it slow?"));
        QVERIFY(!body.contains("tools"));
        QVERIFY(!body.contains("tool_choice"));
    }

    void sendsToolsAndReadsToolCalls_data() {
        QTest::addColumn<bool>("argumentsAsObject");
        QTest::newRow("arguments as JSON text (OpenAI)") << false;
        QTest::newRow("arguments as an object (some servers)") << true;
    }
    void sendsToolsAndReadsToolCalls() {
        QFETCH(bool, argumentsAsObject);
        const json args = {{"answer", 42}};
        const json calls = json::array(
            {{{"id", "call_1"},
              {"type", "function"},
              {"function", {{"name", "submit_answer"}, {"arguments", argumentsAsObject ? args : json(args.dump())}}}}});
        LoopbackHttpServer server;
        // Tool-only answers carry a null content.
        server.enqueue(HttpAnswer::json(kerncast::test::chatCompletionBody(nullptr, 7, 3, calls)));
        LlmClient client(configFor(server));
        ChatRequest req = userRequest("answer");
        req.tools = nlohmann::ordered_json::array(
            {{{"type", "function"}, {"function", {{"name", "submit_answer"}, {"parameters", {{"type", "object"}}}}}}});

        const ChatResult r = client.completeOne(req);
        QVERIFY2(r.ok, r.error.c_str());
        QCOMPARE(r.content, std::string());
        QCOMPARE(r.tool_calls.size(), size_t{1});
        QCOMPARE(r.tool_calls[0].name, std::string("submit_answer"));
        QVERIFY(json::parse(r.tool_calls[0].arguments) == args);

        const json body = json::parse(server.requests().at(0).body);
        QCOMPARE(body["tools"][0]["function"]["name"].get<std::string>(), std::string("submit_answer"));
        QCOMPARE(body["tool_choice"]["function"]["name"].get<std::string>(), std::string("submit_answer"));
    }

    void retriesTransientFailures_data() {
        QTest::addColumn<QList<int>>("failures");  // statuses before the success; 0 = hang up without answering
        QTest::newRow("500 then success") << QList<int>{500};
        QTest::newRow("503, 502 then success") << QList<int>{503, 502};
        QTest::newRow("hang-up then success") << QList<int>{0};
        QTest::newRow("408 then success") << QList<int>{408};
    }
    void retriesTransientFailures() {
        QFETCH(QList<int>, failures);
        LoopbackHttpServer server;
        for (int status : failures) {
            HttpAnswer a = HttpAnswer::json(R"({"error": "try again"})", status == 0 ? 200 : status);
            a.hang_up = status == 0;
            server.enqueue(a);
        }
        server.enqueue(HttpAnswer::json(chatReply("finally")));
        LlmClient client(configFor(server));
        const ChatResult r = client.completeOne(userRequest("q"));
        QVERIFY2(r.ok, r.error.c_str());
        QCOMPARE(r.content, std::string("finally"));
        QCOMPARE(r.attempts, static_cast<int>(failures.size()) + 1);
        QCOMPARE(server.requestCount(), size_t(failures.size() + 1));
    }

    void honoursRetryAfterOn429() {
        LoopbackHttpServer server;
        HttpAnswer limited = HttpAnswer::json(R"({"error": "rate limited"})", 429);
        limited.headers.emplace_back("Retry-After", "1");
        server.enqueue(limited);
        server.enqueue(HttpAnswer::json(chatReply("after the wait")));
        LlmClient client(configFor(server));  // backoff_base_s is 0.01: only Retry-After explains a long wait

        const ChatResult r = client.completeOne(userRequest("q"));
        QVERIFY2(r.ok, r.error.c_str());
        QCOMPARE(r.content, std::string("after the wait"));
        QCOMPARE(r.attempts, 2);
        const auto seen = server.requests();
        QCOMPARE(seen.size(), size_t{2});
        const double gap = seen[1].received_s - seen[0].received_s;
        QVERIFY2(gap >= 0.95 && gap < 3.0, std::to_string(gap).c_str());
        QVERIFY(r.latency_ms >= 950);
    }

    void givesUpAfterMaxRetries() {
        LoopbackHttpServer server;
        server.setHandler([](const HttpRequestSeen&) {
            return HttpAnswer::json(R"({"error": {"message": "model is overloaded"}})", 500);
        });
        LlmConfig c = configFor(server);
        c.max_retries = 2;
        LlmClient client(c);
        ChatResult r;
        try {
            r = client.completeOne(userRequest("q"));
        } catch (...) {
            QFAIL("a failed request must be a result, not an exception");
        }
        QVERIFY(!r.ok);
        QCOMPARE(r.attempts, 3);
        QCOMPARE(server.requestCount(), size_t{3});
        QCOMPARE(r.http_status, 500);
        QVERIFY2(r.error.find("HTTP 500") != std::string::npos, r.error.c_str());
        QVERIFY2(r.error.find("model is overloaded") != std::string::npos, r.error.c_str());
        QVERIFY2(r.error.find("3 attempts") != std::string::npos, r.error.c_str());
    }

    void doesNotRetryClientErrors() {
        LoopbackHttpServer server;
        server.setHandler([](const HttpRequestSeen&) {
            return HttpAnswer::json(R"({"error": {"message": "unknown model 'test-model'"}})", 404);
        });
        LlmClient client(configFor(server));
        const ChatResult r = client.completeOne(userRequest("q"));
        QVERIFY(!r.ok);
        QCOMPARE(r.attempts, 1);
        QCOMPARE(server.requestCount(), size_t{1});
        QVERIFY2(r.error.find("HTTP 404") != std::string::npos, r.error.c_str());
        QVERIFY2(r.error.find("unknown model") != std::string::npos, r.error.c_str());
    }

    void slowAnswersTimeOut() {
        LoopbackHttpServer server;
        server.setHandler([](const HttpRequestSeen&) {
            HttpAnswer a = HttpAnswer::json(chatReply("too late"));
            a.delay_s = 3;
            return a;
        });
        LlmConfig c = configFor(server);
        c.timeout_s = 0.3;
        c.max_retries = 1;
        LlmClient client(c);
        const auto t0 = std::chrono::steady_clock::now();
        const ChatResult r = client.completeOne(userRequest("q"));
        const double took = seconds(t0);
        QVERIFY(!r.ok);
        QCOMPARE(r.attempts, 2);  // a timeout is retried like a dropped connection
        QCOMPARE(server.requestCount(), size_t{2});
        QCOMPARE(r.http_status, 0);
        QVERIFY2(r.error.find("timed out") != std::string::npos || r.error.find("Timeout") != std::string::npos,
                 r.error.c_str());
        QVERIFY2(took >= 0.55 && took < 2.0, std::to_string(took).c_str());
    }

    void unreadableBodiesAreFailures_data() {
        QTest::addColumn<QString>("body");
        QTest::addColumn<QString>("expected");
        QTest::newRow("html") << "<html><body>502 proxy error</body></html>"
                              << "not a JSON object";
        QTest::newRow("truncated json") << R"({"choices": [{"message": )"
                                        << "not a JSON object";
        QTest::newRow("no choices") << R"({"object": "chat.completion", "choices": []})"
                                    << "no choices[0].message";
        QTest::newRow("empty") << ""
                               << "(empty body)";
    }
    void unreadableBodiesAreFailures() {
        QFETCH(QString, body);
        QFETCH(QString, expected);
        LoopbackHttpServer server;
        server.enqueue(HttpAnswer::json(body.toStdString()));
        LlmClient client(configFor(server));
        const ChatResult r = client.completeOne(userRequest("q"));
        QVERIFY(!r.ok);
        QCOMPARE(r.attempts, 1);
        QCOMPARE(r.http_status, 200);
        QVERIFY2(r.error.find(expected.toStdString()) != std::string::npos, r.error.c_str());
        if (!body.isEmpty())
            QVERIFY2(r.error.find(body.left(20).toStdString()) != std::string::npos, r.error.c_str());
    }

    void connectionRefusedIsARecordedFailure() {
        LlmConfig c;
        c.endpoint = "http://127.0.0.1:" + std::to_string(LoopbackHttpServer::refusedPort()) + "/v1";
        c.model = "test-model";
        c.max_retries = 2;
        c.backoff_base_s = 0.01;
        LlmClient client(c);
        const ChatResult r = client.completeOne(userRequest("q"));
        QVERIFY(!r.ok);
        QCOMPARE(r.attempts, 3);
        QCOMPARE(r.http_status, 0);
        QVERIFY2(r.error.find("connect") != std::string::npos, r.error.c_str());
        QVERIFY2(r.error.find(c.endpoint) != std::string::npos, r.error.c_str());
    }

    void runsRequestsSideBySide_data() {
        QTest::addColumn<int>("concurrency");
        QTest::addColumn<int>("requests");
        QTest::newRow("3 at once") << 3 << 6;
        QTest::newRow("one at a time") << 1 << 3;
    }
    void runsRequestsSideBySide() {
        QFETCH(int, concurrency);
        QFETCH(int, requests);
        const double delay = 0.25;
        LoopbackHttpServer server;
        server.setHandler([delay](const HttpRequestSeen& req) {
            HttpAnswer a = HttpAnswer::json(chatReply("echo: " + userText(req)));
            a.delay_s = delay;
            return a;
        });
        LlmConfig c = configFor(server);
        c.concurrency = concurrency;
        LlmClient client(c);
        std::vector<ChatRequest> batch;
        for (int i = 0; i < requests; ++i)
            batch.push_back(userRequest("question " + std::to_string(i)));
        const auto t0 = std::chrono::steady_clock::now();
        const auto results = client.complete(batch);
        const double took = seconds(t0);

        QCOMPARE(results.size(), size_t(requests));
        for (int i = 0; i < requests; ++i) {
            QVERIFY2(results[i].ok, results[i].error.c_str());
            QCOMPARE(results[i].content, "echo: question " + std::to_string(i));  // results stay in order
        }
        QCOMPARE(server.maxInFlight(), concurrency);
        const double waves = std::ceil(double(requests) / concurrency);
        QVERIFY2(took >= waves * delay * 0.9, std::to_string(took).c_str());
        QVERIFY2(took < waves * delay + 1.0, std::to_string(took).c_str());
    }

    void cachesAnswersInMemoryAndOnDisk() {
        QTemporaryDir dir;
        LoopbackHttpServer server;
        server.setHandler(
            [](const HttpRequestSeen& req) { return HttpAnswer::json(chatReply("A: " + userText(req))); });
        LlmConfig c = configFor(server);
        c.cache_dir = dir.filePath("cache").toStdString();
        c.price_in_per_mtok = 1;
        {
            LlmClient client(c);
            const ChatResult first = client.completeOne(userRequest("q1"));
            QVERIFY2(first.ok, first.error.c_str());
            QVERIFY(!first.from_cache);
            QVERIFY(first.cost_usd > 0);
            const ChatResult again = client.completeOne(userRequest("q1"));
            QVERIFY(again.from_cache);
            QCOMPARE(again.content, first.content);
            QCOMPARE(again.tokens_in, first.tokens_in);
            QCOMPARE(again.cost_usd, 0.0);
            QCOMPARE(again.attempts, 0);
            QCOMPARE(server.requestCount(), size_t{1});
        }
        // A new client (a new run) finds the answer on disk.
        LlmClient client(c);
        const auto results = client.complete({userRequest("q1"), userRequest("q2")});
        QVERIFY(results[0].from_cache);
        QCOMPARE(results[0].content, std::string("A: q1"));
        QVERIFY(!results[1].from_cache);
        QCOMPARE(server.requestCount(), size_t{2});

        std::vector<std::string> files;
        for (const auto& e : std::filesystem::directory_iterator(c.cache_dir))
            files.push_back(e.path().filename().string());
        QCOMPARE(files.size(), size_t{2});  // one entry per answer, no temporary files left behind
        for (const auto& f : files)
            QVERIFY2(f.size() == 37 && f.ends_with(".json"), f.c_str());
    }

    void samplesAreCachedSeparately() {
        LoopbackHttpServer server;
        int n = 0;
        server.setHandler(
            [&n](const HttpRequestSeen&) { return HttpAnswer::json(chatReply("sample " + std::to_string(n++))); });
        LlmConfig c = configFor(server);
        c.temperature = 1.0;
        c.concurrency = 1;
        LlmClient client(c);
        const auto first = client.complete({userRequest("q", 0), userRequest("q", 1), userRequest("q", 2)});
        QCOMPARE(server.requestCount(), size_t{3});
        QCOMPARE(first[0].content, std::string("sample 0"));
        QCOMPARE(first[2].content, std::string("sample 2"));
        const auto again = client.complete({userRequest("q", 0), userRequest("q", 1), userRequest("q", 2)});
        QCOMPARE(server.requestCount(), size_t{3});
        for (int i = 0; i < 3; ++i) {
            QVERIFY(again[i].from_cache);
            QCOMPARE(again[i].content, first[i].content);
        }
        QVERIFY(client.cacheKey(userRequest("q", 0)) != client.cacheKey(userRequest("q", 1)));
        // The sample index is not part of what is sent.
        QCOMPARE(client.requestBody(userRequest("q", 0)).dump(), client.requestBody(userRequest("q", 1)).dump());
    }

    void identicalRequestsInOneBatchAreSentOnce() {
        LoopbackHttpServer server;
        server.setHandler(
            [](const HttpRequestSeen& req) { return HttpAnswer::json(chatReply("A: " + userText(req))); });
        LlmClient client(configFor(server));
        const auto results = client.complete({userRequest("same"), userRequest("same")});
        QCOMPARE(server.requestCount(), size_t{1});
        QVERIFY(results[0].ok && results[1].ok);
        QCOMPARE(results[1].content, results[0].content);
        QVERIFY(!results[0].from_cache);
        QVERIFY(results[1].from_cache);
    }

    void failuresAreNotCached() {
        LoopbackHttpServer server;
        server.enqueue(HttpAnswer::json(R"({"error": "bad"})", 400));
        server.enqueue(HttpAnswer::json(chatReply("ok now")));
        LlmClient client(configFor(server));
        QVERIFY(!client.completeOne(userRequest("q")).ok);
        const ChatResult r = client.completeOne(userRequest("q"));
        QVERIFY(r.ok);
        QVERIFY(!r.from_cache);
        QCOMPARE(server.requestCount(), size_t{2});
    }

    void apiKeyGoesOnlyIntoTheAuthorizationHeader() {
        QTemporaryDir dir;
        LoopbackHttpServer server;
        // A careless proxy that echoes the request's headers back, in an answer and in an error page.
        server.setHandler([](const HttpRequestSeen& req) {
            const std::string auth = req.header("authorization");
            if (userText(req) == "echo")
                return HttpAnswer::json(
                    chatReply("you sent " + auth, 1, 1,
                              json::array({{{"function", {{"name", "f"}, {"arguments", json{{"k", auth}}.dump()}}}}})));
            if (userText(req) == "reject")
                return HttpAnswer::json(json{{"error", "invalid key " + auth}}.dump(), 401);
            return HttpAnswer::json(chatReply("plain"));
        });
        LlmConfig c = configFor(server);
        c.api_key = kKey;
        c.cache_dir = dir.filePath("cache").toStdString();
        LlmClient client(c);
        const auto results = client.complete(std::vector<ChatRequest>{userRequest("first")});
        const auto more = client.complete({userRequest("echo"), userRequest("reject")});

        const auto seen = server.requests();
        QCOMPARE(seen.size(), size_t{3});
        for (const auto& req : seen) {
            QCOMPARE(req.header("authorization"), "Bearer " + kKey);
            QVERIFY(req.body.find(kKey) == std::string::npos);
        }
        std::vector<ChatResult> all = results;
        all.insert(all.end(), more.begin(), more.end());
        QVERIFY(more[0].ok);
        QVERIFY(!more[1].ok);
        QVERIFY2(more[1].error.find("[redacted]") != std::string::npos, more[1].error.c_str());
        for (const auto& r : all) {
            QVERIFY2(r.error.find(kKey) == std::string::npos, r.error.c_str());
            QVERIFY2(r.content.find(kKey) == std::string::npos, r.content.c_str());
            QVERIFY2(r.warning.find(kKey) == std::string::npos, r.warning.c_str());
            for (const auto& t : r.tool_calls)
                QVERIFY2(t.arguments.find(kKey) == std::string::npos, t.arguments.c_str());
        }
        int files = 0;
        for (const auto& e : std::filesystem::recursive_directory_iterator(c.cache_dir)) {
            ++files;
            QVERIFY2(readAll(e.path()).find(kKey) == std::string::npos, e.path().c_str());
        }
        QCOMPARE(files, 2);
        QVERIFY(json(c).dump().find(kKey) == std::string::npos);
        QVERIFY(!json(c).contains("api_key"));
        QVERIFY(client.requestBody(userRequest("first")).dump().find(kKey) == std::string::npos);
        QVERIFY(client.cacheKey(userRequest("first")).find(kKey) == std::string::npos);
    }

    void aPlaceholderKeyDoesNotAlterAnswers() {
        // vLLM and Ollama accept any key; their documented placeholders may be words of an answer.
        LoopbackHttpServer server;
        server.enqueue(HttpAnswer::json(chatReply("#define EMPTY 0")));
        LlmConfig c = configFor(server);
        c.api_key = "EMPTY";
        LlmClient client(c);
        const ChatResult r = client.completeOne(userRequest("q"));
        QVERIFY(r.ok);
        QCOMPARE(r.content, std::string("#define EMPTY 0"));
        QCOMPARE(server.requests().at(0).header("authorization"), std::string("Bearer EMPTY"));
    }

    void resolvesTheApiKey_data() {
        QTest::addColumn<QString>("kerncastEnv");
        QTest::addColumn<QString>("openaiEnv");
        QTest::addColumn<QString>("settings");  // llm.json content; empty: no file
        QTest::addColumn<QString>("expected");
        QTest::newRow("KERNCAST_API_KEY first") << "k1"
                                                << "o1"
                                                << R"({"api_key": "s1"})"
                                                << "k1";
        QTest::newRow("then OPENAI_API_KEY") << ""
                                             << "o1"
                                             << R"({"api_key": "s1"})"
                                             << "o1";
        QTest::newRow("then the settings file") << ""
                                                << ""
                                                << R"({"endpoint": "x", "api_key": "s1"})"
                                                << "s1";
        QTest::newRow("settings without a key") << ""
                                                << ""
                                                << R"({"endpoint": "x"})"
                                                << "";
        QTest::newRow("nothing") << ""
                                 << ""
                                 << ""
                                 << "";
    }
    void resolvesTheApiKey() {
        QFETCH(QString, kerncastEnv);
        QFETCH(QString, openaiEnv);
        QFETCH(QString, settings);
        QFETCH(QString, expected);
        QTemporaryDir dir;
        EnvGuard xdg("XDG_CONFIG_HOME", dir.path().toStdString());
        EnvGuard k("KERNCAST_API_KEY", kerncastEnv.toStdString());
        EnvGuard o("OPENAI_API_KEY", openaiEnv.toStdString());
        QCOMPARE(LlmConfig::settingsPath(), dir.path().toStdString() + "/kerncast/llm.json");
        if (!settings.isEmpty()) {
            std::filesystem::create_directories(dir.path().toStdString() + "/kerncast");
            std::ofstream(LlmConfig::settingsPath()) << settings.toStdString();
        }
        QCOMPARE(LlmConfig::resolveApiKey(), expected.toStdString());
    }

    void aBrokenSettingsFileIsAnErrorThatDoesNotQuoteIt() {
        QTemporaryDir dir;
        EnvGuard xdg("XDG_CONFIG_HOME", dir.path().toStdString());
        EnvGuard k("KERNCAST_API_KEY", "");
        EnvGuard o("OPENAI_API_KEY", "");
        std::filesystem::create_directories(dir.path().toStdString() + "/kerncast");
        std::ofstream(LlmConfig::settingsPath()) << "{\"api_key\": \"" << kKey << "\",, }";
        const std::string error = kerncast::test::errorOf([] { LlmConfig::resolveApiKey(); });
        QVERIFY2(error.find(LlmConfig::settingsPath()) != std::string::npos, error.c_str());
        QVERIFY2(error.find("JSON object") != std::string::npos, error.c_str());
        QVERIFY2(error.find(kKey) == std::string::npos, error.c_str());
    }

    void loadsTheSettingsFile() {
        QTemporaryDir dir;
        EnvGuard xdg("XDG_CONFIG_HOME", dir.path().toStdString());
        EnvGuard k("KERNCAST_API_KEY", "");
        EnvGuard o("OPENAI_API_KEY", "");
        std::filesystem::create_directories(dir.path().toStdString() + "/kerncast");
        std::ofstream(LlmConfig::settingsPath()) << json{
            {"endpoint", "http://gpu-box:8000/v1"},
            {"model", "Qwen/Qwen2.5-Coder-32B-Instruct"},
            {"concurrency", 32},
            {"api_key", kKey}}.dump();
        LlmConfig c = LlmConfig::loadSettings();
        QCOMPARE(c.endpoint, std::string("http://gpu-box:8000/v1"));
        QCOMPARE(c.model, std::string("Qwen/Qwen2.5-Coder-32B-Instruct"));
        QCOMPARE(c.concurrency, 32);
        QCOMPARE(c.max_retries, LlmConfig{}.max_retries);  // absent fields keep their defaults
        QCOMPARE(c.api_key, kKey);
        {
            EnvGuard env("KERNCAST_API_KEY", "from-the-environment");
            QCOMPARE(LlmConfig::loadSettings().api_key, std::string("from-the-environment"));
        }
        std::ofstream(LlmConfig::settingsPath()) << R"({"model": "m", "concurrency": "lots"})";
        const std::string error = kerncast::test::errorOf([] { LlmConfig::loadSettings(); });
        QCOMPARE(error, LlmConfig::settingsPath() + ": \"concurrency\" must be a number, found string");
    }

    void configRoundTripsThroughJsonWithoutTheKey() {
        LlmConfig c;
        c.endpoint = "http://gpu-box:8000/v1";
        c.model = "qwen";
        c.api_key = kKey;
        c.concurrency = 16;
        c.price_out_per_mtok = 0.6;
        const json j = c;
        LlmConfig back;
        json withKey = json::parse(j.dump());
        withKey["api_key"] = "ignored";
        from_json(withKey, back);
        QCOMPARE(back.endpoint, c.endpoint);
        QCOMPARE(back.model, c.model);
        QCOMPARE(back.concurrency, 16);
        QCOMPARE(back.price_out_per_mtok, 0.6);
        QCOMPARE(back.api_key, std::string());
    }

    void rejectsAConfigurationThatCannotWork_data() {
        QTest::addColumn<QString>("field");
        QTest::addColumn<QString>("expected");
        QTest::newRow("no endpoint") << "endpoint"
                                     << "LLM endpoint is not set";
        QTest::newRow("no model") << "model"
                                  << "LLM model is not set";
        QTest::newRow("no concurrency") << "concurrency"
                                        << "concurrency must be at least 1";
        QTest::newRow("zero timeout") << "timeout"
                                      << "timeout must be positive";
    }
    void rejectsAConfigurationThatCannotWork() {
        QFETCH(QString, field);
        QFETCH(QString, expected);
        LlmConfig c;
        c.endpoint = "http://127.0.0.1:1/v1";
        c.model = "m";
        if (field == "endpoint")
            c.endpoint.clear();
        if (field == "model")
            c.model.clear();
        if (field == "concurrency")
            c.concurrency = 0;
        if (field == "timeout")
            c.timeout_s = 0;
        const std::string error = kerncast::test::errorOf([&] { LlmClient client(c); });
        QVERIFY2(error.find(expected.toStdString()) != std::string::npos, error.c_str());
    }

    void defaultsSuitReasoningModels() {
        const LlmConfig c;
        QCOMPARE(c.temperature, 1.0);
        QCOMPARE(c.max_tokens, 16384);
        QCOMPARE(c.timeout_s, 900.0);
        QCOMPARE(c.profile, LlmProfile::Auto);
    }

    void eachProfileShapesTheRequest_data() {
        QTest::addColumn<QString>("profile");
        QTest::addColumn<QString>("model");
        QTest::addColumn<QString>("toolChoice");  // "named", "required", "" (no tools: response_format)
        QTest::addColumn<QString>("limitField");
        QTest::addColumn<bool>("temperature");
        QTest::newRow("auto") << "auto"
                              << "m"
                              << "named"
                              << "max_tokens" << true;
        QTest::newRow("openai, chat model") << "openai"
                                            << "gpt-4.1"
                                            << "named"
                                            << "max_completion_tokens" << true;
        QTest::newRow("openai, reasoning model") << "openai"
                                                 << "o4-mini"
                                                 << "named"
                                                 << "max_completion_tokens" << false;
        QTest::newRow("vllm") << "vllm"
                              << "m"
                              << "required"
                              << "max_tokens" << true;
        QTest::newRow("ollama") << "ollama"
                                << "m"
                                << ""
                                << "max_tokens" << true;
        QTest::newRow("llamacpp") << "llamacpp"
                                  << "m"
                                  << ""
                                  << "max_tokens" << true;
    }
    void eachProfileShapesTheRequest() {
        QFETCH(QString, profile);
        QFETCH(QString, model);
        QFETCH(QString, toolChoice);
        QFETCH(QString, limitField);
        QFETCH(bool, temperature);
        LlmConfig c;
        c.endpoint = "http://127.0.0.1:1/v1";
        c.model = model.toStdString();
        c.profile = llm_profile_from_string(profile.toStdString());
        c.max_tokens = 777;
        LlmClient client(c);
        const json body = json::parse(client.requestBody(toolRequest("q")).dump());
        QCOMPARE(body[limitField.toStdString()].get<int>(), 777);
        QCOMPARE(body.contains(limitField == "max_tokens" ? "max_completion_tokens" : "max_tokens"), false);
        QCOMPARE(body.contains("temperature"), temperature);
        if (toolChoice == "named") {
            QCOMPARE(body["tool_choice"]["function"]["name"].get<std::string>(), std::string("submit_answer"));
        } else if (toolChoice == "required") {
            QCOMPARE(body["tool_choice"].get<std::string>(), std::string("required"));
        } else {
            QVERIFY(!body.contains("tools"));
            QVERIFY(!body.contains("tool_choice"));
            QCOMPARE(body["response_format"]["type"].get<std::string>(), std::string("json_schema"));
            QCOMPARE(body["response_format"]["json_schema"]["schema"]["required"][0].get<std::string>(),
                     std::string("answer"));
            // The model is told what the object is, in the last message.
            QVERIFY(body["messages"].back()["content"].get<std::string>().find("submit_answer") != std::string::npos);
        }
        QVERIFY_THROWS_EXCEPTION(Error, llm_profile_from_string("lmstudio"));
    }

    // The auto profile against each product as documented: the first request may be refused (or ignored), the
    // client switches the shape once, and every later request goes out in the accepted shape at once.
    void autoProfileAdaptsOncePerEndpoint_data() {
        QTest::addColumn<int>("product");
        QTest::addColumn<double>("temperature");
        QTest::addColumn<int>("refusals");  // requests the server refused before the shape fitted
        QTest::addColumn<QString>("shape");
        QTest::addColumn<bool>("reasoning");
        QTest::newRow("openai reasoning model")
            << int(test::LlmProduct::OpenAiReasoning) << 1.0 << 1
            << "tools, tool_choice named, max_completion_tokens, temperature" << false;
        QTest::newRow("openai reasoning model, temperature 0.2")
            << int(test::LlmProduct::OpenAiReasoning) << 0.2 << 2
            << "tools, tool_choice named, max_completion_tokens, no temperature" << false;
        QTest::newRow("vllm") << int(test::LlmProduct::Vllm) << 1.0 << 0
                              << "tools, tool_choice named, max_tokens, temperature" << true;
        QTest::newRow("vllm gpt-oss ignores the named form")
            << int(test::LlmProduct::VllmGptOss) << 1.0 << 0 << "tools, tool_choice required, max_tokens, temperature"
            << true;
        QTest::newRow("ollama model without tools")
            << int(test::LlmProduct::Ollama) << 1.0 << 1
            << "JSON content (response_format json_schema), max_tokens, temperature" << true;
        QTest::newRow("llama.cpp without --jinja")
            << int(test::LlmProduct::LlamaCpp) << 1.0 << 1
            << "JSON content (response_format json_schema), max_tokens, temperature" << true;
    }
    void autoProfileAdaptsOncePerEndpoint() {
        QFETCH(int, product);
        QFETCH(double, temperature);
        QFETCH(int, refusals);
        QFETCH(QString, shape);
        QFETCH(bool, reasoning);
        test::EmulatedLlmServer server(static_cast<test::LlmProduct>(product), [](test::LlmTask, const json&, int n) {
            return json{{"answer", n}}.dump();
        });
        LlmConfig c = configFor(server.http());
        c.model = server.model();
        c.temperature = temperature;
        c.max_tokens = 4096;
        LlmClient client(c);
        const ChatResult first = client.completeOne(toolRequest("first"));
        QVERIFY2(first.ok, first.error.c_str());
        QCOMPARE(first.tool_calls.size(), size_t{1});
        QCOMPARE(first.tool_calls[0].name, std::string("submit_answer"));
        QVERIFY(json::parse(first.tool_calls[0].arguments).contains("answer"));
        QCOMPARE(server.refused(), refusals);
        QCOMPARE(QString::fromStdString(client.shape().describe()), shape);
        QCOMPARE(QString::fromStdString(first.shape), shape);
        QCOMPARE(first.reasoning.empty(), !reasoning);
        QVERIFY(first.prompt.find("[user]\nfirst") != std::string::npos);

        // Remembered: a batch afterwards is accepted as sent, and a second client sharing the memory starts there.
        const int answeredBefore = server.answered();
        const auto batch = client.complete({toolRequest("a"), toolRequest("b"), toolRequest("c")});
        for (const auto& r : batch)
            QVERIFY2(r.ok && r.tool_calls.size() == 1, r.error.c_str());
        QCOMPARE(server.refused(), refusals);
        QCOMPARE(server.answered(), answeredBefore + 3);
        const auto changes = client.shapeMemory()->takeChanges();
        QCOMPARE(changes.size() > 0, shape != "tools, tool_choice named, max_tokens, temperature");
        LlmClient second(c);
        second.setShapeMemory(client.shapeMemory());
        QCOMPARE(second.shape(), client.shape());
    }

    void aNamedProfileDoesNotAdapt() {
        test::EmulatedLlmServer server(test::LlmProduct::LlamaCpp,
                                       [](test::LlmTask, const json&, int) { return std::string(R"({"answer": 1})"); });
        LlmConfig c = configFor(server.http());
        c.model = server.model();
        c.profile = LlmProfile::Vllm;  // the wrong server: tools with "required"
        LlmClient client(c);
        const ChatResult r = client.completeOne(toolRequest("q"));
        QVERIFY(!r.ok);
        // llama.cpp's 500 for --jinja is an answer about its start-up flags: not retried (max_retries is 2 here).
        QCOMPARE(server.http().requestCount(), size_t{1});
        QVERIFY2(r.error.find("tools param requires --jinja flag") != std::string::npos, r.error.c_str());
        QCOMPARE(r.http_status, 500);
    }

    void aTruncatedReplyIsAClearCountedFailure() {
        test::EmulatedLlmServer server(test::LlmProduct::Vllm, [](test::LlmTask, const json&, int) {
            return json{{"answer", 1}, {"padding", std::string(400, 'x')}}.dump();
        });
        LlmConfig c = configFor(server.http());
        c.model = server.model();
        c.max_tokens = 40;
        c.price_out_per_mtok = 10;
        LlmClient client(c);
        const ChatResult r = client.completeOne(toolRequest("q"));
        QVERIFY(!r.ok);
        QVERIFY(r.truncated);
        QCOMPARE(r.error, std::string("reply cut at 40 tokens; raise --max-tokens"));
        QCOMPARE(r.tokens_out, int64_t{40});  // spent all the same
        QCOMPARE(r.cost_usd, 40 * 10 / 1e6 + r.tokens_in * 0.0);
        QCOMPARE(server.http().requestCount(), size_t{1});  // not retried: the same limit cuts it again
        const LlmCall call = llm_call_from(r, "forecast", c.model);
        QCOMPARE(call.outcome, std::string("truncated"));
        QCOMPARE(call.error, r.error);
        // Not cached either: a higher limit gets a real answer.
        c.max_tokens = 4096;
        LlmClient wider(c);
        QVERIFY(wider.completeOne(toolRequest("q")).ok);
    }

    void theKeyCanBeAReferenceToAVariable() {
        QTemporaryDir dir;
        EnvGuard xdg("XDG_CONFIG_HOME", dir.path().toStdString());
        EnvGuard k("KERNCAST_API_KEY", "");
        EnvGuard o("OPENAI_API_KEY", "o1");
        EnvGuard mine("MY_LAB_LLM_KEY", kKey);
        std::filesystem::create_directories(dir.path().toStdString() + "/kerncast");
        std::ofstream(LlmConfig::settingsPath()) << json{
            {"endpoint", "http://gpu-box:8000/v1"},
            {"model", "m"},
            {"profile", "vllm"},
            {"price_in_per_mtok", 0.15},
            {"price_out_per_mtok", 0.6},
            {"api_key_env", "MY_LAB_LLM_KEY"}}.dump();
        const LlmConfig c = LlmConfig::loadSettings(json{{"model", "from-the-command-line"}});
        QCOMPARE(c.api_key, kKey);
        QCOMPARE(c.model, std::string("from-the-command-line"));
        QCOMPARE(c.profile, LlmProfile::Vllm);
        QCOMPARE(c.price_in_per_mtok, 0.15);
        const json stored = c;  // what a run keeps: the reference, never the key
        QCOMPARE(stored["api_key_env"].get<std::string>(), std::string("MY_LAB_LLM_KEY"));
        QVERIFY(stored.dump().find(kKey) == std::string::npos);
        std::ofstream(LlmConfig::settingsPath()) << R"({"profile": "lmstudio"})";
        const std::string error = kerncast::test::errorOf([] { LlmConfig::loadSettings(); });
        QVERIFY2(error.find("unknown LLM profile 'lmstudio'") != std::string::npos, error.c_str());
    }
};

QTEST_GUILESS_MAIN(TestLlmClient)
#include "tst_llm_client.moc"
