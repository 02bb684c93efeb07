#include "http.hpp"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstring>
#include <thread>

#include "imgsmith/util/error.hpp"
#include "imgsmith/util/text.hpp"
#include "imgsmith/version.hpp"

namespace imgsmith::registry {
namespace {

// Past this much unread body the transfer pauses until the reader catches
// up, so a fast registry and a slow scan never buffer a whole layer.
constexpr std::size_t kMaxBuffered = 8u << 20;

std::once_flag global_init;

// Errors worth another attempt: nothing was exchanged, or the peer went away.
bool transient(CURLcode code) {
  switch (code) {
    case CURLE_COULDNT_CONNECT:
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_PARTIAL_FILE:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
      return true;
    default:
      return false;
  }
}

}  // namespace

ProtocolsOption protocols_option_result(CURLcode code) {
  if (code == CURLE_OK) return ProtocolsOption::set;
  // An older libcurl does not know the option: CURLE_UNKNOWN_OPTION, or
  // CURLE_BAD_FUNCTION_ARGUMENT from one that reads it as a number.
  if (code == CURLE_UNKNOWN_OPTION || code == CURLE_BAD_FUNCTION_ARGUMENT)
    return ProtocolsOption::use_bitmask;
  throw EnvironmentError(std::string("libcurl refused CURLOPT_PROTOCOLS_STR (") +
                         curl().easy_strerror(code) + "); install a newer libcurl4");
}

// ----- HttpStream --------------------------------------------------------

HttpStream::HttpStream(const Http& http, const Request& request) : http_(http), request_(request) {}

HttpStream::~HttpStream() {
  if (multi_ != nullptr && easy_ != nullptr) curl().multi_remove_handle(multi_, easy_);
  if (easy_ != nullptr) curl().easy_cleanup(easy_);
  if (multi_ != nullptr) curl().multi_cleanup(multi_);
  if (header_list_ != nullptr) curl().slist_free_all(header_list_);
}

std::string HttpStream::header(const std::string& lower_name) const {
  const auto it = headers_.find(lower_name);
  return it == headers_.end() ? "" : it->second;
}

std::string HttpStream::effective_url() const {
  char* url = nullptr;
  curl().easy_getinfo(easy_, CURLINFO_EFFECTIVE_URL, &url);
  return url != nullptr ? url : request_.url;
}

std::size_t HttpStream::on_body(char* data, std::size_t size, std::size_t count, void* self) {
  auto* s = static_cast<HttpStream*>(self);
  const std::size_t n = size * count;
  if (s->available() > kMaxBuffered) {
    s->paused_ = true;
    return CURL_WRITEFUNC_PAUSE;
  }
  if (s->pos_ > 0 && s->pos_ >= s->buffer_.size() / 2) {
    s->buffer_.erase(0, s->pos_);
    s->pos_ = 0;
  }
  s->buffer_.append(data, n);
  s->received_ += n;
  s->http_.received_ += n;
  s->headers_done_ = true;
  return n;
}

std::size_t HttpStream::on_header(char* data, std::size_t size, std::size_t count, void* self) {
  auto* s = static_cast<HttpStream*>(self);
  const std::string line(data, size * count);
  if (line.rfind("HTTP/", 0) == 0) {  // a new response (the first, or after a redirect)
    s->headers_.clear();
    const auto space = line.find(' ');
    s->status_ =
        space == std::string::npos ? 0 : std::strtol(line.c_str() + space + 1, nullptr, 10);
    return line.size();
  }
  const std::string t(trim(line));
  if (t.empty()) {
    // The end of a header block. A redirect's block is followed by another,
    // and so is an informational one (100 Continue, 103 Early Hints).
    if (s->status_ >= 200 &&
        (s->status_ < 300 || s->status_ >= 400 || s->header("location").empty()))
      s->headers_done_ = true;
    return line.size();
  }
  const auto colon = t.find(':');
  if (colon != std::string::npos)
    s->headers_[to_lower(t.substr(0, colon))] = trim(t.substr(colon + 1));
  return line.size();
}

void HttpStream::start() {
  easy_ = curl().easy_init();
  multi_ = curl().multi_init();
  if (easy_ == nullptr || multi_ == nullptr)
    throw InputError(request_.what + ": cannot start libcurl");
  const HttpOptions& o = http_.options_;
  // Every option is checked: an option this libcurl does not know (it is
  // loaded at run time, so it may be older than the header) must not leave
  // a transfer without its limits.
  const auto set = [&](CURLoption option, const char* name, auto value) {
    const CURLcode code = curl().easy_setopt(easy_, option, value);
    if (code != CURLE_OK)
      throw EnvironmentError(request_.what + ": libcurl refused " + name + " (" +
                             curl().easy_strerror(code) +
                             "); install a newer libcurl4 (7.85 or later)");
  };
  set(CURLOPT_URL, "CURLOPT_URL", request_.url.c_str());
  set(CURLOPT_SHARE, "CURLOPT_SHARE", http_.share_);
  set(CURLOPT_FOLLOWLOCATION, "CURLOPT_FOLLOWLOCATION", 1L);
  set(CURLOPT_MAXREDIRS, "CURLOPT_MAXREDIRS", 10L);
  // Credentials go only to the host they were meant for; libcurl drops
  // Authorization on a redirect to another host unless told otherwise.
  set(CURLOPT_UNRESTRICTED_AUTH, "CURLOPT_UNRESTRICTED_AUTH", 0L);
  // HTTP/2 where TLS offers it; a libcurl built without HTTP/2 says
  // CURLE_UNSUPPORTED_PROTOCOL and speaks HTTP/1.1, which serves as well.
  if (const CURLcode code = curl().easy_setopt(easy_, CURLOPT_HTTP_VERSION,
                                               static_cast<long>(CURL_HTTP_VERSION_2TLS));
      code != CURLE_OK && code != CURLE_UNSUPPORTED_PROTOCOL)
    set(CURLOPT_HTTP_VERSION, "CURLOPT_HTTP_VERSION", static_cast<long>(CURL_HTTP_VERSION_2TLS));
  // A registry (or its token realm) decides URLs we fetch: HTTP(S) only.
  // libcurl before 7.85 knows only the bitmask options, which mean the same.
  if (protocols_option_result(curl().easy_setopt(easy_, CURLOPT_PROTOCOLS_STR, "http,https")) ==
      ProtocolsOption::use_bitmask) {
    set(kProtocolsBitmaskOption, "CURLOPT_PROTOCOLS",
        static_cast<long>(CURLPROTO_HTTP | CURLPROTO_HTTPS));
    set(kRedirProtocolsBitmaskOption, "CURLOPT_REDIR_PROTOCOLS",
        static_cast<long>(CURLPROTO_HTTP | CURLPROTO_HTTPS));
  } else {
    set(CURLOPT_REDIR_PROTOCOLS_STR, "CURLOPT_REDIR_PROTOCOLS_STR", "http,https");
  }
  // A proxy's "200 Connection established" is not the registry's answer.
  set(CURLOPT_SUPPRESS_CONNECT_HEADERS, "CURLOPT_SUPPRESS_CONNECT_HEADERS", 1L);
  set(CURLOPT_CONNECTTIMEOUT, "CURLOPT_CONNECTTIMEOUT", o.connect_timeout_s);
  set(CURLOPT_LOW_SPEED_LIMIT, "CURLOPT_LOW_SPEED_LIMIT", 1L);
  set(CURLOPT_LOW_SPEED_TIME, "CURLOPT_LOW_SPEED_TIME", o.stall_timeout_s);
  set(CURLOPT_NOSIGNAL, "CURLOPT_NOSIGNAL", 1L);
  set(CURLOPT_ERRORBUFFER, "CURLOPT_ERRORBUFFER", static_cast<char*>(error_));
  const std::string agent = std::string("imgsmith/") + kVersion;
  set(CURLOPT_USERAGENT, "CURLOPT_USERAGENT", agent.c_str());
  set(CURLOPT_SSL_VERIFYPEER, "CURLOPT_SSL_VERIFYPEER", request_.verify_tls ? 1L : 0L);
  set(CURLOPT_SSL_VERIFYHOST, "CURLOPT_SSL_VERIFYHOST", request_.verify_tls ? 2L : 0L);
  if (request_.head) set(CURLOPT_NOBODY, "CURLOPT_NOBODY", 1L);
  if (!request_.post_body.empty()) {
    set(CURLOPT_POSTFIELDSIZE, "CURLOPT_POSTFIELDSIZE",
        static_cast<long>(request_.post_body.size()));
    set(CURLOPT_COPYPOSTFIELDS, "CURLOPT_COPYPOSTFIELDS", request_.post_body.c_str());
  }
  if (!request_.unix_socket.empty())
    set(CURLOPT_UNIX_SOCKET_PATH, "CURLOPT_UNIX_SOCKET_PATH", request_.unix_socket.c_str());
  for (const auto& h : request_.headers) {
    curl_slist* longer = curl().slist_append(header_list_, h.c_str());
    if (longer == nullptr) throw EnvironmentError(request_.what + ": out of memory for headers");
    header_list_ = longer;
  }
  if (header_list_ != nullptr) set(CURLOPT_HTTPHEADER, "CURLOPT_HTTPHEADER", header_list_);
  set(CURLOPT_WRITEFUNCTION, "CURLOPT_WRITEFUNCTION", &HttpStream::on_body);
  set(CURLOPT_WRITEDATA, "CURLOPT_WRITEDATA", this);
  set(CURLOPT_HEADERFUNCTION, "CURLOPT_HEADERFUNCTION", &HttpStream::on_header);
  set(CURLOPT_HEADERDATA, "CURLOPT_HEADERDATA", this);
  curl().multi_add_handle(multi_, easy_);
  while (!headers_done_ && !done_) pump();
  if (!done_ || result_ == CURLE_OK) {
    long code = 0;
    curl().easy_getinfo(easy_, CURLINFO_RESPONSE_CODE, &code);
    if (code != 0) status_ = code;
  }
}

void HttpStream::pump() {
  int running = 0;
  curl().multi_perform(multi_, &running);
  int left = 0;
  while (CURLMsg* m = curl().multi_info_read(multi_, &left))
    if (m->msg == CURLMSG_DONE) {
      done_ = true;
      result_ = m->data.result;
    }
  if (!done_ && available() == 0 && !paused_) curl().multi_poll(multi_, nullptr, 0, 200, nullptr);
}

void HttpStream::fail_if_error() {
  if (result_ == CURLE_OK) return;
  const std::string detail = error_[0] != '\0' ? error_ : curl().easy_strerror(result_);
  if (result_ == CURLE_OPERATION_TIMEDOUT)
    throw InputError(request_.what + ": the registry stopped sending (" + detail + ", after " +
                     std::to_string(received_) + " bytes); try again, or check the registry");
  throw InputError(request_.what + ": the transfer failed after " + std::to_string(received_) +
                   " bytes (" + detail + "); try again, or check the registry");
}

std::size_t HttpStream::read(void* buf, std::size_t size) {
  while (available() == 0) {
    if (done_) {
      fail_if_error();
      return 0;
    }
    if (paused_) {
      paused_ = false;
      curl().easy_pause(easy_, CURLPAUSE_CONT);
    }
    pump();
  }
  const std::size_t n = std::min(size, available());
  std::memcpy(buf, buffer_.data() + pos_, n);
  pos_ += n;
  return n;
}

std::string HttpStream::read_all(std::size_t limit) {
  std::string out;
  char chunk[64 * 1024];
  while (const std::size_t n = read(chunk, sizeof chunk)) {
    if (out.size() + n > limit)
      throw InputError(request_.what + ": the response is larger than " + std::to_string(limit) +
                       " bytes; that is no registry document");
    out.append(chunk, n);
  }
  return out;
}

// ----- Http --------------------------------------------------------------

Http::Http(HttpOptions options) : options_(options) {
  std::call_once(global_init, [] { curl().global_init(CURL_GLOBAL_DEFAULT); });
  share_ = curl().share_init();
  if (share_ == nullptr) throw EnvironmentError("cannot start libcurl (out of memory)");
  // Without the lock functions the shared caches would race between the
  // threads that read layers: a refusal here must not pass unseen.
  const auto set = [](CURLSHcode code, const char* name) {
    if (code != CURLSHE_OK)
      throw EnvironmentError(std::string("libcurl refused ") + name +
                             "; install a newer libcurl4 (7.85 or later)");
  };
  set(curl().share_setopt(share_, CURLSHOPT_LOCKFUNC, &Http::lock), "CURLSHOPT_LOCKFUNC");
  set(curl().share_setopt(share_, CURLSHOPT_UNLOCKFUNC, &Http::unlock), "CURLSHOPT_UNLOCKFUNC");
  set(curl().share_setopt(share_, CURLSHOPT_USERDATA, this), "CURLSHOPT_USERDATA");
  // Connections are not shared: libcurl does not support sharing them
  // between threads, and layers are read from several. DNS answers and TLS
  // sessions are, so a new connection is cheap.
  set(curl().share_setopt(share_, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS), "CURLSHOPT_SHARE dns");
  set(curl().share_setopt(share_, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION),
      "CURLSHOPT_SHARE ssl");
}

Http::~Http() {
  if (share_ != nullptr) curl().share_cleanup(share_);
}

void Http::lock(CURL*, curl_lock_data data, curl_lock_access, void* self) {
  static_cast<Http*>(self)->locks_[data].lock();
}

void Http::unlock(CURL*, curl_lock_data data, void* self) {
  static_cast<Http*>(self)->locks_[data].unlock();
}

std::unique_ptr<HttpStream> Http::open(const Request& request) const {
  double wait = options_.backoff_s;
  for (int attempt = 0;; ++attempt) {
    std::unique_ptr<HttpStream> s(new HttpStream(*this, request));
    s->start();
    const bool last = attempt >= options_.retries;
    if (s->done_ && s->result_ != CURLE_OK && s->received_ == 0) {
      if (!transient(s->result_) || last) {
        const std::string detail =
            s->error_[0] != '\0' ? s->error_ : curl().easy_strerror(s->result_);
        throw InputError(
            request.what + ": cannot reach " + request.url + " (" + detail + ")" +
            (attempt > 0 ? " after " + std::to_string(attempt + 1) + " attempts" : "") +
            "; check the name, the network, or --insecure-registry for plain HTTP");
      }
    } else if (s->status_ >= 500 && !last) {
      // The registry's own failure: worth another try after a pause.
    } else {
      return s;
    }
    std::this_thread::sleep_for(std::chrono::duration<double>(wait));
    wait *= 2;
  }
}

Http::Response Http::fetch(const Request& request, std::size_t limit) const {
  auto s = open(request);
  Response r;
  r.status = s->status();
  r.headers = s->headers();
  r.body = s->read_all(limit);
  return r;
}

}  // namespace imgsmith::registry
