// Discovery, OpenAPI, /version, health, authentication and path handling of the Router.
#include <catch2/catch.hpp>

#include "emulator/apiserver/nonresource.h"
#include "emulator/apiserver/paths.h"
#include "tests/apiserver/router_fixture.h"

namespace pjemu::apiserver {
namespace {

using testing::RouterFixture;

TEST_CASE("classic discovery lists the core and kubeflow.org group versions", "[apiserver]") {
  RouterFixture f;
  auto api = f.Do("GET", "/api?timeout=32s");
  CHECK(api.status == 200);
  CHECK(api.content_type == "application/json");
  CHECK(RouterFixture::Body(api)["versions"] == Json({"v1"}));

  Json apis = RouterFixture::Body(f.Do("GET", "/apis"));
  CHECK(apis["kind"] == "APIGroupList");
  bool kubeflow = false;
  for (const auto& g : apis["groups"]) {
    if (g["name"] == "policy") {
      CHECK(g["preferredVersion"]["groupVersion"] == "policy/v1");
    }
    if (g["name"] == "kubeflow.org") {
      kubeflow = true;
      CHECK(g["preferredVersion"]["groupVersion"] == "kubeflow.org/v1");
    }
  }
  CHECK(kubeflow);

  Json core = RouterFixture::Body(f.Do("GET", "/api/v1"));
  CHECK(core["groupVersion"] == "v1");
  std::map<std::string, Json> by_name;
  for (const auto& r : core["resources"]) by_name[r["name"]] = r;
  REQUIRE(by_name.count("pods"));
  CHECK(by_name["pods"]["shortNames"] == Json({"po"}));
  CHECK(by_name["pods"]["namespaced"] == true);
  CHECK(by_name["pods/log"]["verbs"] == Json({"get"}));
  // kubectl drain finds the eviction subresource here (group and version set, kind Eviction).
  CHECK(by_name["pods/eviction"]["kind"] == "Eviction");
  CHECK(by_name["pods/eviction"]["group"] == "policy");
  CHECK(by_name["pods/eviction"]["version"] == "v1");
  CHECK(by_name["pods/eviction"]["verbs"] == Json({"create"}));
  CHECK(by_name["namespaces"]["namespaced"] == false);
  CHECK(by_name.count("events"));
  CHECK(by_name.count("services"));
  CHECK(by_name.count("nodes"));

  Json kf = RouterFixture::Body(f.Do("GET", "/apis/kubeflow.org/v1"));
  std::map<std::string, Json> kf_by_name;
  for (const auto& r : kf["resources"]) kf_by_name[r["name"]] = r;
  CHECK(kf_by_name["pytorchjobs"]["kind"] == "PyTorchJob");
  CHECK(kf_by_name["pytorchjobs"]["singularName"] == "pytorchjob");
  CHECK(kf_by_name["pytorchjobs/status"]["verbs"] == Json({"get", "patch", "update"}));
  CHECK(kf_by_name["pytorchjobs/scale"]["group"] == "autoscaling");
  CHECK(kf_by_name["pytorchjobs/scale"]["kind"] == "Scale");
}

TEST_CASE("aggregated discovery is served only when asked for, with its parameterised type",
          "[apiserver]") {
  RouterFixture f;
  auto v2 = f.Do("GET", "/apis", "",
                 {{"accept",
                   "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,"
                   "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,"
                   "application/json"}});
  CHECK(v2.content_type == "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList");
  Json body = RouterFixture::Body(v2);
  CHECK(body["apiVersion"] == "apidiscovery.k8s.io/v2");
  bool found = false;
  for (const auto& item : body["items"]) {
    if (item["metadata"]["name"] != "kubeflow.org") continue;
    for (const auto& r : item["versions"][0]["resources"]) {
      if (r["resource"] == "pytorchjobs") {
        found = true;
        CHECK(r["scope"] == "Namespaced");
        CHECK(r["responseKind"]["kind"] == "PyTorchJob");
      }
    }
  }
  CHECK(found);

  auto beta =
      f.Do("GET", "/api", "",
           {{"accept",
             "application/"
             "json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json"}});
  CHECK(beta.content_type ==
        "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList");
  Json core = RouterFixture::Body(beta);
  REQUIRE(core["items"].size() == 1);
  CHECK(core["items"][0]["metadata"] == Json::object());

  auto classic = f.Do("GET", "/apis", "", {{"accept", "application/json, */*"}});
  CHECK(classic.content_type == "application/json");
  CHECK(RouterFixture::Body(classic)["kind"] == "APIGroupList");
}

TEST_CASE("openapi v2 is the minimal protobuf document as application/octet-stream",
          "[apiserver]") {
  // The 28 bytes kubectl 1.20 accepts.
  const unsigned char want[] = {0x0a, 0x03, 0x32, 0x2e, 0x30, 0x12, 0x15, 0x0a, 0x0a, 0x4b,
                                0x75, 0x62, 0x65, 0x72, 0x6e, 0x65, 0x74, 0x65, 0x73, 0x12,
                                0x07, 0x76, 0x31, 0x2e, 0x32, 0x30, 0x2e, 0x32};
  CHECK(MinimalOpenApiV2("v1.20.2") == std::string(reinterpret_cast<const char*>(want), 28));
  RouterFixture f;
  auto r = f.Do("GET", "/openapi/v2?timeout=32s", "",
                {{"accept", "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"}});
  CHECK(r.status == 200);
  CHECK(r.content_type == "application/octet-stream");
  CHECK(r.body == MinimalOpenApiV2("v1.30.0"));
}

TEST_CASE("openapi v3 declares fieldValidation on the PATCH of every resource", "[apiserver]") {
  RouterFixture f;
  Json root = RouterFixture::Body(f.Do("GET", "/openapi/v3"));
  std::string url = root["paths"]["apis/kubeflow.org/v1"]["serverRelativeURL"];
  CHECK(url.rfind("/openapi/v3/apis/kubeflow.org/v1?hash=", 0) == 0);
  Json doc = RouterFixture::Body(f.Do("GET", url));
  const Json& patch =
      doc["paths"]["/apis/kubeflow.org/v1/namespaces/{namespace}/pytorchjobs/{name}"]["patch"];
  CHECK(patch["x-kubernetes-group-version-kind"]["kind"] == "PyTorchJob");
  CHECK(patch["parameters"][0]["name"] == "fieldValidation");
  CHECK_FALSE(patch["requestBody"]["content"].contains("application/strategic-merge-patch+json"));
  Json core = RouterFixture::Body(f.Do("GET", "/openapi/v3/api/v1"));
  CHECK(
      core["paths"]["/api/v1/namespaces/{namespace}/pods/{name}"]["patch"]["requestBody"]["content"]
          .contains("application/strategic-merge-patch+json"));
  CHECK(f.Do("GET", "/openapi/v3/apis/nosuch.io/v1").status == 404);
}

TEST_CASE("version is full semver and health endpoints answer ok", "[apiserver]") {
  RouterFixture f;
  Json v = RouterFixture::Body(f.Do("GET", "/version?timeout=32s"));
  CHECK(v["gitVersion"] == "v1.30.0");
  CHECK(v["major"] == "1");
  CHECK(v["minor"] == "30");
  for (const char* path : {"/healthz", "/livez", "/readyz"}) {
    auto r = f.Do("GET", path);
    CHECK(r.status == 200);
    CHECK(r.body == "ok");
  }
}

TEST_CASE("unknown paths and resources are NotFound Status objects", "[apiserver]") {
  RouterFixture f;
  for (const char* path : {"/nosuch", "/apis/kubeflow.org/v2/pytorchjobs", "/api/v1/widgets",
                           "/apis/kubeflow.org/v1/namespaces/default/pytorchjobs/x/nosub",
                           "/api/v1/namespaces/default/nodes"}) {
    CAPTURE(path);
    auto r = f.Do("GET", path);
    CHECK(r.status == 404);
    Json body = RouterFixture::Body(r);
    CHECK(body["kind"] == "Status");
    CHECK(body["reason"] == "NotFound");
    CHECK(body["message"] == "the server could not find the requested resource");
  }
}

TEST_CASE("path traversal and encoded slashes are refused before the store", "[apiserver]") {
  RouterFixture f;
  for (const char* path :
       {"/api/v1/namespaces/default/pods/..", "/api/v1/namespaces/default/pods/a%2Fb",
        "/api/v1/namespaces/%2E%2E/pods/x", "/api/v1/namespaces/default/pods/a%2",
        "/api/../version"}) {
    CAPTURE(path);
    auto r = f.Do("GET", path);
    CHECK(r.status == 400);
    CHECK(RouterFixture::Body(r)["reason"] == "BadRequest");
  }
  CHECK(f.Do("GET", "/api//v1").status == 404);
}

TEST_CASE("query strings decode plus as space and booleans parse like Go", "[apiserver]") {
  auto q =
      ParseQuery("labelSelector=training.kubeflow.org%2Fjob-name+in+%28mnist%2Cfoo%29&watch=True");
  REQUIRE(q.ok());
  CHECK(q->Get("labelSelector") == "training.kubeflow.org/job-name in (mnist,foo)");
  CHECK(q->GetBool("watch").value() == true);
  for (const char* t : {"1", "t", "T", "TRUE", "true", "True"}) CHECK(ParseBool(t) == true);
  for (const char* t : {"0", "f", "F", "FALSE", "false", "False"}) CHECK(ParseBool(t) == false);
  CHECK_FALSE(ParseBool("yes").has_value());
  CHECK_FALSE(ParseBool("tRUE").has_value());
  Query bad;
  bad.Set("watch", "yes");
  CHECK(bad.GetBool("watch").status().code() == Code::kBadRequest);
}

TEST_CASE("a bearer token is required and compared exactly when configured", "[apiserver]") {
  FakeClock clock;
  store::Store store(clock);
  Router router(store, nullptr, RouterOptions{"s3cret", "v1.30.0", &clock, {}});
  HttpRequest request;
  request.method = "GET";
  request.target = "/api/v1/namespaces/default/pods";
  auto denied = router.Route(request);
  CHECK(denied.status == 401);
  Json body = Json::parse(denied.body);
  CHECK(body["reason"] == "Unauthorized");
  CHECK(body["message"] == "Unauthorized");
  for (const char* wrong :
       {"Bearer s3cre", "Bearer s3cretX", "Basic s3cret", "Bearer ", "s3cret"}) {
    request.headers["authorization"] = wrong;
    CHECK(router.Route(request).status == 401);
  }
  request.headers["authorization"] = "Bearer s3cret";
  CHECK(router.Route(request).status == 200);
  HttpRequest health;
  health.method = "GET";
  health.target = "/healthz";
  CHECK(router.Route(health).status == 200);
}

}  // namespace
}  // namespace pjemu::apiserver
