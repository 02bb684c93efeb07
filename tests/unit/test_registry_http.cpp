// The registry client's HTTP layer against servers on loopback that this
// test runs: a registry (or its token realm) decides the URLs the client
// fetches, so only HTTP(S) may be followed, whatever a response says.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <string>
#include <thread>

#include "http.hpp"
#include "image_builder.hpp"
#include "imgsmith/util/error.hpp"

using namespace imgsmith;
using namespace imgsmith::registry;

namespace {

// Listens on 127.0.0.1 and answers every connection with one canned
// response (none: the connection is closed at once), counting connections.
class LoopbackServer {
 public:
  explicit LoopbackServer(std::string response = "") : response_(std::move(response)) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    REQUIRE(fd_ >= 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::bind(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
    REQUIRE(::listen(fd_, 8) == 0);
    socklen_t length = sizeof address;
    REQUIRE(::getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &length) == 0);
    port_ = ntohs(address.sin_port);
    thread_ = std::thread([this] { serve(); });
  }
  ~LoopbackServer() {
    stop_ = true;
    thread_.join();
    ::close(fd_);
  }
  LoopbackServer(const LoopbackServer&) = delete;
  LoopbackServer& operator=(const LoopbackServer&) = delete;

  std::string url(const std::string& scheme, const std::string& path = "/") const {
    return scheme + "://127.0.0.1:" + std::to_string(port_) + path;
  }
  int connections() const { return connections_.load(); }

 private:
  void serve() {
    while (!stop_) {
      pollfd listening{fd_, POLLIN, 0};
      if (::poll(&listening, 1, 20) <= 0) continue;
      const int c = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (c < 0) continue;
      ++connections_;
      if (!response_.empty()) {
        std::string request;
        char buffer[4096];
        while (request.find("\r\n\r\n") == std::string::npos) {
          pollfd readable{c, POLLIN, 0};
          if (::poll(&readable, 1, 5000) <= 0) break;
          const ssize_t n = ::read(c, buffer, sizeof buffer);
          if (n <= 0) break;
          request.append(buffer, static_cast<std::size_t>(n));
        }
        std::size_t sent = 0;
        while (sent < response_.size()) {
          const ssize_t n = ::write(c, response_.data() + sent, response_.size() - sent);
          if (n <= 0) break;
          sent += static_cast<std::size_t>(n);
        }
      }
      ::close(c);
    }
  }

  std::string response_;
  int fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int> connections_{0};
  std::thread thread_;
};

std::string redirect_to(const std::string& location) {
  return "HTTP/1.1 302 Found\r\nLocation: " + location +
         "\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
}

const std::string kManifest = "{\"schemaVersion\": 2}";

std::string ok_with(const std::string& body) {
  return "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(body.size()) +
         "\r\nConnection: close\r\n\r\n" + body;
}

Http quick_http() {
  HttpOptions options;
  options.connect_timeout_s = 5;
  options.stall_timeout_s = 5;
  options.retries = 0;
  return Http(options);
}

Request get(const std::string& url) {
  Request r;
  r.url = url;
  r.what = "manifest of test:1";
  return r;
}

// The message of the InputError fetching `url` throws; "" when it does not.
std::string failure_of(const Http& http, const std::string& url) {
  try {
    http.fetch(get(url), 1 << 20);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("registry http: a redirect to HTTP is followed, to any other protocol refused unopened") {
  const Http http = quick_http();
  SECTION("HTTP: followed") {
    LoopbackServer target(ok_with(kManifest));
    LoopbackServer registry(redirect_to(target.url("http", "/blob")));
    const auto r = http.fetch(get(registry.url("http", "/v2/test/manifests/1")), 1 << 20);
    CHECK(r.status == 200);
    CHECK(r.body == kManifest);
    CHECK(target.connections() == 1);
  }
  SECTION("FTP (which libcurl follows unless told otherwise): refused, nothing connects") {
    LoopbackServer target;
    LoopbackServer registry(redirect_to(target.url("ftp", "/blob")));
    const std::string message = failure_of(http, registry.url("http", "/v2/test/manifests/1"));
    CHECK_THAT(message, Catch::Contains("manifest of test:1") && Catch::Contains("ftp"));
    CHECK(registry.connections() == 1);
    CHECK(target.connections() == 0);
  }
}

TEST_CASE("registry http: a URL of another protocol than HTTP(S) is refused unopened") {
  const Http http = quick_http();
  LoopbackServer target;
  CHECK_THAT(failure_of(http, target.url("ftp")), Catch::Contains("ftp"));
  CHECK(target.connections() == 0);
  testing::TempDir tmp;
  testing::write_file(tmp / "secret", "not for the registry");
  CHECK_THAT(failure_of(http, "file://" + tmp / "secret"), Catch::Contains("file"));
}

TEST_CASE("registry http: a libcurl without CURLOPT_PROTOCOLS_STR falls back to the bitmask") {
  // What easy_setopt answers for the option, and what the client does.
  CHECK(protocols_option_result(CURLE_OK) == ProtocolsOption::set);
  CHECK(protocols_option_result(CURLE_UNKNOWN_OPTION) == ProtocolsOption::use_bitmask);
  CHECK(protocols_option_result(CURLE_BAD_FUNCTION_ARGUMENT) == ProtocolsOption::use_bitmask);
  // Anything else is no silent pass: the transfer would run unrestricted.
  CHECK_THROWS_AS(protocols_option_result(CURLE_OUT_OF_MEMORY), EnvironmentError);
  // The bitmask really restricts: the loaded libcurl takes it, and a
  // transfer to another protocol is then refused (the tests above).
  CURL* easy = curl().easy_init();
  REQUIRE(easy != nullptr);
  CHECK(curl().easy_setopt(easy, kProtocolsBitmaskOption,
                           static_cast<long>(CURLPROTO_HTTP | CURLPROTO_HTTPS)) == CURLE_OK);
  CHECK(curl().easy_setopt(easy, static_cast<CURLoption>(CURLOPTTYPE_LONG + 9999), 1L) ==
        CURLE_UNKNOWN_OPTION);
  curl().easy_cleanup(easy);
}
