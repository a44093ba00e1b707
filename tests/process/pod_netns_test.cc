// Given a BridgeNetwork, each pod's namespace should have its own address on the bridge: two
// pods both listen on the same port, one reaches the other by its address, a process started
// with ProcessSpec::netns_path and an exec into it are in the pod's network; the host has no
// pod address and routes the pod CIDR nowhere (unreachable), so nothing leaves the machine;
// removing a pod removes its namespace, and the network's destruction removes them all.
// Skipped (with the reason) where the host cannot (not root, no `ip`).
#include "emulator/process/pod_netns.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include "emulator/process/container_exec.h"
#include "emulator/process/posix_process_runner.h"

namespace pjemu::process {
namespace {

namespace fs = std::filesystem;

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string ReadFd(int fd) {
  std::string all;
  char buf[256];
  ssize_t n;
  while ((n = read(fd, buf, sizeof buf)) > 0) all.append(buf, static_cast<std::size_t>(n));
  return all;
}

constexpr const char* kPython = "/usr/bin/python3";

TEST_CASE("pod networks: own addresses and ports, reachable from each other, not from the host",
          "[process][netns]") {
  auto net = BridgeNetwork::Create("10.244.0.1", 16);
  if (!net.ok()) {
    WARN("skipped: " << net.status().message());
    return;
  }
  if (access(kPython, X_OK) != 0) {
    WARN("skipped: no " << kPython);
    return;
  }
  auto a = (*net)->AddPod("podaaaa", "10.244.1.2");
  auto b = (*net)->AddPod("podbbbb", "10.244.1.3");
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  CHECK(fs::exists(*a));

  RealClock clock;
  EventLoop loop{clock};
  PosixProcessRunner runner{loop};
  fs::path dir = fs::path(PJEMU_BINARY_DIR) / "pod_netns_test";
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::optional<ProcessExit> server_exit, client_exit;
  auto start = [&](const std::string& netns, const std::string& script, const std::string& log,
                   std::optional<ProcessExit>* exit) {
    ProcessSpec spec;
    spec.argv = {kPython, "-c", script};
    spec.env = {"PATH=/usr/bin:/bin"};
    spec.log_path = (dir / log).string();
    spec.netns_path = netns;
    spec.name = "default/" + log + "/c";
    return runner.Start(spec, [exit](const ProcessExit& e) { *exit = e; });
  };
  // Pod a listens on 29400 on every address; pod b binds the same port too, then connects.
  auto server = start(*a,
                      "import socket\n"
                      "s = socket.socket(); s.bind(('0.0.0.0', 29400)); s.listen(1)\n"
                      "c, peer = s.accept(); print('from', peer[0]); c.sendall(b'hi')\n",
                      "server.log", &server_exit);
  REQUIRE(server.ok());
  auto client =
      start(*b,
            "import socket, time\n"
            "mine = socket.socket(); mine.bind(('0.0.0.0', 29400))\n"
            "for i in range(100):\n"
            "    try:\n"
            "        c = socket.create_connection(('10.244.1.2', 29400), timeout=5); break\n"
            "    except ConnectionRefusedError: time.sleep(0.05)\n"
            "print('got', c.recv(2).decode())\n",
            "client.log", &client_exit);
  REQUIRE(client.ok());

  // An exec into pod b's process sees the pod's eth0 address.
  ContainerExecSpec exec;
  exec.target = *client;
  exec.env = {"PATH=/usr/sbin:/usr/bin:/sbin:/bin"};
  exec.argv = {"ip", "-4", "-o", "addr", "show", "dev", "eth0"};
  auto p = StartInContainer(exec);
  if (p.ok()) {
    std::string out = ReadFd((*p)->stdout_fd());
    (*p)->Wait();
    CHECK(out.find("10.244.1.3/16") != std::string::npos);
  }

  REQUIRE(loop.RunUntil([&] { return server_exit && client_exit; }, 30s));
  CHECK(server_exit->exit_code == 0);
  CHECK(client_exit->exit_code == 0);
  CHECK(ReadFile(dir / "server.log").find("from 10.244.1.3") != std::string::npos);
  CHECK(ReadFile(dir / "client.log").find("got hi") != std::string::npos);

  // The host has no pod address, and its route for the pod CIDR goes nowhere.
  CHECK(RunCommand({"sh", "-c", "! ip -4 -o addr show to 10.244.0.0/16 | grep -q ."}).ok());
  Status route = RunCommand({"ip", "route", "get", "10.244.1.2"});
  CHECK_FALSE(route.ok());
  CHECK(route.message().find("No route to host") != std::string::npos);

  // The bridge's namespace: an address added twice is there once, a command run there sees the
  // bridge, and its forwarding is set there.
  REQUIRE((*net)->AddNodeAddress("10.96.0.10").ok());
  REQUIRE((*net)->AddNodeAddress("10.96.0.10").ok());
  CHECK((*net)
            ->RunInNode({"sh", "-c",
                         "test \"$(ip -4 -o addr show dev lo | grep -c ' 10.96.0.10/32 ')\" = 1"})
            .ok());
  CHECK((*net)->RunInNode({"ip", "link", "show", "cni0"}).ok());
  REQUIRE((*net)->SetNodeSysctl("net.ipv4.ip_forward", "1").ok());
  CHECK((*net)->RunInNode({"sh", "-c", "test \"$(cat /proc/sys/net/ipv4/ip_forward)\" = 1"}).ok());
  // A pod's side: its eth0 is up with its address, its default route via the bridge.
  CHECK(RunCommand({"ip", "netns", "exec", fs::path(*b).filename().string(), "sh", "-c",
                    "ip -o link show eth0 | grep -q 'state UP' && "
                    "ip route show default | grep -q 'via 10.244.0.1 dev eth0'"})
            .ok());

  (*net)->RemovePod("podaaaa");
  CHECK_FALSE(fs::exists(*a));

  // Not a bound: what a pod's network costs at its start (mean of 10 AddPod calls).
  double add_ms = 0;
  for (int i = 0; i < 10; ++i) {
    auto begin = std::chrono::steady_clock::now();
    REQUIRE((*net)->AddPod("lat" + std::to_string(i), "10.244.2." + std::to_string(i + 2)).ok());
    add_ms += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - begin)
                  .count() /
              10;
  }
  for (int i = 0; i < 10; ++i) (*net)->RemovePod("lat" + std::to_string(i));
  std::printf("pod network latency (mean of 10): AddPod %.2f ms\n", add_ms);
  std::string b_path = *b;
  net->reset();
  CHECK_FALSE(fs::exists(b_path));
}

TEST_CASE("pod networks: a bad name or a command that fails is an error", "[process][netns]") {
  CHECK_FALSE(RunCommand({"sh", "-c", "echo nope >&2; exit 3"}).ok());
  CHECK(RunCommand({"sh", "-c", "echo nope >&2; exit 3"}).message().find("nope") !=
        std::string::npos);
  CHECK(RunCommand({"no-such-program-here"}).code() == Code::kUnavailable);
  auto net = BridgeNetwork::Create("10.244.0.1", 16);
  if (!net.ok()) return;
  CHECK((*net)->AddPod("Bad_Name", "10.244.1.9").status().code() == Code::kInvalid);
}

}  // namespace
}  // namespace pjemu::process
