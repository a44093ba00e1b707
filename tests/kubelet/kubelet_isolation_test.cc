// Given a kubelet with the sandbox on (root), pods should be isolated as a cluster's are: each
// pod has a network of its own (an address from the node's pod CIDR, its declared ports as they
// are), so two jobs whose masters listen on the same fixed port both run, each worker reaching
// its own master by name; each container's command is PID 1 of its own PID namespace, so an
// exec's `ps` shows only the container's processes, its `kill 1` ends only that container, and
// a deletion waits out the grace period for a PID 1 without a SIGTERM handler; a pod with
// shareProcessNamespace has one namespace for its containers under a pause; memory limits
// are the kernel's. Skipped (with the reason) where the host cannot.
#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <filesystem>

#include "emulator/process/sandbox.h"
#include "tests/kubelet/node_fixture.h"

namespace pjemu::kubelet {
namespace {

KubeletOptions SandboxOn() {
  KubeletOptions o;
  o.sandbox = KubeletOptions::Sandbox::kOn;
  return o;
}

#define SKIP_WITHOUT_ISOLATION()                                      \
  do {                                                                \
    Status available = process::SandboxAvailable();                   \
    if (available.ok()) available = process::PidNamespaceAvailable(); \
    if (!available.ok()) {                                            \
      WARN("skipped: " << available.message());                       \
      return;                                                         \
    }                                                                 \
  } while (false)

std::string Output(Kubelet& kubelet, const api::ExecRequest& request, int* code) {
  auto p = kubelet.Exec(request);
  if (!p.ok()) return "exec failed: " + p.status().message();
  std::string all;
  char buf[512];
  ssize_t n;
  while ((n = read((*p)->stdout_fd(), buf, sizeof buf)) > 0) all.append(buf, n);
  *code = (*p)->Wait();
  return all;
}

Json PythonContainer(const std::string& name, const std::string& script) {
  return {{"name", name},
          {"image", "python:3.11"},
          {"command", {"python3", "-c", script}},
          {"env",
           {{{"name", "MASTER_ADDR"}, {"value", "job-master-0"}},
            {{"name", "MASTER_PORT"}, {"value", "29400"}}}}};
}

TEST_CASE("isolation: two jobs' masters on one fixed port, each worker reaching its own by name",
          "[kubelet][process][isolation]") {
  SKIP_WITHOUT_ISOLATION();
  NodeFixture f(SandboxOn(), "isolation-net");
  const std::string master =
      "import os, socket\n"
      "s = socket.socket(); s.bind(('0.0.0.0', int(os.environ['MASTER_PORT']))); s.listen(1)\n"
      "c, peer = s.accept(); c.sendall(os.environ['TEAM'].encode()); c.close()\n";
  const std::string worker =
      "import os, socket, time\n"
      "for i in range(200):\n"
      "    try:\n"
      "        c = socket.create_connection((os.environ['MASTER_ADDR'], "
      "int(os.environ['MASTER_PORT'])), timeout=5); break\n"
      "    except OSError: time.sleep(0.05)\n"
      "print('master says', c.recv(64).decode())\n";
  for (const char* ns : {"team-a", "team-b"}) {
    Json namespace_obj = {
        {"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", ns}}}};
    (void)f.client->Create(api::Namespaces(), "", namespace_obj);
    Json svc = {{"apiVersion", "v1"},
                {"kind", "Service"},
                {"metadata", {{"name", "job-master-0"}}},
                {"spec",
                 {{"clusterIP", "None"},
                  {"selector", {{"job", "job-master-0"}}},
                  {"ports", {{{"name", "c10d"}, {"port", 29400}, {"targetPort", 29400}}}}}}};
    REQUIRE(f.client->Create(api::Services(), ns, svc).ok());
    Json m = PythonContainer("pytorch", master);
    m["env"].push_back({{"name", "TEAM"}, {"value", ns}});
    Json pod = TestPod("job-master-0", {m});
    pod["metadata"]["labels"] = {{"job", "job-master-0"}};
    f.Create(pod, ns);
    f.Create(TestPod("job-worker-0", {PythonContainer("pytorch", worker)}), ns);
  }
  for (const char* ns : {"team-a", "team-b"}) {
    INFO(ns);
    REQUIRE(f.WaitPhase("job-worker-0", "Succeeded", 30s, ns));
    REQUIRE(f.WaitPhase("job-master-0", "Succeeded", 10s, ns));
    auto log = f.kubelet->Find({ns, "job-worker-0", "", false});
    REQUIRE(log.ok());
    CHECK(ReadFile(log->path).find(std::string("master says ") + ns) != std::string::npos);
    // A network of the pod's own where the host can (`ip`); else the host's, ports remapped.
    if (!f.kubelet->NetworkNamespace(ns, "job-master-0").empty()) {
      std::string ip = f.Get("job-master-0", ns)["status"]["podIP"];
      CHECK(ip.rfind("10.244.1.", 0) == 0);
    }
  }
  CHECK(f.Get("job-master-0", "team-a")["status"]["podIP"] !=
        f.Get("job-master-0", "team-b")["status"]["podIP"]);
}

TEST_CASE("isolation: a pod's containers wait while the cluster DNS server starts",
          "[kubelet][process][isolation]") {
  SKIP_WITHOUT_ISOLATION();
  KubeletOptions o = SandboxOn();
  o.network = std::make_shared<ClusterNetwork>();
  std::atomic<ClusterNetwork::DnsState> state{ClusterNetwork::DnsState::kStarting};
  o.network->SetDns(
      "10.96.0.10", [](const std::string&, const std::string&) { return false; },
      [&state] { return state.load(); });
  NodeFixture f(o, "isolation-dns");
  if (!o.network->isolated()) {
    WARN("skipped: no pod network");
    return;
  }
  auto resolv_pod = [](const std::string& name) {
    Json c = {{"name", "main"},
              {"image", "python:3.11"},
              {"command", {"python3", "-c", "print(open('/etc/resolv.conf').read())"}}};
    return TestPod(name, {c});
  };
  auto log_of = [&f](const std::string& pod) {
    auto log = f.kubelet->Find({"default", pod, "", false});
    return log.ok() ? ReadFile(log->path) : std::string();
  };
  f.Create(resolv_pod("held"));
  // Admitted (an address) but its container stays in ContainerCreating while the server starts.
  REQUIRE(f.Wait([&] { return !f.Get("held")["status"].value("podIP", "").empty(); }, 10s));
  CHECK_FALSE(f.WaitPhase("held", "Succeeded", 300ms));
  CHECK(f.Status("held", "main")["state"].contains("waiting"));
  // A server that fails to start is no cluster DNS: the held container starts without it.
  state = ClusterNetwork::DnsState::kFailed;
  REQUIRE(f.WaitPhase("held", "Succeeded", 10s));
  CHECK(log_of("held").find("nameserver 127.0.0.1") != std::string::npos);
  // Once it answers, a pod's resolv.conf names it.
  state = ClusterNetwork::DnsState::kServing;
  f.Create(resolv_pod("served"));
  REQUIRE(f.WaitPhase("served", "Succeeded", 10s));
  CHECK(log_of("served").find("nameserver 10.96.0.10") != std::string::npos);
}

TEST_CASE("isolation: exec's ps shows the container's processes, its kill 1 ends the container",
          "[kubelet][process][isolation]") {
  SKIP_WITHOUT_ISOLATION();
  NodeFixture f(SandboxOn(), "isolation-pid");
  Json c = {{"name", "main"},
            {"image", "busybox"},
            {"command", {"sh", "-c", "trap 'exit 143' TERM; while :; do sleep 0.1; done"}}};
  f.Create(TestPod("pid", {c}, "OnFailure"));
  REQUIRE(f.WaitPhase("pid", "Running"));
  int code = -1;
  std::string ps =
      Output(*f.kubelet, {"default", "pid", "", {"ps", "-e", "-o", "pid=,args="}}, &code);
  CHECK(code == 0);
  INFO(ps);
  CHECK(ps.substr(ps.find_first_not_of(' '), 12) == "1 sh -c trap");  // its command is PID 1
  CHECK(std::count(ps.begin(), ps.end(), '\n') <= 4);  // sh, sleep, ps: not the host's
  std::string kill = Output(*f.kubelet, {"default", "pid", "", {"kill", "1"}}, &code);
  CHECK(code == 0);
  REQUIRE(f.Wait([&] { return f.Status("pid", "main").value("restartCount", 0) == 1; }, 10s));
  Json last = f.Status("pid", "main")["lastState"]["terminated"];
  CHECK(last.value("exitCode", 0) == 143);
  CHECK(getppid() > 1);  // the host is untouched, this test with it
}

TEST_CASE("isolation: deleting a PID 1 without a SIGTERM handler waits out the grace period",
          "[kubelet][process][isolation]") {
  SKIP_WITHOUT_ISOLATION();
  NodeFixture f(SandboxOn(), "isolation-grace");
  Json c = {{"name", "main"}, {"image", "busybox"}, {"command", {"sleep", "600"}}};
  Json pod = TestPod("grace", {c});
  pod["spec"]["terminationGracePeriodSeconds"] = 1;
  f.Create(pod);
  REQUIRE(f.WaitPhase("grace", "Running"));
  auto begin = std::chrono::steady_clock::now();
  REQUIRE(f.client->Delete(api::Pods(), "default", "grace", {}).ok());
  REQUIRE(f.Wait([&] { return f.Get("grace").is_null(); }, 10s));
  double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  CHECK(waited >= 0.9);  // SIGTERM was ignored: SIGKILL after the 1 s grace period
}

TEST_CASE("isolation: shareProcessNamespace: the containers share one namespace, a pause its PID 1",
          "[kubelet][process][isolation]") {
  SKIP_WITHOUT_ISOLATION();
  NodeFixture f(SandboxOn(), "isolation-shared-pid");
  Json a = {{"name", "a"},
            {"image", "busybox"},
            {"command", {"sh", "-c", "trap 'exit 143' TERM; while :; do sleep 0.1; done"}}};
  Json b = {{"name", "b"}, {"image", "busybox"}, {"command", {"sleep", "600"}}};
  Json pod = TestPod("shared", {a, b}, "OnFailure");
  pod["spec"]["shareProcessNamespace"] = true;
  pod["spec"]["terminationGracePeriodSeconds"] = 30;
  f.Create(pod);
  REQUIRE(f.WaitPhase("shared", "Running"));
  int code = -1;
  std::string ps =
      Output(*f.kubelet, {"default", "shared", "b", {"ps", "-e", "-o", "pid=,args="}}, &code);
  CHECK(code == 0);
  INFO(ps);
  if (ps.find("catatonit") == std::string::npos) {
    WARN("skipped: no pause program (catatonit) on this host");
    return;
  }
  CHECK(ps.substr(ps.find_first_not_of(' '), 2) == "1 ");  // the pause is PID 1
  CHECK(ps.find("catatonit -P\n") != std::string::npos);
  CHECK(ps.find("sh -c trap") != std::string::npos);  // container a, seen from b
  CHECK(ps.find("sleep 600") != std::string::npos);
  CHECK(std::count(ps.begin(), ps.end(), '\n') <= 7);  // the pod's, never the host's
  std::string ns = Output(*f.kubelet, {"default", "shared", "a", {"readlink", "/proc/1/ns/pid"}},
                          &code);
  CHECK(code == 0);
  // b signals a's process by name, as `pkill` in a sidecar does: a ends, and is restarted.
  Output(*f.kubelet, {"default", "shared", "b", {"pkill", "-TERM", "-f", "sh -c trap"}}, &code);
  CHECK(code == 0);
  REQUIRE(f.Wait([&] { return f.Status("shared", "a").value("restartCount", 0) == 1; }, 10s));
  CHECK(f.Status("shared", "a")["lastState"]["terminated"].value("exitCode", 0) == 143);
  // Not PID 1: b's sleep dies of SIGTERM at once, no 30 s grace period is waited out.
  auto begin = std::chrono::steady_clock::now();
  REQUIRE(f.client->Delete(api::Pods(), "default", "shared", {}).ok());
  REQUIRE(f.Wait([&] { return f.Get("shared").is_null(); }, 20s));
  double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  CHECK(waited < 10);
  // Nothing is left in the pod's namespace: the pause went with the pod.
  std::string inode = ns.substr(ns.find('[') + 1, ns.find(']') - ns.find('[') - 1);
  REQUIRE_FALSE(inode.empty());
  CHECK(f.Wait(
      [&] {
        for (const auto& e : std::filesystem::directory_iterator("/proc")) {
          std::error_code ec;
          auto link = std::filesystem::read_symlink(e.path() / "ns" / "pid", ec);
          if (!ec && link.string() == "pid:[" + inode + "]") return false;
        }
        return true;
      },
      5s));
}

}  // namespace
}  // namespace pjemu::kubelet

namespace pjemu::kubelet {
namespace {

// The Training Operator's smoke-dist example described by an image map written from its
// Dockerfile (`COPY dist_sendrecv.py /opt/mlkube/`, a one-file `files:` entry), and a Python
// image's `python`: both failed before (a file cannot be an overlay; no `python` on the host).
TEST_CASE("isolation: a one-file files: entry and `python` in a host Python image",
          "[kubelet][process][isolation]") {
  SKIP_WITHOUT_ISOLATION();
  const std::string dir =
      std::string(PJEMU_BINARY_DIR) + "/test-one-file-" + std::to_string(getpid());
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/dist_sendrecv.py") << "print('script from the map')\n";
  std::ofstream(dir + "/images.yaml")
      << "images:\n"
         "  - image: example.com/kubeflow/sendrecv:1.0\n"
         "    entrypoint: [python3, /opt/mlkube/dist_sendrecv.py]\n"
         "    files: {/opt/mlkube/dist_sendrecv.py: dist_sendrecv.py}\n";
  KubeletOptions o = SandboxOn();
  o.user_image_map_path = dir + "/images.yaml";
  NodeFixture f(o, "isolation-one-file");
  f.Create(TestPod("sendrecv", {{{"name", "c"}, {"image", "example.com/kubeflow/sendrecv:1.0"}}}));
  f.Create(TestPod("py", {{{"name", "c"},
                           {"image", "python:3.11"},
                           {"command", {"sh", "-c", "command -v python && python -c 'print(42)'"}}}}));
  REQUIRE(f.WaitPhase("sendrecv", "Succeeded", 20s));
  REQUIRE(f.WaitPhase("py", "Succeeded", 20s));
  CHECK(ReadFile(f.kubelet->Find({"default", "sendrecv", "", false})->path)
            .find("script from the map") != std::string::npos);
  std::string py = ReadFile(f.kubelet->Find({"default", "py", "", false})->path);
  CHECK(py.find("/usr/local/pjemu-python/bin/python") != std::string::npos);
  CHECK(py.find(" 42\n") != std::string::npos);
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
}

}  // namespace
}  // namespace pjemu::kubelet
