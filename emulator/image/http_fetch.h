// HttpFetcher: the registry client's one HTTP seam, a libcurl easy handle (private to
// emulator/image). Redirects are followed; an Authorization header given in Request::headers
// is sent to the first host only (curl drops custom Authorization on a redirect to another
// host, port or scheme; CURLOPT_UNRESTRICTED_AUTH stays off). Only http and https are spoken.
// Transport failures come back as kUnavailable worded as Go's net/http client words them,
// which is what containerd (and so the kubelet) prints:
//   `failed to do request: Head "http://127.0.0.1:1/v2/x/manifests/1": dial tcp
//    127.0.0.1:1: connect: connection refused`
// Thread safety: one HttpFetcher per thread (a handle is not shared); the process-wide
// curl_global_init runs once.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "emulator/common/status.h"

namespace pjemu::image::http {

struct FetchOptions {
  long connect_timeout_ms = 10'000;
  long low_speed_seconds = 60;  // abort below 1 byte/s for this long
  std::string ca_file;          // extra CA bundle, "" = the system's only
};

struct Request {
  std::string method = "GET";  // GET, HEAD or POST
  std::string url;
  std::vector<std::string> headers;  // "Name: value"
  std::string post_body;             // POST only (application/x-www-form-urlencoded)
  // A 2xx body goes to sink when set (a non-OK Status aborts the transfer and is returned),
  // else into Response::body, at most max_body bytes (more: kInvalid `content at URL is
  // larger than N bytes`).
  std::function<Status(std::string_view)> sink;
  std::int64_t max_body = 4 << 20;
};

struct Response {
  long status = 0;
  std::string url;   // the last URL (after redirects)
  std::string body;  // a 2xx body without a sink, or the first 64 KiB of an error's body
  std::string content_type;
  std::string docker_content_digest;
  std::int64_t content_length = -1;
  std::vector<std::string> www_authenticate;  // every challenge header of the last answer
  std::string retry_after;
};

class HttpFetcher {
 public:
  explicit HttpFetcher(FetchOptions options);
  ~HttpFetcher();
  HttpFetcher(const HttpFetcher&) = delete;
  HttpFetcher& operator=(const HttpFetcher&) = delete;
  // Any HTTP answer is a Response (check status); kUnavailable for transport failures,
  // the sink's Status when it aborted.
  Result<Response> Do(const Request& request);

 private:
  FetchOptions options_;
  void* curl_;  // CURL*
};

// "401 Unauthorized", as Go's resp.Status.
std::string StatusLine(long code);
// Percent-encodes a query value.
std::string UrlEscape(std::string_view text);
// "Head" for HEAD (Go's method words in `failed to do request: Head "..."`).
std::string GoMethodWord(const std::string& method);

}  // namespace pjemu::image::http
