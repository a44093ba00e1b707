// The one test through real sockets on 127.0.0.1:0 (the others call the Router without
// sockets): request/response, a chunked watch, the body limit, HTTPS with a bearer token, and
// the CA kept in pki_dir.
#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <catch2/catch.hpp>

#include "emulator/apiserver/apiserver.h"
#include "tests/apiserver/router_fixture.h"

namespace pjemu::apiserver {
namespace {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;

const std::string kJobs = "/apis/kubeflow.org/v1/namespaces/default/pytorchjobs";

template <class Stream>
http::response<http::string_body> Send(Stream& stream, http::verb verb, const std::string& target,
                                       const std::string& body = "",
                                       const std::string& token = "") {
  http::request<http::string_body> req{verb, target, 11};
  req.set(http::field::host, "127.0.0.1");
  req.set(http::field::content_type, "application/json");
  if (!token.empty()) req.set(http::field::authorization, "Bearer " + token);
  req.body() = body;
  req.prepare_payload();
  http::write(stream, req);
  beast::flat_buffer buffer;
  http::response<http::string_body> res;
  http::read(stream, buffer, res);
  return res;
}

TEST_CASE("the server answers over a real socket, streams watches chunked and bounds bodies",
          "[apiserver]") {
  RealClock clock;
  store::Store store(clock);
  ApiServerOptions options;
  options.limits.max_body_bytes = 64 * 1024;
  options.limits.max_header_bytes = 64 * 1024;
  ApiServer server(store, nullptr, options);
  REQUIRE(server.Start().ok());
  REQUIRE(server.port() != 0);
  CHECK(server.url() == "http://127.0.0.1:" + std::to_string(server.port()));
  CHECK(server.Kubeconfig().find("server: \"http://127.0.0.1:") != std::string::npos);

  net::io_context ioc;
  tcp::endpoint endpoint(net::ip::make_address("127.0.0.1"), server.port());
  beast::tcp_stream stream(ioc);
  stream.connect(endpoint);
  auto version = Send(stream, http::verb::get, "/version");
  CHECK(version.result_int() == 200);
  CHECK(Json::parse(version.body())["gitVersion"] == "v1.30.0");
  // Keep-alive: a second request on the same connection.
  auto created = Send(stream, http::verb::post, kJobs, testing::JobJson("a").dump());
  CHECK(created.result_int() == 201);

  // A chunked watch: the header arrives, then one line per change.
  beast::tcp_stream watch(ioc);
  watch.connect(endpoint);
  http::request<http::empty_body> wreq{
      http::verb::get,
      kJobs + "?watch=true&resourceVersion=" + std::to_string(store.ResourceVersion()), 11};
  wreq.set(http::field::host, "127.0.0.1");
  http::write(watch, wreq);
  beast::flat_buffer wbuf;
  http::response_parser<http::string_body> parser;
  http::read_header(watch, wbuf, parser);
  CHECK(parser.get().result_int() == 200);
  CHECK(parser.chunked());
  REQUIRE(Send(stream, http::verb::post, kJobs, testing::JobJson("b").dump()).result_int() == 201);
  std::string line;
  auto on_chunk = [&](std::uint64_t, beast::string_view data, beast::error_code&) {
    line.append(data.data(), data.size());
    return data.size();
  };
  parser.on_chunk_body(on_chunk);
  watch.expires_after(std::chrono::seconds(10));
  while (line.find('\n') == std::string::npos) {
    beast::error_code ec;
    http::read_some(watch, wbuf, parser, ec);
    REQUIRE_FALSE(ec);
  }
  Json event = Json::parse(line.substr(0, line.find('\n')));
  CHECK(event["type"] == "ADDED");
  CHECK(event["object"]["metadata"]["name"] == "b");

  // A body over the limit: 413 RequestEntityTooLarge.
  std::string big = std::string(70 * 1024, ' ') + testing::JobJson("c").dump();
  beast::tcp_stream large(ioc);
  large.connect(endpoint);
  auto too_large = Send(large, http::verb::post, kJobs, big);
  CHECK(too_large.result_int() == 413);
  CHECK(Json::parse(too_large.body())["reason"] == "RequestEntityTooLarge");
  // Headers over the limit: 431; HEAD: the headers of a GET without its body.
  beast::tcp_stream huge(ioc);
  huge.connect(endpoint);
  http::request<http::string_body> hreq{http::verb::get, "/version", 11};
  hreq.set(http::field::host, "127.0.0.1");
  for (int i = 0; i < 10; ++i) hreq.set("X-Padding-" + std::to_string(i), std::string(8000, 'x'));
  http::write(huge, hreq);
  beast::flat_buffer hbuf;
  http::response<http::string_body> hres;
  http::read(huge, hbuf, hres);
  CHECK(hres.result_int() == 431);
  beast::tcp_stream head(ioc);
  head.connect(endpoint);
  http::request<http::empty_body> head_req{http::verb::head, "/version", 11};
  head_req.set(http::field::host, "127.0.0.1");
  http::write(head, head_req);
  beast::flat_buffer head_buf;
  http::response_parser<http::empty_body> head_parser;
  head_parser.skip(true);
  http::read(head, head_buf, head_parser);
  CHECK(head_parser.get().result_int() == 200);
  CHECK(head_parser.content_length().value_or(0) > 0);
  server.Stop();
}

TEST_CASE("https with a bearer token uses a generated certificate", "[apiserver]") {
  RealClock clock;
  store::Store store(clock);
  ApiServerOptions options;
  options.token = "s3cret";
  ApiServer server(store, nullptr, options);
  REQUIRE(server.Start().ok());
  CHECK(server.tls());
  CHECK(server.certificate_pem().rfind("-----BEGIN CERTIFICATE-----", 0) == 0);
  std::string kubeconfig = server.Kubeconfig();
  CHECK(kubeconfig.find("insecure-skip-tls-verify: true") != std::string::npos);
  CHECK(kubeconfig.find("token: \"s3cret\"") != std::string::npos);
  CHECK(server.Kubeconfig("default", true).find("certificate-authority-data: ") !=
        std::string::npos);

  net::io_context ioc;
  net::ssl::context ctx(net::ssl::context::tls_client);
  ctx.add_certificate_authority(net::buffer(server.certificate_pem()));
  ctx.set_verify_mode(net::ssl::verify_peer);
  auto connect = [&] {
    auto s = std::make_unique<beast::ssl_stream<beast::tcp_stream>>(ioc, ctx);
    beast::get_lowest_layer(*s).connect(
        tcp::endpoint(net::ip::make_address("127.0.0.1"), server.port()));
    s->handshake(net::ssl::stream_base::client);
    return s;
  };
  auto anonymous = connect();
  CHECK(Send(*anonymous, http::verb::get, "/api/v1/namespaces/default/pods").result_int() == 401);
  auto authed = connect();
  CHECK(Send(*authed, http::verb::get, "/api/v1/namespaces/default/pods", "", "s3cret")
            .result_int() == 200);
  server.Stop();
}

TEST_CASE("the CA is kept in pki_dir across restarts and signs each start's certificate",
          "[apiserver]") {
  testing::RouterFixture f;  // for its temporary folder
  const std::string pki = (f.dir / "pki").string();
  RealClock clock;
  store::Store store(clock);
  ApiServerOptions options;
  options.tls = true;
  options.pki_dir = pki;
  std::string first;
  {
    ApiServer server(store, nullptr, options);
    REQUIRE(server.Start().ok());
    first = server.certificate_pem();
    CHECK(server.url().rfind("https://127.0.0.1:", 0) == 0);
    CHECK(server.Kubeconfig("default", true).find("insecure-skip-tls-verify") == std::string::npos);
  }
  CHECK(std::filesystem::exists(pki + "/ca.crt"));
  CHECK((std::filesystem::status(pki + "/ca.key").permissions() &
         (std::filesystem::perms::group_all | std::filesystem::perms::others_all)) ==
        std::filesystem::perms::none);
  ApiServer again(store, nullptr, options);
  REQUIRE(again.Start().ok());
  CHECK(again.certificate_pem() == first);
  // A client trusting only that CA verifies the new serving certificate.
  net::io_context ioc;
  net::ssl::context ctx(net::ssl::context::tls_client);
  ctx.add_certificate_authority(net::buffer(first));
  ctx.set_verify_mode(net::ssl::verify_peer);
  ctx.set_verify_callback(net::ssl::host_name_verification("127.0.0.1"));
  beast::ssl_stream<beast::tcp_stream> stream(ioc, ctx);
  beast::get_lowest_layer(stream).connect(
      tcp::endpoint(net::ip::make_address("127.0.0.1"), again.port()));
  stream.handshake(net::ssl::stream_base::client);
  CHECK(Send(stream, http::verb::get, "/api/v1/namespaces/default/pods").result_int() == 200);
  again.Stop();

  // Half a CA is an error naming the missing file.
  std::filesystem::remove(pki + "/ca.key");
  ApiServer broken(store, nullptr, options);
  Status started = broken.Start();
  CHECK(started.code() == Code::kInvalid);
  CHECK_THAT(started.message(), Catch::Contains(pki + "/ca.key: missing"));
}

}  // namespace
}  // namespace pjemu::apiserver
