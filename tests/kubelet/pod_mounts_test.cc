// Given a container, its pod's volumes and the image's files, the mount plan should give the
// container the pod's filesystem: a copy-on-write root, image files as overlays, private /tmp,
// the pod's /dev/shm, the volumes at their mountPaths (subPath, readOnly) and /etc/hosts.
#include "emulator/kubelet/pod_mounts.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace pjemu::kubelet {
namespace {
namespace fs = std::filesystem;
using process::Mount;

struct Inputs {
  Inputs() {
    root = std::string(PJEMU_BINARY_DIR) + "/test-pod-mounts-" + std::to_string(getpid());
    fs::remove_all(root);
    in.container_dir = root + "/pod/containers/main/0";
    in.pod_shm = root + "/shm/.shm";
    in.etc_hosts = root + "/pod/etc-hosts";
    for (const char* kind : {"scratch", "data"}) {
      PodVolume v;
      v.name = kind;
      v.kind = "emptyDir";
      v.host_path = root + "/vol/" + kind;
      fs::create_directories(v.host_path);
      in.volumes[kind] = v;
    }
  }
  ~Inputs() {
    std::error_code ec;
    fs::remove_all(root, ec);
  }
  std::string root;
  MountInputs in;
};

Json Container(Json mounts) {
  return {{"name", "main"}, {"image", "x"}, {"volumeMounts", std::move(mounts)}};
}

const Mount* Find(const process::MountPlan& plan, const std::string& target) {
  for (const Mount& m : plan.mounts) {
    if (m.target == target) return &m;
  }
  return nullptr;
}

TEST_CASE("a container gets its root, /tmp, the pod's /dev/shm and /etc/hosts", "[pod_mounts]") {
  Inputs t;
  auto r = PlanContainerMounts(Container(Json::array()), "spec.containers[0]", t.in);
  REQUIRE(r.ok());
  const process::MountPlan& plan = r->plan;
  CHECK(plan.enabled);
  CHECK(plan.root_upper == t.in.container_dir + "/root-upper");
  CHECK(plan.root_work == t.in.container_dir + "/root-work");
  CHECK(plan.root_merged == t.in.container_dir + "/root");
  REQUIRE(Find(plan, "/tmp"));
  CHECK(Find(plan, "/tmp")->source == t.in.container_dir + "/tmp");
  CHECK(Find(plan, "/tmp")->kind == Mount::Kind::kBind);
  REQUIRE(Find(plan, "/dev/shm"));
  CHECK(Find(plan, "/dev/shm")->source == t.in.pod_shm);
  REQUIRE(Find(plan, "/etc/hosts"));
  CHECK(Find(plan, "/etc/hosts")->source == t.in.etc_hosts);
  CHECK(r->working_dir == "/");
}

TEST_CASE("volumeMounts bind the volumes, readOnly, parents before children", "[pod_mounts]") {
  Inputs t;
  t.in.image_files = {{"/workspace", t.root + "/src"}};
  Json c = Container(
      Json::array({{{"name", "data"}, {"mountPath", "/workspace/data/"}, {"readOnly", true}},
                   {{"name", "scratch"}, {"mountPath", "/scratch"}}}));
  auto r = PlanContainerMounts(c, "spec.containers[0]", t.in);
  REQUIRE(r.ok());
  const auto& mounts = r->plan.mounts;
  const Mount* data = Find(r->plan, "/workspace/data");
  REQUIRE(data);
  CHECK(data->source == t.in.volumes["data"].host_path);
  CHECK(data->read_only);
  CHECK_FALSE(Find(r->plan, "/scratch")->read_only);
  const Mount* image = Find(r->plan, "/workspace");
  REQUIRE(image);
  CHECK(image->kind == Mount::Kind::kOverlay);
  CHECK(image->source == t.root + "/src");
  CHECK(image->upper == t.in.container_dir + "/layers/0/upper");
  CHECK(image->work == t.in.container_dir + "/layers/0/work");
  CHECK(image - mounts.data() < data - mounts.data());  // the overlay does not hide the volume
}

TEST_CASE("an emptyDir mounted at /dev/shm replaces the pod's shared one", "[pod_mounts]") {
  Inputs t;
  t.in.volumes["scratch"].memory = true;
  auto r = PlanContainerMounts(
      Container(Json::array({{{"name", "scratch"}, {"mountPath", "/dev/shm"}}})),
      "spec.containers[0]", t.in);
  REQUIRE(r.ok());
  int n = 0;
  for (const Mount& m : r->plan.mounts) n += m.target == "/dev/shm";
  CHECK(n == 1);
  CHECK(Find(r->plan, "/dev/shm")->source == t.in.volumes["scratch"].host_path);
}

TEST_CASE("the image map's host programs are bound read-only after /tmp, at their paths",
          "[pod_mounts]") {
  Inputs t;
  t.in.host_paths = {"/tmp/checkout/build/bin/pjemu-trainer"};
  auto r = PlanContainerMounts(Container(Json::array()), "spec.containers[0]", t.in);
  REQUIRE(r.ok());
  const std::vector<Mount>& mounts = r->plan.mounts;
  const Mount* trainer = Find(r->plan, "/tmp/checkout/build/bin/pjemu-trainer");
  REQUIRE(trainer);
  CHECK(trainer->source == "/tmp/checkout/build/bin/pjemu-trainer");
  CHECK(trainer->read_only);
  // After the container's own /tmp, which would hide it otherwise.
  CHECK(trainer - mounts.data() > Find(r->plan, "/tmp") - mounts.data());
}

TEST_CASE("working dir: the container's, else the image's, else /", "[pod_mounts]") {
  Inputs t;
  t.in.image_working_dir = "/workspace";
  Json c = Container(Json::array());
  CHECK(PlanContainerMounts(c, "f", t.in)->working_dir == "/workspace");
  c["workingDir"] = "/opt/app";
  CHECK(PlanContainerMounts(c, "f", t.in)->working_dir == "/opt/app");
}

TEST_CASE("subPath stays inside its volume", "[pod_mounts]") {
  Inputs t;
  auto plan = [&](const std::string& sub) {
    return PlanContainerMounts(
        Container(Json::array({{{"name", "data"}, {"mountPath", "/d"}, {"subPath", sub}}})),
        "spec.containers[0]", t.in);
  };
  auto ok = plan("runs/1");
  REQUIRE(ok.ok());
  CHECK(Find(ok->plan, "/d")->source == t.in.volumes["data"].host_path + "/runs/1");
  CHECK(fs::is_directory(t.in.volumes["data"].host_path +
                         "/runs/1"));  // created, as the kubelet does
  CHECK(
      plan("../x").status().message() ==
      "spec.containers[0].volumeMounts[0].subPath: Invalid value: \"../x\": must not contain '..'");
  CHECK(plan("/etc").status().code() == Code::kInvalid);
  fs::create_symlink("/etc", t.in.volumes["data"].host_path + "/escape");
  CHECK(plan("escape").status().message() ==
        "failed to prepare subPath for volumeMount \"data\" of container \"main\"");
}

TEST_CASE("a subPath of a configMap volume binds the key's file itself", "[pod_mounts]") {
  Inputs t;
  PodVolume cm;
  cm.name = "cfg";
  cm.kind = "configMap";
  cm.atomic = true;
  cm.host_path = t.root + "/vol/cfg";
  REQUIRE(WriteAtomic(cm.host_path, {{"train.py", {"print(1)", 0644}}}).ok());
  t.in.volumes["cfg"] = cm;
  auto r = PlanContainerMounts(
      Container(Json::array(
          {{{"name", "cfg"}, {"mountPath", "/app/train.py"}, {"subPath", "train.py"}}})),
      "spec.containers[0]", t.in);
  REQUIRE(r.ok());
  std::string source = Find(r->plan, "/app/train.py")->source;
  CHECK(source.find("/..data/") == std::string::npos);  // the generation's file, not the link
  CHECK(fs::is_regular_file(fs::symlink_status(source)));
}

TEST_CASE("a volumeMount naming no volume is refused with its field", "[pod_mounts]") {
  Inputs t;
  auto r = PlanContainerMounts(Container(Json::array({{{"name", "nope"}, {"mountPath", "/x"}}})),
                               "spec.containers[1]", t.in);
  CHECK(r.status().message() == "spec.containers[1].volumeMounts[0].name: Not found: \"nope\"");
  auto rel = PlanContainerMounts(Container(Json::array({{{"name", "data"}, {"mountPath", "x"}}})),
                                 "spec.containers[0]", t.in);
  CHECK(rel.status().code() == Code::kInvalid);
}

TEST_CASE("/etc/hosts lists the pod's own name and the cluster's Services", "[pod_mounts]") {
  Json pod = {{"metadata", {{"name", "job-master-0"}, {"namespace", "team"}}},
              {"spec", {{"subdomain", "job"}}}};
  std::string hosts = EtcHosts(
      pod, "127.42.0.7", {{"team", "job-master-0", "127.42.0.7"}, {"other", "db", "127.42.0.9"}});
  CHECK(hosts.rfind("# Kubernetes-managed hosts file.\n127.0.0.1\tlocalhost\n", 0) == 0);
  CHECK(hosts.find("127.42.0.7\tjob-master-0.job.team.svc.cluster.local\tjob-master-0\n") !=
        std::string::npos);
  CHECK(hosts.find("127.42.0.7\tjob-master-0 job-master-0.team job-master-0.team.svc "
                   "job-master-0.team.svc.cluster.local\n") != std::string::npos);
  // Another namespace's Service is reachable by its qualified names only, as through DNS.
  CHECK(hosts.find("127.42.0.9\tdb.other db.other.svc db.other.svc.cluster.local\n") !=
        std::string::npos);
  pod["spec"] = Json::object();
  CHECK(EtcHosts(pod, "127.42.0.7", {}).find("127.42.0.7\tjob-master-0\n") != std::string::npos);
}

}  // namespace
}  // namespace pjemu::kubelet

namespace pjemu::kubelet {
namespace {

TEST_CASE("an image map file is a private copy bound at its path and a folder an overlay",
          "[pod_mounts]") {
  Inputs t;
  std::filesystem::create_directories(t.root + "/src");
  std::ofstream(t.root + "/script.py") << "print('hi')\n";
  t.in.image_files = {{"/opt/mlkube/script.py", t.root + "/script.py"},
                      {"/workspace", t.root + "/src"}};
  auto r = PlanContainerMounts(Container(Json::array()), "spec.containers[0]", t.in);
  REQUIRE(r.ok());
  const Mount* file = Find(r->plan, "/opt/mlkube/script.py");
  REQUIRE(file);
  CHECK(file->kind == Mount::Kind::kBind);
  CHECK(file->source == t.in.container_dir + "/layers/0/script.py");
  std::ifstream copy(file->source);
  std::stringstream text;
  text << copy.rdbuf();
  CHECK(text.str() == "print('hi')\n");  // a copy: the host's file is never written
  CHECK(Find(r->plan, "/workspace")->kind == Mount::Kind::kOverlay);
}

}  // namespace
}  // namespace pjemu::kubelet
