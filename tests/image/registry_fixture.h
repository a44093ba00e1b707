// Registry test fixtures: OCI layouts written by the test (layers from tar_builder.h, gzip by
// zlib), a real Debian `docker-registry` on 127.0.0.1 (plain or htpasswd auth) filled with
// `skopeo copy`, the Bearer-token fake (fake_token_registry.py), and child processes that are
// killed when the fixture goes. Every server binds 127.0.0.1 only.
// Thread safety: one fixture object per test.
#pragma once

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <chrono>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "emulator/common/status.h"
#include "emulator/image/digest.h"
#include "tests/image/tar_builder.h"

namespace pjemu::image::testing {

inline constexpr char kOciManifestType[] = "application/vnd.oci.image.manifest.v1+json";
inline constexpr char kOciIndexType[] = "application/vnd.oci.image.index.v1+json";

inline std::string Gzip(const std::string& data) {
  z_stream z{};
  if (deflateInit2(&z, Z_BEST_SPEED, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    throw std::runtime_error("deflateInit2");
  }
  std::string out(deflateBound(&z, data.size()) + 64, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z.avail_in = static_cast<uInt>(data.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  const int rc = deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  if (rc != Z_STREAM_END) throw std::runtime_error("deflate");
  return out;
}

inline bool IsExecutable(const std::string& path) { return ::access(path.c_str(), X_OK) == 0; }

// A port nothing listens on now (bound, read, closed).
inline int FreePort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

inline bool CanConnect(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  const bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  ::close(fd);
  return ok;
}

// Runs argv to completion, stdout and stderr into *output: its exit code (-1 if it could not
// run).
inline int RunCommand(const std::vector<std::string>& argv, std::string* output) {
  int pipe_fds[2];
  if (::pipe(pipe_fds) != 0) return -1;
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(pipe_fds[1], 1);
    ::dup2(pipe_fds[1], 2);
    ::close(pipe_fds[0]);
    ::close(pipe_fds[1]);
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  ::close(pipe_fds[1]);
  char buffer[4096];
  ssize_t n;
  while ((n = ::read(pipe_fds[0], buffer, sizeof buffer)) > 0) output->append(buffer, n);
  ::close(pipe_fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// A server process: its output into a log file; SIGTERM (then SIGKILL) and reaped when it goes.
class ChildProcess {
 public:
  ChildProcess(const std::vector<std::string>& argv, const std::string& log) {
    pid_ = ::fork();
    if (pid_ == 0) {
      const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      ::dup2(fd, 1);
      ::dup2(fd, 2);
      std::vector<char*> args;
      for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
      args.push_back(nullptr);
      ::execv(args[0], args.data());
      ::_exit(127);
    }
  }
  ~ChildProcess() { Stop(); }
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  bool Running() {
    if (pid_ <= 0) return false;
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return false;
    }
    return true;
  }
  void Stop() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGTERM);
    for (int i = 0; i < 50; ++i) {
      if (::waitpid(pid_, nullptr, WNOHANG) == pid_) {
        pid_ = -1;
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }

 private:
  pid_t pid_ = -1;
};

struct BuiltLayer {
  std::string blob;     // gzip
  std::string digest;   // of blob
  std::string diff_id;  // of the tar
};

inline BuiltLayer MakeLayer(const std::vector<TarEntry>& entries) {
  BuiltLayer layer;
  const std::string tar = BuildTar(entries);
  layer.diff_id = Sha256Of(tar);
  layer.blob = Gzip(tar);
  layer.digest = Sha256Of(layer.blob);
  return layer;
}

struct BuiltImage {
  std::string manifest, manifest_digest;
  std::string config, config_digest;
  std::vector<BuiltLayer> layers;
  std::string architecture;
};

// An OCI image layout directory written by hand: blobs, index.json with tagged entries.
class OciLayout {
 public:
  explicit OciLayout(std::string dir) : dir_(std::move(dir)) {
    WriteBytes(dir_ + "/oci-layout", R"({"imageLayoutVersion":"1.0.0"})");
    WriteIndex();
  }
  const std::string& dir() const { return dir_; }

  std::string AddBlob(const std::string& bytes) {
    const std::string digest = Sha256Of(bytes);
    WriteBytes(dir_ + "/blobs/sha256/" + DigestHex(digest), bytes);
    return digest;
  }

  BuiltImage AddImage(std::vector<BuiltLayer> layers, const std::string& architecture = "amd64",
                      const std::string& tag = "") {
    BuiltImage image;
    image.architecture = architecture;
    Json diff_ids = Json::array();
    Json layer_descs = Json::array();
    for (const BuiltLayer& l : layers) {
      AddBlob(l.blob);
      diff_ids.push_back(l.diff_id);
      layer_descs.push_back({{"mediaType", "application/vnd.oci.image.layer.v1.tar+gzip"},
                             {"digest", l.digest},
                             {"size", l.blob.size()}});
    }
    image.config = Json{{"architecture", architecture},
                        {"os", "linux"},
                        {"config", {{"Env", {"PATH=/bin"}}, {"Cmd", {"/bin/app", architecture}}}},
                        {"rootfs", {{"type", "layers"}, {"diff_ids", diff_ids}}}}
                       .dump();
    image.config_digest = AddBlob(image.config);
    image.manifest = Json{
        {"schemaVersion", 2},
        {"mediaType", kOciManifestType},
        {"config",
         {{"mediaType", "application/vnd.oci.image.config.v1+json"},
          {"digest", image.config_digest},
          {"size", image.config.size()}}},
        {"layers",
         layer_descs}}.dump();
    image.manifest_digest = AddBlob(image.manifest);
    image.layers = std::move(layers);
    if (!tag.empty()) Tag(tag, kOciManifestType, image.manifest_digest, image.manifest.size());
    return image;
  }

  // An index over images (their platforms from their configs): its digest.
  std::string AddIndex(const std::vector<BuiltImage>& images, const std::string& tag) {
    Json manifests = Json::array();
    for (const BuiltImage& i : images) {
      manifests.push_back({{"mediaType", kOciManifestType},
                           {"digest", i.manifest_digest},
                           {"size", i.manifest.size()},
                           {"platform", {{"os", "linux"}, {"architecture", i.architecture}}}});
    }
    const std::string index =
        Json{{"schemaVersion", 2}, {"mediaType", kOciIndexType}, {"manifests", manifests}}.dump();
    const std::string digest = AddBlob(index);
    Tag(tag, kOciIndexType, digest, index.size());
    return digest;
  }

  void Tag(const std::string& tag, const std::string& media_type, const std::string& digest,
           std::size_t size) {
    entries_.push_back({{"mediaType", media_type},
                        {"digest", digest},
                        {"size", size},
                        {"annotations", {{"org.opencontainers.image.ref.name", tag}}}});
    WriteIndex();
  }

 private:
  void WriteIndex() {
    WriteBytes(
        dir_ + "/index.json",
        Json{{"schemaVersion", 2}, {"mediaType", kOciIndexType}, {"manifests", entries_}}.dump());
  }
  std::string dir_;
  Json entries_ = Json::array();
};

// docker-registry (distribution 2.8) serving dir/storage on 127.0.0.1:<free port>, with
// htpasswd Basic auth when user is given.
class LocalRegistry {
 public:
  static bool Available() {
    return IsExecutable("/usr/bin/docker-registry") && IsExecutable("/usr/bin/skopeo") &&
           IsExecutable("/usr/bin/htpasswd");
  }

  LocalRegistry(const std::string& dir, std::string user = "", std::string password = "")
      : dir_(dir), user_(std::move(user)), password_(std::move(password)) {
    port_ = FreePort();
    std::string config =
        "version: 0.1\n"
        "log:\n  level: error\n  accesslog:\n    disabled: true\n"
        "storage:\n  filesystem:\n    rootdirectory: " +
        dir_ +
        "/storage\n"
        "  maintenance:\n    uploadpurging:\n      enabled: false\n"
        "http:\n  addr: 127.0.0.1:" +
        std::to_string(port_) + "\n  secret: pjemu-test\n";
    if (!user_.empty()) {
      std::string htpasswd;
      if (RunCommand({"/usr/bin/htpasswd", "-Bbn", user_, password_}, &htpasswd) != 0) {
        throw std::runtime_error("htpasswd: " + htpasswd);
      }
      WriteBytes(dir_ + "/htpasswd", htpasswd);
      config += "auth:\n  htpasswd:\n    realm: pjemu-registry\n    path: " + dir_ + "/htpasswd\n";
    }
    WriteBytes(dir_ + "/config.yml", config);
    process_ = std::make_unique<ChildProcess>(
        std::vector<std::string>{"/usr/bin/docker-registry", "serve", dir_ + "/config.yml"},
        dir_ + "/registry.log");
    for (int i = 0; i < 500 && !CanConnect(port_); ++i) {
      if (!process_->Running()) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (!CanConnect(port_)) {
      throw std::runtime_error("docker-registry did not start: " +
                               ReadBytes(dir_ + "/registry.log"));
    }
  }

  int port() const { return port_; }
  std::string domain() const { return "127.0.0.1:" + std::to_string(port_); }

  // skopeo copy oci:<layout>:<tag> docker://<domain>/<repo>; "" or skopeo's output on failure.
  std::string Push(const std::string& layout, const std::string& tag, const std::string& repo,
                   const std::vector<std::string>& extra = {"--preserve-digests"}) {
    std::vector<std::string> argv = {
        "/usr/bin/skopeo",        "--insecure-policy", "--tmpdir", dir_, "copy", "-q",
        "--dest-tls-verify=false"};
    if (!user_.empty()) {
      argv.push_back("--dest-creds");
      argv.push_back(user_ + ":" + password_);
    }
    for (const std::string& e : extra) argv.push_back(e);
    argv.push_back("oci:" + layout + ":" + tag);
    argv.push_back("docker://" + domain() + "/" + repo);
    std::string output;
    const int rc = RunCommand(argv, &output);
    return rc == 0 ? "" : "skopeo exited " + std::to_string(rc) + ": " + output;
  }

 private:
  std::string dir_, user_, password_;
  int port_ = 0;
  std::unique_ptr<ChildProcess> process_;
};

// fake_token_registry.py on two loopback ports: the registry with Bearer auth and its "CDN".
class TokenRegistry {
 public:
  static bool Available() { return IsExecutable("/usr/bin/python3"); }

  TokenRegistry(const std::string& dir, const std::string& user, const std::string& password)
      : dir_(dir) {
    std::filesystem::create_directories(dir_ + "/manifests");
    std::filesystem::create_directories(dir_ + "/blobs");
    const std::string ports = dir_ + "/ports";
    std::vector<std::string> argv = {
        "/usr/bin/python3",
        std::string(PJEMU_SOURCE_DIR) + "/tests/image/fake_token_registry.py",
        "--dir",
        dir_,
        "--ports-file",
        ports};
    if (!user.empty()) {
      argv.insert(argv.end(), {"--user", user, "--password", password});
    }
    process_ = std::make_unique<ChildProcess>(argv, dir_ + "/server.log");
    for (int i = 0; i < 500 && !PathExists(ports); ++i) {
      if (!process_->Running()) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (!PathExists(ports)) {
      throw std::runtime_error("fake registry did not start: " + ReadBytes(dir_ + "/server.log"));
    }
    std::sscanf(ReadBytes(ports).c_str(), "%d %d", &port_, &cdn_port_);
  }

  std::string domain() const { return "127.0.0.1:" + std::to_string(port_); }
  int port() const { return port_; }

  // The server's counters (GET /stats with curl(1), loopback only).
  Json Stats() const {
    std::string out;
    RunCommand({"/usr/bin/curl", "-sS", "--noproxy", "*",
                "http://127.0.0.1:" + std::to_string(port_) + "/stats"},
               &out);
    return Json::parse(out, nullptr, false);
  }

  void AddBlob(const std::string& digest, const std::string& bytes) {
    WriteBytes(dir_ + "/blobs/" + digest, bytes);
  }
  void AddManifest(const std::string& tag, const std::string& bytes) {
    WriteBytes(dir_ + "/manifests/" + tag, bytes);
    AddBlob(Sha256Of(bytes), bytes);
  }
  // Serves every blob of image, the manifest under tag.
  void AddImage(const BuiltImage& image, const std::string& tag) {
    for (const BuiltLayer& l : image.layers) AddBlob(l.digest, l.blob);
    AddBlob(image.config_digest, image.config);
    AddManifest(tag, image.manifest);
  }

 private:
  std::string dir_;
  int port_ = 0, cdn_port_ = 0;
  std::unique_ptr<ChildProcess> process_;
};

}  // namespace pjemu::image::testing
