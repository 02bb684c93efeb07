// One repository on one registry: the distribution API's manifests and
// blobs, behind whatever authentication the registry asks for.
#pragma once

#include <chrono>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "http.hpp"
#include "imgsmith/registry/registry.hpp"
#include "imgsmith/util/sha256.hpp"

namespace imgsmith::registry {

// What ~/.docker/config.json holds for a registry. Never printed.
struct Credentials {
  std::string username;
  std::string password;
  // An OAuth2 refresh token (`identitytoken` in auths, or a helper's
  // answer with the user name "<token>"), exchanged at the token realm.
  std::string identity_token;
  std::string helper;  // the credential helper configured for the host, asked when needed
  std::string source;  // the config file, for messages
  bool present() const { return !username.empty() || !password.empty() || !identity_token.empty(); }
};

Credentials credentials_for(const std::string& registry, const std::string& config_dir);

// What a credential helper answered: nothing found, or a user and secret.
struct HelperAnswer {
  bool found = false;
  std::string username, secret;
};
// The address Docker gives helpers for a registry ("https://index.docker.io/v1/"
// for Docker Hub, the host otherwise).
std::string credential_helper_server(const std::string& registry);
// Runs `docker-credential-HELPER get` with `server` on its input. Throws
// InputError (EnvironmentError when it is not on PATH) naming the helper
// when it fails, times out or answers something else than its JSON.
HelperAnswer ask_credential_helper(const std::string& helper, const std::string& server,
                                   std::chrono::seconds timeout = std::chrono::seconds(120));
// The credentials with a helper's answer in them: the user and secret, or,
// for the user "<token>", the secret as an identity token.
Credentials with_helper_answer(Credentials c, const HelperAnswer& answer);

// Parses `Bearer realm="...",service="...",scope="..."` into lower-case keys,
// with "scheme" holding the scheme.
std::map<std::string, std::string> parse_challenge(const std::string& header);

struct Document {
  std::string body;
  std::string media_type;
  std::string digest;  // sha256 over the body, checked against what was asked for
};

class Client {
 public:
  Client(RegistryRef ref, const RegistryOptions& options);

  const RegistryRef& ref() const { return ref_; }
  // GET /v2/<repo>/manifests/<tag|digest>, digest verified.
  Document manifest(const std::string& reference) const;
  // GET /v2/<repo>/blobs/<digest> of a small document (a config), verified.
  Document blob(const std::string& digest, std::size_t limit) const;
  // The body of a blob as it arrives; the caller checks its digest.
  std::unique_ptr<HttpStream> blob_stream(const std::string& digest) const;
  std::uint64_t bytes_received() const { return http_.bytes_received(); }

 private:
  std::unique_ptr<HttpStream> get(const std::string& path, const Headers& extra,
                                  const std::string& what) const;
  std::string authorization(const std::map<std::string, std::string>& challenge,
                            const std::string& what) const;
  [[noreturn]] void fail(HttpStream& response, const std::string& what,
                         const std::string& subject) const;

  // The most read of an error's body, or of a token service's answer.
  static constexpr std::size_t kErrorBodyLimit = 64u << 10;

  bool insecure_host(const std::string& host) const;

  RegistryRef ref_;
  std::vector<std::string> insecure_;
  Http http_;
  bool verify_tls_ = true;
  std::string base_;  // https://host or http://host
  // From config.json; a helper's answer is added the first time a registry
  // asks for credentials (helper_credentials()).
  Credentials credentials_;
  const Credentials& helper_credentials() const;
  mutable std::once_flag helper_once_;
  mutable Credentials asked_;
  mutable std::exception_ptr helper_error_;
  mutable std::mutex auth_lock_;
  mutable std::string auth_header_;  // the Authorization that last worked
  mutable std::chrono::steady_clock::time_point auth_expires_{};
};

// Reads through a stream while computing its sha256 and counting its bytes;
// verify() reads what is left and checks both against the descriptor.
class DigestingStream final : public ByteStream {
 public:
  DigestingStream(ByteStream& in, std::string expected_digest, std::uint64_t expected_size,
                  std::string what)
      : in_(in),
        expected_(std::move(expected_digest)),
        size_(expected_size),
        what_(std::move(what)) {}
  std::size_t read(void* buf, std::size_t size) override;
  // Throws InputError on a digest or size mismatch.
  void verify();
  bool matches();  // verify() without throwing; drains the stream
  std::uint64_t seen() const { return seen_; }

 private:
  ByteStream& in_;
  std::string expected_;
  std::uint64_t size_;
  std::string what_;
  Sha256 sha_;
  std::uint64_t seen_ = 0;
  std::string actual_;
};

}  // namespace imgsmith::registry
