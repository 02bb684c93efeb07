// What a registry's error answers mean, as messages that say what to do:
// the distribution API's error codes, rate limits, denied access.
#include <exception>
#include <nlohmann/json.hpp>

#include "client.hpp"
#include "imgsmith/util/error.hpp"

namespace imgsmith::registry {

using nlohmann::json;

void Client::fail(HttpStream& response, const std::string& what, const std::string& subject) const {
  std::string code;
  std::string message;
  try {
    const json doc = json::parse(response.read_all(kErrorBodyLimit));
    if (doc.contains("errors") && doc["errors"].is_array() && !doc["errors"].empty()) {
      code = doc["errors"][0].value("code", "");
      message = doc["errors"][0].value("message", "");
    }
  } catch (const std::exception&) {
    // Not every error has a JSON body; the status says enough.
  }
  const long status = response.status();
  const std::string where = ref_.registry + "/" + ref_.repository;
  if (status == 404 && code == "NAME_UNKNOWN")
    throw InputError(what + ": no repository " + ref_.repository + " on " + ref_.registry +
                     "; check the name");
  const bool tag = subject.find(':') == std::string::npos && subject.rfind("blob ", 0) != 0;
  if (status == 404 && tag)
    throw InputError(what + ": no tag '" + subject + "' in " + where + "; check the tag");
  if (status == 404)
    throw InputError(what + ": " + where + " has no " + subject +
                     (code.empty() ? "" : " (" + code + ")"));
  if (status == 429) {
    std::string limits;
    for (const char* h : {"ratelimit-limit", "ratelimit-remaining", "retry-after"})
      if (!response.header(h).empty()) limits += std::string(", ") + h + ": " + response.header(h);
    throw InputError(what + ": " + ref_.registry +
                     " is rate-limiting this client (429 Too Many Requests" + limits +
                     "); wait, or log in for a higher limit");
  }
  if (status == 403)
    throw InputError(what + ": " + ref_.registry + " denies access to " + ref_.repository +
                     " (403" + (message.empty() ? "" : ": " + message) + ")");
  throw InputError(what + ": " + ref_.registry + " answered " + std::to_string(status) +
                   (code.empty() ? "" : " " + code) + (message.empty() ? "" : ": " + message));
}

}  // namespace imgsmith::registry
