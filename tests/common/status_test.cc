// Given a Status code, the API server must answer with the reason and HTTP code that
// kube-apiserver uses for it.
#include "emulator/common/status.h"

#include <catch2/catch.hpp>
#include <string>

using pjemu::Code;
using pjemu::Json;
using pjemu::Status;

TEST_CASE("status codes map 1:1 onto Kubernetes reasons and HTTP codes", "[common]") {
  auto [code, reason, http] = GENERATE(table<Code, std::string, int>({
      {Code::kBadRequest, "BadRequest", 400},
      {Code::kUnauthorized, "Unauthorized", 401},
      {Code::kNotFound, "NotFound", 404},
      {Code::kAlreadyExists, "AlreadyExists", 409},
      {Code::kConflict, "Conflict", 409},
      {Code::kExpired, "Expired", 410},
      {Code::kRequestEntityTooLarge, "RequestEntityTooLarge", 413},
      {Code::kUnsupportedMediaType, "UnsupportedMediaType", 415},
      {Code::kInvalid, "Invalid", 422},
      {Code::kInternal, "InternalError", 500},
      {Code::kUnavailable, "ServiceUnavailable", 503},
  }));
  CAPTURE(reason);
  CHECK(pjemu::ReasonOf(code) == reason);
  CHECK(pjemu::HttpCodeOf(code) == http);
  CHECK(pjemu::CodeFromReason(reason) == code);
}

TEST_CASE("NotFound carries the real server's message and details", "[common]") {
  Status s = pjemu::NotFoundError("pytorchjobs.kubeflow.org", "nosuch");
  Json j = s.ToStatusJson();
  CHECK(j["message"] == "pytorchjobs.kubeflow.org \"nosuch\" not found");
  CHECK(j["reason"] == "NotFound");
  CHECK(j["code"] == 404);
  CHECK(j["status"] == "Failure");
  CHECK(j["details"] == Json({{"name", "nosuch"}, {"group", "kubeflow.org"}, {"kind", "pytorchjobs"}}));
  CHECK_FALSE(pjemu::NotFoundError("pods", "p").details().contains("group"));
}

TEST_CASE("a Status survives the trip through its JSON form", "[common]") {
  Status s = pjemu::ConflictError("pods", "x");
  Status back = Status::FromStatusJson(s.ToStatusJson(), 409);
  CHECK(back.code() == Code::kConflict);
  CHECK(back.message() == s.message());
  CHECK(Status::FromStatusJson(Json{{"kind", "Pod"}}, 502).code() == Code::kInternal);
}

TEST_CASE("RETURN_IF_ERROR and ASSIGN_OR_RETURN pass errors through", "[common]") {
  auto fails = []() -> pjemu::Result<int> { return pjemu::BadRequestError("no"); };
  auto succeeds = []() -> pjemu::Result<int> { return 7; };
  auto use = [&](bool fail) -> pjemu::Result<int> {
    ASSIGN_OR_RETURN(int v, fail ? fails() : succeeds());
    RETURN_IF_ERROR(Status());
    return v + 1;
  };
  CHECK(use(false).value() == 8);
  CHECK(use(true).status().code() == Code::kBadRequest);
  CHECK(pjemu::InternalError("x").WithContext("create pod p").message() == "create pod p: x");
}

TEST_CASE("JSON member names sort as std::less<> sorts them, first byte or not", "[common]") {
  // The comparator only decides early where the first bytes differ; the order must be the
  // library's own, or texts, hashes and managed fields written in key order would change.
  const std::string alphabet = std::string("aAb\x7f\x80\xff") + '\0';
  std::uint32_t state = 12345;  // a fixed linear congruential sequence: the same pairs each run
  auto next = [&] { return (state = state * 1664525u + 1013904223u) >> 8; };
  auto name = [&] {
    std::string s;
    for (std::uint32_t n = next() % 4; n > 0; --n) s += alphabet[next() % alphabet.size()];
    return s;
  };
  pjemu::JsonKeyLess less;
  for (int i = 0; i < 20000; ++i) {
    const std::string a = name(), b = name();
    const auto shown = [](const std::string& s) {
      return Json(s).dump(-1, ' ', true, Json::error_handler_t::replace);
    };
    INFO("a=" << shown(a) << " b=" << shown(b));
    REQUIRE(less(a, b) == std::less<>()(a, b));
  }
  Json object = {{"status", 1}, {"spec", 2}, {"Zeta", 3}, {"\xc3\xa9t\xc3\xa9", 4}, {"s", 5}};
  CHECK(object.dump() == "{\"Zeta\":3,\"s\":5,\"spec\":2,\"status\":1,\"\xc3\xa9t\xc3\xa9\":4}");
  CHECK(object.find(std::string_view("spec")) != object.end());
  CHECK(object.count("sp") == 0);
}

TEST_CASE("Json frees a tree of any depth: by recursion near the top, without it below",
          "[common]") {
  // Freed by recursion, 300,000 levels would need several times the thread's 8 MiB stack.
  const int levels = 300'000;
  std::string arrays(levels, '[');
  arrays += std::string(levels, ']');
  std::string objects;
  for (int i = 0; i < levels / 3; ++i) objects += R"({"k":[1,"a string longer than fifteen",)";
  objects += "null";
  for (int i = 0; i < levels / 3; ++i) objects += "]}";
  for (const std::string* text : {&arrays, &objects}) {
    Json tree = Json::parse(*text);
    CHECK(pjemu::json_free::depth == 0);
    tree = nullptr;  // the old tree is freed here
    CHECK(pjemu::json_free::depth == 0);
  }
  // A shallow tree, copied and freed again, is still whole in its copy.
  Json pod = {{"metadata", {{"name", "p"}, {"labels", {{"a", "1"}}}}},
              {"spec", {{"containers", Json::array({{{"name", "c"}, {"args", {"x", "y"}}}})}}}};
  Json copy = pod;
  pod = Json::object();
  CHECK(copy["spec"]["containers"][0]["args"][1] == "y");
  CHECK(pjemu::json_free::depth == 0);
}
