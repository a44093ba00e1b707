// Given pods with volumes and env sources, the kubelet should set the volumes up before the
// containers (FailedMount until it can), give each container the pod's filesystem under the
// sandbox (emptyDir shared with an init container, configMap items updated in place, /etc/hosts
// with the pod's own name), wait for missing ConfigMaps/Secrets, and evict a pod whose emptyDir
// outgrows its sizeLimit. Real processes; the sandboxed cases are skipped where the host cannot
// make mount namespaces (not root).
#include <catch2/catch.hpp>

#include "emulator/api/base64.h"
#include "emulator/kubelet/volumes.h"
#include "emulator/process/sandbox.h"
#include "node_fixture.h"

namespace pjemu::kubelet {
namespace {

namespace fs = std::filesystem;

KubeletOptions Options(bool sandbox) {
  KubeletOptions o;
  o.sandbox = sandbox ? KubeletOptions::Sandbox::kOn : KubeletOptions::Sandbox::kOff;
  o.housekeeping_interval = 100ms;
  return o;
}

// Catch2 2.13 has no SKIP: a warning with the probe's reason, and the case ends.
#define REQUIRE_SANDBOX()                                  \
  do {                                                     \
    if (Status s = process::SandboxAvailable(); !s.ok()) { \
      WARN("skipped: " << s.message());                    \
      return;                                              \
    }                                                      \
  } while (0)

Json Shell(const std::string& name, const std::string& script) {
  return {{"name", name}, {"image", "busybox"}, {"command", {"sh", "-c", script}}};
}

std::string Log(NodeFixture& f, const std::string& pod, const std::string& container) {
  auto log = f.kubelet->Find({"default", pod, container, false});
  return log.ok() ? ReadFile(log->path) : "";
}

Json EventWith(NodeFixture& f, const std::string& pod, const std::string& reason) {
  auto list = f.client->List(api::Events(), "");
  if (!list.ok()) return Json();
  for (const Json& e : (*list)["items"]) {
    if (e["involvedObject"].value("name", "") == pod && e.value("reason", "") == reason) return e;
  }
  return Json();
}

void Put(NodeFixture& f, const api::ResourceType& type, Json object) {
  auto got = f.client->Get(type, "default", object["metadata"]["name"].get<std::string>());
  if (got.ok()) {
    object["metadata"]["resourceVersion"] = (*got)["metadata"]["resourceVersion"];
    REQUIRE(f.client->Update(type, "default", object).ok());
  } else {
    REQUIRE(f.client->Create(type, "default", object).ok());
  }
}

TEST_CASE("an init container fills an emptyDir that the container reads",
          "[kubelet][process][volumes]") {
  REQUIRE_SANDBOX();
  NodeFixture f(Options(true), "volumes");
  Json pod = TestPod("fill", {Shell("main", "cat /work/greeting")});
  pod["spec"]["initContainers"] =
      Json::array({Shell("init", "echo hello from init > /work/greeting")});
  pod["spec"]["volumes"] = {{{"name", "work"}, {"emptyDir", Json::object()}}};
  pod["spec"]["initContainers"][0]["volumeMounts"] = {{{"name", "work"}, {"mountPath", "/work"}}};
  pod["spec"]["containers"][0]["volumeMounts"] = {{{"name", "work"}, {"mountPath", "/work"}}};
  f.Create(pod);
  REQUIRE(f.WaitPhase("fill", "Succeeded"));
  CHECK(Log(f, "fill", "main").find(" stdout F hello from init\n") != std::string::npos);
}

TEST_CASE("a configMap volume shows its items with defaultMode and follows updates",
          "[kubelet][process][volumes]") {
  REQUIRE_SANDBOX();
  NodeFixture f(Options(true), "volumes");
  Put(f, api::ConfigMaps(), {{"metadata", {{"name", "hp"}}}, {"data", {{"lr", "0.1"}}}});
  Json c = Shell("main",
                 "stat -c %a /cfg/params/lr.txt; cat /cfg/params/lr.txt; echo; "
                 "until grep -q 0.2 /cfg/params/lr.txt; do sleep 0.1; done; echo updated");
  c["volumeMounts"] = {{{"name", "cfg"}, {"mountPath", "/cfg"}, {"readOnly", true}}};
  Json pod = TestPod("cm", {c});
  pod["spec"]["volumes"] = {{{"name", "cfg"},
                             {"configMap",
                              {{"name", "hp"},
                               {"defaultMode", 0640},
                               {"items", {{{"key", "lr"}, {"path", "params/lr.txt"}}}}}}}};
  f.Create(pod);
  REQUIRE(f.Wait([&] { return Log(f, "cm", "main").find("0.1") != std::string::npos; }));
  std::string log = Log(f, "cm", "main");
  CHECK(log.find(" stdout F 640\n") != std::string::npos);
  Put(f, api::ConfigMaps(), {{"metadata", {{"name", "hp"}}}, {"data", {{"lr", "0.2"}}}});
  REQUIRE(f.WaitPhase("cm", "Succeeded"));
  CHECK(Log(f, "cm", "main").find(" stdout F updated\n") != std::string::npos);
}

TEST_CASE("an image's files are a copy-on-write overlay with its env and workingDir",
          "[kubelet][process][volumes]") {
  REQUIRE_SANDBOX();
  std::string dir = std::string(PJEMU_BINARY_DIR) + "/test-image-files-" + std::to_string(getpid());
  fs::remove_all(dir);
  fs::create_directories(dir + "/src");
  std::ofstream(dir + "/src/train.py") << "print('hi')\n";
  std::ofstream(dir + "/images.yaml") << "images:\n"
                                         "  - image: registry.example.com/team/train:*\n"
                                         "    files: {/workspace: src}\n"
                                         "    env: {GREETING: from-image, OTHER: image}\n"
                                         "    workingDir: /workspace\n"
                                         "    entrypoint: [sh]\n";
  KubeletOptions o = Options(true);
  o.user_image_map_path = dir + "/images.yaml";
  NodeFixture f(o, "volumes");
  Json c = {{"name", "main"},
            {"image", "registry.example.com/team/train:v1"},
            {"args",
             {"-c",
              "pwd; cat train.py; echo $GREETING $OTHER; echo new > train.py; "
              "echo out > result; cat train.py"}},
            {"env", {{{"name", "OTHER"}, {"value", "pod"}}}}};
  f.Create(TestPod("img", {c}));
  REQUIRE(f.WaitPhase("img", "Succeeded"));
  std::string log = Log(f, "img", "main");
  CHECK(log.find(" stdout F /workspace\n") != std::string::npos);
  CHECK(log.find(" stdout F print('hi')\n") != std::string::npos);
  CHECK(log.find(" stdout F from-image pod\n") != std::string::npos);  // the pod's env wins
  CHECK(log.find(" stdout F new\n") != std::string::npos);
  // The writes landed in the container's upper layer, never in the host folder.
  CHECK(ReadFile(dir + "/src/train.py") == "print('hi')\n");
  CHECK_FALSE(fs::exists(dir + "/src/result"));
  fs::remove_all(dir);
}

TEST_CASE("every volume kind at its mountPath, subPath and readOnly, every env source",
          "[kubelet][process][volumes]") {
  REQUIRE_SANDBOX();
  NodeFixture f(Options(true), "volumes");
  std::string host = f.root + "/host", pv = f.root + "/pv";
  fs::create_directories(host);
  std::ofstream(host + "/h.txt") << "from-host";
  Put(f, api::ConfigMaps(),
      {{"metadata", {{"name", "hp"}}}, {"data", {{"train.py", "print(1)"}, {"LR", "0.5"}}}});
  Put(f, api::Secrets(),
      {{"metadata", {{"name", "tok"}}}, {"data", {{"token", api::EncodeBase64("s3cr3t")}}}});
  REQUIRE(f.client
              ->Create(api::PersistentVolumes(), "",
                       {{"metadata", {{"name", "pv1"}}},
                        {"spec",
                         {{"capacity", {{"storage", "1Gi"}}},
                          {"accessModes", {"ReadWriteOnce"}},
                          {"hostPath", {{"path", pv}}},
                          {"claimRef", {{"namespace", "default"}, {"name", "ds"}}}}}})
              .ok());
  auto claim = f.client->Create(api::PersistentVolumeClaims(), "default",
                                {{"metadata", {{"name", "ds"}}},
                                 {"spec",
                                  {{"accessModes", {"ReadWriteOnce"}},
                                   {"volumeName", "pv1"},
                                   {"resources", {{"requests", {{"storage", "1Gi"}}}}}}}});
  REQUIRE(claim.ok());
  Json bound = *claim;
  bound["status"] = {{"phase", "Bound"}};
  REQUIRE(
      f.client->Update(api::PersistentVolumeClaims(), "default", bound, api::Subresource::kStatus)
          .ok());
  std::string script =
      "cat /app/train.py; echo; cat /sec/token; echo; cat /info/labels; echo; cat /all/name; echo; "
      "cat /host/h.txt; echo; echo kept > /data/out; df -t tmpfs /dev/shm >/dev/null && echo shm; "
      "touch /sec/x 2>/dev/null || echo read-only; echo env:$LR:$CFG_LR:$TOKEN:$POD:$NODE";
  Json c = Shell("main", script);
  c["volumeMounts"] = {{{"name", "cfg"}, {"mountPath", "/app/train.py"}, {"subPath", "train.py"}},
                       {{"name", "sec"}, {"mountPath", "/sec"}, {"readOnly", true}},
                       {{"name", "info"}, {"mountPath", "/info"}},
                       {{"name", "all"}, {"mountPath", "/all"}},
                       {{"name", "host"}, {"mountPath", "/host"}},
                       {{"name", "data"}, {"mountPath", "/data"}},
                       {{"name", "dshm"}, {"mountPath", "/dev/shm"}}};
  c["envFrom"] = {{{"configMapRef", {{"name", "hp"}}}, {"prefix", "CFG_"}}};
  c["env"] = {
      {{"name", "LR"}, {"valueFrom", {{"configMapKeyRef", {{"name", "hp"}, {"key", "LR"}}}}}},
      {{"name", "TOKEN"}, {"valueFrom", {{"secretKeyRef", {{"name", "tok"}, {"key", "token"}}}}}},
      {{"name", "POD"}, {"valueFrom", {{"fieldRef", {{"fieldPath", "metadata.name"}}}}}},
      {{"name", "NODE"}, {"valueFrom", {{"fieldRef", {{"fieldPath", "spec.nodeName"}}}}}}};
  Json pod = TestPod("kinds", {c});
  pod["metadata"]["labels"] = {{"app", "train"}};
  Json name_item = {{"path", "name"}, {"fieldRef", {{"fieldPath", "metadata.name"}}}};
  pod["spec"]["volumes"] = {
      {{"name", "cfg"}, {"configMap", {{"name", "hp"}}}},
      {{"name", "sec"}, {"secret", {{"secretName", "tok"}}}},
      {{"name", "info"},
       {"downwardAPI",
        {{"items", {{{"path", "labels"}, {"fieldRef", {{"fieldPath", "metadata.labels"}}}}}}}}},
      {{"name", "all"},
       {"projected",
        {{"sources",
          {{{"downwardAPI", {{"items", {name_item}}}}}, {{"secret", {{"name", "tok"}}}}}}}}},
      {{"name", "host"}, {"hostPath", {{"path", host}, {"type", "Directory"}}}},
      {{"name", "data"}, {"persistentVolumeClaim", {{"claimName", "ds"}}}},
      {{"name", "dshm"}, {"emptyDir", {{"medium", "Memory"}, {"sizeLimit", "64Mi"}}}}};
  f.Create(pod);
  REQUIRE(f.WaitPhase("kinds", "Succeeded"));
  std::string log = Log(f, "kinds", "main");
  INFO(log);
  for (const char* line : {"print(1)", "s3cr3t", "app=\"train\"", "kinds", "from-host", "shm",
                           "read-only", "env:0.5:0.5:s3cr3t:kinds:pjemu-node"}) {
    CHECK(log.find(std::string(" stdout F ") + line + "\n") != std::string::npos);
  }
  CHECK(ReadFile(pv + "/out") == "kept\n");
  std::string shm = VolumeDirsOf(f.root, f.Get("kinds")).shm;
  CHECK(fs::is_directory(shm + "/dshm"));
  api::DeleteOptions opts;
  opts.grace_period_seconds = 0;
  REQUIRE(f.client->Delete(api::Pods(), "default", "kinds", opts).ok());
  REQUIRE(f.Wait([&] { return !fs::exists(shm); }));
  CHECK(ReadFile(pv + "/out") == "kept\n");  // the claim's data outlives the pod
}

TEST_CASE("a restarted container starts from a clean root, emptyDirs keep their data",
          "[kubelet][process][volumes]") {
  REQUIRE_SANDBOX();
  NodeFixture f(Options(true), "volumes");
  Json c = Shell("main",
                 "[ -e /marker ] && echo root-kept; touch /marker; echo x >> /keep/runs; "
                 "[ $(wc -l < /keep/runs) -ge 4 ] && exit 0; exit 1");
  c["volumeMounts"] = {{{"name", "keep"}, {"mountPath", "/keep"}}};
  Json pod = TestPod("again", {c}, "OnFailure");
  pod["spec"]["volumes"] = {{{"name", "keep"}, {"emptyDir", Json::object()}}};
  f.Create(pod);
  REQUIRE(f.WaitPhase("again", "Succeeded", 20s));
  std::string dir =
      f.root + "/pods/default_again_" + f.Get("again")["metadata"]["uid"].get<std::string>();
  std::string runs;
  for (int restart = 0; restart <= 5; ++restart) {
    runs += "run " + std::to_string(restart) + ": " +
            ReadFile(dir + "/main/" + std::to_string(restart) + ".log") + "\n";
  }
  INFO(runs << f.Get("again")["status"].dump());
  CHECK(f.Status("again", "main")["restartCount"] == 3);
  for (int restart = 0; restart <= 3; ++restart) {
    std::string log = ReadFile(dir + "/main/" + std::to_string(restart) + ".log");
    CHECK(log.find("root-kept") == std::string::npos);
  }
  // One dead container's filesystem is kept, as the kubelet keeps one dead container.
  CHECK_FALSE(fs::exists(dir + "/containers/main/0"));
  CHECK_FALSE(fs::exists(dir + "/containers/main/1"));
  CHECK(fs::exists(dir + "/containers/main/3"));
}

TEST_CASE("a pod resolves its own name and the Services through /etc/hosts",
          "[kubelet][process][volumes]") {
  REQUIRE_SANDBOX();
  NodeFixture f(Options(true), "volumes");
  REQUIRE(f.client
              ->Create(api::Services(), "default",
                       {{"metadata", {{"name", "named-svc"}}},
                        {"spec",
                         {{"clusterIP", "None"},
                          {"selector", {{"app", "named"}}},
                          {"ports", {{{"port", 23456}}}}}}})
              .ok());
  Json pod = TestPod("named", {Shell("main",
                                     "getent hosts named; getent hosts named-svc.default.svc; "
                                     "echo tmp:$(ls -A /tmp | wc -l); "
                                     "echo env:$MASTER_ADDR:$RDZV:$MASTER_PORT")});
  pod["metadata"]["labels"] = {{"app", "named"}};
  pod["spec"]["containers"][0]["env"] = {{{"name", "MASTER_ADDR"}, {"value", "named-svc"}},
                                         {{"name", "RDZV"}, {"value", "named-svc:23456"}},
                                         {{"name", "MASTER_PORT"}, {"value", "23456"}}};
  f.Create(pod);
  REQUIRE(f.WaitPhase("named", "Succeeded"));
  std::string ip = f.Get("named")["status"]["podIP"].get<std::string>();
  std::string log = Log(f, "named", "main");
  INFO(log);
  CHECK(log.find(" stdout F " + ip + " ") != std::string::npos);
  CHECK(log.find("named-svc") != std::string::npos);
  CHECK(log.find(" stdout F tmp:0\n") != std::string::npos);  // a private, empty /tmp
  // Names stay (they resolve through /etc/hosts); ports go to the service's host port on the
  // host's network, and stay as declared in a network of the pod's own.
  auto at = log.find(" stdout F env:named-svc:named-svc:");
  REQUIRE(at != std::string::npos);
  std::string rest = log.substr(at + 34, log.find('\n', at) - at - 34);  // "<port>:<port>"
  CHECK(rest.substr(0, rest.find(':')) == rest.substr(rest.find(':') + 1));
  if (!f.kubelet->NetworkNamespace("default", "named").empty()) CHECK(rest == "23456:23456");
}

TEST_CASE("an emptyDir over its sizeLimit gets the pod evicted", "[kubelet][process][volumes]") {
  REQUIRE_SANDBOX();
  NodeFixture f(Options(true), "volumes");
  Json c = Shell("main", "head -c 2000000 /dev/zero > /cache/blob; sleep 30");
  c["volumeMounts"] = {{{"name", "cache"}, {"mountPath", "/cache"}}};
  Json pod = TestPod("big", {c});
  pod["spec"]["volumes"] = {{{"name", "cache"}, {"emptyDir", {{"sizeLimit", "1Mi"}}}}};
  f.Create(pod);
  REQUIRE(f.WaitPhase("big", "Failed", 15s));
  Json status = f.Get("big")["status"];
  CHECK(status["reason"] == "Evicted");
  CHECK(status["message"] == "Usage of EmptyDir volume \"cache\" exceeds the limit \"1Mi\". ");
}

TEST_CASE("a hostPath Directory that is missing keeps the pod in FailedMount until it exists",
          "[kubelet][process][volumes]") {
  NodeFixture f(Options(false), "volumes");
  std::string dir = f.root + "/host-data";
  Json pod = TestPod("hp", {TestContainer("main", {"--print", "ran"})});
  pod["spec"]["volumes"] = {
      {{"name", "data"}, {"hostPath", {{"path", dir}, {"type", "Directory"}}}}};
  f.Create(pod);
  REQUIRE(f.Wait([&] { return !EventWith(f, "hp", "FailedMount").is_null(); }));
  Json e = EventWith(f, "hp", "FailedMount");
  CHECK(e["type"] == "Warning");
  CHECK(e["message"] ==
        "MountVolume.SetUp failed for volume \"data\" : hostPath type check "
        "failed: " +
            dir + " is not a directory");
  CHECK(f.Status("hp", "main")["state"]["waiting"]["reason"] == "ContainerCreating");
  CHECK(f.Phase("hp") == "Pending");
  fs::create_directories(dir);  // housekeeping retries the mount
  REQUIRE(f.WaitPhase("hp", "Succeeded"));
}

TEST_CASE("a missing configMap volume and secret env wait for their objects",
          "[kubelet][process][volumes]") {
  NodeFixture f(Options(false), "volumes");
  Json c = TestContainer("main", {"--print-env", "TOKEN"});
  c["env"] = {
      {{"name", "TOKEN"}, {"valueFrom", {{"secretKeyRef", {{"name", "tok"}, {"key", "token"}}}}}}};
  Json pod = TestPod("wait", {c});
  pod["spec"]["volumes"] = {{{"name", "cfg"}, {"configMap", {{"name", "hp"}}}}};
  f.Create(pod);
  REQUIRE(f.Wait([&] { return !EventWith(f, "wait", "FailedMount").is_null(); }));
  CHECK(EventWith(f, "wait", "FailedMount")["message"] ==
        "MountVolume.SetUp failed for volume \"cfg\" : configmap \"hp\" not found");
  Put(f, api::ConfigMaps(), {{"metadata", {{"name", "hp"}}}, {"data", {{"lr", "0.1"}}}});
  REQUIRE(f.Wait([&] {
    return f.Status("wait", "main")["state"]["waiting"].value("reason", "") ==
           "CreateContainerConfigError";
  }));
  CHECK(f.Status("wait", "main")["state"]["waiting"]["message"] == "secret \"tok\" not found");
  Put(f, api::Secrets(),
      {{"metadata", {{"name", "tok"}}}, {"data", {{"token", api::EncodeBase64("s3cr3t")}}}});
  REQUIRE(f.WaitPhase("wait", "Succeeded"));
  CHECK(Log(f, "wait", "main").find(" stdout F TOKEN=s3cr3t\n") != std::string::npos);
  // The volume was laid out on the host; it goes with the pod.
  Json p = f.Get("wait");
  std::string dir = f.root + "/pods/default_wait_" + p["metadata"]["uid"].get<std::string>();
  CHECK(ReadFile(dir + "/volumes/kubernetes.io~configmap/cfg/lr") == "0.1");
  api::DeleteOptions opts;
  opts.grace_period_seconds = 0;
  REQUIRE(f.client->Delete(api::Pods(), "default", "wait", opts).ok());
  REQUIRE(f.Wait([&] { return !fs::exists(dir + "/volumes"); }));
}

}  // namespace
}  // namespace pjemu::kubelet
