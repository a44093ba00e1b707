// The controllers' EventRecorder: an identical event is merged into the Event written for it
// while the correlator still remembers it, within client-go's 4096 most recently used.
#include "emulator/controller/event_recorder.h"

#include <catch2/catch.hpp>

#include "emulator/api/resources.h"
#include "emulator/client/local_client.h"
#include "emulator/store/store.h"

namespace pjemu::controller {
namespace {

Json Owner(int i) {
  return {{"apiVersion", "kubeflow.org/v1"},
          {"kind", "PyTorchJob"},
          {"metadata",
           {{"name", "j" + std::to_string(i)},
            {"namespace", "default"},
            {"uid", "uid-" + std::to_string(i)}}}};
}

// The count of each Event about Owner(i) with `message`, in list order.
std::vector<int> Counts(client::Client& client, int i, const std::string& message) {
  std::vector<int> counts;
  const Json events = (*client.List(api::Events(), "default"))["items"];
  for (const Json& e : events) {
    if (e["involvedObject"]["uid"] == "uid-" + std::to_string(i) && e["message"] == message) {
      counts.push_back(e["count"].get<int>());
    }
  }
  return counts;
}

TEST_CASE("the recorder's correlator forgets the least recently used past 4096 events",
          "[controller][events]") {
  FakeClock clock;
  store::Store store{clock};
  auto client = client::MakeLocalClient(store);
  EventRecorder recorder(*client, clock, "pytorchjob-controller");
  const int n = static_cast<int>(EventRecorder::kCorrelatorEntries);
  for (int i = 0; i <= n; ++i) REQUIRE(recorder.Record(Owner(i), "Normal", "R", "m").ok());
  // Owner(0)'s was the least recently used when the 4097th came: forgotten, a new Event.
  REQUIRE(recorder.Record(Owner(0), "Normal", "R", "m").ok());
  CHECK(Counts(*client, 0, "m") == std::vector<int>{1, 1});
  // Owner(2)'s is still remembered (Owner(1)'s went to make room for Owner(0)'s): merged.
  REQUIRE(recorder.Record(Owner(2), "Normal", "R", "m").ok());
  CHECK(Counts(*client, 2, "m") == std::vector<int>{2});
  REQUIRE(recorder.Record(Owner(1), "Normal", "R", "m").ok());
  CHECK(Counts(*client, 1, "m") == std::vector<int>{1, 1});
  // A merge makes its entry the most recently used: Owner(2)'s outlives 4095 newer ones.
  for (int i = n + 1; i < 2 * n - 1; ++i) {
    REQUIRE(recorder.Record(Owner(i), "Normal", "R", "m").ok());
  }
  REQUIRE(recorder.Record(Owner(2), "Normal", "R", "m").ok());
  CHECK(Counts(*client, 2, "m") == std::vector<int>{3});
}

}  // namespace
}  // namespace pjemu::controller
