// FlakyClient: a test-side client::Client decorator for what informers must survive. It forwards
// every call to `inner` and, on demand, ends every open watch (as a server timeout or a slow
// consumer's overflow does), answers 410 Expired to watches from resourceVersions the test
// declares compacted and as an ERROR event on open streams, and fails List and Watch calls
// (kUnavailable) while down or at a seeded rate.
// Thread safety: single-threaded tests (FakeClock) only.
#pragma once

#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "emulator/client/client.h"
#include "emulator/common/clock.h"
#include "emulator/common/random.h"
#include "tests/support/forwarding_client.h"

namespace pjemu::testing {

// A stream the test can end, or end after an ERROR event of its choosing.
class FlakyWatch final : public api::Watch {
 public:
  explicit FlakyWatch(std::shared_ptr<api::Watch> inner) : inner_(std::move(inner)) {}
  std::optional<api::WatchEvent> Next(Duration timeout) override {
    if (auto e = TryNext()) return e;
    return ended_ ? std::nullopt : inner_->Next(timeout);
  }
  std::optional<api::WatchEvent> TryNext() override {
    if (!injected_.empty()) {
      api::WatchEvent e = std::move(injected_.front());
      injected_.pop_front();
      return e;
    }
    return ended_ ? std::nullopt : inner_->TryNext();
  }
  void SetNotify(std::function<void()> notify) override {
    notify_ = notify;
    if (!ended_) inner_->SetNotify(std::move(notify));
  }
  void Stop() override {
    stopped_ = true;
    inner_->Stop();
  }
  bool Done() override { return injected_.empty() && (ended_ || inner_->Done()); }

  // Ends the stream (after `last`, when given) and notifies, as a server closing it would.
  void End(std::optional<api::WatchEvent> last = std::nullopt) {
    if (ended_) return;
    if (last) injected_.push_back(std::move(*last));
    ended_ = true;
    inner_->SetNotify(nullptr);
    inner_->Stop();
    if (notify_) notify_();
  }
  bool open() const { return !ended_ && !stopped_; }

 private:
  std::shared_ptr<api::Watch> inner_;
  std::function<void()> notify_;
  std::deque<api::WatchEvent> injected_;
  bool ended_ = false;
  bool stopped_ = false;
};

class FlakyClient final : public ForwardingClient {
 public:
  FlakyClient(client::Client& inner, const Clock& clock, std::uint64_t seed = 1)
      : ForwardingClient(inner), clock_(clock), random_(seed) {}

  bool down = false;               // every List and Watch call fails
  double fail_rate = 0;            // else each fails with this probability
  std::uint64_t compacted_rv = 0;  // a watch from a resourceVersion <= this gets kExpired
  bool end_at_once = false;        // new streams end before their first event
  int lists = 0;                   // calls made (failed ones included)
  int watches = 0;
  int failures = 0;                    // injected kUnavailable answers
  std::vector<std::string> watch_rvs;  // the resourceVersion of every Watch call
  std::vector<Time> failure_times;     // when each injected failure happened

  // Ends every open stream.
  void DropWatches() {
    for (auto& w : streams_) w->End();
    streams_.clear();
  }
  // Ends every open stream after an ERROR event: 410 Expired, or `code` (a broken stream).
  void BreakWatches(Code code = Code::kExpired) {
    std::string message = code == Code::kExpired ? "too old resource version" : "stream broken";
    for (auto& w : streams_) {
      w->End(api::WatchEvent{api::WatchEvent::Type::kError, Status(code, message).ToStatusJson()});
    }
    streams_.clear();
  }
  std::size_t open_watches() {
    std::erase_if(streams_, [](const auto& w) { return !w->open(); });
    return streams_.size();
  }

  Result<Json> List(const api::ResourceType& t, std::string_view ns,
                    const api::ListOptions& o) override {
    ++lists;
    RETURN_IF_ERROR(MaybeFail("list"));
    return inner_.List(t, ns, o);
  }
  Result<std::shared_ptr<api::Watch>> Watch(const api::ResourceType& t, std::string_view ns,
                                            const api::WatchOptions& o) override {
    ++watches;
    watch_rvs.push_back(o.resource_version);
    RETURN_IF_ERROR(MaybeFail("watch"));
    if (!o.resource_version.empty() && std::stoull(o.resource_version) <= compacted_rv) {
      return Status(Code::kExpired, "too old resource version: " + o.resource_version);
    }
    ASSIGN_OR_RETURN(std::shared_ptr<api::Watch> w, inner_.Watch(t, ns, o));
    auto flaky = std::make_shared<FlakyWatch>(std::move(w));
    if (end_at_once) flaky->End();
    streams_.push_back(flaky);
    return std::shared_ptr<api::Watch>(flaky);
  }

 private:
  Status MaybeFail(const char* verb) {
    if (!down && (fail_rate <= 0 || !random_.Bernoulli(fail_rate))) return Status::Ok();
    ++failures;
    failure_times.push_back(clock_.Now());
    return Status(Code::kUnavailable, std::string("injected ") + verb + " failure");
  }

  const Clock& clock_;
  Random random_;
  std::vector<std::shared_ptr<FlakyWatch>> streams_;
};

}  // namespace pjemu::testing
