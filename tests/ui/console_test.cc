#include "emulator/ui/console.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "emulator/api/resources.h"
#include "emulator/apiserver/router.h"
#include "tests/support/temp_dir.h"

namespace pjemu::ui {
namespace {

using apiserver::HttpRequest;
using apiserver::HttpResponse;

using pjemu::testing::TempDir;

void WriteFile(const std::string& path, const std::string& text) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

HttpRequest Req(std::string method, std::string target, std::string body = "") {
  HttpRequest r;
  r.method = std::move(method);
  r.target = std::move(target);
  r.body = std::move(body);
  return r;
}

std::string Header(const HttpResponse& r, const std::string& name) {
  for (const auto& [k, v] : r.headers) {
    if (k == name) return v;
  }
  return "";
}

struct Fixture {
  FakeClock clock;
  store::Store store{clock};
  TempDir dir;
  std::string metrics_file;  // what metrics_path names for every pod
  apiserver::Mount mount;

  Fixture() {
    metrics_file = dir.path() + "/kubeflow/job-master-0/logs/metrics-rank0.jsonl";
    ConsoleOptions options;
    options.metrics_path = [this](const Json& pod) {
      return pod["metadata"]["name"] == "no-trainer" ? std::string() : metrics_file;
    };
    options.usage = [](const std::string& ns, const std::string& pod) {
      std::vector<ContainerUsage> out;
      if (ns == "kubeflow" && pod == "job-master-0") {
        Time t0 = Time(std::chrono::seconds(1000));
        out.push_back({"pytorch", {{t0, 0.0, 1024}, {t0 + std::chrono::seconds(1), 1.5, 4096}}});
      }
      if (ns == "kubeflow" && pod == "job-worker-0") {  // sampled where NVML is
        out.push_back({"pytorch", {{Time(std::chrono::seconds(1000)), 0.5, 2048, 37.0, 1 << 20}}});
      }
      return out;
    };
    options.io = [](const std::string& ns, const std::string& pod) {
      std::vector<ContainerIo> out;
      if (ns == "kubeflow" && pod == "job-master-0") {
        out.push_back({"pytorch", {{Time(std::chrono::seconds(1000)), 1, 2, 3, 4, 5, 6}}});
      }
      return out;
    };
    options.max_metrics_bytes = 4096;
    mount = MakeConsoleMount(store, std::move(options));
    for (const char* name : {"job-master-0", "job-worker-0", "no-trainer"}) {
      Json pod = {{"apiVersion", "v1"},
                  {"kind", "Pod"},
                  {"metadata", {{"name", name}, {"namespace", "kubeflow"}}},
                  {"spec", {{"containers", {{{"name", "pytorch"}, {"image", "busybox"}}}}}}};
      REQUIRE(store.Create(api::Pods(), "kubeflow", pod).ok());
    }
  }

  HttpResponse Get(const std::string& target, bool authorized = true) {
    return mount.handler(Req("GET", target), authorized);
  }
};

TEST_CASE("console: the static shell is served to anyone, with its content types") {
  Fixture f;
  REQUIRE(f.mount.prefix == "/ui/");
  HttpResponse index = f.Get("/ui/", false);
  CHECK(index.status == 200);
  CHECK(index.content_type == "text/html; charset=utf-8");
  CHECK(index.body.find("<script src=\"app.js\"></script>") != std::string::npos);
  CHECK(Header(index, "Content-Security-Policy").find("default-src 'self'") != std::string::npos);
  CHECK(f.Get("/ui/index.html?x=1", false).body == index.body);
  HttpResponse js = f.Get("/ui/app.js", false);
  CHECK(js.status == 200);
  CHECK(js.content_type == "text/javascript; charset=utf-8");
  CHECK(js.body.find("function watchList") != std::string::npos);
  CHECK(f.Get("/ui/app.css", false).content_type == "text/css; charset=utf-8");
  CHECK(f.Get("/ui/nope.js", false).status == 404);
  CHECK(f.Get("/ui/../apiserver.h", false).status == 404);
  CHECK(f.mount.handler(Req("POST", "/ui/app.js"), true).status == 405);
}

TEST_CASE("console: /ui/api/ needs the token and leaks nothing without it") {
  Fixture f;
  WriteFile(f.metrics_file, "{\"type\":\"step\",\"step\":1,\"loss\":2.0,\"epoch\":1}\n");
  for (const char* target :
       {"/ui/api/namespaces/kubeflow/pods/job-master-0/metrics",
        "/ui/api/namespaces/kubeflow/pods/job-master-0/resources", "/ui/api/validate",
        "/ui/api/namespaces/kubeflow/pods/missing/metrics"}) {
    HttpResponse r = f.Get(target, false);
    CHECK(r.status == 401);
    CHECK(r.body.find("loss") == std::string::npos);
    CHECK(r.body.find("missing") == std::string::npos);
    CHECK(Json::parse(r.body)["reason"] == "Unauthorized");
  }
  CHECK(f.mount.handler(Req("POST", "/ui/api/validate", "kind: x"), false).status == 401);
}

TEST_CASE("console: pod names are checked and looked up in the store") {
  Fixture f;
  CHECK(f.Get("/ui/api/namespaces/kubeflow/pods/..%2F..%2Fetc/metrics").status == 400);
  CHECK(f.Get("/ui/api/namespaces/Kube_flow/pods/job-master-0/metrics").status == 400);
  CHECK(f.Get("/ui/api/namespaces/kubeflow/pods/-x/metrics").status == 400);
  CHECK(f.Get("/ui/api/namespaces/kubeflow/pods/" + std::string(254, 'a') + "/metrics").status ==
        400);
  CHECK(f.Get("/ui/api/namespaces/kubeflow/pods/absent/metrics").status == 404);
  CHECK(f.Get("/ui/api/namespaces/default/pods/job-master-0/metrics").status == 404);
  CHECK(f.Get("/ui/api/namespaces/kubeflow/pods/job-master-0/other").status == 404);
  CHECK(f.Get("/ui/api/namespaces/kubeflow/pods/job-master-0").status == 404);
  CHECK(f.Get("/ui/api/").status == 404);
}

TEST_CASE("console: metrics are read from the trainer's JSON lines") {
  Fixture f;
  SECTION("no file yet: empty lists") {
    Json m = Json::parse(f.Get("/ui/api/namespaces/kubeflow/pods/job-master-0/metrics").body);
    CHECK(m["steps"].empty());
    CHECK(m["epochs"].empty());
    CHECK(m["trainer"] == true);
  }
  SECTION("steps, epochs, and a half-written last line") {
    WriteFile(f.metrics_file,
              "{\"type\":\"step\",\"epoch\":1,\"step\":1,\"batch\":0,\"loss\":2.31,\"samples\":0,"
              "\"time\":0.1}\n"
              "{\"type\":\"step\",\"epoch\":1,\"step\":11,\"batch\":10,\"loss\":1.5,\"samples\":"
              "640,\"time\":0.9}\n"
              "{\"type\":\"epoch\",\"epoch\":1,\"accuracy\":0.6954,\"test_loss\":0.84,\"steps\":"
              "40,\"train_seconds\":3.5,\"train_cpu_seconds\":3.4,\"samples_per_second\":"
              "1463.2,\"time\":4.2}\n"
              "{\"type\":\"step\",\"epoch\":2,\"st");
    HttpResponse r = f.Get("/ui/api/namespaces/kubeflow/pods/job-master-0/metrics");
    REQUIRE(r.status == 200);
    Json m = Json::parse(r.body);
    CHECK(m["steps"] == Json::parse("[[1,2.31,1],[11,1.5,1]]"));
    REQUIRE(m["epochs"].size() == 1);
    CHECK(m["epochs"][0]["accuracy"] == 0.6954);
    CHECK(m["epochs"][0]["test_loss"] == 0.84);
    CHECK(m["epochs"][0]["steps"] == 40);
    CHECK(!m["epochs"][0].contains("train_cpu_seconds"));
    CHECK(m["truncated"] == false);
  }
  SECTION("a large file: only its end, from a whole line") {
    std::string text;
    for (int step = 1; step <= 200; ++step) {
      text +=
          "{\"type\":\"step\",\"epoch\":1,\"step\":" + std::to_string(step) + ",\"loss\":1.0}\n";
    }
    WriteFile(f.metrics_file, text);
    Json m = Json::parse(f.Get("/ui/api/namespaces/kubeflow/pods/job-master-0/metrics").body);
    CHECK(m["truncated"] == true);
    REQUIRE(!m["steps"].empty());
    CHECK(m["steps"].back()[0] == 200);
    CHECK(m["steps"].size() < 200);
    int first = m["steps"][0][0];
    CHECK(m["steps"].size() == static_cast<std::size_t>(200 - first + 1));
  }
  SECTION("a worker's rank file beside the named one") {
    std::string rank1 =
        std::filesystem::path(f.metrics_file).parent_path().string() + "/metrics-rank1.jsonl";
    WriteFile(rank1, "{\"type\":\"step\",\"epoch\":1,\"step\":5,\"loss\":0.5}\n");
    Json m = Json::parse(f.Get("/ui/api/namespaces/kubeflow/pods/job-master-0/metrics").body);
    CHECK(m["steps"] == Json::parse("[[5,0.5,1]]"));
  }
  SECTION("a pod without a trainer") {
    Json m = Json::parse(f.Get("/ui/api/namespaces/kubeflow/pods/no-trainer/metrics").body);
    CHECK(m["trainer"] == false);
    CHECK(m["steps"].empty());
  }
}

TEST_CASE("console: resource samples per container") {
  Fixture f;
  Json r = Json::parse(f.Get("/ui/api/namespaces/kubeflow/pods/job-master-0/resources").body);
  REQUIRE(r["containers"].size() == 1);
  CHECK(r["containers"][0]["container"] == "pytorch");
  CHECK(r["containers"][0]["points"] == Json::parse("[[1000.0,0.0,1024],[1001.0,1.5,4096]]"));
  Json none = Json::parse(f.Get("/ui/api/namespaces/kubeflow/pods/no-trainer/resources").body);
  CHECK(none["containers"].empty());
  // GPU utilisation (%) and memory (bytes) follow, only when the sampler had them.
  Json gpu = Json::parse(f.Get("/ui/api/namespaces/kubeflow/pods/job-worker-0/resources").body);
  REQUIRE(gpu["containers"].size() == 1);
  CHECK(gpu["containers"][0]["points"] == Json::parse("[[1000.0,0.5,2048,37.0,1048576]]"));
}

TEST_CASE("console: network and storage I/O rates per container") {
  Fixture f;
  Json r = Json::parse(f.Get("/ui/api/namespaces/kubeflow/pods/job-master-0/io").body);
  REQUIRE(r["containers"].size() == 1);
  CHECK(r["containers"][0]["points"] == Json::parse("[[1000.0,1.0,2.0,3.0,4.0,5.0,6.0]]"));
  CHECK(Json::parse(f.Get("/ui/api/namespaces/kubeflow/pods/no-trainer/io").body)["containers"].empty());
  CHECK(f.Get("/ui/api/namespaces/kubeflow/pods/absent/io").status == 404);
}

TEST_CASE("console: a TensorBoard's scalars come from the log dirs in its stored status") {
  const api::ResourceType* boards = &api::TensorBoards();
  Fixture f;
  std::string fixtures = std::string(PJEMU_SOURCE_DIR) + "/tests/ui/tfevents";
  Json tb = {{"apiVersion", "tensorstack.dev/v1beta1"},
             {"kind", "TensorBoard"},
             {"metadata", {{"name", "job-5b373"}, {"namespace", "kubeflow"}}},
             {"spec", {{"logDir", {{"hostPath", {{{"path", fixtures + "/torch"}}}}}}}}};
  auto created = f.store.Create(*boards, "kubeflow", tb);
  REQUIRE(created.ok());
  // No status yet: no log dirs, nothing read (the request names no path).
  Json empty = Json::parse(f.Get("/ui/api/namespaces/kubeflow/tensorboards/job-5b373/scalars").body);
  CHECK(empty["series"].empty());
  CHECK(empty["files"] == 0);
  Json with_status = *created;
  with_status["status"] = {{"logDirs", {{{"source", "/x"}, {"path", fixtures + "/torch"}}}}};
  REQUIRE(f.store.Update(*boards, "kubeflow", with_status, api::Subresource::kStatus).ok());
  Json r = Json::parse(f.Get("/ui/api/namespaces/kubeflow/tensorboards/job-5b373/scalars").body);
  CHECK(r["files"] == 1);
  CHECK(r["errors"].empty());
  REQUIRE(r["series"].size() == 3);
  CHECK(r["series"][0]["tag"] == "train/loss");
  CHECK(r["series"][0]["run"] == ".");
  CHECK(r["series"][0]["points"].size() == 9);
  CHECK(r["series"][0]["points"][0][0] == 125);
  CHECK(f.Get("/ui/api/namespaces/kubeflow/tensorboards/absent/scalars").status == 404);
  CHECK(f.Get("/ui/api/namespaces/kubeflow/tensorboards/job-5b373/other").status == 404);
  CHECK(f.Get("/ui/api/namespaces/kubeflow/tensorboards/..%2Fx/scalars").status == 400);
}

// A batch/v1 Job "pi" as kubectl create job sends it.
Json PiJob() {
  return {{"apiVersion", "batch/v1"},
          {"kind", "Job"},
          {"metadata", {{"name", "pi"}, {"namespace", "kubeflow"}}},
          {"spec",
           {{"template",
             {{"spec",
               {{"restartPolicy", "Never"},
                {"containers", {{{"name", "pi"}, {"image", "busybox"}}}}}}}}}}};
}

TEST_CASE("console: every job kind from the resource table, each job with its kind's state") {
  Fixture f;
  REQUIRE(f.store.Create(api::Jobs(), "kubeflow", PiJob()).ok());
  HttpResponse r = f.Get("/ui/api/workloads");
  REQUIRE(r.status == 200);
  const Json body = Json::parse(r.body);
  std::vector<std::string> kinds;
  for (const Json& k : body["kinds"]) kinds.push_back(k["kind"]);
  std::vector<std::string> want;
  for (const api::ResourceType* type : api::WorkloadTypes()) want.push_back(type->kind);
  CHECK(kinds == want);
  REQUIRE(body["items"].size() == 1);
  CHECK(body["items"][0]["kind"] == "Job");
  CHECK(body["items"][0]["plural"] == "jobs");
  CHECK(body["items"][0]["podSelector"].get<std::string>().find("pi") != std::string::npos);
}

TEST_CASE("console: a job's owner tree follows controller ownerReferences level by level") {
  Fixture f;
  Result<Json> stored = f.store.Create(api::Jobs(), "kubeflow", PiJob());
  REQUIRE(stored.ok());
  (*stored)["apiVersion"] = "batch/v1";
  auto owned_by = [](Json object, const Json& owner, const std::string& kind) {
    object["metadata"]["ownerReferences"] = {{{"apiVersion", owner["apiVersion"]},
                                              {"kind", kind},
                                              {"name", owner["metadata"]["name"]},
                                              {"uid", owner["metadata"]["uid"]},
                                              {"controller", true}}};
    return object;
  };
  Json child = {{"apiVersion", "v1"},
                {"kind", "ConfigMap"},
                {"metadata", {{"name", "pi-cm"}, {"namespace", "kubeflow"}}}};
  Result<Json> cm = f.store.Create(api::ConfigMaps(), "kubeflow", owned_by(child, *stored, "Job"));
  REQUIRE(cm.ok());
  Json pod = *f.store.Get(api::Pods(), "kubeflow", "job-master-0");
  (*cm)["apiVersion"] = "v1";
  REQUIRE(f.store.Update(api::Pods(), "kubeflow", owned_by(pod, *cm, "ConfigMap")).ok());

  HttpResponse r = f.Get("/ui/api/namespaces/kubeflow/jobs/pi/tree");
  REQUIRE(r.status == 200);
  const Json tree = Json::parse(r.body);
  CHECK(tree["kind"] == "Job");
  CHECK(tree.contains("state"));
  REQUIRE(tree["children"].size() == 1);
  CHECK(tree["children"][0]["kind"] == "ConfigMap");
  REQUIRE(tree["children"][0]["children"].size() == 1);
  CHECK(tree["children"][0]["children"][0]["name"] == "job-master-0");
  CHECK(tree["children"][0]["children"][0]["phase"] == "Pending");
  CHECK(f.Get("/ui/api/namespaces/kubeflow/jobsets/absent/tree").status == 404);
  CHECK(f.Get("/ui/api/namespaces/kubeflow/jobs/pi/other").status == 404);
  CHECK(f.Get("/ui/api/namespaces/kubeflow/pytorchtrainingjobs/absent/tree").status == 404);
}

TEST_CASE("console: validate gives objects, field lines and the webhook's errors at their line") {
  Fixture f;
  auto validate = [&](const std::string& yaml) {
    HttpResponse r = f.mount.handler(Req("POST", "/ui/api/validate", yaml), true);
    REQUIRE(r.status == 200);
    return Json::parse(r.body);
  };
  SECTION("the seed job is valid") {
    std::ifstream in(std::string(PJEMU_SOURCE_DIR) + "/fixtures/seeds/pytorch-simple.yaml");
    std::string seed((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    Json v = validate(seed);
    CHECK(v["errors"].empty());
    REQUIRE(v["documents"].size() == 1);
    CHECK(v["documents"][0]["errors"].empty());
    CHECK(v["documents"][0]["object"]["metadata"]["name"] == "pytorch-simple");
    CHECK(v["documents"][0]["lines"]["/spec/pytorchReplicaSpecs/Worker/replicas"] == 22);
  }
  SECTION("a webhook error at its field's line") {
    Json v = validate(
        "apiVersion: kubeflow.org/v1\n"
        "kind: PyTorchJob\n"
        "metadata:\n"
        "  name: bad\n"
        "spec:\n"
        "  pytorchReplicaSpecs:\n"
        "    Master:\n"
        "      replicas: 2\n"
        "      template:\n"
        "        spec:\n"
        "          containers:\n"
        "            - name: pytorch\n"
        "              image: busybox\n");
    REQUIRE(v["documents"].size() == 1);
    const Json& errors = v["documents"][0]["errors"];
    REQUIRE(errors.size() == 1);
    CHECK(errors[0]["line"] == 8);
    CHECK(errors[0]["field"] == "spec.pytorchReplicaSpecs[Master].replicas");
    CHECK(errors[0]["message"].get<std::string>().find("must be 1") != std::string::npos);
  }
  SECTION("a syntax error at its line") {
    Json v = validate("apiVersion: v1\nkind: Pod\nmetadata:\n  name: [unclosed\n");
    CHECK(v["documents"].empty());
    REQUIRE(v["errors"].size() == 1);
    CHECK(v["errors"][0]["line"].get<int>() >= 4);
    CHECK(!v["errors"][0]["message"].get<std::string>().empty());
  }
  SECTION("an unknown kind") {
    Json v = validate("apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\n");
    REQUIRE(v["documents"].size() == 1);
    CHECK(v["documents"][0]["errors"][0]["line"] == 2);
  }
  CHECK(f.Get("/ui/api/validate").status == 405);
}

TEST_CASE("router: a mount is served before authentication, and only under its prefix") {
  Fixture f;
  apiserver::RouterOptions options;
  options.token = "s3cret";
  options.mounts.push_back(f.mount);
  apiserver::Router router(f.store, nullptr, options);
  CHECK(router.Route(Req("GET", "/ui/")).status == 200);
  HttpResponse redirect = router.Route(Req("GET", "/ui"));
  CHECK(redirect.status == 301);
  CHECK(Header(redirect, "Location") == "/ui/");
  CHECK(
      router.Route(Req("GET", "/ui/api/namespaces/kubeflow/pods/job-master-0/resources")).status ==
      401);
  HttpRequest with_token = Req("GET", "/ui/api/namespaces/kubeflow/pods/job-master-0/resources");
  with_token.headers["authorization"] = "Bearer s3cret";
  CHECK(router.Route(with_token).status == 200);
  with_token.headers["authorization"] = "Bearer wrong";
  CHECK(router.Route(with_token).status == 401);
  CHECK(router.Route(Req("GET", "/api/v1/namespaces/kubeflow/pods")).status == 401);
  CHECK(router.Route(Req("GET", "/uix/")).status == 401);
}

// The mount matches the raw, undecoded path, so dot segments and encoded slashes under /ui/
// reach the console, never the API routes: the console serves only its embedded assets by exact
// name, and /ui/api/ checks the token itself.
TEST_CASE("router: dot segments under /ui/ reach neither the API nor files, token or not") {
  Fixture f;
  apiserver::RouterOptions options;
  options.token = "s3cret";
  options.mounts.push_back(f.mount);
  apiserver::Router router(f.store, nullptr, options);
  auto with_token = [](std::string target) {
    HttpRequest r = Req("GET", std::move(target));
    r.headers["authorization"] = "Bearer s3cret";
    return r;
  };
  // What a leak would show: the pod list is there for a client with the token.
  HttpResponse direct = router.Route(with_token("/api/v1/namespaces/kubeflow/pods"));
  REQUIRE(direct.status == 200);
  REQUIRE(direct.body.find("job-master-0") != std::string::npos);
  for (const char* target :
       {"/ui/../", "/ui/%2e%2e/", "/ui/.%2e/", "/ui/../api/v1/namespaces/kubeflow/pods",
        "/ui/%2e%2e/api/v1/namespaces/kubeflow/pods", "/ui//../api/v1/namespaces/kubeflow/pods",
        "/ui/..%2fapi/v1/namespaces/kubeflow/pods", "/ui/%2e%2e/%2e%2e/etc/passwd",
        "/ui/../../emulator/ui/console.cc", "/ui/api/../../api/v1/namespaces/kubeflow/pods",
        "/ui/api/..%2f..%2fapi/v1/namespaces/kubeflow/pods", "/ui/api/../app.js"}) {
    CAPTURE(target);
    std::string path(target);
    bool api = path.rfind("/ui/api/", 0) == 0;
    HttpResponse anonymous = router.Route(Req("GET", path));
    CHECK(anonymous.status == (api ? 401 : 404));
    CHECK(anonymous.body.find("PodList") == std::string::npos);
    CHECK(anonymous.body.find("job-master-0") == std::string::npos);
    CHECK(anonymous.body.find("root:") == std::string::npos);
    HttpResponse authorized = router.Route(with_token(path));
    CHECK(authorized.status == 404);
    CHECK(authorized.body.find("PodList") == std::string::npos);
    CHECK(authorized.body.find("job-master-0") == std::string::npos);
    CHECK(authorized.body.find("namespace pjemu") == std::string::npos);
  }
}

}  // namespace
}  // namespace pjemu::ui
