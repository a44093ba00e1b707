#include "emulator/tensorboard/log_dirs.h"

#include <stdlib.h>

#include <catch2/catch.hpp>
#include <filesystem>

#include "emulator/tensorboard/tensorboard_controller.h"
#include "tests/support/temp_dir.h"

namespace pjemu::tensorboard {
namespace {

namespace fs = std::filesystem;

using pjemu::testing::TempDir;

Json Claim(const std::string& volume, const std::string& phase = "Bound") {
  return {{"spec", {{"volumeName", volume}}}, {"status", {{"phase", phase}}}};
}
Json HostVolume(const std::string& path) { return {{"spec", {{"hostPath", {{"path", path}}}}}}; }

struct World {
  std::map<std::string, Json> claims, volumes;
  Result<std::vector<ResolvedLogDir>> Resolve(const Json& spec) const {
    auto sources = ParseLogDirs(spec);
    if (!sources.ok()) return sources.status();
    auto find = [](const std::map<std::string, Json>& m) {
      return [&m](const std::string& n) -> const Json* {
        auto it = m.find(n);
        return it == m.end() ? nullptr : &it->second;
      };
    };
    return ResolveLogDirs(*sources, find(claims), find(volumes));
  }
};

TEST_CASE("log dirs: the tutorial's fileset and the current logDir.pvc form") {
  TempDir tmp;
  World w;
  w.claims["tutorial"] = Claim("pvc-1");
  w.volumes["pvc-1"] = HostVolume(tmp.path() + "/pvc-1_demo_tutorial");
  Json spec = {{"trainingLogFilesets", {"t9k://pvc/tutorial/tutorial-examples/job/ddp/log"}},
               {"logDir", {{"pvc", {{{"name", "tutorial"}, {"subPath", {"./log", "b"}}}}}}},
               {"image", "t9kpublic/tensorflow-2.11.0:cpu-sdk-0.5.2"}};
  auto dirs = w.Resolve(spec);
  REQUIRE(dirs.ok());
  REQUIRE(dirs->size() == 3);
  CHECK((*dirs)[0].source == "t9k://pvc/tutorial/tutorial-examples/job/ddp/log");
  CHECK((*dirs)[0].path == tmp.path() + "/pvc-1_demo_tutorial/tutorial-examples/job/ddp/log");
  CHECK((*dirs)[1].source == "pvc/tutorial/./log");
  CHECK((*dirs)[1].path == tmp.path() + "/pvc-1_demo_tutorial/log");
  CHECK((*dirs)[2].path == tmp.path() + "/pvc-1_demo_tutorial/b");
  // A claim without subPath: the volume's root. spec.local counts as a host folder too.
  w.volumes["pvc-1"] = Json{{"spec", {{"local", {{"path", tmp.path()}}}}}};
  auto root = w.Resolve({{"logDir", {{"pvc", {{{"name", "tutorial"}}}}}}});
  REQUIRE(root.ok());
  CHECK((*root)[0].path == tmp.path());
}

TEST_CASE("log dirs: host folders (pjemu's logDir.hostPath)") {
  World w;
  auto dirs = w.Resolve({{"logDir", {{"hostPath", {{{"path", "/srv/logs/./run1/"}}}}}}});
  REQUIRE(dirs.ok());
  CHECK((*dirs)[0].path == "/srv/logs/run1/");
  CHECK(w.Resolve({{"logDir", {{"hostPath", {{{"path", "logs"}}}}}}}).status().message() ==
        "spec.logDir.hostPath[0].path: Invalid value: \"logs\": must be an absolute path");
  CHECK(w.Resolve({{"logDir", {{"hostPath", {{{"path", "/srv/../etc"}}}}}}}).status().message() ==
        "spec.logDir.hostPath[0].path: Invalid value: \"/srv/../etc\": must not contain '..'");
}

TEST_CASE("log dirs: what can never resolve is kInvalid, naming the field") {
  World w;
  auto message = [&](const Json& spec) {
    auto r = w.Resolve(spec);
    CHECK(r.status().code() == Code::kInvalid);
    return r.status().message();
  };
  CHECK(message(Json::object()) ==
        "spec.logDir: Required value: name a log dir (logDir.pvc, logDir.hostPath or "
        "trainingLogFilesets)");
  CHECK(message({{"trainingLogFilesets", {"t9k://pvc/tutorial/../../etc"}}}) ==
        "spec.trainingLogFilesets[0]: Invalid value: \"../../etc\": must not contain '..'");
  CHECK(message({{"trainingLogFilesets", {"s3://bucket/log"}}}) ==
        "spec.trainingLogFilesets[0]: Invalid value: \"s3://bucket/log\": must be "
        "t9k://pvc/<claim>/<sub-path>");
  CHECK(message({{"trainingLogFilesets", {"t9k://minio/secret/bucket/log"}}})
            .find("MinIO filesets are not supported") != std::string::npos);
  CHECK(message({{"logDir", {{"pvc", {{{"name", "x"}, {"subPath", {"/abs"}}}}}}}}) ==
        "spec.logDir.pvc[0].subPath[0]: Invalid value: \"/abs\": must be a relative path");
  CHECK(message({{"logDir", {{"pvc", {{{"subPath", {"a"}}}}}}}}) ==
        "spec.logDir.pvc[0].name: Required value");
  CHECK(message({{"logDir", {{"s3", {{"uri", {"s3://b/l"}}}}}}}).rfind("spec.logDir.s3: not supported", 0) == 0);
}

TEST_CASE("log dirs: claims not there or not bound yet are kUnavailable, links out are refused") {
  TempDir tmp;
  World w;
  Json spec = {{"logDir", {{"pvc", {{{"name", "data"}, {"subPath", {"log"}}}}}}}};
  CHECK(w.Resolve(spec).status().message() == "PersistentVolumeClaim \"data\" not found");
  CHECK(w.Resolve(spec).status().code() == Code::kUnavailable);
  w.claims["data"] = Claim("", "Pending");
  CHECK(w.Resolve(spec).status().message() == "PersistentVolumeClaim \"data\" is not bound");
  w.claims["data"] = Claim("pv-9");
  CHECK(w.Resolve(spec).status().message() == "PersistentVolume \"pv-9\" not found");
  w.volumes["pv-9"] = Json{{"spec", {{"nfs", {{"path", "/x"}}}}}};
  CHECK(w.Resolve(spec).status().code() == Code::kInvalid);
  // A folder in the volume that is a link out of it.
  fs::create_directories(tmp.path() + "/vol");
  fs::create_directories(tmp.path() + "/elsewhere");
  fs::create_directory_symlink(tmp.path() + "/elsewhere", tmp.path() + "/vol/log");
  w.volumes["pv-9"] = HostVolume(tmp.path() + "/vol");
  auto out = w.Resolve(spec);
  CHECK(out.status().code() == Code::kInvalid);
  CHECK(out.status().message() ==
        "spec.logDir.pvc[0].subPath[0]: Invalid value: \"log\": leaves the volume of claim \"data\"");
  fs::remove(tmp.path() + "/vol/log");
  CHECK(w.Resolve(spec).ok());
}

TEST_CASE("tensorboard status: Ready, phase, url and the transition time") {
  Time t0 = Time(std::chrono::seconds(1764201600));
  Time t1 = t0 + std::chrono::seconds(30);
  Json board = {{"metadata", {{"name", "tb"}, {"namespace", "demo"}}}, {"spec", Json::object()}};
  std::vector<ResolvedLogDir> dirs = {{"pvc/data/log", "/v/log"}};
  Json pending = DesiredStatus(board, Status(Code::kUnavailable, "PersistentVolumeClaim \"data\" is not bound"),
                               t0, "/ui/#/tensorboards/demo/tb");
  CHECK(pending["phase"] == "Pending");
  CHECK(pending["url"] == "/ui/#/tensorboards/demo/tb");
  CHECK(pending["conditions"] ==
        Json::parse(R"([{"type":"Ready","status":"False","reason":"LogDirNotReady",
          "message":"PersistentVolumeClaim \"data\" is not bound",
          "lastTransitionTime":"2025-11-27T00:00:00Z"}])"));
  board["status"] = pending;
  Json still = DesiredStatus(board, Status(Code::kUnavailable, "x"), t1, "u");
  CHECK(still["conditions"][0]["lastTransitionTime"] == "2025-11-27T00:00:00Z");
  Json ready = DesiredStatus(board, dirs, t1, "/ui/#/tensorboards/demo/tb");
  CHECK(ready["phase"] == "Running");
  CHECK(ready["conditions"][0]["status"] == "True");
  CHECK(ready["conditions"][0]["reason"] == "LogDirsResolved");
  CHECK(ready["conditions"][0]["lastTransitionTime"] == "2025-11-27T00:00:30Z");
  CHECK(ready["logDirs"] == Json::parse(R"([{"source":"pvc/data/log","path":"/v/log"}])"));
  board["spec"]["suspend"] = true;
  Json suspended = DesiredStatus(board, dirs, t1, "u");
  CHECK(suspended["phase"] == "Suspended");
  CHECK(suspended["conditions"][0]["reason"] == "Suspended");
  CHECK(DesiredStatus(board, Status(Code::kInvalid, "bad"), t1, "u")["conditions"][0]["reason"] ==
        "Suspended");
  board["spec"].erase("suspend");
  CHECK(DesiredStatus(board, Status(Code::kInvalid, "bad"), t1, "u")["conditions"][0]["reason"] ==
        "InvalidLogDir");
}

}  // namespace
}  // namespace pjemu::tensorboard
