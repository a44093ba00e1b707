// Given batches handed to a BatchThread, it should work them in order on a thread of its own,
// destroy their jobs there, let Flush wait for the work, and take nothing after Stop.
#include "emulator/common/batch_thread.h"

#include <catch2/catch.hpp>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace pjemu {
namespace {

struct Job {
  int n = 0;
  std::shared_ptr<int> payload;  // its deleter notes the thread that freed it
};

TEST_CASE("batches are worked in order on the thread, which frees their jobs", "[common]") {
  std::mutex mu;
  std::vector<int> seen;
  std::vector<std::thread::id> freed_on, worked_on;
  auto payload = [&](int n) {
    return std::shared_ptr<int>(new int(n), [&](int* p) {
      std::lock_guard<std::mutex> lock(mu);
      freed_on.push_back(std::this_thread::get_id());
      delete p;
    });
  };
  BatchThread<Job> thread([&](std::vector<Job>& jobs) {
    std::lock_guard<std::mutex> lock(mu);
    for (const Job& j : jobs) seen.push_back(j.n);
    worked_on.push_back(std::this_thread::get_id());
  });
  std::vector<Job> first;
  first.push_back({1, payload(1)});
  first.push_back({2, payload(2)});
  thread.Submit(std::move(first));
  std::vector<Job> second;
  second.push_back({3, payload(3)});
  thread.Submit(std::move(second));
  thread.Submit({});  // nothing to do
  thread.Flush();
  std::lock_guard<std::mutex> lock(mu);
  CHECK(seen == std::vector<int>{1, 2, 3});
  REQUIRE(!worked_on.empty());
  CHECK(worked_on.front() != std::this_thread::get_id());
  REQUIRE(freed_on.size() == 3);
  for (auto id : freed_on) CHECK(id == worked_on.front());
}

TEST_CASE("after Stop a BatchThread takes nothing and Flush does not wait", "[common]") {
  int worked = 0;
  BatchThread<Job> thread([&](std::vector<Job>& jobs) { worked += static_cast<int>(jobs.size()); });
  thread.Submit({{1, nullptr}});
  thread.Flush();
  CHECK(worked == 1);
  thread.Stop();
  thread.Submit({{2, nullptr}});
  thread.Flush();
  CHECK(worked == 1);
}

}  // namespace
}  // namespace pjemu
