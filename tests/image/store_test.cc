// ImageStore: layers unpacked once (across threads), images committed and found by name, ID
// prefix and repo digest, names moving, Remove, Prune and the size cap; RunConfigOf.
#include "emulator/image/store.h"

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <thread>

#include "emulator/image/digest.h"
#include "tests/image/tar_builder.h"

namespace pjemu::image {
namespace {

using testing::File;
using testing::TempDir;

std::shared_ptr<ImageStore> OpenStore(const TempDir& tmp, std::int64_t max_bytes = 0) {
  StoreOptions options;
  options.root = tmp / "store";
  options.max_bytes = max_bytes;
  auto store = ImageStore::Open(options);
  REQUIRE(store.ok());
  return *store;
}

// A layer blob on disk (gzip) and its DiffID.
struct Blob {
  std::string path;
  std::string tar;
  LayerExpect expect;
};

Blob MakeBlob(const TempDir& tmp, const std::string& name, const std::string& content) {
  Blob b;
  b.tar = testing::BuildTar({File(name, content)});
  std::string gz = testing::BuildTar({File(name, content)}, testing::Compression::kGzip);
  b.path = tmp / ("blob-" + name);
  testing::WriteBytes(b.path, gz);
  b.expect.blob_digest = Sha256Of(gz);
  b.expect.blob_size = static_cast<std::int64_t>(gz.size());
  b.expect.diff_id = Sha256Of(b.tar);
  return b;
}

// Commits an image of the given layers; its config names them, so the ID differs per image.
ImageRecord CommitImage(ImageStore& store, const std::vector<Blob>& layers,
                        const std::vector<std::string>& names, const std::string& salt) {
  ImageRecord record;
  Json diff_ids = Json::array();
  for (const Blob& b : layers) {
    REQUIRE(store.AddLayer(b.path, b.expect).ok());
    record.diff_ids.push_back(b.expect.diff_id);
    diff_ids.push_back(b.expect.diff_id);
  }
  record.config = Json{{"architecture", "amd64"},
                       {"os", "linux"},
                       {"config", {{"Cmd", {"sh"}}, {"Env", {"SALT=" + salt}}}},
                       {"rootfs", {{"type", "layers"}, {"diff_ids", diff_ids}}}};
  std::string config = record.config.dump();
  record.id = Sha256Of(config);
  REQUIRE(store.PutBlob(record.id, config).ok());
  record.names = names;
  record.source = "pull";
  Status committed = store.Commit(record);
  INFO(committed.ToString());
  REQUIRE(committed.ok());
  return *store.Find(record.id);
}

TEST_CASE("AddLayer unpacks a layer once, keyed by its DiffID", "[image][store]") {
  TempDir tmp;
  auto store = OpenStore(tmp);
  Blob blob = MakeBlob(tmp, "hello", std::string(200000, 'h'));
  CHECK_FALSE(store->HasLayer(blob.expect.diff_id));

  SECTION("two threads, one unpack") {
    std::atomic<int> ok{0};
    std::vector<std::thread> threads;
    for (int i = 0; i < 2; ++i) {
      threads.emplace_back([&] {
        if (store->AddLayer(blob.path, blob.expect).ok()) ++ok;
      });
    }
    for (auto& t : threads) t.join();
    CHECK(ok == 2);
    CHECK(store->HasLayer(blob.expect.diff_id));
    std::string dir = store->root() + "/layers/" + DigestHex(blob.expect.diff_id);
    CHECK(testing::ReadBytes(dir + "/hello") == std::string(200000, 'h'));
    // Nothing left staged but the per-layer lock file.
    int staged = 0;
    for (const auto& e : std::filesystem::directory_iterator(store->root() + "/tmp")) {
      if (e.path().extension() != ".lock") ++staged;
    }
    CHECK(staged == 0);
    // Present now: the blob file is not read again.
    ::unlink(blob.path.c_str());
    auto again = store->AddLayer(blob.path, blob.expect);
    REQUIRE(again.ok());
    CHECK(again->diff_id == blob.expect.diff_id);
    CHECK(again->blob_digest == blob.expect.blob_digest);
  }
  SECTION("an unknown DiffID is learned from the unpack") {
    LayerExpect none;
    auto added = store->AddLayer(blob.path, none);
    REQUIRE(added.ok());
    CHECK(added->diff_id == blob.expect.diff_id);
    CHECK(store->HasLayer(blob.expect.diff_id));
    auto twice = store->AddLayer(blob.path, none);  // unpacked to tmp, then discarded
    REQUIRE(twice.ok());
    CHECK(twice->diff_id == blob.expect.diff_id);
  }
  SECTION("a wrong DiffID stores nothing") {
    LayerExpect wrong = blob.expect;
    wrong.diff_id = Sha256Of("other");
    auto added = store->AddLayer(blob.path, wrong);
    REQUIRE_FALSE(added.ok());
    CHECK(added.status().code() == Code::kInvalid);
    CHECK_FALSE(store->HasLayer(wrong.diff_id));
    CHECK_FALSE(store->HasLayer(blob.expect.diff_id));
  }
}

TEST_CASE("Two processes adding one layer share one unpack", "[image][store]") {
  TempDir tmp;
  auto store = OpenStore(tmp);
  Blob blob = MakeBlob(tmp, "shared", std::string(500000, 's'));
  pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    StoreOptions options;
    options.root = store->root();
    auto other = ImageStore::Open(options);
    bool ok = other.ok() && (*other)->AddLayer(blob.path, blob.expect).ok();
    ::_exit(ok ? 0 : 1);
  }
  auto added = store->AddLayer(blob.path, blob.expect);
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  REQUIRE(added.ok());
  CHECK(testing::ReadBytes(store->root() + "/layers/" + DigestHex(blob.expect.diff_id) +
                           "/shared") == std::string(500000, 's'));
  int staged = 0;
  for (const auto& e : std::filesystem::directory_iterator(store->root() + "/tmp")) {
    if (e.path().extension() != ".lock") ++staged;
  }
  CHECK(staged == 0);
}

TEST_CASE("Blobs are verified and stored", "[image][store]") {
  TempDir tmp;
  auto store = OpenStore(tmp);
  std::string digest = Sha256Of("{}");
  CHECK(store->PutBlob(Sha256Of("x"), "{}").code() == Code::kInvalid);
  CHECK_THAT(store->PutBlob(Sha256Of("x"), "{}").message(),
             Catch::Contains("digest mismatch: expected " + Sha256Of("x") + ", got " + digest));
  REQUIRE(store->PutBlob(digest, "{}").ok());
  CHECK(store->HasBlob(digest));
  CHECK(*store->ReadBlob(digest) == "{}");
  CHECK(store->ReadBlob(Sha256Of("missing")).status().code() == Code::kNotFound);
  CHECK(store->ReadBlob("sha256:nothex").status().code() == Code::kInvalid);
  CHECK(store->TempPath("a/b").rfind(store->root() + "/tmp/a_b-", 0) == 0);
}

TEST_CASE("Commit and Find by name, ID, prefix and repo digest", "[image][store]") {
  TempDir tmp;
  auto store = OpenStore(tmp);
  Blob base = MakeBlob(tmp, "base", "b");
  Blob top = MakeBlob(tmp, "top", "t");
  ImageRecord committed =
      CommitImage(*store, {base, top}, {"docker.io/library/busybox:latest"}, "1");
  ImageRecord withDigest = committed;
  withDigest.repo_digests = {"docker.io/library/busybox@" + Sha256Of("manifest")};
  REQUIRE(store->Commit(withDigest).ok());

  for (std::string ref : {"busybox", "busybox:latest", "docker.io/library/busybox:latest",
                          "docker.io/library/busybox"}) {
    INFO(ref);
    auto found = store->Find(ref);
    REQUIRE(found);
    CHECK(found->id == committed.id);
  }
  std::string hex = DigestHex(committed.id);
  CHECK(store->Find(committed.id));
  CHECK(store->Find(hex));
  CHECK(store->Find(hex.substr(0, 12)));
  CHECK_FALSE(store->Find(hex.substr(0, 11)));
  CHECK(store->Find("busybox@" + Sha256Of("manifest")));
  CHECK_FALSE(store->Find("busybox:1.36"));
  CHECK_FALSE(store->Find("alpine"));

  auto found = store->Find("busybox");
  CHECK(found->source == "pull");
  CHECK(found->created_unix > 0);
  CHECK(found->last_used_unix >= found->created_unix);
  CHECK(found->diff_ids == std::vector<std::string>{base.expect.diff_id, top.expect.diff_id});
  auto dirs = store->LayerDirs(*found);
  REQUIRE(dirs.ok());
  REQUIRE(dirs->size() == 2);
  CHECK((*dirs)[0] == store->root() + "/layers/" + DigestHex(top.expect.diff_id));  // top first
  CHECK(testing::ReadBytes((*dirs)[1] + "/base") == "b");
  CHECK(store->List().size() == 1);

  RunConfig rc = RunConfigOf(*found);
  CHECK(rc.cmd == std::vector<std::string>{"sh"});
  CHECK(rc.entrypoint.empty());
  CHECK(rc.env == std::vector<std::string>{"SALT=1"});
  CHECK(rc.os == "linux");
  CHECK(rc.architecture == "amd64");

  ImageRecord missing = committed;
  missing.id = Sha256Of("another config");
  missing.diff_ids.push_back(Sha256Of("not unpacked"));
  CHECK(store->Commit(missing).code() == Code::kNotFound);
}

TEST_CASE("A name moves to the image committed last and Remove untags then removes",
          "[image][store]") {
  TempDir tmp;
  auto store = OpenStore(tmp);
  Blob layer = MakeBlob(tmp, "l", "l");
  ImageRecord old = CommitImage(*store, {layer},
                                {"docker.io/library/app:latest", "docker.io/library/app:1"}, "a");
  ImageRecord fresh = CommitImage(*store, {layer}, {"docker.io/library/app:latest"}, "b");
  CHECK(store->Find("app")->id == fresh.id);
  CHECK(store->Find("app:1")->id == old.id);
  CHECK(store->Find(old.id)->names == std::vector<std::string>{"docker.io/library/app:1"});

  auto untagged = store->Remove("app:1");  // its last name: the image goes
  REQUIRE(untagged.ok());
  CHECK(std::find(untagged->begin(), untagged->end(), old.id) != untagged->end());
  CHECK_FALSE(store->Find(old.id));

  ImageRecord two =
      CommitImage(*store, {layer}, {"docker.io/library/x:1", "docker.io/library/x:2"}, "c");
  auto removed = store->Remove("x:1");
  REQUIRE(removed.ok());
  CHECK(*removed == std::vector<std::string>{"docker.io/library/x:1"});
  CHECK(store->Find("x:2"));
  CHECK(store->Remove(DigestHex(two.id).substr(0, 12)).ok());
  CHECK_FALSE(store->Find("x:2"));
  CHECK(store->Remove("nothing").status().code() == Code::kNotFound);
}

TEST_CASE("Prune removes untagged images and unused layers, then LRU over the cap",
          "[image][store]") {
  TempDir tmp;
  auto store = OpenStore(tmp);
  Blob shared = MakeBlob(tmp, "shared", std::string(100000, 's'));
  Blob a_only = MakeBlob(tmp, "aonly", std::string(100000, 'a'));
  Blob b_only = MakeBlob(tmp, "bonly", std::string(100000, 'b'));
  ImageRecord a = CommitImage(*store, {shared, a_only}, {"docker.io/library/a:1"}, "a");
  ImageRecord b = CommitImage(*store, {shared, b_only}, {"docker.io/library/b:1"}, "b");
  // A newer image takes a's only name: a is untagged now.
  ImageRecord a2 = CommitImage(*store, {shared}, {"docker.io/library/a:1"}, "a2");
  std::int64_t before = store->DiskUsage();
  CHECK(before > 300000);

  // A layer being pulled (added, not committed yet) is not pruned by this process.
  Blob pulling = MakeBlob(tmp, "pulling", "p");
  REQUIRE(store->AddLayer(pulling.path, pulling.expect).ok());

  auto report = store->Prune();
  REQUIRE(report.ok());
  CHECK(report->images == 1);
  CHECK(report->layers == 1);  // a_only
  CHECK(report->bytes > 90000);
  CHECK_FALSE(store->Find(a.id));
  CHECK_FALSE(store->HasLayer(a_only.expect.diff_id));
  CHECK_FALSE(store->HasBlob(a.id));
  CHECK(store->HasLayer(shared.expect.diff_id));
  CHECK(store->HasLayer(pulling.expect.diff_id));
  CHECK(store->HasBlob(b.id));
  CHECK(store->DiskUsage() < before);

  SECTION("over the cap the least recently used image goes, never one in use") {
    StoreOptions options;
    options.root = store->root();
    options.max_bytes = store->DiskUsage() - 50000;
    auto capped = ImageStore::Open(options);
    REQUIRE(capped.ok());
    (*capped)->MarkUsed(b.id);  // b is now newer than a2
    auto pruned = (*capped)->Prune({a2.id});
    REQUIRE(pruned.ok());
    CHECK(pruned->images == 1);
    CHECK_FALSE((*capped)->Find("b:1"));  // a2 was older but in use
    CHECK((*capped)->Find("a:1"));
    CHECK((*capped)->DiskUsage() <= options.max_bytes);
  }
  SECTION("Commit prunes to the cap and refuses an image that cannot fit") {
    StoreOptions options;
    options.root = store->root();
    options.max_bytes = 150000;
    auto capped = ImageStore::Open(options);
    REQUIRE(capped.ok());
    Blob big = MakeBlob(tmp, "big", std::string(400000, 'g'));
    ImageRecord record;
    REQUIRE((*capped)->AddLayer(big.path, big.expect).ok());
    record.diff_ids = {big.expect.diff_id};
    record.config = Json{{"os", "linux"}, {"architecture", "amd64"}};
    record.id = Sha256Of(record.config.dump());
    record.names = {"docker.io/library/big:1"};
    Status committed = (*capped)->Commit(record);
    CHECK(committed.code() == Code::kRequestEntityTooLarge);
    CHECK_FALSE((*capped)->Find("big:1"));
    CHECK_FALSE((*capped)->Find("a:1"));  // pruned trying to make room
  }
}

TEST_CASE("RunConfigOf reads the run defaults", "[image][store]") {
  ImageRecord r;
  r.config = Json::parse(R"({"os":"linux","architecture":"arm64","config":{
      "Entrypoint":[""],"Cmd":["python","-c","1"],"Env":["PATH=/bin","A=b"],
      "WorkingDir":"/app","User":"1000:1000"}})");
  RunConfig rc = RunConfigOf(r);
  CHECK(rc.entrypoint.empty());
  CHECK(rc.cmd == std::vector<std::string>{"python", "-c", "1"});
  CHECK(rc.env.size() == 2);
  CHECK(rc.working_dir == "/app");
  CHECK(rc.user == "1000:1000");
  CHECK(rc.architecture == "arm64");
  r.config["config"]["Entrypoint"] = {"/entry.sh"};
  CHECK(RunConfigOf(r).entrypoint == std::vector<std::string>{"/entry.sh"});
  r.config = nullptr;
  CHECK(RunConfigOf(r).cmd.empty());
}

TEST_CASE("DefaultRoot follows the environment", "[image][store]") {
  const char* saved = std::getenv("PJEMU_IMAGE_STORE");
  std::string keep = saved != nullptr ? saved : "";
  ::setenv("PJEMU_IMAGE_STORE", "/x/images", 1);
  CHECK(ImageStore::DefaultRoot() == "/x/images");
  ::unsetenv("PJEMU_IMAGE_STORE");
  CHECK(ImageStore::DefaultRoot().find("pjemu/images") != std::string::npos);
  if (saved != nullptr) ::setenv("PJEMU_IMAGE_STORE", keep.c_str(), 1);
}

}  // namespace
}  // namespace pjemu::image
