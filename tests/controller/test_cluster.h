// Test fixture for the controller: FakeClock, EventLoop, Store (it admits PyTorchJobs through the
// webhook of the resource table), LocalClient and a started Controller, plus helpers that play
// the kubelet's part.
#pragma once

#include <algorithm>
#include <catch2/catch.hpp>
#include <functional>
#include <memory>

#include "emulator/api/resources.h"
#include "emulator/client/local_client.h"
#include "emulator/controller/controller.h"
#include "emulator/controller/kind_reconciler.h"
#include "emulator/pytorchjob/pytorchjob.h"
#include "emulator/store/store.h"

namespace pjemu::pytorchjob::testing {

using controller::Controller;

struct Cluster {
  FakeClock clock;
  EventLoop loop{clock};
  store::Store store{clock};
  std::unique_ptr<client::Client> local = client::MakeLocalClient(store);
  using Wrap = std::function<std::unique_ptr<client::Client>(client::Client& local)>;
  std::unique_ptr<client::Client> wrapped;
  // What the controller (and the helpers) use: the LocalClient, or a test wrapper around it.
  client::Client* client;
  std::unique_ptr<Controller> owned;
  Controller& controller;

  explicit Cluster(const Wrap& wrap = nullptr)
      : wrapped(wrap ? wrap(*local) : nullptr),
        client(wrapped ? wrapped.get() : local.get()),
        owned(std::make_unique<Controller>(*client, loop,
                                           controller::SpecOf(Descriptor(), *client, clock))),
        controller(*owned) {
    REQUIRE(controller.Start().ok());
    loop.RunUntilIdle();
  }
  ~Cluster() { controller.Stop(); }

  Status Submit(Json job) {
    job["metadata"].erase("uid");
    job["metadata"].erase("resourceVersion");
    Status s = client->Create(api::PyTorchJobs(), "default", std::move(job)).status();
    loop.RunUntilIdle();
    return s;
  }
  Json Job(const std::string& name) {
    auto r = client->Get(api::PyTorchJobs(), "default", name);
    return r.ok() ? *r : Json(nullptr);
  }
  std::vector<std::string> Names(const api::ResourceType& type, const std::string& selector = "") {
    api::ListOptions o;
    o.label_selector = selector;
    std::vector<std::string> out;
    const Json list = *client->List(type, "default", o);
    for (const Json& item : list["items"]) {
      out.push_back(item["metadata"]["name"]);
    }
    std::sort(out.begin(), out.end());
    return out;
  }
  void SetPhase(const std::string& pod, const std::string& phase) {
    Json patch = {{"status", {{"phase", phase}}}};
    REQUIRE(client
                ->Patch(api::Pods(), "default", pod, api::PatchType::kMerge, patch,
                        api::Subresource::kStatus)
                .ok());
    loop.RunUntilIdle();
  }
  void SetAllPhases(const std::string& phase) {
    for (const auto& name : Names(api::Pods())) SetPhase(name, phase);
  }
  void Patch(const std::string& job, Json patch) {
    REQUIRE(client->Patch(api::PyTorchJobs(), "default", job, api::PatchType::kMerge, patch).ok());
    loop.RunUntilIdle();
  }
  std::vector<std::string> Conds(const std::string& job) {
    std::vector<std::string> out;
    const Json conds = Job(job).value("status", Json::object()).value("conditions", Json::array());
    for (const Json& c : conds) {
      out.push_back(c["type"].get<std::string>() + "/" + c["status"].get<std::string>() + "/" +
                    c["reason"].get<std::string>());
    }
    return out;
  }
};

}  // namespace pjemu::pytorchjob::testing
