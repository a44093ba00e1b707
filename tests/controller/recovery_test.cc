// Given API trouble (a stale status write, a watch the server ends), the controller should
// recover the way a real controller-runtime controller does: retry through the work queue
// with backoff, and resume watches from the last resourceVersion without losing changes.
#include <catch2/catch.hpp>

#include "emulator/pytorchjob/conditions.h"
#include "tests/controller/job_builder.h"
#include "tests/controller/test_cluster.h"
#include "tests/support/forwarding_client.h"

namespace pjemu::pytorchjob {
namespace {

using api::IsRunning;
using testing::Cluster;
using testing::JobBuilder;

// A watch the test can end as the server would (a timeout): Done() and a notification.
class EndableWatch final : public api::Watch {
 public:
  explicit EndableWatch(std::shared_ptr<api::Watch> inner) : inner_(std::move(inner)) {}
  std::optional<api::WatchEvent> Next(Duration timeout) override {
    return ended_ ? std::nullopt : inner_->Next(timeout);
  }
  std::optional<api::WatchEvent> TryNext() override {
    return ended_ ? std::nullopt : inner_->TryNext();
  }
  void SetNotify(std::function<void()> notify) override {
    notify_ = notify;
    inner_->SetNotify(std::move(notify));
  }
  void Stop() override { inner_->Stop(); }
  bool Done() override { return ended_ || inner_->Done(); }
  void End() {
    ended_ = true;
    inner_->SetNotify(nullptr);
    inner_->Stop();
    if (notify_) notify_();
  }

 private:
  std::shared_ptr<api::Watch> inner_;
  std::function<void()> notify_;
  bool ended_ = false;
};

// Forwards to the LocalClient; fails the next N status updates with Conflict and hands out
// endable watches.
class TroubleClient final : public pjemu::testing::ForwardingClient {
 public:
  explicit TroubleClient(client::Client& inner) : ForwardingClient(inner) {}
  int conflicts_left = 0;
  int expire_resumes = 0;  // answer this many resumed watches (non-empty RV) with Expired
  std::vector<std::string> watch_rvs;
  int job_lists = 0;             // Lists of pytorchjobs (the reconciler lists pods and services)
  std::string last_job_list_rv;  // the resourceVersion of the last one's reply
  int status_updates = 0;
  std::vector<std::shared_ptr<EndableWatch>> watches;

  Result<Json> List(const api::ResourceType& t, std::string_view ns,
                    const api::ListOptions& o) override {
    Result<Json> list = inner_.List(t, ns, o);
    if (&t == &api::PyTorchJobs()) {
      ++job_lists;
      if (list.ok()) last_job_list_rv = (*list)["metadata"].value("resourceVersion", "");
    }
    return list;
  }
  Result<Json> Update(const api::ResourceType& t, std::string_view ns, Json o, api::Subresource sub,
                      const api::WriteOptions& w) override {
    if (sub == api::Subresource::kStatus) {
      ++status_updates;
      if (conflicts_left > 0) {
        --conflicts_left;
        return ConflictError(t.PluralGroup(), o["metadata"]["name"].get<std::string>());
      }
    }
    return inner_.Update(t, ns, std::move(o), sub, w);
  }
  Result<std::shared_ptr<api::Watch>> Watch(const api::ResourceType& t, std::string_view ns,
                                            const api::WatchOptions& o) override {
    watch_rvs.push_back(o.resource_version);
    if (!o.resource_version.empty() && expire_resumes > 0) {
      --expire_resumes;
      return Status(Code::kExpired, "too old resource version: " + o.resource_version);
    }
    ASSIGN_OR_RETURN(std::shared_ptr<api::Watch> w, inner_.Watch(t, ns, o));
    auto endable = std::make_shared<EndableWatch>(std::move(w));
    watches.push_back(endable);
    return std::shared_ptr<api::Watch>(endable);
  }
};

TroubleClient* trouble = nullptr;
Cluster::Wrap WithTrouble() {
  return [](client::Client& local) {
    auto c = std::make_unique<TroubleClient>(local);
    trouble = c.get();
    return c;
  };
}

TEST_CASE("a Conflict on the status write is retried with backoff until it lands", "[controller]") {
  Cluster c(WithTrouble());
  trouble->conflicts_left = 2;
  REQUIRE(c.Submit(JobBuilder("j").Master(1).Build()).ok());
  // First attempt and the backoff retries (5ms, 10ms) conflict; the third lands.
  c.loop.RunFor(1s);
  CHECK(trouble->conflicts_left == 0);
  CHECK(trouble->status_updates >= 3);
  Json job = c.Job("j");
  CHECK(job["status"]["startTime"] == "2024-01-01T00:00:00Z");
  CHECK(c.Names(api::Pods()) == std::vector<std::string>{"j-master-0"});
}

TEST_CASE("an ended watch is resumed from the last resourceVersion without losing changes",
          "[controller]") {
  Cluster c(WithTrouble());
  REQUIRE(c.Submit(JobBuilder("a").Master(1).Build()).ok());
  REQUIRE(trouble->watches.size() == 3);
  const auto before = trouble->watches.size();
  for (std::size_t i = 0; i < before; ++i) trouble->watches[i]->End();
  // A change made while the streams are down still reaches the controller.
  Json patch = {{"status", {{"phase", "Running"}}}};
  REQUIRE(c.local
              ->Patch(api::Pods(), "default", "a-master-0", api::PatchType::kMerge, patch,
                      api::Subresource::kStatus)
              .ok());
  c.loop.RunUntilIdle();
  CHECK(trouble->watches.size() == 2 * before);
  CHECK(IsRunning(c.Job("a")["status"]));
  REQUIRE(c.Submit(JobBuilder("b").Master(1).Build()).ok());
  CHECK(c.Names(api::Pods()) == std::vector<std::string>{"a-master-0", "b-master-0"});
}

TEST_CASE("an Expired resume re-lists and watches from the fresh list's resourceVersion",
          "[controller]") {
  Cluster c(WithTrouble());
  REQUIRE(c.Submit(JobBuilder("a").Master(1).Build()).ok());
  trouble->expire_resumes = 1;
  const int lists_before = trouble->job_lists;
  trouble->watches[0]->End();  // the pytorchjobs watch
  c.loop.RunUntilIdle();
  REQUIRE(trouble->watch_rvs.size() == 5);
  CHECK_FALSE(trouble->watch_rvs[3].empty());     // tried to resume from the last RV
  CHECK(trouble->job_lists == lists_before + 1);  // Expired: a fresh list ...
  CHECK_FALSE(trouble->last_job_list_rv.empty());
  CHECK(trouble->watch_rvs[4] == trouble->last_job_list_rv);  // ... then a watch from its RV
  REQUIRE(c.Submit(JobBuilder("b").Master(1).Build()).ok());
  CHECK(c.Names(api::Pods()) == std::vector<std::string>{"a-master-0", "b-master-0"});
}

}  // namespace
}  // namespace pjemu::pytorchjob
