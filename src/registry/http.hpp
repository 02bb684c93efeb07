// HTTP over libcurl for the registry client: whole small responses, and
// bodies pulled as a ByteStream so a multi-GB layer flows into the layer
// scanner without landing anywhere. DNS answers and TLS sessions are shared
// by every transfer; each transfer keeps its own connection.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "curl_api.hpp"
#include "imgsmith/source/byte_stream.hpp"

namespace imgsmith::registry {

struct HttpOptions {
  long connect_timeout_s = 15;
  long stall_timeout_s = 30;  // a transfer that receives nothing this long fails
  int retries = 3;            // for connection errors and 5xx, with backoff
  double backoff_s = 0.5;     // first wait; doubles each retry
};

using Headers = std::vector<std::string>;  // "Name: value"

struct Request {
  std::string url;
  Headers headers;
  bool verify_tls = true;
  bool head = false;
  std::string what;         // names the transfer in messages: "manifest of app:1"
  std::string unix_socket;  // talk HTTP over this socket (the Docker daemon's)
  std::string post_body;    // non-empty: a POST of this body (a token exchange's form)
};

class Http;

// What setting CURLOPT_PROTOCOLS_STR told: it is set, or this libcurl
// (before 7.85) does not know it and the bitmask options must be used.
// Throws EnvironmentError for any other refusal.
enum class ProtocolsOption { set, use_bitmask };
// CURLOPT_PROTOCOLS and CURLOPT_REDIR_PROTOCOLS (libcurl 7.19.4 to now),
// by number: the header marks them deprecated, yet they are what a libcurl
// before 7.85 understands.
inline constexpr auto kProtocolsBitmaskOption = static_cast<CURLoption>(CURLOPTTYPE_LONG + 181);
inline constexpr auto kRedirProtocolsBitmaskOption =
    static_cast<CURLoption>(CURLOPTTYPE_LONG + 182);
ProtocolsOption protocols_option_result(CURLcode code);

// One response. The status and headers are in when it is returned; the
// body is read through ByteStream::read.
class HttpStream final : public ByteStream {
 public:
  ~HttpStream() override;
  HttpStream(const HttpStream&) = delete;
  HttpStream& operator=(const HttpStream&) = delete;

  long status() const { return status_; }
  // Lower-case header name -> value, of the final response (after redirects).
  const std::map<std::string, std::string>& headers() const { return headers_; }
  std::string header(const std::string& lower_name) const;
  std::string effective_url() const;

  std::size_t read(void* buf, std::size_t size) override;
  // The rest of the body, at most `limit` bytes; throws InputError beyond.
  std::string read_all(std::size_t limit);
  std::uint64_t received() const { return received_; }

 private:
  friend class Http;
  HttpStream(const Http& http, const Request& request);
  void start();
  void pump();
  std::size_t available() const { return buffer_.size() - pos_; }
  void fail_if_error();
  static std::size_t on_body(char* data, std::size_t size, std::size_t count, void* self);
  static std::size_t on_header(char* data, std::size_t size, std::size_t count, void* self);

  const Http& http_;
  Request request_;
  CURL* easy_ = nullptr;
  CURLM* multi_ = nullptr;
  curl_slist* header_list_ = nullptr;
  char error_[CURL_ERROR_SIZE] = {};
  std::string buffer_;
  std::size_t pos_ = 0;
  bool paused_ = false;
  bool headers_done_ = false;
  bool done_ = false;
  CURLcode result_ = CURLE_OK;
  long status_ = 0;
  std::map<std::string, std::string> headers_;
  std::uint64_t received_ = 0;
};

class Http {
 public:
  explicit Http(HttpOptions options = {});
  ~Http();
  Http(const Http&) = delete;
  Http& operator=(const Http&) = delete;

  // Sends the request and returns once the final status is known, retrying
  // connection failures and 5xx answers. Throws InputError naming
  // request.what when every attempt fails to connect.
  std::unique_ptr<HttpStream> open(const Request& request) const;
  // open() and the whole body, at most `limit` bytes.
  struct Response {
    long status = 0;
    std::map<std::string, std::string> headers;
    std::string body;
  };
  Response fetch(const Request& request, std::size_t limit) const;

  std::uint64_t bytes_received() const { return received_.load(); }
  const HttpOptions& options() const { return options_; }

 private:
  friend class HttpStream;
  static void lock(CURL*, curl_lock_data data, curl_lock_access, void* self);
  static void unlock(CURL*, curl_lock_data data, void* self);

  HttpOptions options_;
  CURLSH* share_ = nullptr;
  mutable std::mutex locks_[CURL_LOCK_DATA_LAST];
  mutable std::atomic<std::uint64_t> received_{0};
};

}  // namespace imgsmith::registry
