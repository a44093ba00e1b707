#include "emulator/client/http_client.h"

#include <sys/socket.h>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <limits>
#include <mutex>
#include <thread>

#include "emulator/client/http_transport.h"

namespace pjemu::client {
namespace {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;

using internal::Endpoint;
using internal::HttpTransport;
using internal::ParseServer;

Status Unreachable(const std::string& server, const beast::error_code& ec) {
  return Status(Code::kUnavailable, "the connection to the server " + server +
                                        " was refused or failed: " + ec.message() +
                                        " - is `pjemu serve` running?");
}

http::request<http::string_body> MakeRequest(const Endpoint& ep, const HttpClientOptions& o,
                                             std::string_view method, std::string_view target,
                                             std::string_view body, std::string_view content_type,
                                             std::string_view accept) {
  http::request<http::string_body> req;
  req.method_string(beast::string_view(method.data(), method.size()));
  req.target(ep.prefix + std::string(target));
  req.version(11);
  req.set(http::field::host, ep.host + ":" + ep.port);
  req.set(http::field::user_agent, "pjemu-cli");
  req.set(http::field::accept, beast::string_view(accept.data(), accept.size()));
  if (!o.token.empty()) req.set(http::field::authorization, "Bearer " + o.token);
  if (!body.empty() || method == "POST" || method == "PUT" || method == "PATCH") {
    req.set(http::field::content_type,
            content_type.empty() ? std::string("application/json") : std::string(content_type));
    req.body() = std::string(body);
  }
  req.prepare_payload();
  return req;
}

Status StatusFromReply(int code, const std::string& body) {
  Json j = Json::parse(body, nullptr, false);
  if (!j.is_discarded() && j.is_object() && j.value("kind", "") == "Status") {
    return Status::FromStatusJson(j, code);
  }
  Status s = Status::FromStatusJson(Json::object(), code);
  return Status(s.code(), "HTTP " + std::to_string(code) + ": " + body.substr(0, 200));
}

// No limit on a reply's body. Not boost::none: Boost 1.74's parser checks a Content-Length as
// `len > limit` with the optional limit, which is true for an empty optional, so a streamed reply
// with a Content-Length (a 404 Status on a followed log) failed with "body limit exceeded" (a
// full read() passed only because its eager parse overwrote that error). The largest value means
// the same without that comparison.
constexpr std::uint64_t kNoBodyLimit = std::numeric_limits<std::uint64_t>::max();

// The streaming GET behind Stream() and Watch; *fd receives the socket so that another thread
// can shut it down to end the stream early.
Status StreamImpl(const HttpClientOptions& options, std::string_view target,
                  const std::function<bool(std::string_view)>& on_data, std::atomic<int>* fd,
                  std::atomic<bool>* stopped,
                  std::string_view accept = "application/json, */*") {
  ASSIGN_OR_RETURN(Endpoint ep, ParseServer(options.server));
  ASSIGN_OR_RETURN(std::unique_ptr<HttpTransport> conn,
                   HttpTransport::Open(options, ep, options.timeout, /*streaming=*/true));
  if (fd) {
    fd->store(conn->native_handle());
    if (stopped && stopped->load()) return Status::Ok();
  }
  auto req = MakeRequest(ep, options, "GET", target, {}, {}, accept);
  beast::error_code ec;
  int code = 0;
  std::string error_body;
  Status read_status = conn->With([&](auto& stream) -> Status {
    http::write(stream, req, ec);
    if (ec) return Unreachable(options.server, ec);
    beast::flat_buffer buffer;
    http::response_parser<http::buffer_body> parser;
    parser.body_limit(kNoBodyLimit);
    http::read_header(stream, buffer, parser, ec);
    if (ec) return Unreachable(options.server, ec);
    code = parser.get().result_int();
    char chunk[16384];
    while (!parser.is_done()) {
      parser.get().body().data = chunk;
      parser.get().body().size = sizeof chunk;
      // read_some: hand each chunk on as it arrives (read() would wait for 16 KiB or the end,
      // holding back watch events and followed log lines).
      http::read_some(stream, buffer, parser, ec);
      if (ec == http::error::need_buffer) ec = {};
      if (ec) break;
      std::string_view data(chunk, sizeof chunk - parser.get().body().size);
      if (code / 100 != 2) {
        error_body.append(data);
      } else if (!data.empty() && !on_data(data)) {
        break;
      }
    }
    return Status::Ok();
  });
  if (fd) fd->store(-1);
  conn->Close();
  if (!read_status.ok()) return read_status;
  if (code / 100 != 2) return StatusFromReply(code, error_body);
  if (ec && !(stopped && stopped->load()) && ec != http::error::end_of_stream &&
      ec != net::error::eof && ec != net::ssl::error::stream_truncated) {
    return Unreachable(options.server, ec);
  }
  return Status::Ok();
}

// A Watch fed by a background thread reading the NDJSON stream of a ?watch=1 request.
class HttpWatch final : public api::Watch {
 public:
  HttpWatch(HttpClientOptions options, std::string target)
      : options_(std::move(options)), target_(std::move(target)) {
    thread_ = std::thread([this] { Read(); });
  }
  ~HttpWatch() override {
    Stop();
    if (thread_.joinable()) thread_.join();
  }

  std::optional<api::WatchEvent> Next(Duration timeout) override {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait_for(lock, timeout, [&] { return !queue_.empty() || ended_; });
    return PopLocked();
  }
  std::optional<api::WatchEvent> TryNext() override {
    std::lock_guard<std::mutex> lock(mu_);
    return PopLocked();
  }
  void SetNotify(std::function<void()> notify) override {
    std::lock_guard<std::mutex> lock(mu_);
    notify_ = std::move(notify);
  }
  void Stop() override {
    stopped_ = true;
    int fd = fd_.load();
    if (fd >= 0) ::shutdown(fd, SHUT_RDWR);
  }
  bool Done() override {
    std::lock_guard<std::mutex> lock(mu_);
    return ended_ && queue_.empty();
  }

 private:
  std::optional<api::WatchEvent> PopLocked() {
    if (queue_.empty()) return std::nullopt;
    api::WatchEvent e = std::move(queue_.front());
    queue_.pop_front();
    return e;
  }

  void Push(api::WatchEvent e) {
    std::function<void()> notify;
    {
      std::lock_guard<std::mutex> lock(mu_);
      queue_.push_back(std::move(e));
      notify = notify_;
    }
    cv_.notify_all();
    if (notify) notify();
  }

  void Read() {
    std::string pending;
    Status s = StreamImpl(
        options_, target_,
        [&](std::string_view data) {
          pending.append(data);
          std::size_t nl;
          while ((nl = pending.find('\n')) != std::string::npos) {
            std::string line = pending.substr(0, nl);
            pending.erase(0, nl + 1);
            if (!line.empty()) Push(Decode(line));
          }
          return !stopped_.load();
        },
        &fd_, &stopped_);
    if (!s.ok() && !stopped_) {
      Push(api::WatchEvent{api::WatchEvent::Type::kError, s.ToStatusJson()});
    }
    std::function<void()> notify;
    {
      std::lock_guard<std::mutex> lock(mu_);
      ended_ = true;
      notify = notify_;
    }
    cv_.notify_all();
    if (notify) notify();
  }

  static api::WatchEvent Decode(const std::string& line) {
    using Type = api::WatchEvent::Type;
    Json j = Json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
      return {Type::kError, InternalError("malformed watch event: " + line).ToStatusJson()};
    }
    std::string t = j.value("type", "");
    Type type = t == "ADDED"      ? Type::kAdded
                : t == "MODIFIED" ? Type::kModified
                : t == "DELETED"  ? Type::kDeleted
                : t == "BOOKMARK" ? Type::kBookmark
                                  : Type::kError;
    return {type, j.contains("object") ? j["object"] : Json()};
  }

  HttpClientOptions options_;
  std::string target_;
  std::atomic<int> fd_{-1};
  std::atomic<bool> stopped_{false};
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<api::WatchEvent> queue_;  // GUARDED_BY(mu_)
  std::function<void()> notify_;       // GUARDED_BY(mu_)
  bool ended_ = false;                 // GUARDED_BY(mu_)
  std::thread thread_;
};

std::string SubPath(Subresource sub) {
  switch (sub) {
    case Subresource::kStatus: return "/status";
    case Subresource::kScale: return "/scale";
    case Subresource::kNone: break;
  }
  return "";
}

std::string WriteQuery(const WriteOptions& o) {
  std::string q;
  auto add = [&](const std::string& kv) { q += (q.empty() ? "?" : "&") + kv; };
  if (o.dry_run) add("dryRun=All");
  if (!o.field_manager.empty()) add("fieldManager=" + HttpClient::QueryEscape(o.field_manager));
  return q;
}

std::string ListQuery(const ListOptions& o) {
  std::string q;
  auto add = [&](const std::string& kv) { q += (q.empty() ? "?" : "&") + kv; };
  if (!o.label_selector.empty()) add("labelSelector=" + HttpClient::QueryEscape(o.label_selector));
  if (!o.field_selector.empty()) add("fieldSelector=" + HttpClient::QueryEscape(o.field_selector));
  return q;
}

// A v1 DeleteOptions object (a DELETE's body, an Eviction's deleteOptions).
Json DeleteOptionsBody(const DeleteOptions& options) {
  Json body = {{"kind", "DeleteOptions"}, {"apiVersion", "v1"}};
  if (!options.propagation_policy.empty()) body["propagationPolicy"] = options.propagation_policy;
  if (options.grace_period_seconds) body["gracePeriodSeconds"] = *options.grace_period_seconds;
  if (options.precondition_uid) body["preconditions"]["uid"] = *options.precondition_uid;
  if (options.precondition_resource_version) {
    body["preconditions"]["resourceVersion"] = *options.precondition_resource_version;
  }
  if (options.dry_run) body["dryRun"] = Json::array({"All"});
  return body;
}

}  // namespace

HttpClient::HttpClient(HttpClientOptions options) : options_(std::move(options)) {}

std::unique_ptr<HttpClient> MakeHttpClient(HttpClientOptions options) {
  return std::make_unique<HttpClient>(std::move(options));
}

std::string HttpClient::PathOf(const ResourceType& type, std::string_view ns,
                               std::string_view name) {
  std::string path = type.group.empty() ? "/api/" + type.version
                                        : "/apis/" + type.group + "/" + type.version;
  if (type.namespaced && !ns.empty()) path += "/namespaces/" + std::string(ns);
  path += "/" + type.plural;
  if (!name.empty()) path += "/" + std::string(name);
  return path;
}

std::string HttpClient::QueryEscape(std::string_view value) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : value) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else if (c == ' ') {
      out += '+';
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

Result<HttpReply> HttpClient::Request(std::string_view method, std::string_view target,
                                      std::string_view body, std::string_view content_type,
                                      std::string_view accept) {
  ASSIGN_OR_RETURN(Endpoint ep, ParseServer(options_.server));
  ASSIGN_OR_RETURN(std::unique_ptr<HttpTransport> conn,
                   HttpTransport::Open(options_, ep, options_.timeout, /*streaming=*/false));
  auto req = MakeRequest(ep, options_, method, target, body, content_type, accept);
  http::response_parser<http::string_body> parser;
  parser.body_limit(kNoBodyLimit);
  beast::error_code ec;
  conn->With([&](auto& stream) {
    http::write(stream, req, ec);
    if (ec) return;
    beast::flat_buffer buffer;
    http::read(stream, buffer, parser, ec);
  });
  conn->Close();
  if (ec) return Unreachable(options_.server, ec);
  HttpReply reply;
  reply.status = parser.get().result_int();
  reply.content_type = std::string(parser.get()[http::field::content_type]);
  reply.body = std::move(parser.get().body());
  return reply;
}

Status HttpClient::Stream(std::string_view target,
                          const std::function<bool(std::string_view)>& on_data,
                          std::string_view accept) {
  return StreamImpl(options_, target, on_data, nullptr, nullptr, accept);
}

Result<Json> HttpClient::Call(std::string_view method, const std::string& target,
                              const Json* body, std::string_view content_type) {
  std::string text = body ? body->dump() : std::string();
  ASSIGN_OR_RETURN(HttpReply reply, Request(method, target, text, body ? content_type : ""));
  if (reply.status / 100 != 2) return StatusFromReply(reply.status, reply.body);
  Json j = Json::parse(reply.body, nullptr, false);
  if (j.is_discarded()) {
    return InternalError("the server sent a body that is not JSON: " + reply.body.substr(0, 200));
  }
  return j;
}

Result<Json> HttpClient::Create(const ResourceType& type, std::string_view ns, Json object,
                                const WriteOptions& options) {
  return Call("POST", PathOf(type, ns) + WriteQuery(options), &object);
}

Result<Json> HttpClient::Get(const ResourceType& type, std::string_view ns,
                             std::string_view name) {
  return Call("GET", PathOf(type, ns, name), nullptr);
}

Result<Json> HttpClient::List(const ResourceType& type, std::string_view ns,
                              const ListOptions& options) {
  return Call("GET", PathOf(type, ns) + ListQuery(options), nullptr);
}

Result<Json> HttpClient::Update(const ResourceType& type, std::string_view ns, Json object,
                                Subresource sub, const WriteOptions& options) {
  std::string name = object.contains("metadata") ? object["metadata"].value("name", "") : "";
  return Call("PUT", PathOf(type, ns, name) + SubPath(sub) + WriteQuery(options), &object);
}

Result<Json> HttpClient::Patch(const ResourceType& type, std::string_view ns,
                               std::string_view name, PatchType patch_type, const Json& patch,
                               Subresource sub, const WriteOptions& options) {
  const char* ct = patch_type == PatchType::kMerge  ? "application/merge-patch+json"
                   : patch_type == PatchType::kJson ? "application/json-patch+json"
                                                    : "application/strategic-merge-patch+json";
  return Call("PATCH", PathOf(type, ns, name) + SubPath(sub) + WriteQuery(options), &patch, ct);
}

Result<Json> HttpClient::Delete(const ResourceType& type, std::string_view ns,
                                std::string_view name, const DeleteOptions& options) {
  Json body = DeleteOptionsBody(options);
  return Call("DELETE", PathOf(type, ns, name), &body);
}

Status HttpClient::Evict(std::string_view ns, std::string_view name,
                         const DeleteOptions& options) {
  Json eviction = {{"apiVersion", "policy/v1"},
                   {"kind", "Eviction"},
                   {"metadata", {{"name", std::string(name)}, {"namespace", std::string(ns)}}},
                   {"deleteOptions", DeleteOptionsBody(options)}};
  return Call("POST", PathOf(api::Pods(), ns, name) + "/eviction", &eviction).status();
}

Status HttpClient::Bind(std::string_view ns, std::string_view name,
                        const api::PodBinding& binding) {
  Json body = api::BindingBody(ns, name, binding);
  return Call("POST", PathOf(api::Pods(), ns, name) + "/binding", &body).status();
}

Result<std::shared_ptr<api::Watch>> HttpClient::Watch(const ResourceType& type,
                                                      std::string_view ns,
                                                      const WatchOptions& options) {
  std::string target = PathOf(type, ns) + ListQuery(options);
  target += (target.find('?') == std::string::npos ? "?" : "&") + std::string("watch=true");
  if (!options.resource_version.empty()) {
    target += "&resourceVersion=" + QueryEscape(options.resource_version);
  }
  if (options.allow_bookmarks) target += "&allowWatchBookmarks=true";
  ASSIGN_OR_RETURN(Endpoint ep, ParseServer(options_.server));
  (void)ep;  // the address is checked here so that a bad one fails the call, not the stream
  return std::shared_ptr<api::Watch>(std::make_shared<HttpWatch>(options_, target));
}

}  // namespace pjemu::client
