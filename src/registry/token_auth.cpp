// Authentication as a registry asks for it in its 401 answer: a user name
// and password (Basic), or a token from its token service (Bearer), kept
// until it is about to expire.
#include <algorithm>
#include <chrono>
#include <mutex>
#include <nlohmann/json.hpp>

#include "client.hpp"
#include "imgsmith/util/error.hpp"
#include "imgsmith/util/percent_encode.hpp"
#include "imgsmith/util/text.hpp"

namespace imgsmith::registry {
namespace {

using nlohmann::json;

std::string host_of_url(const std::string& url) {
  std::string rest = url.substr(url.find("://") == std::string::npos ? 0 : url.find("://") + 3);
  return rest.substr(0, rest.find_first_of("/?#"));
}

}  // namespace

std::map<std::string, std::string> parse_challenge(const std::string& header) {
  std::map<std::string, std::string> out;
  std::size_t i = header.find(' ');
  out["scheme"] = to_lower(header.substr(0, i));
  while (i != std::string::npos && i < header.size()) {
    while (i < header.size() && (header[i] == ' ' || header[i] == ',')) ++i;
    const auto eq = header.find('=', i);
    if (eq == std::string::npos) break;
    const std::string key = to_lower(header.substr(i, eq - i));
    std::string value;
    i = eq + 1;
    if (i < header.size() && header[i] == '"') {
      ++i;
      while (i < header.size() && header[i] != '"') {
        if (header[i] == '\\' && i + 1 < header.size()) ++i;
        value += header[i++];
      }
      ++i;
    } else {
      const auto end = header.find(',', i);
      value = header.substr(i, end == std::string::npos ? std::string::npos : end - i);
      i = end;
    }
    out[key] = value;
  }
  return out;
}

const Credentials& Client::helper_credentials() const {
  std::call_once(helper_once_, [&] {
    asked_ = credentials_;
    if (credentials_.helper.empty()) return;
    try {
      asked_ = with_helper_answer(
          credentials_,
          ask_credential_helper(credentials_.helper, credential_helper_server(ref_.registry)));
    } catch (...) {
      helper_error_ = std::current_exception();
    }
  });
  if (helper_error_) std::rethrow_exception(helper_error_);
  return asked_;
}

std::string Client::authorization(const std::map<std::string, std::string>& challenge,
                                  const std::string& what) const {
  const auto field = [&](const char* k) {
    const auto it = challenge.find(k);
    return it == challenge.end() ? std::string() : it->second;
  };
  const std::string scheme = field("scheme");
  // A helper is asked only now that the registry wants credentials.
  const Credentials& credentials = helper_credentials();
  const std::string kept_in = !credentials_.helper.empty()
                                  ? "the credential helper docker-credential-" + credentials_.helper
                                  : credentials_.source;
  const bool password = !credentials.username.empty() || !credentials.password.empty();
  const std::string basic =
      password ? "Authorization: Basic " +
                     base64_encode(credentials.username + ":" + credentials.password)
               : "";
  auto needs_credentials = [&](const std::string& why) -> InputError {
    if (!credentials_.helper.empty())
      return InputError(what + ": " + ref_.registry + " " + why + ", and " + kept_in +
                        " has none for it; log in first (docker login " + ref_.registry + ")");
    return InputError(what + ": " + ref_.registry + " " + why +
                      " and no credentials for it were found" +
                      (credentials_.source.empty() ? "" : " in " + credentials_.source) +
                      "; log in first (docker login " + ref_.registry + ")");
  };
  if (scheme == "basic") {
    if (basic.empty() && !credentials.identity_token.empty())
      throw InputError(what + ": " + ref_.registry + " asks for a user name and password, and " +
                       kept_in +
                       " holds only an identity token (an OAuth refresh token) for it, which "
                       "only a token service takes; log in again (docker login " +
                       ref_.registry + ")");
    if (basic.empty()) throw needs_credentials("asks for a user name and password");
    std::lock_guard<std::mutex> lock(auth_lock_);
    auth_header_ = basic;
    auth_expires_ = std::chrono::steady_clock::time_point::max();
    return basic;
  }
  if (scheme != "bearer" || field("realm").empty())
    throw InputError(what + ": " + ref_.registry +
                     " asks for authentication imgsmith does not know ('" + scheme + "')");
  std::string scope = field("scope");
  if (scope.empty()) scope = "repository:" + ref_.repository + ":pull";
  std::string url = field("realm");
  url += (url.find('?') == std::string::npos ? "?" : "&");
  url += "scope=" + percent_encode(scope);
  if (!field("service").empty()) url += "&service=" + percent_encode(field("service"));
  const std::string realm_host = host_of_url(url);
  const bool realm_plain = url.rfind("http://", 0) == 0;
  if (url.rfind("https://", 0) != 0 && !realm_plain)
    throw InputError(what + ": the token realm " + field("realm") + " is not an http(s) URL");
  const bool refresh = !credentials.identity_token.empty();
  // Credentials go in clear text only to a host the user called insecure.
  if (realm_plain && (!basic.empty() || refresh) && !insecure_host(realm_host))
    throw InputError(
        what + ": " + ref_.registry + " sends its token requests to " + field("realm") +
        " over plain HTTP; imgsmith will not send the credentials there (--insecure-registry " +
        realm_host + " allows it)");
  Request token_request{
      url, {}, !insecure_host(realm_host), false, what + " (token from " + field("realm") + ")",
      "",  ""};
  if (refresh) {
    // An identity token is exchanged as OAuth2 asks (the distribution
    // spec's auth/oauth.md): a POST of the refresh token, form-encoded.
    token_request.url = field("realm");
    token_request.post_body =
        "grant_type=refresh_token&client_id=imgsmith&refresh_token=" +
        percent_encode(credentials.identity_token) + "&scope=" + percent_encode(scope) +
        (field("service").empty() ? std::string() : "&service=" + percent_encode(field("service")));
    token_request.headers.push_back("Content-Type: application/x-www-form-urlencoded");
  } else if (!basic.empty()) {
    token_request.headers.push_back(basic);
  }
  const Http::Response r = http_.fetch(token_request, kErrorBodyLimit);
  if (r.status == 401 || r.status == 403 || (refresh && r.status == 400)) {
    if (basic.empty() && !refresh)
      throw needs_credentials("gives no anonymous token (" + std::to_string(r.status) + ")");
    throw InputError(what + ": the token service " + field("realm") + " refused the " +
                     (refresh ? "identity token" : "credentials") + " for " + ref_.registry +
                     " in " + kept_in + " (" + std::to_string(r.status) +
                     "); log in again (docker login " + ref_.registry + ")");
  }
  if (r.status != 200)
    throw InputError(what + ": the token service " + field("realm") + " answered " +
                     std::to_string(r.status));
  json doc;
  try {
    doc = json::parse(r.body);
  } catch (const json::exception&) {
    throw InputError(what + ": the token service " + field("realm") +
                     " answered with something that is not JSON");
  }
  std::string token = doc.value("token", "");
  if (token.empty()) token = doc.value("access_token", "");
  if (token.empty())
    throw InputError(what + ": the token service " + field("realm") + " gave no token");
  long lifetime = 60;
  if (const auto e = doc.find("expires_in"); e != doc.end() && e->is_number_integer())
    lifetime = std::clamp(e->get<long>(), 5L, 86400L);
  const std::string header = "Authorization: Bearer " + token;
  std::lock_guard<std::mutex> lock(auth_lock_);
  auth_header_ = header;
  // Renewed a little early, so a long download never starts on a dying token.
  auth_expires_ =
      std::chrono::steady_clock::now() + std::chrono::seconds(std::max(5L, lifetime - 10));
  return header;
}

}  // namespace imgsmith::registry
