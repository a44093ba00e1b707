#include "emulator/cluster/trainer_runner.h"

#include <filesystem>
#include <string>
#include <vector>

namespace pjemu::cluster {
namespace {

// The last --dir of a trainer command line ("" when none).
std::string DirFlag(const std::vector<std::string>& argv) {
  std::string dir;
  for (std::size_t i = 0; i < argv.size(); ++i) {
    if (argv[i].rfind("--dir=", 0) == 0) dir = argv[i].substr(6);
    if (argv[i] == "--dir" && i + 1 < argv.size()) dir = argv[i + 1];
  }
  return dir;
}

}  // namespace

std::string PodWorkDir(const std::string& state_dir, const std::string& ns,
                       const std::string& pod) {
  return state_dir + "/work/" + ns + "_" + pod;
}

std::string TrainerMetricsPath(const std::string& state_dir, const Json& pod) {
  const Json& meta = pod.value("metadata", Json::object());
  const std::string work =
      PodWorkDir(state_dir, meta.value("namespace", "default"), meta.value("name", ""));
  std::string dir = work + "/logs";
  for (const Json& c : pod.value("spec", Json::object()).value("containers", Json::array())) {
    std::vector<std::string> argv;
    for (const char* key : {"command", "args"}) {
      for (const Json& v : c.value(key, Json::array())) {
        if (v.is_string()) argv.push_back(v.get<std::string>());
      }
    }
    std::string value = DirFlag(argv);
    if (!value.empty()) dir = value[0] == '/' ? value : work + "/" + value;
  }
  return dir + "/metrics-rank0.jsonl";
}

namespace {

// Host path `path` at the same path in the container, read-only.
process::Mount ReadOnlyBind(const std::string& path) {
  process::Mount m;
  m.kind = process::Mount::Kind::kBind;
  m.source = path;
  m.target = path;
  m.read_only = true;
  return m;
}

// Creates host directory `dir` and, in a container with a filesystem of its own, binds it at
// the same path, so what the trainer writes there is on the host.
Status ShareHostDir(process::ProcessSpec& s, const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return InternalError("cannot create " + dir + ": " + ec.message());
  if (s.mounts.enabled) {
    process::Mount m;
    m.kind = process::Mount::Kind::kBind;
    m.source = dir;
    m.target = dir;
    s.mounts.mounts.push_back(m);
  }
  return Status::Ok();
}

}  // namespace

TrainerRunner::TrainerRunner(process::ProcessRunner& inner, std::string trainer_path,
                             std::string state_dir, std::string data_dir)
    : inner_(inner),
      trainer_path_(std::move(trainer_path)),
      state_dir_(std::move(state_dir)),
      data_dir_(std::move(data_dir)) {}

Result<process::Pid> TrainerRunner::Start(const process::ProcessSpec& spec,
                                          process::ExitCallback on_exit) {
  if (spec.argv.empty() || spec.argv[0] != trainer_path_) {
    return inner_.Start(spec, std::move(on_exit));
  }
  process::ProcessSpec s = spec;
  // The container's default working directory: none given, or "/" in a filesystem of its own.
  if (s.working_dir.empty() || (s.mounts.enabled && s.working_dir == "/")) {
    // spec.name is "<ns>/<pod>/<container>".
    std::string ns = s.name.substr(0, s.name.find('/'));
    std::string rest = s.name.substr(ns.size() + 1);
    std::string pod = rest.substr(0, rest.find('/'));
    s.working_dir = PodWorkDir(state_dir_, ns, pod);
    RETURN_IF_ERROR(ShareHostDir(s, s.working_dir));
  }
  if (std::string dir = DirFlag(s.argv); !dir.empty() && dir[0] == '/') {
    RETURN_IF_ERROR(ShareHostDir(s, dir));
  }
  if (!data_dir_.empty()) {
    s.argv.insert(s.argv.begin() + 1, "--data-dir=" + data_dir_);
    if (s.mounts.enabled && data_dir_[0] == '/') s.mounts.mounts.push_back(ReadOnlyBind(data_dir_));
  }
  return inner_.Start(s, std::move(on_exit));
}

}  // namespace pjemu::cluster
