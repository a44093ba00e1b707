// Given a pod's spec.volumes and the objects they name, the volume manager should lay each
// volume out on the host as the kubelet does (atomic writer for configMap/secret/downwardAPI/
// projected, hostPath type checks, PVC paths) and fail with the kubelet's FailedMount words.
#include "emulator/kubelet/volumes.h"

#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "emulator/api/base64.h"

namespace pjemu::kubelet {
namespace {
namespace fs = std::filesystem;

std::string Slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

int ModeOf(const fs::path& p) {
  struct stat st {};
  REQUIRE(::stat(p.c_str(), &st) == 0);
  return st.st_mode & 07777;
}

struct Scratch {
  Scratch() {
    root = std::string(PJEMU_BINARY_DIR) + "/test-volumes-" + std::to_string(getpid());
    fs::remove_all(root);
    fs::create_directories(root);
    dirs = {root + "/pod", root + "/shm"};
  }
  ~Scratch() {
    std::error_code ec;
    fs::remove_all(root, ec);
  }
  ObjectLookup Lookup() {
    return [this](const api::ResourceType& type, const std::string& name) -> std::optional<Json> {
      auto it = objects.find(type.plural + "/" + name);
      if (it == objects.end()) return std::nullopt;
      return it->second;
    };
  }
  std::string root;
  PodVolumeDirs dirs;
  std::map<std::string, Json> objects;
};

Json Pod() {
  return {{"metadata",
           {{"name", "p"},
            {"namespace", "default"},
            {"uid", "u1"},
            {"labels", {{"app", "train"}, {"role", "m\"aster"}}},
            {"annotations", {{"note", "x"}}}}},
          {"spec",
           {{"containers",
             Json::array({{{"name", "main"},
                           {"resources", {{"limits", {{"cpu", "2"}, {"memory", "1Gi"}}}}}}})}}}};
}

TEST_CASE("the atomic writer lays out ..data, a timestamped dir and per-key symlinks",
          "[volumes]") {
  Scratch s;
  std::string dir = s.root + "/cm";
  auto changed = WriteAtomic(dir, {{"a", {"one", 0644}}, {"sub/b", {"two", 0400}}});
  REQUIRE(changed.ok());
  CHECK(*changed);
  REQUIRE(fs::is_symlink(dir + "/..data"));
  std::string ts = fs::read_symlink(dir + "/..data").string();
  CHECK(ts.rfind("..", 0) == 0);
  CHECK(fs::is_directory(dir + "/" + ts));
  CHECK(fs::read_symlink(dir + "/a") == "..data/a");
  CHECK(fs::read_symlink(dir + "/sub") == "..data/sub");
  CHECK(Slurp(dir + "/a") == "one");
  CHECK(Slurp(dir + "/sub/b") == "two");
  CHECK(ModeOf(dir + "/sub/b") == 0400);

  SECTION("the same contents change nothing") {
    auto again = WriteAtomic(dir, {{"a", {"one", 0644}}, {"sub/b", {"two", 0400}}});
    REQUIRE(again.ok());
    CHECK_FALSE(*again);
    CHECK(fs::read_symlink(dir + "/..data").string() == ts);
  }
  SECTION("an update swaps ..data to a new dir and drops what is gone") {
    auto again = WriteAtomic(dir, {{"a", {"uno", 0644}}, {"c", {"tres", 0644}}});
    REQUIRE(again.ok());
    CHECK(*again);
    std::string ts2 = fs::read_symlink(dir + "/..data").string();
    CHECK(ts2 != ts);
    CHECK_FALSE(fs::exists(dir + "/" + ts));  // the old generation is removed
    CHECK(Slurp(dir + "/a") == "uno");
    CHECK(Slurp(dir + "/c") == "tres");
    CHECK_FALSE(fs::exists(fs::symlink_status(dir + "/sub")));
    CHECK_FALSE(fs::exists(dir + "/..data_tmp"));
  }
  SECTION("paths leaving the directory are refused") {
    CHECK(WriteAtomic(dir, {{"../x", {"", 0644}}}).status().code() == Code::kInvalid);
    CHECK(WriteAtomic(dir, {{"/etc/x", {"", 0644}}}).status().code() == Code::kInvalid);
    CHECK(WriteAtomic(dir, {{"..data", {"", 0644}}}).status().code() == Code::kInvalid);
  }
}

TEST_CASE("a configMap volume writes its items with modes, optional and missing", "[volumes]") {
  Scratch s;
  s.objects["configmaps/hp"] = {{"metadata", {{"name", "hp"}}},
                                {"data", {{"lr", "0.1"}, {"epochs", "3"}}}};
  Json vol = {{"name", "cfg"},
              {"configMap",
               {{"name", "hp"},
                {"defaultMode", 0600},
                {"items", Json::array({{{"key", "lr"}, {"path", "params/lr.txt"}},
                                       {{"key", "epochs"}, {"path", "e"}, {"mode", 0444}}})}}}};
  auto v = SetUpVolume(Pod(), vol, s.dirs, s.Lookup());
  REQUIRE(v.ok());
  CHECK(v->host_path == s.dirs.pod + "/volumes/kubernetes.io~configmap/cfg");
  CHECK(v->atomic);
  CHECK(Slurp(v->host_path + "/params/lr.txt") == "0.1");
  CHECK(ModeOf(v->host_path + "/params/lr.txt") == 0600);
  CHECK(ModeOf(v->host_path + "/e") == 0444);
  CHECK_FALSE(fs::exists(v->host_path + "/lr"));

  Json all = {{"name", "all"}, {"configMap", {{"name", "hp"}}}};
  auto a = SetUpVolume(Pod(), all, s.dirs, s.Lookup());
  REQUIRE(a.ok());
  CHECK(Slurp(a->host_path + "/epochs") == "3");
  CHECK(ModeOf(a->host_path + "/epochs") == 0644);  // defaultMode's default

  Json missing = {{"name", "cfg"}, {"configMap", {{"name", "x"}}}};
  auto m = SetUpVolume(Pod(), missing, s.dirs, s.Lookup());
  CHECK(m.status().code() == Code::kUnavailable);
  CHECK(m.status().message() ==
        "MountVolume.SetUp failed for volume \"cfg\" : configmap \"x\" not found");
  missing["configMap"]["optional"] = true;
  CHECK(SetUpVolume(Pod(), missing, s.dirs, s.Lookup()).ok());

  Json bad_key = vol;
  bad_key["configMap"]["items"][0]["key"] = "nope";
  CHECK(SetUpVolume(Pod(), bad_key, s.dirs, s.Lookup()).status().message() ==
        "MountVolume.SetUp failed for volume \"cfg\" : configmap references non-existent config "
        "key: nope");
}

TEST_CASE("a secret volume decodes base64 data", "[volumes]") {
  Scratch s;
  s.objects["secrets/tok"] = {{"metadata", {{"name", "tok"}}},
                              {"data", {{"token", api::EncodeBase64("s3cr3t\n")}}}};
  auto v = SetUpVolume(Pod(), {{"name", "sec"}, {"secret", {{"secretName", "tok"}}}}, s.dirs,
                       s.Lookup());
  REQUIRE(v.ok());
  CHECK(v->host_path == s.dirs.pod + "/volumes/kubernetes.io~secret/sec");
  CHECK(Slurp(v->host_path + "/token") == "s3cr3t\n");
  auto m = SetUpVolume(Pod(), {{"name", "sec"}, {"secret", {{"secretName", "nope"}}}}, s.dirs,
                       s.Lookup());
  CHECK(m.status().message() ==
        "MountVolume.SetUp failed for volume \"sec\" : secret \"nope\" not found");
}

TEST_CASE("downwardAPI and projected volumes", "[volumes]") {
  Scratch s;
  s.objects["configmaps/hp"] = {{"metadata", {{"name", "hp"}}}, {"data", {{"lr", "0.1"}}}};
  Json items = Json::array(
      {{{"path", "labels"}, {"fieldRef", {{"fieldPath", "metadata.labels"}}}},
       {{"path", "name"}, {"fieldRef", {{"fieldPath", "metadata.name"}}}},
       {{"path", "app"}, {"fieldRef", {{"fieldPath", "metadata.labels['app']"}}}},
       {{"path", "mem"},
        {"resourceFieldRef",
         {{"containerName", "main"}, {"resource", "limits.memory"}, {"divisor", "1Mi"}}}}});
  auto v = SetUpVolume(Pod(), {{"name", "info"}, {"downwardAPI", {{"items", items}}}}, s.dirs,
                       s.Lookup());
  REQUIRE(v.ok());
  CHECK(v->host_path == s.dirs.pod + "/volumes/kubernetes.io~downward-api/info");
  CHECK(Slurp(v->host_path + "/labels") == "app=\"train\"\nrole=\"m\\\"aster\"");
  CHECK(Slurp(v->host_path + "/name") == "p");
  CHECK(Slurp(v->host_path + "/app") == "train");
  CHECK(Slurp(v->host_path + "/mem") == "1024");

  Json projected = {
      {"name", "all"},
      {"projected",
       {{"defaultMode", 0440},
        {"sources", Json::array({{{"configMap", {{"name", "hp"}}}},
                                 {{"downwardAPI", {{"items", Json::array({items[1]})}}}},
                                 {{"serviceAccountToken", {{"path", "token"}}}}})}}}};
  auto p = SetUpVolume(Pod(), projected, s.dirs, s.Lookup());
  REQUIRE(p.ok());
  CHECK(p->host_path == s.dirs.pod + "/volumes/kubernetes.io~projected/all");
  CHECK(Slurp(p->host_path + "/lr") == "0.1");
  CHECK(Slurp(p->host_path + "/name") == "p");
  CHECK(fs::exists(p->host_path + "/token"));
  CHECK(ModeOf(p->host_path + "/lr") == 0440);
  CHECK(VolumeReferences(projected, "configmaps", "hp"));
  CHECK_FALSE(VolumeReferences(projected, "secrets", "hp"));
}

TEST_CASE("downwardAPI files resolve values as env does", "[volumes]") {
  Scratch s;
  s.objects["nodes/n1"] = {{"metadata", {{"name", "n1"}}},
                           {"status", {{"allocatable", {{"memory", "8Gi"}}}}}};
  Json pod = Pod();
  pod["spec"]["nodeName"] = "n1";
  pod["spec"]["containers"][0]["resources"] = {{"limits", {{"cpu", "2"}}}};
  Json items = Json::array(
      {{{"path", "ns"}, {"fieldRef", {{"fieldPath", "metadata.namespace"}}}},
       {{"path", "note"}, {"fieldRef", {{"fieldPath", "metadata.annotations['note']"}}}},
       {{"path", "mem"},
        {"resourceFieldRef",
         {{"containerName", "main"}, {"resource", "limits.memory"}, {"divisor", "1Gi"}}}}});
  auto v =
      SetUpVolume(pod, {{"name", "info"}, {"downwardAPI", {{"items", items}}}}, s.dirs, s.Lookup());
  REQUIRE(v.ok());
  CHECK(Slurp(v->host_path + "/ns") == "default");
  CHECK(Slurp(v->host_path + "/note") == "x");
  CHECK(Slurp(v->host_path + "/mem") == "8");  // the node's allocatable: no limit set

  // Paths env offers that a volume does not, and an unknown container, are errors.
  Json ip = {{"path", "ip"}, {"fieldRef", {{"fieldPath", "status.podIP"}}}};
  auto bad = SetUpVolume(pod, {{"name", "ip"}, {"downwardAPI", {{"items", Json::array({ip})}}}},
                         s.dirs, s.Lookup());
  CHECK(bad.status().message() ==
        "MountVolume.SetUp failed for volume \"ip\" : "
        "fieldRef.fieldPath: Unsupported value: \"status.podIP\"");
  Json who = {{"path", "c"},
              {"resourceFieldRef", {{"containerName", "nope"}, {"resource", "limits.cpu"}}}};
  auto none = SetUpVolume(pod, {{"name", "c"}, {"downwardAPI", {{"items", Json::array({who})}}}},
                          s.dirs, s.Lookup());
  CHECK(none.status().message() ==
        "MountVolume.SetUp failed for volume \"c\" : "
        "resourceFieldRef.containerName: Not found: \"nope\"");
}

TEST_CASE("hostPath checks its type as the kubelet does", "[volumes]") {
  Scratch s;
  auto host = [&](const std::string& path, const std::string& type) {
    return SetUpVolume(Pod(), {{"name", "h"}, {"hostPath", {{"path", path}, {"type", type}}}},
                       s.dirs, s.Lookup());
  };
  std::string missing = s.root + "/missing";
  auto d = host(missing, "Directory");
  CHECK(d.status().message() ==
        "MountVolume.SetUp failed for volume \"h\" : hostPath type check "
        "failed: " +
            missing + " is not a directory");
  REQUIRE(host(missing, "DirectoryOrCreate").ok());
  CHECK(fs::is_directory(missing));
  CHECK(ModeOf(missing) == 0755);
  CHECK(host(missing, "Directory")->host_path == missing);
  CHECK(host(missing, "File").status().message().find("is not a file") != std::string::npos);
  REQUIRE(host(s.root + "/f", "FileOrCreate").ok());
  CHECK(fs::is_regular_file(s.root + "/f"));
  CHECK(host("/dev/null", "CharDevice").ok());
  CHECK(host(s.root + "/f", "Socket").status().message().find("is not a socket file") !=
        std::string::npos);
  CHECK(host(missing, "").ok());
  CHECK(host(missing, "Weird").status().code() == Code::kInvalid);
}

TEST_CASE("emptyDir on disk or in memory, with its sizeLimit", "[volumes]") {
  Scratch s;
  auto disk =
      SetUpVolume(Pod(), {{"name", "scratch"}, {"emptyDir", Json::object()}}, s.dirs, s.Lookup());
  REQUIRE(disk.ok());
  CHECK(disk->host_path == s.dirs.pod + "/volumes/kubernetes.io~empty-dir/scratch");
  CHECK(fs::is_directory(disk->host_path));
  CHECK(ModeOf(disk->host_path) == 0777);
  auto mem = SetUpVolume(
      Pod(), {{"name", "dshm"}, {"emptyDir", {{"medium", "Memory"}, {"sizeLimit", "1Mi"}}}}, s.dirs,
      s.Lookup());
  REQUIRE(mem.ok());
  CHECK(mem->host_path == s.dirs.shm + "/dshm");
  CHECK(mem->memory);
  CHECK(mem->size_limit == "1Mi");
  CHECK(mem->size_limit_bytes == 1048576);
  std::ofstream(mem->host_path + "/big") << std::string(200000, 'x');
  CHECK(DirectoryUsage(mem->host_path) >= 200000);
  TearDownVolumes(s.dirs);
  CHECK_FALSE(fs::exists(s.dirs.shm));
  CHECK_FALSE(fs::exists(s.dirs.pod + "/volumes"));
}

TEST_CASE("two nodes' tmpfs folders differ for pods of one uid", "[volumes]") {
  // Emulators started with one seed draw the same UIDs: two test processes or two `pjemu run`s
  // side by side must not share (and remove) each other's /dev/shm folders.
  PodVolumeDirs a = VolumeDirsOf("/tmp/node-a", Pod());
  PodVolumeDirs b = VolumeDirsOf("/tmp/node-b", Pod());
  CHECK(a.shm != b.shm);
  CHECK(a.shm.rfind("/dev/shm/pjemu-", 0) == 0);
  CHECK(a.shm.size() > std::string("-u1").size());
  CHECK(a.shm.substr(a.shm.size() - 3) == "-u1");
  CHECK(VolumeDirsOf("/tmp/node-a", Pod()).shm == a.shm);  // stable for a node
  CHECK(a.pod == "/tmp/node-a/pods/default_p_u1");
}

TEST_CASE("a persistentVolumeClaim mounts its bound PV's path", "[volumes]") {
  Scratch s;
  Json vol = {{"name", "data"}, {"persistentVolumeClaim", {{"claimName", "ds"}}}};
  CHECK(SetUpVolume(Pod(), vol, s.dirs, s.Lookup()).status().message() ==
        "MountVolume.SetUp failed for volume \"data\" : persistentvolumeclaim \"ds\" not found");
  s.objects["persistentvolumeclaims/ds"] = {
      {"metadata", {{"name", "ds"}, {"namespace", "default"}}},
      {"spec", Json::object()},
      {"status", {{"phase", "Pending"}}}};
  CHECK(SetUpVolume(Pod(), vol, s.dirs, s.Lookup()).status().code() == Code::kUnavailable);
  s.objects["persistentvolumeclaims/ds"]["spec"]["volumeName"] = "pv1";
  s.objects["persistentvolumeclaims/ds"]["status"]["phase"] = "Bound";
  s.objects["persistentvolumes/pv1"] = {{"metadata", {{"name", "pv1"}}},
                                        {"spec", {{"local", {{"path", s.root + "/pv1"}}}}}};
  auto v = SetUpVolume(Pod(), vol, s.dirs, s.Lookup());
  REQUIRE(v.ok());
  CHECK(v->host_path == s.root + "/pv1");
  TearDownVolumes(s.dirs);
  CHECK(fs::is_directory(s.root + "/pv1"));  // PV directories outlive the pod
}

}  // namespace
}  // namespace pjemu::kubelet
