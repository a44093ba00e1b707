#include "emulator/image/http_fetch.h"

#include <curl/curl.h>
#include <fmt/format.h>

#include <cctype>
#include <cstring>
#include <mutex>

namespace pjemu::image::http {
namespace http_detail {

constexpr std::size_t kMaxErrorBody = 64 << 10;

void GlobalInit() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

struct Transfer {
  const Request* request = nullptr;
  CURL* curl = nullptr;
  Response* response = nullptr;
  Status sink_status;
  bool code_known = false;  // of the answer whose body is arriving
  bool success = false;
};

// A status line starts each answer (redirects and 100 Continue included): the body that
// follows is judged by that answer's code.
std::size_t OnHeader(char* data, std::size_t size, std::size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const std::size_t n = size * count;
  if (n >= 5 && std::memcmp(data, "HTTP/", 5) == 0) t->code_known = false;
  return n;
}

std::size_t OnWrite(char* data, std::size_t size, std::size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const std::size_t n = size * count;
  if (!t->code_known) {
    long code = 0;
    curl_easy_getinfo(t->curl, CURLINFO_RESPONSE_CODE, &code);
    t->success = code >= 200 && code < 300;
    t->code_known = true;
  }
  std::string& body = t->response->body;
  if (!t->success) {
    if (body.size() < kMaxErrorBody) body.append(data, std::min(n, kMaxErrorBody - body.size()));
    return n;
  }
  if (t->request->sink) {
    t->sink_status = t->request->sink(std::string_view(data, n));
    return t->sink_status.ok() ? n : 0;
  }
  if (static_cast<std::int64_t>(body.size() + n) > t->request->max_body) {
    t->sink_status = Status(Code::kInvalid, fmt::format("content at {} is larger than {} bytes",
                                                        t->request->url, t->request->max_body));
    return 0;
  }
  body.append(data, n);
  return n;
}

std::string HeaderValue(CURL* curl, const char* name, std::size_t index = 0) {
  struct curl_header* h = nullptr;
  if (curl_easy_header(curl, name, index, CURLH_HEADER, -1, &h) != CURLHE_OK || !h) return "";
  return h->value ? h->value : "";
}

std::string LowerFirst(std::string text) {
  if (!text.empty()) text[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(text[0])));
  return text;
}

// host:port of the address curl dialled (Go prints the resolved address), else of the URL.
std::string DialAddress(CURL* curl, const std::string& url) {
  char* ip = nullptr;
  long port = 0;
  curl_easy_getinfo(curl, CURLINFO_PRIMARY_IP, &ip);
  curl_easy_getinfo(curl, CURLINFO_PRIMARY_PORT, &port);
  if (ip && *ip && port > 0) {
    const std::string host = std::strchr(ip, ':') ? fmt::format("[{}]", ip) : std::string(ip);
    return fmt::format("{}:{}", host, port);
  }
  std::string out;
  if (CURLU* u = curl_url()) {
    if (curl_url_set(u, CURLUPART_URL, url.c_str(), 0) == CURLUE_OK) {
      char* host = nullptr;
      char* p = nullptr;
      if (curl_url_get(u, CURLUPART_HOST, &host, 0) == CURLUE_OK) out = host;
      if (curl_url_get(u, CURLUPART_PORT, &p, CURLU_DEFAULT_PORT) == CURLUE_OK) {
        out += std::string(":") + p;
      }
      curl_free(host);
      curl_free(p);
    }
    curl_url_cleanup(u);
  }
  return out;
}

std::string HostOf(const std::string& address) {
  if (!address.empty() && address.front() == '[') return address.substr(1, address.find(']') - 1);
  return address.substr(0, address.rfind(':'));
}

// The tail of Go's `*url.Error` text for a failed transfer.
std::string GoTransportError(CURLcode rc, CURL* curl, const std::string& url, const char* errbuf) {
  const std::string curl_text = *errbuf ? errbuf : curl_easy_strerror(rc);
  const std::string address = DialAddress(curl, url);
  long os_errno = 0;
  curl_easy_getinfo(curl, CURLINFO_OS_ERRNO, &os_errno);
  switch (rc) {
    case CURLE_COULDNT_RESOLVE_HOST:
      return fmt::format("dial tcp: lookup {}: no such host", HostOf(address));
    case CURLE_COULDNT_CONNECT:
      if (os_errno != 0) {
        return fmt::format("dial tcp {}: connect: {}", address,
                           LowerFirst(std::strerror(static_cast<int>(os_errno))));
      }
      return fmt::format("dial tcp {}: {}", address, curl_text);
    case CURLE_OPERATION_TIMEDOUT: {
      double connect_time = 0;
      curl_easy_getinfo(curl, CURLINFO_CONNECT_TIME, &connect_time);
      if (connect_time <= 0) return fmt::format("dial tcp {}: i/o timeout", address);
      return fmt::format("read tcp {}: i/o timeout ({})", address, curl_text);
    }
    case CURLE_PEER_FAILED_VERIFICATION:
      return "tls: failed to verify certificate: x509: " + curl_text;
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CIPHER:
    case CURLE_SSL_CACERT_BADFILE:
      return "tls: " + curl_text;
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_PARTIAL_FILE:
      return fmt::format("read tcp {}: {}", address, curl_text);
    default:
      return curl_text;
  }
}

}  // namespace http_detail

namespace httpd = http_detail;

HttpFetcher::HttpFetcher(FetchOptions options) : options_(std::move(options)) {
  httpd::GlobalInit();
  curl_ = curl_easy_init();
}

HttpFetcher::~HttpFetcher() {
  if (curl_) curl_easy_cleanup(static_cast<CURL*>(curl_));
}

Result<Response> HttpFetcher::Do(const Request& request) {
  CURL* curl = static_cast<CURL*>(curl_);
  if (!curl) return InternalError("curl_easy_init failed");
  // Reset drops the last request's options but keeps the connection cache.
  curl_easy_reset(curl);
  Response response;
  httpd::Transfer transfer;
  transfer.request = &request;
  transfer.curl = curl;
  transfer.response = &response;
  char errbuf[CURL_ERROR_SIZE] = {0};

  curl_slist* headers = nullptr;
  for (const std::string& h : request.headers) headers = curl_slist_append(headers, h.c_str());
  curl_easy_setopt(curl, CURLOPT_URL, request.url.c_str());
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(curl, CURLOPT_USERAGENT, "pjemu (containerd/2 compatible)");
  curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(curl, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 1L);
  curl_easy_setopt(curl, CURLOPT_MAXREDIRS, 10L);
  curl_easy_setopt(curl, CURLOPT_UNRESTRICTED_AUTH, 0L);
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, options_.connect_timeout_ms);
  curl_easy_setopt(curl, CURLOPT_LOW_SPEED_LIMIT, 1L);
  curl_easy_setopt(curl, CURLOPT_LOW_SPEED_TIME, options_.low_speed_seconds);
  if (!options_.ca_file.empty()) curl_easy_setopt(curl, CURLOPT_CAINFO, options_.ca_file.c_str());
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, errbuf);
  curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, &httpd::OnHeader);
  curl_easy_setopt(curl, CURLOPT_HEADERDATA, &transfer);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, &httpd::OnWrite);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &transfer);
  if (request.method == "HEAD") {
    curl_easy_setopt(curl, CURLOPT_NOBODY, 1L);
  } else if (request.method == "POST") {
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE, static_cast<long>(request.post_body.size()));
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, request.post_body.c_str());
  } else {
    curl_easy_setopt(curl, CURLOPT_HTTPGET, 1L);
  }

  const CURLcode rc = curl_easy_perform(curl);
  curl_slist_free_all(headers);
  if (!transfer.sink_status.ok()) return transfer.sink_status;
  if (rc != CURLE_OK) {
    return Status(Code::kUnavailable,
                  fmt::format("failed to do request: {} \"{}\": {}", GoMethodWord(request.method),
                              request.url, httpd::GoTransportError(rc, curl, request.url, errbuf)));
  }
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &response.status);
  char* effective = nullptr;
  curl_easy_getinfo(curl, CURLINFO_EFFECTIVE_URL, &effective);
  response.url = effective ? effective : request.url;
  response.content_type = httpd::HeaderValue(curl, "Content-Type");
  response.docker_content_digest = httpd::HeaderValue(curl, "Docker-Content-Digest");
  response.retry_after = httpd::HeaderValue(curl, "Retry-After");
  curl_off_t length = -1;
  if (curl_easy_getinfo(curl, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &length) == CURLE_OK) {
    response.content_length = length;
  }
  for (std::size_t i = 0;; ++i) {
    struct curl_header* h = nullptr;
    if (curl_easy_header(curl, "WWW-Authenticate", i, CURLH_HEADER, -1, &h) != CURLHE_OK) break;
    response.www_authenticate.emplace_back(h->value ? h->value : "");
    if (i + 1 >= h->amount) break;
  }
  return response;
}

std::string StatusLine(long code) {
  const char* text = "";
  switch (code) {
    case 200:
      text = "OK";
      break;
    case 201:
      text = "Created";
      break;
    case 202:
      text = "Accepted";
      break;
    case 204:
      text = "No Content";
      break;
    case 206:
      text = "Partial Content";
      break;
    case 301:
      text = "Moved Permanently";
      break;
    case 302:
      text = "Found";
      break;
    case 307:
      text = "Temporary Redirect";
      break;
    case 400:
      text = "Bad Request";
      break;
    case 401:
      text = "Unauthorized";
      break;
    case 403:
      text = "Forbidden";
      break;
    case 404:
      text = "Not Found";
      break;
    case 405:
      text = "Method Not Allowed";
      break;
    case 408:
      text = "Request Timeout";
      break;
    case 409:
      text = "Conflict";
      break;
    case 413:
      text = "Request Entity Too Large";
      break;
    case 416:
      text = "Requested Range Not Satisfiable";
      break;
    case 429:
      text = "Too Many Requests";
      break;
    case 500:
      text = "Internal Server Error";
      break;
    case 502:
      text = "Bad Gateway";
      break;
    case 503:
      text = "Service Unavailable";
      break;
    case 504:
      text = "Gateway Timeout";
      break;
    default:
      break;
  }
  return *text ? fmt::format("{} {}", code, text) : fmt::format("{}", code);
}

std::string UrlEscape(std::string_view text) {
  // The handle argument is unused since curl 7.82.
  char* escaped = curl_easy_escape(nullptr, text.data(), static_cast<int>(text.size()));
  std::string out = escaped ? escaped : "";
  curl_free(escaped);
  return out;
}

std::string GoMethodWord(const std::string& method) {
  std::string out;
  for (std::size_t i = 0; i < method.size(); ++i) {
    out += static_cast<char>(i == 0 ? std::toupper(static_cast<unsigned char>(method[i]))
                                    : std::tolower(static_cast<unsigned char>(method[i])));
  }
  return out;
}

}  // namespace pjemu::image::http
