#pragma once
// A real HTTP/1.1 server on 127.0.0.1 (ephemeral port) for tests of network clients: one thread accepts, one
// thread per connection answers. Answers are scripted (status, headers, body, delay) in order, or computed by a
// handler; every request is recorded (method, target, headers, body, times) so that tests can assert on what a
// client really sent, and how many requests were in flight at once. Each answer closes its connection.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace kerncast::test {

struct HttpAnswer {
    int status = 200;
    std::vector<std::pair<std::string, std::string>> headers;
    std::string body;
    double delay_s = 0;    // wait this long before answering (the client may give up first)
    bool hang_up = false;  // close the connection without answering

    static HttpAnswer json(std::string body, int status = 200) {
        HttpAnswer a;
        a.status = status;
        a.headers = {{"Content-Type", "application/json"}};
        a.body = std::move(body);
        return a;
    }
};

struct HttpRequestSeen {
    std::string method, target;
    std::map<std::string, std::string> headers;  // names in lower case
    std::string body;
    double received_s = 0;  // seconds since the server started, when the request had fully arrived
    std::string header(const std::string& lowerName) const {
        auto it = headers.find(lowerName);
        return it == headers.end() ? std::string() : it->second;
    }
};

class LoopbackHttpServer {
public:
    using Handler = std::function<HttpAnswer(const HttpRequestSeen&)>;

    LoopbackHttpServer() : m_started(std::chrono::steady_clock::now()) {
        m_listen = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (m_listen < 0)
            throw std::runtime_error("loopback server: socket() failed");
        const int yes = 1;
        ::setsockopt(m_listen, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        addr.sin_port = 0;
        if (::bind(m_listen, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(m_listen, 64) != 0)
            throw std::runtime_error("loopback server: bind/listen on 127.0.0.1 failed");
        socklen_t len = sizeof addr;
        ::getsockname(m_listen, reinterpret_cast<sockaddr*>(&addr), &len);
        m_port = ntohs(addr.sin_port);
        m_acceptor = std::thread([this] { acceptLoop(); });
    }

    ~LoopbackHttpServer() { stop(); }
    LoopbackHttpServer(const LoopbackHttpServer&) = delete;
    LoopbackHttpServer& operator=(const LoopbackHttpServer&) = delete;

    int port() const { return m_port; }
    // The base URL an OpenAI-compatible client is given.
    std::string baseUrl() const { return "http://127.0.0.1:" + std::to_string(m_port) + "/v1"; }

    // Answers given in this order, one per request; once they run out, the handler (or a 500) answers.
    void enqueue(HttpAnswer answer) {
        std::lock_guard lock(m_mutex);
        m_script.push_back(std::move(answer));
    }
    void setHandler(Handler handler) {
        std::lock_guard lock(m_mutex);
        m_handler = std::move(handler);
    }

    std::vector<HttpRequestSeen> requests() const {
        std::lock_guard lock(m_mutex);
        return m_requests;
    }
    size_t requestCount() const {
        std::lock_guard lock(m_mutex);
        return m_requests.size();
    }
    // The most requests that had arrived and were not answered yet, at any moment.
    int maxInFlight() const { return m_maxInFlight.load(); }

    void stop() {
        {
            std::lock_guard lock(m_mutex);
            if (m_stopping)
                return;
            m_stopping = true;
        }
        m_wake.notify_all();
        ::shutdown(m_listen, SHUT_RDWR);  // wakes accept()
        if (m_acceptor.joinable())
            m_acceptor.join();
        ::close(m_listen);
        std::vector<std::thread> connections;
        {
            std::lock_guard lock(m_mutex);
            connections.swap(m_connections);
        }
        for (auto& t : connections)
            t.join();
    }

    // A port on 127.0.0.1 where nothing listens (bound for a moment, then released), for "connection refused".
    static int refusedPort() {
        const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
        socklen_t len = sizeof addr;
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
        ::close(fd);
        return ntohs(addr.sin_port);
    }

private:
    double now() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - m_started).count(); }

    void acceptLoop() {
        for (;;) {
            const int fd = ::accept4(m_listen, nullptr, nullptr, SOCK_CLOEXEC);
            if (fd < 0) {
                std::lock_guard lock(m_mutex);
                if (m_stopping)
                    return;
                continue;
            }
            std::lock_guard lock(m_mutex);
            if (m_stopping) {
                ::close(fd);
                return;
            }
            m_connections.emplace_back([this, fd] { serve(fd); });
        }
    }

    static std::string lower(std::string s) {
        std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
        return s;
    }

    static std::string trim(const std::string& s) {
        const auto b = s.find_first_not_of(" \t");
        return b == std::string::npos ? "" : s.substr(b, s.find_last_not_of(" \t\r") - b + 1);
    }

    // Reads one request; false when the client went away first.
    static bool readRequest(int fd, HttpRequestSeen& req) {
        std::string data;
        char buf[8192];
        size_t headerEnd = std::string::npos;
        while ((headerEnd = data.find("\r\n\r\n")) == std::string::npos) {
            const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
            if (n <= 0)
                return false;
            data.append(buf, static_cast<size_t>(n));
        }
        const std::string head = data.substr(0, headerEnd);
        size_t lineEnd = head.find("\r\n");
        const std::string requestLine = head.substr(0, lineEnd);
        const auto sp1 = requestLine.find(' ');
        const auto sp2 = requestLine.find(' ', sp1 + 1);
        req.method = requestLine.substr(0, sp1);
        req.target = requestLine.substr(sp1 + 1, sp2 - sp1 - 1);
        while (lineEnd != std::string::npos && lineEnd < head.size()) {
            const size_t next = head.find("\r\n", lineEnd + 2);
            const std::string line =
                head.substr(lineEnd + 2, next == std::string::npos ? std::string::npos : next - lineEnd - 2);
            const auto colon = line.find(':');
            if (colon != std::string::npos)
                req.headers[lower(line.substr(0, colon))] = trim(line.substr(colon + 1));
            lineEnd = next;
        }
        const size_t length = req.headers.count("content-length") ? std::stoul(req.headers["content-length"]) : 0;
        req.body = data.substr(headerEnd + 4);
        while (req.body.size() < length) {
            const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
            if (n <= 0)
                return false;
            req.body.append(buf, static_cast<size_t>(n));
        }
        return true;
    }

    static const char* reason(int status) {
        switch (status) {
        case 200:
            return "OK";
        case 400:
            return "Bad Request";
        case 401:
            return "Unauthorized";
        case 429:
            return "Too Many Requests";
        case 500:
            return "Internal Server Error";
        case 502:
            return "Bad Gateway";
        case 503:
            return "Service Unavailable";
        default:
            return "Status";
        }
    }

    void serve(int fd) {
        HttpRequestSeen req;
        if (!readRequest(fd, req)) {
            ::close(fd);
            return;
        }
        req.received_s = now();
        HttpAnswer answer;
        {
            std::lock_guard lock(m_mutex);
            m_requests.push_back(req);
            const int inFlight = ++m_inFlight;
            m_maxInFlight = std::max(m_maxInFlight.load(), inFlight);
            if (!m_script.empty()) {
                answer = std::move(m_script.front());
                m_script.pop_front();
            } else if (m_handler) {
                answer = m_handler(req);
            } else {
                answer = HttpAnswer::json(R"({"error": "the test server has no answer left"})", 500);
            }
        }
        if (answer.delay_s > 0) {
            std::unique_lock lock(m_mutex);
            m_wake.wait_for(lock, std::chrono::duration<double>(answer.delay_s), [this] { return m_stopping; });
        }
        {
            std::lock_guard lock(m_mutex);
            --m_inFlight;
        }
        if (!answer.hang_up) {
            std::string out = "HTTP/1.1 " + std::to_string(answer.status) + " " + reason(answer.status) + "\r\n";
            for (const auto& [name, value] : answer.headers)
                out += name + ": " + value + "\r\n";
            out += "Content-Length: " + std::to_string(answer.body.size()) + "\r\nConnection: close\r\n\r\n";
            out += answer.body;
            size_t sent = 0;
            while (sent < out.size()) {
                const ssize_t n = ::send(fd, out.data() + sent, out.size() - sent, MSG_NOSIGNAL);
                if (n <= 0)
                    break;  // the client gave up (a timeout): nothing to do
                sent += static_cast<size_t>(n);
            }
        }
        ::shutdown(fd, SHUT_WR);
        ::close(fd);
    }

    const std::chrono::steady_clock::time_point m_started;
    int m_listen = -1;
    int m_port = 0;
    std::thread m_acceptor;
    mutable std::mutex m_mutex;
    std::condition_variable m_wake;
    bool m_stopping = false;
    std::vector<std::thread> m_connections;
    std::deque<HttpAnswer> m_script;
    Handler m_handler;
    std::vector<HttpRequestSeen> m_requests;
    int m_inFlight = 0;
    std::atomic<int> m_maxInFlight{0};
};

}  // namespace kerncast::test
