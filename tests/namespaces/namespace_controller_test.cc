// Given a Store with namespace lifecycle (virtual time), the namespace controller should do what
// kube-controller-manager's serviceaccounts, root-ca-cert-publisher and namespace controllers
// do: a `default` ServiceAccount and kube-root-ca.crt in every namespace (made again when
// deleted), and a deleted namespace Terminating until its content is gone, then gone.
#include "emulator/namespaces/namespace_controller.h"

#include <catch2/catch.hpp>

#include "emulator/client/local_client.h"
#include "emulator/store/store.h"

namespace pjemu::namespaces {
namespace {

store::StoreOptions LifecycleOptions() {
  store::StoreOptions o;
  o.namespace_lifecycle = true;
  return o;
}

struct Fixture {
  FakeClock clock;
  EventLoop loop{clock};
  store::Store store{clock, LifecycleOptions()};
  std::unique_ptr<client::Client> client = client::MakeLocalClient(store);
  NamespaceController controller{*client, loop, {"-----BEGIN CERTIFICATE-----\nCA\n", true}};

  Fixture() {
    REQUIRE(controller.Start().ok());
    loop.RunFor(1s);
  }
  bool Has(const api::ResourceType& type, const std::string& ns, const std::string& name) {
    return client->Get(type, ns, name).ok();
  }
  Json Namespace(const std::string& name) {
    auto ns = client->Get(api::Namespaces(), "", name);
    REQUIRE(ns.ok());
    return *ns;
  }
  Json Condition(const std::string& ns, const std::string& type) {
    for (const Json& c : Namespace(ns)["status"].value("conditions", Json::array())) {
      if (c["type"] == type) return c;
    }
    return nullptr;
  }
  void Create(const api::ResourceType& type, const std::string& ns, Json object) {
    auto r = client->Create(type, ns, std::move(object));
    REQUIRE(r.ok());
  }
};

Json Named(const std::string& name) { return {{"metadata", {{"name", name}}}}; }

TEST_CASE("every namespace gets a default ServiceAccount and the root CA", "[namespaces]") {
  Fixture f;
  for (const char* ns : {"default", "kube-system", "kube-public", "kubeflow"}) {
    CHECK(f.Has(api::ServiceAccounts(), ns, "default"));
    auto cm = f.client->Get(api::ConfigMaps(), ns, "kube-root-ca.crt");
    REQUIRE(cm.ok());
    CHECK((*cm)["data"]["ca.crt"] == "-----BEGIN CERTIFICATE-----\nCA\n");
  }
  f.Create(api::Namespaces(), "", Named("team"));
  f.loop.RunFor(1s);
  CHECK(f.Has(api::ServiceAccounts(), "team", "default"));
  CHECK(f.Has(api::ConfigMaps(), "team", "kube-root-ca.crt"));

  // Deleted or changed, they come back as they were.
  REQUIRE(f.client->Delete(api::ServiceAccounts(), "team", "default").ok());
  REQUIRE(f.client->Delete(api::ConfigMaps(), "team", "kube-root-ca.crt").ok());
  f.loop.RunFor(1s);
  CHECK(f.Has(api::ServiceAccounts(), "team", "default"));
  CHECK(f.Has(api::ConfigMaps(), "team", "kube-root-ca.crt"));
  REQUIRE(f.client
              ->Patch(api::ConfigMaps(), "team", "kube-root-ca.crt", api::PatchType::kMerge,
                      {{"data", {{"ca.crt", "forged"}}}})
              .ok());
  f.loop.RunFor(1s);
  auto cm = f.client->Get(api::ConfigMaps(), "team", "kube-root-ca.crt");
  CHECK((*cm)["data"]["ca.crt"] == "-----BEGIN CERTIFICATE-----\nCA\n");
}

TEST_CASE("a deleted namespace is Terminating until its content is gone", "[namespaces]") {
  Fixture f;
  f.Create(api::Namespaces(), "", Named("team"));
  f.loop.RunFor(1s);
  CHECK(f.Namespace("team")["spec"]["finalizers"] == Json::array({"kubernetes"}));
  Json held = Named("held");
  held["metadata"]["finalizers"] = {"example.com/hold"};
  f.Create(api::ConfigMaps(), "team", held);
  f.Create(api::Secrets(), "team", Named("s"));

  auto deleted = f.client->Delete(api::Namespaces(), "", "team");
  REQUIRE(deleted.ok());
  CHECK((*deleted)["status"]["phase"] == "Terminating");
  CHECK((*deleted)["metadata"].contains("deletionTimestamp"));
  auto refused = f.client->Create(api::ConfigMaps(), "team", Named("late"));
  CHECK(refused.status().code() == Code::kForbidden);
  CHECK(refused.status().message() ==
        "configmaps \"late\" is forbidden: unable to create new content in namespace team "
        "because it is being terminated");
  CHECK(refused.status().details()["causes"][0]["reason"] == "NamespaceTerminating");

  f.loop.RunFor(2s);
  CHECK_FALSE(f.Has(api::Secrets(), "team", "s"));
  CHECK_FALSE(f.Has(api::ServiceAccounts(), "team", "default"));  // content too, not made again
  CHECK(f.Has(api::ConfigMaps(), "team", "held"));  // waits for its finalizer
  CHECK(f.Namespace("team")["status"]["phase"] == "Terminating");
  Json remaining = f.Condition("team", "NamespaceContentRemaining");
  CHECK(remaining["status"] == "True");
  CHECK(remaining["reason"] == "SomeResourcesRemain");
  CHECK(remaining["message"] == "Some resources are remaining: configmaps. has 1 resource instances");
  Json finalizers = f.Condition("team", "NamespaceFinalizersRemaining");
  CHECK(finalizers["message"] ==
        "Some content in the namespace has finalizers remaining: example.com/hold in 1 resource "
        "instances");
  CHECK(f.Condition("team", "NamespaceDeletionContentFailure")["reason"] == "ContentDeleted");
  CHECK(f.Condition("team", "NamespaceDeletionDiscoveryFailure")["status"] == "False");

  REQUIRE(f.client
              ->Patch(api::ConfigMaps(), "team", "held", api::PatchType::kMerge,
                      {{"metadata", {{"finalizers", nullptr}}}})
              .ok());
  f.loop.RunFor(2s);
  CHECK_FALSE(f.Has(api::ConfigMaps(), "team", "held"));
  CHECK_FALSE(f.Has(api::Namespaces(), "", "team"));
  // A namespace of the same name can be made again, with its own ServiceAccount.
  f.Create(api::Namespaces(), "", Named("team"));
  f.loop.RunFor(1s);
  CHECK(f.Has(api::ServiceAccounts(), "team", "default"));
}

TEST_CASE("the protected namespaces cannot be deleted", "[namespaces]") {
  Fixture f;
  auto refused = f.client->Delete(api::Namespaces(), "", "default");
  CHECK(refused.status().code() == Code::kForbidden);
  CHECK(f.Namespace("default")["status"]["phase"] == "Active");
}

}  // namespace
}  // namespace pjemu::namespaces
