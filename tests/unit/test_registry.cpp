// Registry references, credentials and challenges: the parts of the registry
// client that need no server. The client against a real registry is tested
// by tests/system/registry_test.sh.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "client.hpp"
#include "image_builder.hpp"
#include "imgsmith/registry/registry.hpp"
#include "imgsmith/util/error.hpp"
#include "imgsmith/util/text.hpp"
#include "path_in_front.hpp"

using namespace imgsmith;
using namespace imgsmith::registry;

TEST_CASE("registry references normalise as Docker does") {
  auto ref = [](const std::string& text) {
    auto r = RegistryRef::parse(text);
    REQUIRE(r);
    return *r;
  };
  const RegistryRef ubuntu = ref("ubuntu");
  CHECK(ubuntu.str() == "docker.io/library/ubuntu:latest");
  CHECK(ubuntu.api_host() == "registry-1.docker.io");
  CHECK(ref("docker.io/library/ubuntu:22.04").str() == "docker.io/library/ubuntu:22.04");
  CHECK(ref("bitnami/redis:7").str() == "docker.io/bitnami/redis:7");
  const RegistryRef ghcr = ref("ghcr.io/org/team/app:v1.2");
  CHECK(ghcr.registry == "ghcr.io");
  CHECK(ghcr.repository == "org/team/app");
  CHECK(ghcr.reference() == "v1.2");
  const std::string digest = "sha256:" + std::string(64, 'a');
  const RegistryRef pinned = ref("registry:5000/app@" + digest);
  CHECK(pinned.registry == "registry:5000");
  CHECK(pinned.tag.empty());
  CHECK(pinned.reference() == digest);
  CHECK(ref("localhost/app").registry == "localhost");
  CHECK(ref("localhost:5000/app:1").api_host() == "localhost:5000");

  CHECK(ref("registry-1.docker.io/ubuntu").repository == "ubuntu");  // only docker.io gets library/
  CHECK(ref("MyRegistry/app").registry == "MyRegistry");  // upper case marks a host, as in Docker
  CHECK_FALSE(RegistryRef::parse("ghcr.io/" + std::string(260, 'a')));  // over 255 characters
  CHECK_FALSE(RegistryRef::parse("Ubuntu"));                            // upper case
  CHECK_FALSE(RegistryRef::parse("app@sha256:abc"));                    // short digest
  CHECK_FALSE(RegistryRef::parse("app:"));                              // empty tag
  CHECK_FALSE(RegistryRef::parse("ghcr.io//app"));                      // empty component
  CHECK_FALSE(RegistryRef::parse("app:tag with space"));
  CHECK_FALSE(RegistryRef::parse(""));
}

TEST_CASE("registry inputs: an existing file, a path or an archive name is never a reference") {
  imgsmith::testing::TempDir tmp;
  imgsmith::testing::write_file(tmp / "app", "x");
  CHECK_FALSE(is_registry_input(tmp / "app"));
  CHECK_FALSE(is_registry_input("./missing"));
  CHECK_FALSE(is_registry_input("missing.tar"));
  CHECK_FALSE(is_registry_input("missing.tar.gz"));
  CHECK_FALSE(is_registry_input("-"));
  CHECK(is_registry_input("ghcr.io/org/app:1"));
  CHECK(is_registry_input("ubuntu"));
}

TEST_CASE("registry: WWW-Authenticate challenges") {
  const auto c = parse_challenge(
      R"(Bearer realm="https://auth.docker.io/token",service="registry.docker.io",scope="repository:library/ubuntu:pull")");
  CHECK(c.at("scheme") == "bearer");
  CHECK(c.at("realm") == "https://auth.docker.io/token");
  CHECK(c.at("service") == "registry.docker.io");
  CHECK(c.at("scope") == "repository:library/ubuntu:pull");
  const auto b = parse_challenge(R"(Basic realm="Registry Realm")");
  CHECK(b.at("scheme") == "basic");
  CHECK(b.at("realm") == "Registry Realm");
}

TEST_CASE("registry: base64 both ways") {
  for (const std::string& s : std::vector<std::string>{"", "a", "ab", "abc", "user:p@ss:word",
                                                       std::string("\0\xff\x10", 3)})
    CHECK(base64_decode(base64_encode(s)) == s);
  CHECK(base64_encode("user:pass") == "dXNlcjpwYXNz");
  CHECK_THROWS(base64_decode("not*base64"));
}

TEST_CASE("registry: credentials from config.json, Docker Hub's aliases, helpers named") {
  imgsmith::testing::TempDir tmp;
  imgsmith::testing::write_file(tmp / "config.json", R"({
    "auths": {
      "https://index.docker.io/v1/": {"auth": "aHViOnNlY3JldA=="},
      "127.0.0.1:5000": {"auth": "dXNlcjpwYXNz"},
      "plain.example.com": {"username": "u", "password": "p"}
    },
    "credHelpers": {"gcr.io": "gcloud", "127.0.0.1:5000": "pass"}
  })");
  const Credentials hub = credentials_for("docker.io", tmp.path());
  CHECK(hub.username == "hub");
  CHECK(hub.password == "secret");
  CHECK(hub.source == tmp / "config.json");
  // A helper named for the registry wins over auths, as in Docker.
  const Credentials helped = credentials_for("127.0.0.1:5000", tmp.path());
  CHECK_FALSE(helped.present());
  CHECK(helped.helper == "pass");
  CHECK(credentials_for("plain.example.com", tmp.path()).username == "u");
  const Credentials gcr = credentials_for("gcr.io", tmp.path());
  CHECK_FALSE(gcr.present());
  CHECK(gcr.helper == "gcloud");
  CHECK_FALSE(credentials_for("other.example.com", tmp.path()).present());

  imgsmith::testing::write_file(
      tmp / "config.json",
      R"({"auths": {"myacr.example.com": {"username": "00000000-0000", "identitytoken": "x"}}})");
  const Credentials acr = credentials_for("myacr.example.com", tmp.path());
  CHECK(acr.identity_token == "x");
  CHECK(acr.helper.empty());
  CHECK(acr.present());

  imgsmith::testing::write_file(tmp / "config.json", "{ not json");
  CHECK_THROWS_WITH(credentials_for("docker.io", tmp.path()),
                    Catch::Contains("config.json: not valid JSON"));
  imgsmith::testing::TempDir empty;
  CHECK_FALSE(credentials_for("docker.io", empty.path()).present());
}

namespace {

// A credential helper as docker-credential-helpers' protocol has it: the
// server on standard input, an answer per server; what it was asked is
// kept in asked.txt.
void write_helper(const std::filesystem::path& dir, const std::string& name) {
  const auto path = dir / ("docker-credential-" + name);
  imgsmith::testing::write_file(path, R"(#!/bin/sh
[ "$1" = get ] || { echo "unknown action $1" >&2; exit 2; }
server=$(cat)
printf '%s\n' "$server" >> ")" + (dir / "asked.txt").string() +
                                          R"("
case "$server" in
  127.0.0.1:5000) printf '{"ServerURL":"%s","Username":"user","Secret":"pa:ss"}' "$server" ;;
  https://index.docker.io/v1/) printf '{"ServerURL":"%s","Username":"<token>","Secret":"refresh-1"}' "$server" ;;
  none.example) echo "credentials not found in native keychain"; exit 1 ;;
  broken.example) echo "this is not JSON" ;;
  locked.example) echo "the keychain is locked" >&2; exit 3 ;;
  slow.example) exec sleep 30 ;;
  noisy.example) head -c 3000000 /dev/zero | tr '\0' x; exit 1 ;;
esac
)");
  std::filesystem::permissions(path, std::filesystem::perms::owner_all);
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

std::string failure_asking(const std::string& helper, const std::string& server,
                           std::chrono::seconds timeout = std::chrono::seconds(20)) {
  try {
    ask_credential_helper(helper, server, timeout);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("registry: credential helpers are asked as Docker asks them") {
  imgsmith::testing::TempDir tmp;
  write_helper(tmp.path(), "fake");
  const imgsmith::testing::PathInFront path(tmp.path());

  const HelperAnswer local = ask_credential_helper("fake", "127.0.0.1:5000");
  CHECK(local.found);
  CHECK(local.username == "user");
  CHECK(local.secret == "pa:ss");
  const Credentials with = with_helper_answer(Credentials{}, local);
  CHECK(with.username == "user");
  CHECK(with.password == "pa:ss");
  CHECK(with.identity_token.empty());

  // Docker Hub is asked by its v1 address; "<token>" marks an identity token.
  CHECK(credential_helper_server("docker.io") == "https://index.docker.io/v1/");
  CHECK(credential_helper_server("ghcr.io") == "ghcr.io");
  const HelperAnswer hub = ask_credential_helper("fake", credential_helper_server("docker.io"));
  const Credentials token = with_helper_answer(Credentials{}, hub);
  CHECK(token.identity_token == "refresh-1");
  CHECK(token.username.empty());
  CHECK(token.password.empty());
  CHECK(slurp(tmp / "asked.txt") == "127.0.0.1:5000\nhttps://index.docker.io/v1/\n");

  // "credentials not found" is an answer: none.
  CHECK_FALSE(ask_credential_helper("fake", "none.example").found);
  // Megabytes of output are read to the end (the helper never blocks) and
  // cut short in the message.
  const std::string noisy = failure_asking("fake", "noisy.example");
  CHECK_THAT(noisy, Catch::Contains("exit status 1"));
  CHECK(noisy.size() < 1000);
  CHECK_THAT(failure_asking("fake", "broken.example"),
             Catch::Contains("docker-credential-fake answered for broken.example with something "
                             "that is not its JSON"));
  CHECK_THAT(failure_asking("fake", "locked.example"),
             Catch::Contains("docker-credential-fake failed for locked.example (exit status 3: "
                             "the keychain is locked)"));
  const auto started = std::chrono::steady_clock::now();
  CHECK_THAT(failure_asking("fake", "slow.example", std::chrono::seconds(1)),
             Catch::Contains("gave no answer for slow.example in 1 s"));
  CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(10));
  CHECK_THAT(failure_asking("absent", "127.0.0.1:5000"),
             Catch::Contains("docker-credential-absent is not on PATH"));
  try {
    ask_credential_helper("absent", "x");
  } catch (const EnvironmentError&) {
    SUCCEED("a missing helper is the machine's, not the input's");
  }
  for (const std::string bad : {"../fake", "-x", ""})
    CHECK_THAT(failure_asking(bad, "127.0.0.1:5000"), Catch::Contains("not a helper's name"));
}

TEST_CASE("podman:// finds Podman's socket as podman-remote does") {
  using imgsmith::podman_socket;
  // CONTAINER_HOST wins, whoever runs it.
  CHECK(podman_socket("unix:///tmp/p.sock", 1000, "/run/user/1000") == "unix:///tmp/p.sock");
  CHECK(podman_socket("tcp://10.0.0.2:8888", 0, nullptr) == "tcp://10.0.0.2:8888");
  // Rootful: the system service's socket.
  CHECK(podman_socket(nullptr, 0, "/run/user/0") == "unix:///run/podman/podman.sock");
  CHECK(podman_socket("", 0, nullptr) == "unix:///run/podman/podman.sock");
  // Rootless: the user's runtime directory, or /run/user/UID without one.
  CHECK(podman_socket(nullptr, 1000, "/run/user/1000") ==
        "unix:///run/user/1000/podman/podman.sock");
  CHECK(podman_socket(nullptr, 1001, "") == "unix:///run/user/1001/podman/podman.sock");
}
