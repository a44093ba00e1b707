// Given pods waiting for Services, a Ready pod should name exactly the waiters whose Service
// (namespace and whole selector) selects it.
#include <catch2/catch.hpp>

#include "emulator/kubelet/endpoint_waiters.h"

namespace pjemu::kubelet {
namespace {

Json Pod(const std::string& ns, Json labels) {
  return {{"metadata", {{"name", "p"}, {"namespace", ns}, {"labels", std::move(labels)}}}};
}

TEST_CASE("a Ready pod wakes the waiters whose Service selects it", "[kubelet][endpoints]") {
  EndpointWaiters w;
  CHECK(w.empty());
  w.Add("a", "default", {{"job", "j1"}, {"role", "master"}});
  w.Add("b", "default", {{"job", "j1"}, {"role", "master"}});
  w.Add("c", "default", {{"job", "j2"}, {"role", "master"}});
  w.Add("d", "other", {{"job", "j1"}, {"role", "master"}});
  w.Add("e", "default", {{"job", "j1"}});
  CHECK(w.Selecting(Pod("default", {{"job", "j1"}, {"role", "master"}, {"x", "y"}})) ==
        std::vector<std::string>{"a", "b", "e"});
  // Every term must match; the namespace too.
  CHECK(w.Selecting(Pod("default", {{"job", "j1"}, {"role", "worker"}})) ==
        std::vector<std::string>{"e"});
  CHECK(w.Selecting(Pod("other", {{"job", "j1"}, {"role", "master"}})) ==
        std::vector<std::string>{"d"});
  CHECK(w.Selecting(Pod("default", {{"role", "master"}})).empty());
  // No namespace in the object: "default".
  CHECK(w.Selecting({{"metadata", {{"labels", {{"job", "j2"}, {"role", "master"}}}}}}) ==
        std::vector<std::string>{"c"});
}

TEST_CASE("waiters are forgotten by uid, and bad selectors are not filed", "[kubelet][endpoints]") {
  EndpointWaiters w;
  w.Add("a", "default", {{"job", "j1"}});
  w.Add("a", "default", {{"app", "x"}});  // two Services at once
  w.Add("b", "default", Json::object());  // selects nothing
  w.Add("b", "default", {{"job", 3}});    // not a label value
  w.Add("b", "default", nullptr);
  CHECK(w.Selecting(Pod("default", {{"job", "j1"}, {"app", "x"}})) ==
        std::vector<std::string>{"a"});  // once, though both Services select it
  w.Remove("b");
  CHECK_FALSE(w.empty());
  w.Remove("a");
  CHECK(w.empty());
  CHECK(w.Selecting(Pod("default", {{"job", "j1"}})).empty());
  CHECK(w.Selecting({{"metadata", {{"labels", "not an object"}}}}).empty());
  CHECK(w.Selecting(Json::object()).empty());
}

}  // namespace
}  // namespace pjemu::kubelet
