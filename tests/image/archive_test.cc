// LoadArchive: docker save (<= 24 and >= 25), podman's docker-archive with symlinked
// layer.tar members, OCI layouts as a directory and as a tar (an index with two platforms and
// an attestation), and docker load's error texts.
#include "emulator/image/archive.h"

#include <catch2/catch.hpp>

#include "emulator/image/digest.h"
#include "tests/image/tar_builder.h"

namespace pjemu::image {
namespace {

using testing::Compression;
using testing::File;
using testing::Symlink;
using testing::TarEntry;
using testing::TempDir;

std::shared_ptr<ImageStore> OpenStore(const TempDir& tmp) {
  StoreOptions options;
  options.root = tmp / "store";
  auto store = ImageStore::Open(options);
  REQUIRE(store.ok());
  return *store;
}

struct Layer {
  std::string tar;   // uncompressed
  std::string blob;  // as stored in the archive
  std::string diff_id, digest;
};

Layer MakeLayer(const std::string& file, const std::string& content,
                Compression compression = Compression::kNone) {
  Layer l;
  l.tar = testing::BuildTar({File(file, content)});
  l.blob = compression == Compression::kNone
               ? l.tar
               : testing::BuildTar({File(file, content)}, compression);
  l.diff_id = Sha256Of(l.tar);
  l.digest = Sha256Of(l.blob);
  return l;
}

std::string ConfigOf(const std::vector<Layer>& layers, const std::string& arch = "amd64") {
  Json diff_ids = Json::array();
  for (const auto& l : layers) diff_ids.push_back(l.diff_id);
  return Json{{"architecture", arch},
              {"os", "linux"},
              {"config", {{"Cmd", {"/bin/sh"}}}},
              {"rootfs", {{"type", "layers"}, {"diff_ids", diff_ids}}}}
      .dump();
}

Json Descriptor(const std::string& media_type, const std::string& bytes) {
  return Json{{"mediaType", media_type},
              {"digest", Sha256Of(bytes)},
              {"size", static_cast<std::int64_t>(bytes.size())}};
}

std::string Hex(const std::string& bytes) { return DigestHex(Sha256Of(bytes)); }

// docker save from Docker <= 24.
std::vector<TarEntry> DockerSave(const std::vector<Layer>& layers, const std::string& config,
                                 const Json& repo_tags) {
  std::vector<TarEntry> entries;
  Json paths = Json::array();
  for (std::size_t i = 0; i < layers.size(); ++i) {
    std::string id = std::string(63, 'a') + std::to_string(i);
    entries.push_back(testing::Dir(id));
    entries.push_back(File(id + "/VERSION", "1.0"));
    entries.push_back(File(id + "/json", "{}"));
    entries.push_back(File(id + "/layer.tar", layers[i].blob));
    paths.push_back(id + "/layer.tar");
  }
  entries.push_back(File(Hex(config) + ".json", config));
  Json manifest = Json::array(
      {{{"Config", Hex(config) + ".json"}, {"RepoTags", repo_tags}, {"Layers", paths}}});
  entries.push_back(File("manifest.json", manifest.dump()));
  entries.push_back(File("repositories", R"({"busybox":{"latest":"x"}})"));
  return entries;
}

std::string WriteTar(const TempDir& tmp, const std::string& name,
                     const std::vector<TarEntry>& entries) {
  std::string path = tmp / name;
  testing::WriteBytes(path, testing::BuildTar(entries));
  return path;
}

TEST_CASE("LoadArchive loads a docker save archive (Docker <= 24)", "[image][archive]") {
  TempDir tmp;
  auto store = OpenStore(tmp);
  std::vector<Layer> layers = {MakeLayer("bin/busybox", "elf"),
                               MakeLayer("etc/passwd", "root:x:0:0", Compression::kGzip)};
  std::string config = ConfigOf(layers);
  std::string path =
      WriteTar(tmp, "busybox.tar", DockerSave(layers, config, {"busybox:latest", "busybox:1.36"}));
  auto loaded = LoadArchive(*store, path);
  INFO(loaded.status().ToString());
  REQUIRE(loaded.ok());
  REQUIRE(loaded->size() == 1);
  CHECK((*loaded)[0].id == Sha256Of(config));
  CHECK((*loaded)[0].names == std::vector<std::string>{"docker.io/library/busybox:latest",
                                                       "docker.io/library/busybox:1.36"});
  auto image = store->Find("busybox");
  REQUIRE(image);
  CHECK(image->source == "load " + path);
  CHECK(image->diff_ids == std::vector<std::string>{layers[0].diff_id, layers[1].diff_id});
  CHECK(image->size ==
        static_cast<std::int64_t>(config.size() + layers[0].blob.size() + layers[1].blob.size()));
  auto dirs = store->LayerDirs(*image);
  REQUIRE(dirs.ok());
  CHECK(testing::ReadBytes((*dirs)[0] + "/etc/passwd") == "root:x:0:0");
  CHECK(store->HasBlob(Sha256Of(config)));
  // Loading again finds every layer present.
  REQUIRE(LoadArchive(*store, path).ok());
  CHECK(store->List().size() == 1);
  // Nothing left in tmp/ but lock files.
  for (const auto& e : std::filesystem::directory_iterator(store->root() + "/tmp")) {
    CHECK(e.path().extension() == ".lock");
  }
}

TEST_CASE("LoadArchive follows podman's symlinked layer.tar members by name", "[image][archive]") {
  TempDir tmp;
  auto store = OpenStore(tmp);
  std::vector<Layer> layers = {MakeLayer("app/run", "#!/bin/sh")};
  std::string config = ConfigOf(layers);
  std::string layer_hex = DigestHex(layers[0].diff_id);
  std::vector<TarEntry> entries = {
      File(layer_hex + ".tar", layers[0].blob), testing::Dir("abc"),
      Symlink("abc/layer.tar", "../" + layer_hex + ".tar"), File(Hex(config) + ".json", config),
      File("manifest.json", Json::array({{{"Config", Hex(config) + ".json"},
                                          {"RepoTags", {"localhost/app:v1"}},
                                          {"Layers", {"abc/layer.tar"}}}})
                                .dump())};
  // A symlink pointing out of the archive resolves within it (and here to nothing).
  std::string path = WriteTar(tmp, "podman.tar", entries);
  auto loaded = LoadArchive(*store, path);
  INFO(loaded.status().ToString());
  REQUIRE(loaded.ok());
  CHECK((*loaded)[0].names == std::vector<std::string>{"localhost/app:v1"});
  auto image = store->Find("localhost/app:v1");
  REQUIRE(image);
  auto dirs = store->LayerDirs(*image);
  REQUIRE(dirs.ok());
  CHECK(testing::ReadBytes((*dirs)[0] + "/app/run") == "#!/bin/sh");
}

// An OCI layout: index.json -> image index (amd64, arm64, an attestation) -> manifests.
struct OciLayout {
  std::vector<TarEntry> entries;
  std::string amd64_config, arm64_config, index_digest;
};

OciLayout MakeOci(bool docker25) {
  OciLayout o;
  Layer amd = MakeLayer("arch", "amd64", Compression::kGzip);
  Layer arm = MakeLayer("arch", "arm64", Compression::kZstd);
  o.amd64_config = ConfigOf({amd}, "amd64");
  o.arm64_config = ConfigOf({arm}, "arm64");
  auto manifest = [](const std::string& config, const Layer& layer, const char* layer_type) {
    return Json{{"schemaVersion", 2},
                {"mediaType", "application/vnd.oci.image.manifest.v1+json"},
                {"config", Descriptor("application/vnd.oci.image.config.v1+json", config)},
                {"layers", {Descriptor(layer_type, layer.blob)}}}
        .dump();
  };
  std::string amd_manifest =
      manifest(o.amd64_config, amd, "application/vnd.oci.image.layer.v1.tar+gzip");
  std::string arm_manifest =
      manifest(o.arm64_config, arm, "application/vnd.oci.image.layer.v1.tar+zstd");
  std::string attestation = Json{{"schemaVersion", 2}, {"layers", Json::array()}}.dump();
  Json amd_desc = Descriptor("application/vnd.oci.image.manifest.v1+json", amd_manifest);
  amd_desc["platform"] = {{"os", "linux"}, {"architecture", "amd64"}};
  Json arm_desc = Descriptor("application/vnd.oci.image.manifest.v1+json", arm_manifest);
  arm_desc["platform"] = {{"os", "linux"}, {"architecture", "arm64"}, {"variant", "v8"}};
  Json att_desc = Descriptor("application/vnd.oci.image.manifest.v1+json", attestation);
  att_desc["platform"] = {{"os", "unknown"}, {"architecture", "unknown"}};
  att_desc["annotations"] = {{"vnd.docker.reference.type", "attestation-manifest"}};
  std::string image_index = Json{{"schemaVersion", 2},
                                 {"mediaType", "application/vnd.oci.image.index.v1+json"},
                                 {"manifests", {att_desc, amd_desc, arm_desc}}}
                                .dump();
  o.index_digest = Sha256Of(image_index);
  Json top = Descriptor("application/vnd.oci.image.index.v1+json", image_index);
  top["annotations"] = {{"io.containerd.image.name", "docker.io/library/multi:1"},
                        {"org.opencontainers.image.ref.name", "1"}};
  for (const std::string* blob : {&amd.blob, &arm.blob, &o.amd64_config, &o.arm64_config,
                                  &amd_manifest, &arm_manifest, &attestation, &image_index}) {
    o.entries.push_back(File("blobs/sha256/" + Hex(*blob), *blob));
  }
  o.entries.push_back(File("oci-layout", R"({"imageLayoutVersion":"1.0.0"})"));
  o.entries.push_back(File("index.json", Json{{"schemaVersion", 2}, {"manifests", {top}}}.dump()));
  if (docker25) {
    o.entries.push_back(
        File("manifest.json", Json::array({{{"Config", "blobs/sha256/" + Hex(o.amd64_config)},
                                            {"RepoTags", {"extra:tag"}},
                                            {"Layers", {"blobs/sha256/" + Hex(amd.blob)}}}})
                                  .dump()));
  }
  return o;
}

TEST_CASE("LoadArchive loads an OCI layout, tar or directory, for the node's platform",
          "[image][archive]") {
  TempDir tmp;
  auto store = OpenStore(tmp);
  OciLayout oci = MakeOci(false);
  Platform arm64{"linux", "arm64", "v8"};
  Platform amd64{"linux", "amd64", ""};

  SECTION("a tar, arm64") {
    std::string path = WriteTar(tmp, "oci.tar", oci.entries);
    auto loaded = LoadArchive(*store, path, arm64);
    INFO(loaded.status().ToString());
    REQUIRE(loaded.ok());
    REQUIRE(loaded->size() == 1);
    CHECK((*loaded)[0].id == Sha256Of(oci.arm64_config));
    CHECK((*loaded)[0].names == std::vector<std::string>{"docker.io/library/multi:1"});
    auto image = store->Find("multi:1");
    REQUIRE(image);
    CHECK(image->repo_digests ==
          std::vector<std::string>{"docker.io/library/multi@" + oci.index_digest});
    CHECK(store->Find("multi@" + oci.index_digest));
    CHECK(RunConfigOf(*image).architecture == "arm64");
    auto dirs = store->LayerDirs(*image);
    REQUIRE(dirs.ok());
    CHECK(testing::ReadBytes((*dirs)[0] + "/arch") == "arm64");
  }
  SECTION("a directory, amd64") {
    for (const TarEntry& e : oci.entries)
      testing::WriteBytes(tmp / ("layout/" + e.path), e.content);
    auto loaded = LoadArchive(*store, tmp / "layout", amd64);
    INFO(loaded.status().ToString());
    REQUIRE(loaded.ok());
    CHECK((*loaded)[0].id == Sha256Of(oci.amd64_config));
    CHECK(store->Find("multi:1")->id == Sha256Of(oci.amd64_config));
  }
  SECTION("docker save >= 25: the OCI layout, plus manifest.json's RepoTags") {
    OciLayout docker = MakeOci(true);
    auto loaded = LoadArchive(*store, WriteTar(tmp, "d25.tar", docker.entries), amd64);
    INFO(loaded.status().ToString());
    REQUIRE(loaded.ok());
    CHECK((*loaded)[0].names ==
          std::vector<std::string>{"docker.io/library/multi:1", "docker.io/library/extra:tag"});
  }
  SECTION("no manifest for the platform") {
    auto loaded =
        LoadArchive(*store, WriteTar(tmp, "oci.tar", oci.entries), Platform{"linux", "s390x", ""});
    REQUIRE_FALSE(loaded.ok());
    CHECK(loaded.status().code() == Code::kNotFound);
    CHECK(loaded.status().message() == "no match for platform in manifest: not found");
  }
  SECTION("a tampered blob") {
    std::vector<TarEntry> entries = oci.entries;
    for (TarEntry& e : entries) {
      if (e.content == oci.amd64_config) e.content = ConfigOf({}, "amd64");
    }
    auto loaded = LoadArchive(*store, WriteTar(tmp, "bad.tar", entries), amd64);
    REQUIRE_FALSE(loaded.ok());
    CHECK_THAT(loaded.status().message(), Catch::Contains("digest mismatch"));
  }
}

TEST_CASE("SelectManifest skips attestations and matches variants", "[image][platform]") {
  Json index = Json::parse(R"({"manifests":[
    {"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:1",
     "platform":{"os":"unknown","architecture":"unknown"}},
    {"mediaType":"application/vnd.example.unknown","digest":"sha256:2",
     "platform":{"os":"linux","architecture":"amd64"}},
    {"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:3",
     "platform":{"os":"linux","architecture":"arm","variant":"v6"}},
    {"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:4",
     "platform":{"os":"linux","architecture":"arm","variant":"v7"}},
    {"mediaType":"application/vnd.docker.distribution.manifest.v2+json","digest":"sha256:5",
     "platform":{"os":"linux","architecture":"amd64"}},
    {"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:6",
     "platform":{"os":"linux","architecture":"arm64","variant":"v8"}}]})");
  CHECK((*SelectManifest(index, {"linux", "amd64", ""}))["digest"] == "sha256:5");
  CHECK((*SelectManifest(index, {"linux", "arm", "v7"}))["digest"] == "sha256:4");
  CHECK((*SelectManifest(index, {"linux", "arm64", "v8"}))["digest"] == "sha256:6");
  CHECK((*SelectManifest(index, {"linux", "arm64", ""}))["digest"] == "sha256:6");
  auto none = SelectManifest(index, {"windows", "amd64", ""});
  REQUIRE_FALSE(none.ok());
  CHECK(none.status().message() == "no match for platform in manifest: not found");
  CHECK(Platform{"linux", "arm64", "v8"}.String() == "linux/arm64/v8");
  CHECK(Platform::Host().os == "linux");
}

TEST_CASE("LoadArchive refuses bad archives with docker load's texts", "[image][archive]") {
  TempDir tmp;
  auto store = OpenStore(tmp);
  std::vector<Layer> layers = {MakeLayer("a", "1"), MakeLayer("b", "2")};
  std::string config = ConfigOf(layers);
  auto message = [&](const std::string& name, const std::vector<TarEntry>& entries) {
    auto loaded = LoadArchive(*store, WriteTar(tmp, name, entries));
    REQUIRE_FALSE(loaded.ok());
    CHECK(loaded.status().code() == Code::kInvalid);
    return loaded.status().message();
  };
  CHECK(message("junk.tar", {File("hello.txt", "hi")}) == "unrecognized image format");
  CHECK(message("legacy.tar", {File("repositories", "{}")}) ==
        "invalid archive: does not contain a manifest.json");
  CHECK(message("version.tar", {File("oci-layout", R"({"imageLayoutVersion":"2.0.0"})"),
                                File("index.json", "{}")}) == "unsupported OCI version 2.0.0");
  CHECK_THAT(message("noindex.tar", {File("oci-layout", R"({"imageLayoutVersion":"1.0.0"})")}),
             Catch::StartsWith("missing index.json in OCI layout"));
  CHECK(message("length.tar", DockerSave({layers[0]}, config, {"x:1"})) ==
        "invalid manifest, layers length mismatch: expected 1, got 2");
  CHECK(message("diffid.tar", DockerSave({layers[1], layers[0]}, config, {"x:1"})) ==
        "invalid diffID for layer 0: expected \"" + layers[0].diff_id + "\", got \"" +
            layers[1].diff_id + "\"");
  // A hostile layer inside an archive: its own error.
  Layer evil;
  evil.blob = evil.tar = testing::BuildTar({File("../../escape", "x")});
  evil.diff_id = Sha256Of(evil.tar);
  CHECK_THAT(message("evil.tar", DockerSave({evil}, ConfigOf({evil}), {"evil:1"})),
             Catch::Contains("path leaves the layer"));
  CHECK_FALSE(testing::PathExists(tmp / "escape"));
  CHECK_FALSE(store->Find("evil:1"));

  std::string garbage = tmp / "garbage.bin";
  testing::WriteBytes(garbage, std::string(5000, '\x7f'));
  auto not_tar = LoadArchive(*store, garbage);
  REQUIRE_FALSE(not_tar.ok());
  CHECK(not_tar.status().message() == "unrecognized image format");

  auto missing = LoadArchive(*store, tmp / "nope.tar");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().code() == Code::kNotFound);
}

}  // namespace
}  // namespace pjemu::image
