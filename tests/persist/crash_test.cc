// The crash test: client threads write (create, update, delete) configmaps and PyTorchJobs over
// plain HTTP (`--insecure-http`: this test is about durability) against a real
// `pjemu serve --data-dir D`, which is SIGKILLed at seeded points many times
// and restarted on the same D. After each restart every acknowledged write must be there with its
// resourceVersion (deletes stay deleted), and a write that was in flight when the server died is
// either wholly there or wholly absent. Kill points: after a seeded number of acknowledged
// writes (0 = while the clients start). PJEMU_CRASH_SEED=<n> replays a run's kill points.
#include <signal.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <iostream>
#include <map>
#include <mutex>
#include <optional>
#include <regex>
#include <thread>

#include "emulator/client/http_client.h"
#include "emulator/common/random.h"
#include "tests/cli/cli_process.h"

namespace pjemu::persist {
namespace {

using client::HttpClient;
using client::HttpClientOptions;

constexpr int kRounds = 30;
constexpr int kThreads = 4;        // thread 0 writes PyTorchJobs, the others configmaps
constexpr int kNamesPerThread = 4;

// What a client knows of one object: its last acknowledged state.
struct Known {
  bool exists = false;
  std::uint64_t rv = 0;
  std::string value;
};

// The write a client had sent when the server died (its outcome unknown).
struct InFlight {
  std::string name;
  bool deletes = false;
  std::string value;
};

struct Writer {
  int index = 0;
  bool jobs = false;
  std::map<std::string, Known> known;
  std::optional<InFlight> in_flight;
};

std::string Path(bool jobs, const std::string& name = "") {
  std::string base = jobs ? "/apis/kubeflow.org/v1/namespaces/default/pytorchjobs"
                          : "/api/v1/namespaces/default/configmaps";
  return name.empty() ? base : base + "/" + name;
}

Json Body(bool jobs, const std::string& name, const std::string& value) {
  if (!jobs) {
    return {{"apiVersion", "v1"},
            {"kind", "ConfigMap"},
            {"metadata", {{"name", name}}},
            {"data", {{"v", value}}}};
  }
  // Suspended, so the controller writes its status but starts no pods.
  Json container = {{"name", "pytorch"}, {"image", "docker.io/library/busybox:1"},
                    {"command", {"true"}}};
  return {{"apiVersion", "kubeflow.org/v1"},
          {"kind", "PyTorchJob"},
          {"metadata", {{"name", name}, {"annotations", {{"v", value}}}}},
          {"spec",
           {{"runPolicy", {{"suspend", true}}},
            {"pytorchReplicaSpecs",
             {{"Master",
               {{"replicas", 1},
                {"restartPolicy", "OnFailure"},
                {"template", {{"spec", {{"containers", {container}}}}}}}}}}}}};
}

std::string ValueOf(bool jobs, const Json& object) {
  const Json& holder = jobs ? object["metadata"]["annotations"] : object["data"];
  return holder.value("v", "");
}

std::uint64_t RvOf(const Json& object) {
  return std::stoull(object["metadata"]["resourceVersion"].get<std::string>());
}

// Issues the writer's next seeded write. Returns "" when it was acknowledged (2xx) and the
// server's answer when it refused a write the model expects to succeed; sets in_flight and
// returns nullopt when no answer came (the server is gone). Runs on the writer's thread.
std::optional<std::string> Step(HttpClient& http, Writer& w, Random& rng) {
  std::string name = (w.jobs ? "job-" : "cm-") + std::to_string(w.index) + "-" +
                     std::to_string(rng.Uniform(kNamesPerThread));
  Known& k = w.known[name];
  std::string value = "v" + std::to_string(rng.Uniform(1000000));
  bool deletes = k.exists && rng.Uniform(4) == 0;
  Result<client::HttpReply> reply = Status::Ok();
  if (deletes) {
    reply = http.Request("DELETE", Path(w.jobs, name));
  } else if (!k.exists) {
    reply = http.Request("POST", Path(w.jobs), Body(w.jobs, name, value).dump(), "application/json");
  } else if (w.jobs) {
    // The controller writes the job's status too: a merge patch needs no resourceVersion.
    Json patch = {{"metadata", {{"annotations", {{"v", value}}}}}};
    reply = http.Request("PATCH", Path(w.jobs, name), patch.dump(),
                         "application/merge-patch+json");
  } else {
    Json body = Body(false, name, value);
    body["metadata"]["resourceVersion"] = std::to_string(k.rv);
    reply = http.Request("PUT", Path(false, name), body.dump(), "application/json");
  }
  if (!reply.ok() || reply->status >= 500) {
    w.in_flight = InFlight{name, deletes, value};
    return std::nullopt;
  }
  if (reply->status / 100 != 2) {
    return name + ": HTTP " + std::to_string(reply->status) + " " + reply->body;
  }
  Json got = Json::parse(reply->body);
  if (deletes) {
    k = Known{};
  } else {
    k = Known{true, RvOf(got), value};
  }
  return std::string();
}

// Checks the writer's objects against the restarted server and adopts what it finds.
void Verify(HttpClient& http, Writer& w, std::uint64_t server_rv) {
  for (auto& [name, k] : w.known) {
    auto reply = http.Request("GET", Path(w.jobs, name));
    REQUIRE(reply.ok());
    bool there = reply->status == 200;
    INFO("object " << name << " http " << reply->status << " " << reply->body);
    REQUIRE((there || reply->status == 404));
    Json got = there ? Json::parse(reply->body) : Json();
    std::uint64_t rv = there ? RvOf(got) : 0;
    std::string value = there ? ValueOf(w.jobs, got) : "";
    // The controller may have written a job's status since: its RV may only have grown.
    bool as_known = k.exists ? there && value == k.value &&
                                   (w.jobs ? rv >= k.rv : rv == k.rv)
                             : !there;
    bool as_in_flight = false;
    if (w.in_flight && w.in_flight->name == name) {
      as_in_flight = w.in_flight->deletes ? !there : there && value == w.in_flight->value &&
                                                         rv > k.rv;
    }
    CHECK((as_known || as_in_flight));
    // No RV past the server's at the restart (jobs: the controller writes on after it).
    if (!w.jobs) CHECK(rv <= server_rv);
    k = there ? Known{true, rv, value} : Known{};
  }
  w.in_flight.reset();
}

struct Server {
  std::unique_ptr<testing::CliProcess> process;
  std::string url;
};

Server StartServer(const std::string& data_dir) {
  Server s;
  s.process = std::make_unique<testing::CliProcess>(
      std::vector<std::string>{"serve", "--insecure-http", "--data-dir", data_dir, "--port", "0",
                               "--gpus", "0", "--kubeconfig", data_dir + "/../kubeconfig"});
  std::regex serving(R"(serving the Kubernetes API on (http://127\.0\.0\.1:\d+))");
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (std::chrono::steady_clock::now() < deadline) {
    std::smatch m;
    std::string out = s.process->Out();
    if (std::regex_search(out, m, serving)) {
      s.url = m[1];
      return s;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  INFO(s.process->Out() << s.process->Err());
  FAIL("pjemu serve --data-dir did not start");
  return s;
}

TEST_CASE("SIGKILL at seeded points loses no acknowledged write and leaves nothing half there") {
  std::uint64_t seed = 1;
  if (const char* env = std::getenv("PJEMU_CRASH_SEED")) seed = std::strtoull(env, nullptr, 10);
  INFO("seed " << seed << " (PJEMU_CRASH_SEED replays it)");
  Random kill_points(seed);
  std::string dir = testing::TempDir("crash") + "/data";
  std::vector<Writer> writers(kThreads);
  for (int i = 0; i < kThreads; ++i) {
    writers[i].index = i;
    writers[i].jobs = i == 0;
  }
  std::vector<std::unique_ptr<Random>> rngs;
  for (int i = 0; i < kThreads; ++i) rngs.push_back(std::make_unique<Random>(seed * 1000 + i));
  std::size_t acknowledged_total = 0, in_flight_total = 0;
  std::uint64_t last_rv = 0;
  for (int round = 0; round < kRounds; ++round) {
    Server server = StartServer(dir);
    HttpClientOptions ho;
    ho.server = server.url;
    ho.timeout = 10s;
    HttpClient http(ho);
    // What the previous run acknowledged is all there.
    auto list = http.Request("GET", "/api/v1/namespaces/default/configmaps");
    REQUIRE(list.ok());
    std::uint64_t server_rv =
        std::stoull(Json::parse(list->body)["metadata"]["resourceVersion"].get<std::string>());
    CHECK(server_rv >= last_rv);
    for (auto& w : writers) Verify(http, w, server_rv);
    // Kill after `target` acknowledged writes of this round (0: while the clients start).
    std::size_t target = round % 4 == 3 ? 0 : 1 + kill_points.Uniform(40);
    std::atomic<std::size_t> acked{0};
    std::atomic<bool> killed{false};
    std::mutex kill_mu;
    std::vector<std::string> refused;  // writes the server should have taken
    auto kill = [&] {
      std::lock_guard<std::mutex> lock(kill_mu);
      if (!killed.exchange(true)) server.process->Signal(SIGKILL);
    };
    std::thread killer;
    if (target == 0) {
      auto delay = std::chrono::microseconds(kill_points.Uniform(3000));
      killer = std::thread([&, delay] {
        std::this_thread::sleep_for(delay);
        kill();
      });
    }
    std::vector<std::thread> threads;
    for (int i = 0; i < kThreads; ++i) {
      threads.emplace_back([&, i] {
        HttpClient mine(ho);
        Writer& w = writers[i];
        while (!killed.load()) {
          auto r = Step(mine, w, *rngs[i]);
          if (!r) return;  // the server is gone
          if (!r->empty()) {
            std::lock_guard<std::mutex> lock(kill_mu);
            refused.push_back(*r);
            return;
          }
          if (++acked == target) kill();
        }
      });
    }
    for (auto& t : threads) t.join();
    if (killer.joinable()) killer.join();
    kill();
    CHECK(refused == std::vector<std::string>{});
    server.process->Wait(std::chrono::seconds(10));
    acknowledged_total += acked.load();
    for (auto& w : writers) {
      in_flight_total += w.in_flight ? 1 : 0;
      for (auto& [name, k] : w.known) last_rv = std::max(last_rv, k.rv);
    }
  }
  // The last restart's check.
  Server server = StartServer(dir);
  HttpClientOptions ho;
  ho.server = server.url;
  HttpClient http(ho);
  auto list = http.Request("GET", "/api/v1/namespaces/default/configmaps");
  REQUIRE(list.ok());
  std::uint64_t server_rv =
      std::stoull(Json::parse(list->body)["metadata"]["resourceVersion"].get<std::string>());
  for (auto& w : writers) Verify(http, w, server_rv);
  server.process->Signal(SIGTERM);
  CHECK(server.process->Wait(std::chrono::seconds(20)) == 0);
  std::cout << "crash test, seed " << seed << ": " << kRounds << " SIGKILLs, "
            << acknowledged_total << " acknowledged writes, " << in_flight_total
            << " writes in flight at a kill, final resourceVersion " << server_rv << "\n";
  CHECK(acknowledged_total >= kRounds);
}

}  // namespace
}  // namespace pjemu::persist
