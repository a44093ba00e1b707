// Given the channel protocols of pods/exec and pods/portforward (what kubectl 1.30+ and the
// Python client speak over WebSocket), the server should negotiate the subprotocol, frame each
// channel, parse the query, report the exit as the kubelet does, upgrade SPDY clients (kubectl
// before 1.30, and every kubectl's port-forward) with the version negotiated as the kubelet
// does, and copy a process's output and stdin over the channels.
#include "emulator/apiserver/exec_channel.h"

#include <fcntl.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <condition_variable>
#include <thread>

#include "emulator/apiserver/channel_protocol.h"
#include "router_fixture.h"

namespace pjemu::apiserver {
namespace {

using testing::PodJson;
using testing::RecordingSink;

Query QueryOf(const std::string& raw) { return ParseQuery(raw).value(); }

// A process the test plays: it writes the process's output and reads its stdin.
class FakeProcess : public api::ExecProcess {
 public:
  FakeProcess() {
    REQUIRE(pipe2(in_, O_CLOEXEC) == 0);
    REQUIRE(pipe2(out_, O_CLOEXEC) == 0);
    REQUIRE(pipe2(err_, O_CLOEXEC) == 0);
  }
  ~FakeProcess() override {
    for (int* p : {in_, out_, err_}) {
      for (int i : {0, 1}) {
        if (p[i] >= 0) close(p[i]);
      }
    }
  }
  int stdin_fd() const override { return in_[1]; }
  int stdout_fd() const override { return out_[0]; }
  int stderr_fd() const override { return err_[0]; }
  void CloseStdin() override {
    if (in_[1] >= 0) close(in_[1]);
    in_[1] = -1;
  }
  int Wait() override { return code; }
  void Kill() override {}
  void Resize(int w, int h) override { size = {w, h}; }

  // The test's side.
  void Output(int fd_index, const std::string& text) {
    int fd = fd_index == 1 ? out_[1] : err_[1];
    REQUIRE(write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()));
  }
  void EndOutput() {
    close(out_[1]), close(err_[1]);
    out_[1] = err_[1] = -1;
  }
  std::string ReadStdin() {  // until EOF
    std::string all;
    char buf[256];
    ssize_t n;
    while ((n = read(in_[0], buf, sizeof buf)) > 0) all.append(buf, static_cast<std::size_t>(n));
    return all;
  }
  int code = 0;
  std::pair<int, int> size{0, 0};

 private:
  int in_[2], out_[2], err_[2];
};

class FakeExec : public api::PodExec {
 public:
  Result<std::unique_ptr<api::ExecProcess>> Exec(const api::ExecRequest& request) override {
    last = request;
    if (!start_error.ok()) return start_error;
    return std::unique_ptr<api::ExecProcess>(std::move(next));
  }
  Status Check(const api::ExecRequest& request) override {
    last = request;
    return check;
  }
  std::unique_ptr<FakeProcess> next = std::make_unique<FakeProcess>();
  Status check;
  Status start_error;
  api::ExecRequest last;
};

TEST_CASE("the first offered subprotocol the server speaks wins", "[exec]") {
  auto v5 = NegotiateProtocol("v5.channel.k8s.io, v4.channel.k8s.io", false);
  REQUIRE(v5);
  CHECK(v5->protocol == ChannelProtocol::kV5);
  CHECK(v5->name == "v5.channel.k8s.io");
  CHECK(NegotiateProtocol("v4.channel.k8s.io", false)->protocol == ChannelProtocol::kV4);
  CHECK(NegotiateProtocol("x, base64.channel.k8s.io", false)->protocol ==
        ChannelProtocol::kV1Base64);
  CHECK(NegotiateProtocol("", false)->protocol == ChannelProtocol::kV1);
  CHECK_FALSE(NegotiateProtocol("SPDY/3.1+portforward.k8s.io", true));
  CHECK(NegotiateProtocol("v4.channel.k8s.io", true)->protocol == ChannelProtocol::kV4);
  CHECK(NegotiateProtocol("portforward.k8s.io", true)->protocol == ChannelProtocol::kPortForward);
  CHECK_FALSE(NegotiateProtocol("v5.channel.k8s.io", true));
}

TEST_CASE("channel frames: a channel byte, or a digit and base64", "[exec]") {
  bool text = true;
  CHECK(EncodeChannel(ChannelProtocol::kV5, 1, "hi", &text) == std::string("\x01hi"));
  CHECK_FALSE(text);
  CHECK(EncodeChannel(ChannelProtocol::kV4Base64, 2, "hi", &text) == "2aGk=");
  CHECK(text);
  auto m = DecodeChannel(ChannelProtocol::kV4, std::string("\x00"
                                                           "abc",
                                                           4));
  REQUIRE(m);
  CHECK(m->channel == 0);
  CHECK(m->data == "abc");
  auto close = DecodeChannel(ChannelProtocol::kV5, std::string("\xff\x00", 2));
  REQUIRE(close);
  CHECK(close->channel == kCloseSignal);
  CHECK(close->data == std::string(1, '\0'));
  CHECK(DecodeChannel(ChannelProtocol::kV1Base64, "0aGk=")->data == "hi");
  CHECK_FALSE(DecodeChannel(ChannelProtocol::kV1Base64, "0!!"));
  CHECK_FALSE(DecodeChannel(ChannelProtocol::kV4, ""));
  CHECK(PortPrefix(8080) == std::string("\x90\x1f", 2));
}

TEST_CASE("exec options come from the query, command repeated in order", "[exec]") {
  auto o = ParseExecOptions(
      QueryOf("command=sh&command=-c&command=cat%3B+exit+3&container=c&stdin=true&stdout=true"),
      false);
  REQUIRE(o.ok());
  CHECK(o->command == std::vector<std::string>{"sh", "-c", "cat; exit 3"});
  CHECK(o->container == "c");
  CHECK(o->with_stdin);
  CHECK(o->with_stdout);
  CHECK_FALSE(o->with_stderr);
  CHECK_FALSE(o->tty);
  CHECK(ParseExecOptions(QueryOf("stdout=true"), false).status().message().find("command") !=
        std::string::npos);
  CHECK(ParseExecOptions(QueryOf("command=ls"), false).status().message() ==
        "you must specify at least 1 of stdin, stdout, stderr");
  CHECK(ParseExecOptions(QueryOf("command=ls&stdout=yes"), false).status().code() ==
        Code::kBadRequest);
  CHECK(ParseExecOptions(QueryOf("stdout=1"), true).ok());  // attach takes no command
}

TEST_CASE("ports repeat or are comma-separated, 1-65535 each", "[portforward]") {
  auto ports = ParsePorts(QueryOf("ports=8080,9090&ports=22"));
  REQUIRE(ports.ok());
  CHECK(*ports == std::vector<std::uint16_t>{8080, 9090, 22});
  CHECK(ParsePorts(QueryOf("ports=0")).status().message().find("ports: invalid port \"0\"") == 0);
  CHECK(ParsePorts(QueryOf("ports=65536")).status().code() == Code::kBadRequest);
  CHECK(ParsePorts(QueryOf("ports=x")).status().code() == Code::kBadRequest);
  CHECK(ParsePorts(QueryOf("")).status().message() == "ports: at least one port must be given");
}

TEST_CASE("the exit goes on the error channel as the kubelet writes it", "[exec]") {
  Json ok = Json::parse(ExitStatusJson(0, {"env"}));
  CHECK(ok == Json({{"metadata", Json::object()}, {"status", "Success"}}));
  Json failed = Json::parse(ExitStatusJson(3, {"sh", "-c", "exit 3"}));
  CHECK(failed["status"] == "Failure");
  CHECK(failed["reason"] == "NonZeroExitCode");
  CHECK(failed["details"]["causes"] ==
        Json::array({Json{{"reason", "ExitCode"}, {"message", "3"}}}));
  Json error = Json::parse(ErrorStatusJson("exec: \"x\": executable file not found in $PATH"));
  CHECK(error["reason"] == "InternalError");
  CHECK(error["code"] == 500);
}

struct ConnectFixture {
  ConnectFixture() : store(clock), router(store, nullptr, Options()) {
    Json pod = PodJson("p");
    pod["spec"]["nodeName"] = "pjemu-node";
    auto created = store.Create(api::Pods(), "default", pod);
    REQUIRE(created.ok());
    Json running = *created;
    running["status"]["phase"] = "Running";
    REQUIRE(store.Update(api::Pods(), "default", running, api::Subresource::kStatus).ok());
    REQUIRE(store.Create(api::Pods(), "default", PodJson("unbound")).ok());
  }
  RouterOptions Options() {
    RouterOptions o;
    o.clock = &clock;
    o.exec = &exec;
    return o;
  }
  HttpResponse Do(const std::string& target, std::map<std::string, std::string> headers) {
    HttpRequest request;
    request.method = "GET";
    request.target = target;
    request.headers = std::move(headers);
    return router.Route(request);
  }
  FakeClock clock;
  store::Store store;
  FakeExec exec;
  Router router;
};

const std::map<std::string, std::string> kWebSocket = {
    {"connection", "Upgrade"},
    {"upgrade", "websocket"},
    {"sec-websocket-protocol", "v5.channel.k8s.io, v4.channel.k8s.io"}};
const std::string kExec = "/api/v1/namespaces/default/pods/p/exec?command=env&stdout=true";

TEST_CASE("exec is checked, then upgraded to the negotiated protocol", "[exec]") {
  ConnectFixture f;
  HttpResponse r = f.Do(kExec, kWebSocket);
  REQUIRE(r.upgrade);
  CHECK(r.subprotocol == "v5.channel.k8s.io");
  CHECK(f.exec.last.container == "pytorch");
  CHECK(f.exec.last.command == std::vector<std::string>{"env"});

  SECTION("unknown pod, unscheduled pod, unknown container") {
    CHECK(
        f.Do("/api/v1/namespaces/default/pods/nope/exec?command=env&stdout=1", kWebSocket).status ==
        404);
    auto unbound =
        f.Do("/api/v1/namespaces/default/pods/unbound/exec?command=env&stdout=1", kWebSocket);
    CHECK(unbound.status == 400);
    CHECK(Json::parse(unbound.body)["message"] == "pod unbound does not have a host assigned");
    auto bad = f.Do(kExec + "&container=x", kWebSocket);
    CHECK(bad.status == 400);
    CHECK(Json::parse(bad.body)["message"] == "container x is not valid for pod p");
  }
  SECTION("a container that does not run: the kubelet's plain-text 500") {
    f.exec.check = InternalError("container not found (\"pytorch\")");
    auto r500 = f.Do(kExec, kWebSocket);
    CHECK(r500.status == 500);
    CHECK(r500.body == "container not found (\"pytorch\")\n");
    CHECK_FALSE(r500.upgrade);
  }
  SECTION("SPDY (kubectl before 1.30): v4.channel.k8s.io negotiated, or the kubelet's 403") {
    auto spdy = f.Do(kExec, {{"connection", "Upgrade"},
                             {"upgrade", "SPDY/3.1"},
                             {"x-stream-protocol-version",
                              "v4.channel.k8s.io, v3.channel.k8s.io, channel.k8s.io"}});
    REQUIRE(spdy.upgrade);
    CHECK(spdy.upgrade_kind == HttpResponse::UpgradeKind::kRaw);
    using Header = std::pair<std::string, std::string>;
    CHECK(spdy.headers == std::vector<Header>{{"Connection", "Upgrade"},
                                              {"Upgrade", "SPDY/3.1"},
                                              {"X-Stream-Protocol-Version", "v4.channel.k8s.io"}});
    auto old = f.Do(kExec, {{"connection", "Upgrade"},
                            {"upgrade", "SPDY/3.1"},
                            {"x-stream-protocol-version", "v2.channel.k8s.io, channel.k8s.io"}});
    CHECK(old.status == 403);
    CHECK(old.body ==
          "unable to upgrade: unable to negotiate protocol: client supports [v2.channel.k8s.io "
          "channel.k8s.io], server accepts [v4.channel.k8s.io]\n");
    CHECK_FALSE(old.upgrade);
  }
  SECTION("no upgrade at all, or no protocol in common") {
    CHECK(Json::parse(f.Do(kExec, {}).body)["message"] == "Upgrade request required");
    auto other = f.Do(kExec, {{"connection", "Upgrade"},
                              {"upgrade", "websocket"},
                              {"sec-websocket-protocol", "v9.channel.k8s.io"}});
    CHECK(other.status == 400);
  }
  SECTION("port-forward over WebSocket, SPDY, or SPDY tunnelled in a WebSocket") {
    const std::string path = "/api/v1/namespaces/default/pods/p/portforward";
    auto pf = f.Do(path + "?ports=8080", {{"connection", "Upgrade"},
                                          {"upgrade", "websocket"},
                                          {"sec-websocket-protocol", "v4.channel.k8s.io"}});
    REQUIRE(pf.upgrade);
    CHECK(pf.subprotocol == "v4.channel.k8s.io");
    auto spdy = f.Do(path, {{"connection", "Upgrade"},
                            {"upgrade", "SPDY/3.1"},
                            {"x-stream-protocol-version", "portforward.k8s.io"}});
    REQUIRE(spdy.upgrade);
    CHECK(spdy.upgrade_kind == HttpResponse::UpgradeKind::kRaw);
    auto tunnel = f.Do(path, {{"connection", "Upgrade"},
                              {"upgrade", "websocket"},
                              {"sec-websocket-protocol", "SPDY/3.1+portforward.k8s.io"}});
    REQUIRE(tunnel.upgrade);
    CHECK(tunnel.upgrade_kind == HttpResponse::UpgradeKind::kWebSocket);
    CHECK(tunnel.subprotocol == "SPDY/3.1+portforward.k8s.io");
    auto http2 = f.Do(path, {{"connection", "Upgrade"}, {"upgrade", "h2c"}});
    CHECK(http2.status == 400);
    CHECK(Json::parse(http2.body)["message"] ==
          "pjemu serves port-forward over WebSocket (v4.channel.k8s.io, v4.base64.channel.k8s.io, "
          "portforward.k8s.io) and SPDY/3.1 (portforward.k8s.io); this client asked for h2c");
    auto pending = f.Do("/api/v1/namespaces/default/pods/unbound/portforward?ports=1", {});
    CHECK(pending.status == 400);
  }
  SECTION("attach without a kubelet's logs is refused") {
    auto attach = f.Do("/api/v1/namespaces/default/pods/p/attach?stdout=1", kWebSocket);
    CHECK(attach.status == 400);
    CHECK_FALSE(attach.upgrade);
  }
}

TEST_CASE("an exec copies output, feeds stdin until v5's close signal, reports the exit",
          "[exec]") {
  FakeExec exec;
  FakeProcess* process = exec.next.get();
  process->code = 3;
  ExecOptions options;
  options.command = {"sh", "-c", "cat; exit 3"};
  options.with_stdin = options.with_stdout = options.with_stderr = true;
  api::ExecRequest request{"default", "p", "c", options.command, true, false};
  auto channel = std::make_shared<ExecChannel>(exec, request, options, ChannelProtocol::kV5);
  auto sink = std::make_shared<RecordingSink>();
  channel->Start(sink);
  channel->OnMessage(std::string("\x00"
                                 "abc",
                                 4),
                     true);
  channel->OnMessage(std::string("\xff\x00", 2), true);
  CHECK(process->ReadStdin() == "abc");
  process->Output(1, "out");
  process->Output(2, "err");
  process->EndOutput();
  REQUIRE(sink->WaitClosed());
  channel->Stop();
  REQUIRE(sink->messages.size() == 3);
  std::set<std::string> output = {sink->messages[0].first, sink->messages[1].first};
  CHECK(output == std::set<std::string>{"\x01out",
                                        "\x02"
                                        "err"});
  const std::string& last = sink->messages[2].first;
  CHECK(last[0] == kErrorChannel);
  CHECK(Json::parse(last.substr(1))["details"]["causes"][0]["message"] == "3");
}

TEST_CASE("a command that cannot start is a Failure Status on the error channel", "[exec]") {
  FakeExec exec;
  exec.start_error = Status(Code::kNotFound, "exec: \"x\": executable file not found in $PATH");
  ExecOptions options;
  options.command = {"x"};
  options.with_stdout = true;
  auto channel = std::make_shared<ExecChannel>(
      exec, api::ExecRequest{"default", "p", "c", {"x"}, false, false}, options,
      ChannelProtocol::kV4);
  auto sink = std::make_shared<RecordingSink>();
  channel->Start(sink);
  REQUIRE(sink->closed);
  REQUIRE(sink->messages.size() == 1);
  Json status = Json::parse(sink->messages[0].first.substr(1));
  CHECK(status["message"] ==
        "Internal error occurred: error executing command in container: exec: \"x\": "
        "executable file not found in $PATH");
}

}  // namespace
}  // namespace pjemu::apiserver
