// Given a store (virtual time) with claims and volumes, the TensorBoard controller should write
// each TensorBoard's status: Pending with the reason while its claim is not bound, Running and
// Ready "True" once every log dir resolves, with the console's url and the host folders.
#include "emulator/tensorboard/tensorboard_controller.h"

#include <stdlib.h>

#include <catch2/catch.hpp>
#include <filesystem>

#include "emulator/api/resources.h"
#include "emulator/client/local_client.h"
#include "emulator/store/store.h"
#include "tests/support/temp_dir.h"

namespace pjemu::tensorboard {
namespace {

namespace fs = std::filesystem;

const api::ResourceType& Boards() { return api::TensorBoards(); }

struct Fixture {
  FakeClock clock;
  EventLoop loop{clock};
  store::Store store{clock};
  std::unique_ptr<client::Client> client = client::MakeLocalClient(store);
  TensorBoardController controller{*client, loop};
  pjemu::testing::TempDir dir;
  std::string root = dir.path();

  Fixture() {
    Json ns = {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", "demo"}}}};
    auto created = client->Create(api::Namespaces(), "", ns);
    REQUIRE((created.ok() || created.status().code() == Code::kAlreadyExists));
    REQUIRE(controller.Start().ok());
    loop.RunUntilIdle();
  }
  ~Fixture() { controller.Stop(); }
  Json Board(const std::string& name) {
    loop.RunUntilIdle();
    auto got = client->Get(Boards(), "demo", name);
    REQUIRE(got.ok());
    return *got;
  }
  void CreateBoard(const std::string& name, const Json& spec) {
    Json tb = {{"apiVersion", "tensorstack.dev/v1beta1"},
               {"kind", "TensorBoard"},
               {"metadata", {{"name", name}, {"namespace", "demo"}}},
               {"spec", spec}};
    auto created = client->Create(Boards(), "demo", tb);
    INFO(created.status().ToString());
    REQUIRE(created.ok());
  }
  void BindClaim(const std::string& claim, const std::string& volume, const std::string& path) {
    Json pv = {{"apiVersion", "v1"},
               {"kind", "PersistentVolume"},
               {"metadata", {{"name", volume}}},
               {"spec",
                {{"capacity", {{"storage", "1Gi"}}},
                 {"accessModes", {"ReadWriteOnce"}},
                 {"hostPath", {{"path", path}}}}}};
    REQUIRE(client->Create(api::PersistentVolumes(), "", pv).ok());
    Json pvc = {{"apiVersion", "v1"},
                {"kind", "PersistentVolumeClaim"},
                {"metadata", {{"name", claim}, {"namespace", "demo"}}},
                {"spec",
                 {{"accessModes", {"ReadWriteOnce"}},
                  {"volumeName", volume},
                  {"storageClassName", ""},
                  {"resources", {{"requests", {{"storage", "1Gi"}}}}}}}};
    auto created = client->Create(api::PersistentVolumeClaims(), "demo", pvc);
    REQUIRE(created.ok());
    Json bound = *created;
    bound["status"] = {{"phase", "Bound"}};
    REQUIRE(client->Update(api::PersistentVolumeClaims(), "demo", bound, api::Subresource::kStatus).ok());
  }
};

const Json& Ready(const Json& board) { return board["status"]["conditions"][0]; }

TEST_CASE("tensorboard controller: Pending until the claim binds, then Running and Ready") {
  Fixture f;
  f.CreateBoard("job-5b373", {{"trainingLogFilesets", {"t9k://pvc/tutorial/ddp/log"}},
                              {"image", "t9kpublic/tensorflow-2.11.0:cpu-sdk-0.5.2"}});
  Json pending = f.Board("job-5b373");
  CHECK(pending["status"]["phase"] == "Pending");
  CHECK(Ready(pending)["status"] == "False");
  CHECK(Ready(pending)["reason"] == "LogDirNotReady");
  CHECK(Ready(pending)["message"] == "PersistentVolumeClaim \"tutorial\" not found");
  CHECK(pending["status"]["url"] == "/ui/#/tensorboards/demo/job-5b373");

  f.loop.RunFor(std::chrono::seconds(3));
  f.BindClaim("tutorial", "pv-tutorial", f.root + "/vol");
  Json ready = f.Board("job-5b373");
  CHECK(ready["status"]["phase"] == "Running");
  CHECK(Ready(ready)["status"] == "True");
  CHECK(Ready(ready)["reason"] == "LogDirsResolved");
  CHECK(ready["status"]["logDirs"] ==
        Json::array({{{"source", "t9k://pvc/tutorial/ddp/log"}, {"path", f.root + "/vol/ddp/log"}}}));
  CHECK(Ready(ready)["lastTransitionTime"] != Ready(pending)["lastTransitionTime"]);

  // Nothing changes: no write (the resourceVersion stays), also across a resync.
  std::string rv = ready["metadata"]["resourceVersion"];
  f.loop.RunFor(std::chrono::seconds(31));
  CHECK(f.Board("job-5b373")["metadata"]["resourceVersion"] == rv);

  // A spec that can never resolve.
  f.CreateBoard("bad", {{"logDir", {{"pvc", {{{"name", "tutorial"}, {"subPath", {"../x"}}}}}}}});
  Json bad = f.Board("bad");
  CHECK(bad["status"]["phase"] == "Pending");
  CHECK(Ready(bad)["reason"] == "InvalidLogDir");
  CHECK(Ready(bad)["message"] ==
        "spec.logDir.pvc[0].subPath[0]: Invalid value: \"../x\": must not contain '..'");
}

}  // namespace
}  // namespace pjemu::tensorboard
