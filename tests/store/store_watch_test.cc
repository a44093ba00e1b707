// Given writes to the store, watches should deliver every change after their resourceVersion in
// order, synthesize ADDED for RV ""/"0", answer 410 past the history, apply selectors per event
// (with ADDED/DELETED on transitions), send BOOKMARKs on request, and end slow watchers.
#include "tests/store/store_fixture.h"

namespace pjemu::store::testing {
namespace {

TEST_CASE("watch from a resourceVersion delivers every later change in order", "[store]") {
  StoreFixture f;
  Json a = Must(f.store.Create(api::PyTorchJobs(), "default", JobJson("a")));
  Json b = Must(f.store.Create(api::PyTorchJobs(), "default", JobJson("b")));
  Must(f.store.Patch(api::PyTorchJobs(), "default", "a", api::PatchType::kMerge,
                     {{"metadata", {{"labels", {{"x", "1"}}}}}}));
  Must(f.store.Delete(api::PyTorchJobs(), "default", "b"));
  Must(f.store.Create(api::Pods(), "default", PodJson("not-a-job")));

  auto w = Must(f.store.Watch(api::PyTorchJobs(), "default", From(Rv(a))));
  CHECK(Drain(*w) == std::vector<std::string>{"ADDED b", "MODIFIED a", "DELETED b"});
  auto all = Must(f.store.Watch(api::PyTorchJobs(), "", From("1")));
  CHECK(Drain(*all) == std::vector<std::string>{"ADDED a", "ADDED b", "MODIFIED a", "DELETED b"});

  // Live events follow, with increasing resourceVersions; DELETED carries a new one.
  Json c = Must(f.store.Create(api::PyTorchJobs(), "default", JobJson("c")));
  Json gone = Must(f.store.Delete(api::PyTorchJobs(), "default", "c"));
  auto e1 = w->TryNext();
  auto e2 = w->TryNext();
  REQUIRE(e1);
  REQUIRE(e2);
  CHECK(e1->type == api::WatchEvent::Type::kAdded);
  CHECK(Rv(e1->object()) == Rv(c));
  CHECK(e2->type == api::WatchEvent::Type::kDeleted);
  CHECK(std::stoull(Rv(e2->object())) > std::stoull(Rv(c)));
  CHECK(Rv(e2->object()) == Rv(gone));
  CHECK_FALSE(w->TryNext());
  CHECK_FALSE(w->Done());
}

TEST_CASE("watch with resourceVersion 0 or unset starts with synthetic ADDED events", "[store]") {
  StoreFixture f;
  Must(f.store.Create(api::Pods(), "default", PodJson("b")));
  Must(f.store.Create(api::Pods(), "default", PodJson("a")));
  Must(f.store.Create(api::Pods(), "kubeflow", PodJson("c")));
  auto rv = GENERATE(as<std::string>{}, "", "0");
  auto w = Must(f.store.Watch(api::Pods(), "default", From(rv)));
  CHECK(Drain(*w) == std::vector<std::string>{"ADDED a", "ADDED b"});
  Must(f.store.Delete(api::Pods(), "default", "a"));
  CHECK(Drain(*w) == std::vector<std::string>{"DELETED a"});
}

TEST_CASE("watch from a resourceVersion older than the history is Expired", "[store]") {
  FakeClock clock;
  StoreOptions opts;
  opts.watch_history = 3;
  Store store(clock, opts);  // 4 namespaces already created: RVs 1-4, history keeps 2-4
  for (int i = 0; i < 5; ++i)
    Must(store.Create(api::Pods(), "default", PodJson("p" + std::to_string(i))));
  // RVs 5-9: history keeps 7, 8, 9; a watch from 6 still misses nothing.
  CHECK(Drain(*Must(store.Watch(api::Pods(), "default", From("6")))).size() == 3);
  auto r = store.Watch(api::Pods(), "default", From("5"));
  REQUIRE(r.status().code() == Code::kExpired);
  CHECK(r.status().message() == "too old resource version: 5 (6)");
  CHECK(r.status().ToStatusJson()["code"] == 410);
  CHECK(store.Watch(api::Pods(), "default", From("abc")).status().code() == Code::kBadRequest);
  CHECK(store.Watch(api::Pods(), "default", From("100")).status().code() == Code::kTimeout);
}

TEST_CASE("label selectors on a watch turn transitions into ADDED and DELETED", "[store]") {
  StoreFixture f;
  Must(f.store.Create(api::Pods(), "default", PodJson("p", {{"role", "worker"}})));
  api::WatchOptions opts = From(std::to_string(f.store.ResourceVersion()));
  opts.label_selector = "role=master";
  auto w = Must(f.store.Watch(api::Pods(), "default", opts));
  auto relabel = [&](const std::string& role) {
    Must(f.store.Patch(api::Pods(), "default", "p", api::PatchType::kMerge,
                       {{"metadata", {{"labels", {{"role", role}}}}}, {"spec", {{"x", role}}}}));
  };
  relabel("master");
  relabel("master");  // spec changes while matching: MODIFIED
  Must(f.store.Patch(api::Pods(), "default", "p", api::PatchType::kMerge,
                     {{"metadata", {{"annotations", {{"a", "b"}}}}}}));
  relabel("worker");
  relabel("other");  // not matching before or after: nothing
  std::vector<api::WatchEvent> events;
  while (auto e = w->TryNext()) events.push_back(*e);
  REQUIRE(events.size() == 3);
  CHECK(events[0].type == api::WatchEvent::Type::kAdded);
  CHECK(events[1].type == api::WatchEvent::Type::kModified);
  CHECK(events[2].type == api::WatchEvent::Type::kDeleted);
  // The DELETED of a transition carries the last matching state at the event's RV.
  CHECK(events[2].object()["metadata"]["labels"]["role"] == "master");
  CHECK(std::stoull(Rv(events[2].object())) > std::stoull(Rv(events[1].object())));
}

TEST_CASE("a watch sees DELETED even when the final write leaves its selector", "[store]") {
  StoreFixture f;
  Json pod = PodJson("p", {{"role", "master"}});
  pod["metadata"]["finalizers"] = {"example.com/keep"};
  Must(f.store.Create(api::Pods(), "default", pod));
  api::WatchOptions opts = From(std::to_string(f.store.ResourceVersion()));
  opts.label_selector = "role=master";
  auto w = Must(f.store.Watch(api::Pods(), "default", opts));
  Must(f.store.Delete(api::Pods(), "default", "p"));
  Must(f.store.Patch(api::Pods(), "default", "p", api::PatchType::kMerge,
                     {{"metadata", {{"finalizers", nullptr}, {"labels", {{"role", "gone"}}}}}}));
  CHECK(Drain(*w) == std::vector<std::string>{"MODIFIED p", "DELETED p"});
}

TEST_CASE("field selectors filter watch events", "[store]") {
  StoreFixture f;
  api::WatchOptions opts;
  opts.field_selector = "metadata.name=mnist";
  auto w = Must(f.store.Watch(api::PyTorchJobs(), "default", opts));
  Must(f.store.Create(api::PyTorchJobs(), "default", JobJson("other")));
  Must(f.store.Create(api::PyTorchJobs(), "default", JobJson("mnist")));
  Must(f.store.Delete(api::PyTorchJobs(), "default", "mnist"));
  CHECK(Drain(*w) == std::vector<std::string>{"ADDED mnist", "DELETED mnist"});
  opts.field_selector = "spec.replicas=1";
  CHECK(f.store.Watch(api::PyTorchJobs(), "default", opts).status().message() ==
        "field label not supported: spec.replicas");
}

TEST_CASE("bookmarks go only to watches that asked for them, at the current RV", "[store]") {
  StoreFixture f;
  api::WatchOptions with = From(std::to_string(f.store.ResourceVersion()));
  with.allow_bookmarks = true;
  auto w = Must(f.store.Watch(api::PyTorchJobs(), "default", with));
  auto plain = Must(f.store.Watch(api::PyTorchJobs(), "default", From("1")));
  Must(f.store.Create(api::Pods(), "default", PodJson("p")));  // another kind moves the RV
  f.store.SendBookmarks();
  auto e = w->TryNext();
  REQUIRE(e);
  CHECK(e->type == api::WatchEvent::Type::kBookmark);
  CHECK(e->object() ==
        Json{{"kind", "PyTorchJob"},
             {"apiVersion", "kubeflow.org/v1"},
             {"metadata", {{"resourceVersion", std::to_string(f.store.ResourceVersion())}}}});
  CHECK(Drain(*plain).empty());
}

TEST_CASE("a watcher that falls behind is ended without blocking the writer", "[store]") {
  FakeClock clock;
  StoreOptions opts;
  opts.watch_queue_limit = 3;
  Store store(clock, opts);
  auto slow =
      Must(store.Watch(api::Pods(), "default", From(std::to_string(store.ResourceVersion()))));
  int notified = 0;
  slow->SetNotify([&] { ++notified; });
  for (int i = 0; i < 10; ++i)
    Must(store.Create(api::Pods(), "default", PodJson("p" + std::to_string(i))));
  CHECK(notified == 4);  // three events, then the end of the stream
  CHECK_FALSE(slow->Done());
  CHECK(Drain(*slow) == std::vector<std::string>{"ADDED p0", "ADDED p1", "ADDED p2"});
  CHECK(slow->Done());
  // It resumes from the last RV it saw.
  auto again = Must(store.Watch(api::Pods(), "default", From("7")));
  CHECK(Drain(*again).size() == 7);
}

TEST_CASE("a stopped watch is dropped and receives nothing", "[store]") {
  StoreFixture f;
  auto w = Must(f.store.Watch(api::Pods(), "default"));
  int notified = 0;
  w->SetNotify([&] { ++notified; });
  w->Stop();
  Must(f.store.Create(api::Pods(), "default", PodJson("p")));
  CHECK(notified == 0);
  CHECK(w->Done());
  CHECK_FALSE(w->TryNext());
}

TEST_CASE("a watch its consumer released is not kept alive by the store", "[store]") {
  StoreFixture f;
  auto w = Must(f.store.Watch(api::Pods(), "default"));
  std::weak_ptr<api::Watch> weak = w;
  w.reset();
  Must(f.store.Create(api::Pods(), "default", PodJson("p")));
  CHECK(weak.expired());
}

TEST_CASE("watch notifications run after the store lock is released", "[store]") {
  StoreFixture f;
  auto w = Must(f.store.Watch(api::Pods(), "default"));
  std::vector<std::size_t> seen;
  // Reading the store from the callback would deadlock if the writer still held its lock.
  w->SetNotify([&] { seen.push_back(Must(f.store.List(api::Pods(), "default"))["items"].size()); });
  Must(f.store.Create(api::Pods(), "default", PodJson("a")));
  Must(f.store.Create(api::Pods(), "default", PodJson("b")));
  CHECK(seen == std::vector<std::size_t>{1, 2});
}

TEST_CASE("SetNotify fires at once when events are already queued", "[store]") {
  StoreFixture f;
  Must(f.store.Create(api::Pods(), "default", PodJson("p")));
  auto w = Must(f.store.Watch(api::Pods(), "default"));
  int notified = 0;
  w->SetNotify([&] { ++notified; });
  CHECK(notified == 1);
}

}  // namespace
}  // namespace pjemu::store::testing
