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
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "client.hpp"
#include "http.hpp"
#include "image_builder.hpp"
#include "imgsmith/util/error.hpp"
#include "path_in_front.hpp"

using namespace imgsmith;
using namespace imgsmith::registry;

namespace {

// Listens on 127.0.0.1 and answers each HTTP request with what `answer`
// makes of it (the request line, headers and body as received, and the
// server's own host:port), or with one canned response; keeps every request
// and counts connections. Without an answer a connection is closed at once;
// so is a TLS hello (the client trying HTTPS first).
class LoopbackServer {
 public:
  using Answer = std::function<std::string(const std::string& request, const std::string& host)>;
  explicit LoopbackServer(std::string response = "")
      : LoopbackServer(response.empty() ? Answer()
                                        : [response](const std::string&, const std::string&) {
                                            return response;
                                          }) {}
  explicit LoopbackServer(Answer answer) : answer_(std::move(answer)) {
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

  std::string host() const { return "127.0.0.1:" + std::to_string(port_); }
  std::string url(const std::string& scheme, const std::string& path = "/") const {
    return scheme + "://" + host() + path;
  }
  int connections() const { return connections_.load(); }
  std::vector<std::string> requests() const {
    std::lock_guard<std::mutex> lock(lock_);
    return requests_;
  }

 private:
  static bool read_more(int c, std::string& into) {
    pollfd readable{c, POLLIN, 0};
    if (::poll(&readable, 1, 5000) <= 0) return false;
    char buffer[4096];
    const ssize_t n = ::read(c, buffer, sizeof buffer);
    if (n <= 0) return false;
    into.append(buffer, static_cast<std::size_t>(n));
    return true;
  }

  void serve() {
    while (!stop_) {
      pollfd listening{fd_, POLLIN, 0};
      if (::poll(&listening, 1, 20) <= 0) continue;
      const int c = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (c < 0) continue;
      ++connections_;
      if (!answer_) {
        ::close(c);
        continue;
      }
      std::string request;
      bool whole = read_more(c, request) && request[0] != '\x16';
      while (whole && request.find("\r\n\r\n") == std::string::npos) whole = read_more(c, request);
      if (whole) {
        const std::size_t head = request.find("\r\n\r\n") + 4;
        std::size_t length = 0;
        for (const std::string key : {"Content-Length: ", "content-length: "})
          if (const auto at = request.find(key); at != std::string::npos && at < head)
            length = std::strtoull(request.c_str() + at + key.size(), nullptr, 10);
        while (whole && request.size() < head + length) whole = read_more(c, request);
      }
      if (whole) {
        {
          std::lock_guard<std::mutex> lock(lock_);
          requests_.push_back(request);
        }
        const std::string response = answer_(request, host());
        for (std::size_t sent = 0; sent < response.size();) {
          const ssize_t n = ::write(c, response.data() + sent, response.size() - sent);
          if (n <= 0) break;
          sent += static_cast<std::size_t>(n);
        }
      }
      ::close(c);
    }
  }

  Answer answer_;
  int fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int> connections_{0};
  mutable std::mutex lock_;
  std::vector<std::string> requests_;
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

namespace {

std::string answer(const std::string& status, const std::string& headers, const std::string& body) {
  return "HTTP/1.1 " + status + "\r\n" + headers +
         "Content-Length: " + std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body;
}

// A registry whose token realm takes only an OAuth2 refresh token, as
// Azure's and other identity-token registries do.
std::string identity_token_registry(const std::string& request, const std::string& host) {
  const bool bearer = request.find("\r\nAuthorization: Bearer access-7\r\n") != std::string::npos;
  if (request.rfind("GET /v2/team/app/manifests/1 ", 0) == 0) {
    if (bearer)
      return answer("200 OK", "Content-Type: application/vnd.oci.image.manifest.v1+json\r\n",
                    kManifest);
    return answer("401 Unauthorized",
                  "WWW-Authenticate: Bearer realm=\"http://" + host +
                      "/oauth2/token\",service=\"reg.test\",scope=\"repository:team/app:pull\"\r\n",
                  "{}");
  }
  if (request.rfind("POST /oauth2/token ", 0) == 0) {
    const std::string body = request.substr(request.find("\r\n\r\n") + 4);
    if (body.find("grant_type=refresh_token") != std::string::npos &&
        body.find("refresh_token=refresh%2F1%3D") != std::string::npos &&
        body.find("service=reg.test") != std::string::npos &&
        body.find("scope=repository%3Ateam%2Fapp%3Apull") != std::string::npos)
      return answer("200 OK", "Content-Type: application/json\r\n",
                    "{\"access_token\": \"access-7\", \"expires_in\": 300}");
    return answer("400 Bad Request", "", "{\"error\": \"invalid_grant\"}");
  }
  return answer("404 Not Found", "", "");
}

Client client_for(const LoopbackServer& server, const std::string& config_dir) {
  RegistryOptions options;
  options.docker_config = config_dir;
  options.retries = 0;
  options.connect_timeout_s = 5;
  options.stall_timeout_s = 5;
  return Client(*RegistryRef::parse(server.host() + "/team/app:1"), options);
}

}  // namespace

TEST_CASE("registry http: an identity token is exchanged at the token realm for access") {
  testing::TempDir tmp;
  LoopbackServer server(identity_token_registry);

  SECTION("from auths (docker login to an OAuth registry)") {
    testing::write_file(
        tmp / "config.json",
        R"({"auths": {")" + server.host() +
            R"(": {"username": "00000000-0000-0000-0000-000000000000", "identitytoken": "refresh/1="}}})");
    const Document d = client_for(server, tmp.path()).manifest("1");
    CHECK(d.body == kManifest);
  }
  SECTION("from a credential helper, asked once, only when the registry asks") {
    testing::write_file(tmp / "config.json",
                        R"({"credHelpers": {")" + server.host() + R"(": "oauth"}})");
    const std::string helper = tmp / "docker-credential-oauth";
    testing::write_file(helper,
                        "#!/bin/sh\ncat >> '" + tmp / "asked" + "'\necho >> '" + tmp / "asked" +
                            "'\nprintf '{\"Username\":\"<token>\",\"Secret\":\"refresh/1=\"}'\n");
    std::filesystem::permissions(helper, std::filesystem::perms::owner_all);
    const imgsmith::testing::PathInFront path(tmp.path());
    const Client client = client_for(server, tmp.path());
    CHECK(client.manifest("1").body == kManifest);
    CHECK(client.manifest("1").body == kManifest);  // the access token is kept
    std::ifstream asked(tmp / "asked");
    const std::string said((std::istreambuf_iterator<char>(asked)),
                           std::istreambuf_iterator<char>());
    CHECK(said == server.host() + "\n");
  }
  SECTION("a refresh token the realm refuses: said, with what to do") {
    testing::write_file(tmp / "config.json",
                        R"({"auths": {")" + server.host() + R"(": {"identitytoken": "stale"}}})");
    try {
      client_for(server, tmp.path()).manifest("1");
      FAIL("a refused identity token must fail");
    } catch (const InputError& e) {
      CHECK_THAT(e.what(), Catch::Contains("refused the identity token") &&
                               Catch::Contains("(400)") && Catch::Contains("docker login"));
    }
  }
  // No POST carried the token anywhere but the realm, and no GET carried it.
  for (const auto& r : server.requests())
    if (r.rfind("GET ", 0) == 0) CHECK(r.find("refresh") == std::string::npos);
}
