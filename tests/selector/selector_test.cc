// Given label selector strings as kubectl and the Python client send them, parsing should accept
// the Kubernetes grammar, refuse the rest with the real server's messages, and match labels.
#include "emulator/api/selector.h"

#include <catch2/catch.hpp>

namespace pjemu::api {
namespace {

Json Labels(Json labels) { return {{"metadata", {{"labels", std::move(labels)}}}}; }

TEST_CASE("label selectors parse to their canonical form", "[selector]") {
  auto [text, canonical] = GENERATE(table<std::string, std::string>({
      {"", ""},
      {"a=b", "a=b"},
      {"a==b", "a==b"},
      {"a!=b", "a!=b"},
      {"  a  =  b  ", "a=b"},
      {"a in (y,x)", "a in (x,y)"},
      {"a notin (x)", "a notin (x)"},
      {"a", "a"},
      {"!a", "!a"},
      {"b,a", "a,b"},
      {"training.kubeflow.org/job-name in (mnist,foo),training.kubeflow.org/replica-type!=worker",
       "training.kubeflow.org/job-name in (foo,mnist),training.kubeflow.org/replica-type!=worker"},
      {"x in (foo,,baz),y,z notin ()", "x in (,baz,foo),y,z notin ()"},
      {"a=", "a="},
      {"in in (in)", "in in (in)"},
      {"a>5", "a>5"},
  }));
  CAPTURE(text);
  auto sel = LabelSelector::Parse(text);
  INFO(sel.status().ToString());
  REQUIRE(sel.ok());
  CHECK(sel->ToString() == canonical);
}

TEST_CASE("bad label selectors are BadRequest with the real server's messages", "[selector]") {
  const std::string kNamePart =
      "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end "
      "with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
      "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
  auto [text, message] = GENERATE_COPY(table<std::string, std::string>({
      {"type=app,versionv1.0.1)",
       "unable to parse requirement: found ')', expected: in, notin, =, ==, !=, gt, lt"},
      {"env IN (a)",
       "unable to parse requirement: found 'IN', expected: in, notin, =, ==, !=, gt, lt"},
      {"x (", "unable to parse requirement: found '(', expected: in, notin, =, ==, !=, gt, lt"},
      {"a in (x", "unable to parse requirement: found '', expected: ',' or ')'"},
      {"a in x", "unable to parse requirement: found 'x' expected: '('"},
      {"a=b,", "found '', expected: identifier after ','"},
      {",a", "found ',', expected: !, identifier, or 'end of string'"},
      {"a=b c", "found 'c', expected: ',' or 'end of string'"},
      {"a=(", "unable to parse requirement: found '(', expected: identifier"},
      {"!", "unable to parse requirement: found '', expected: identifier"},
      {"-a=b", "unable to parse requirement: <nil>: Invalid value: \"-a\": " + kNamePart},
      {"a=-b",
       "unable to parse requirement: values[0][a]: Invalid value: \"-b\": a valid label must be an "
       "empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and "
       "end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex "
       "used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"},
      {"a/b/c", "unable to parse requirement: <nil>: Invalid value: \"a/b/c\": a qualified name " +
                    kNamePart.substr(10) +
                    " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"},
      {"Foo.com/a",
       "unable to parse requirement: <nil>: Invalid value: \"Foo.com/a\": prefix part "
       "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
       "characters, '-' or '.', and must start and end with an alphanumeric "
       "character (e.g. 'example.com', regex used for validation is "
       "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"},
      {"a>b",
       "unable to parse requirement: values[0]: Invalid value: \"b\": for 'Gt', 'Lt' "
       "operators, the value must be an integer"},
      {"a=!b", "unable to parse requirement: found '!', expected: identifier"},
  }));
  CAPTURE(text);
  auto sel = LabelSelector::Parse(text);
  REQUIRE_FALSE(sel.ok());
  CHECK(sel.status().code() == Code::kBadRequest);
  CHECK(sel.status().message() == message);
}

TEST_CASE("label selectors match labels as Kubernetes does", "[selector]") {
  const Json worker = Labels({{"app", "mnist"}, {"role", "worker"}});
  const Json bare = Labels(Json::object());
  const Json no_meta = Json::object();
  auto [text, object, want] = GENERATE_COPY(table<std::string, Json, bool>({
      {"", bare, true},
      {"app=mnist", worker, true},
      {"app==mnist", worker, true},
      {"app=other", worker, false},
      {"app!=other", worker, true},
      {"app!=mnist", worker, false},
      {"app!=mnist", bare, true},  // != matches objects without the key
      {"role in (master,worker)", worker, true},
      {"role in (master)", worker, false},
      {"role in (master)", bare, false},
      {"role notin (master)", worker, true},
      {"role notin (worker)", worker, false},
      {"role notin (worker)", no_meta, true},  // notin matches objects without the key
      {"role", worker, true},
      {"role", bare, false},
      {"!role", worker, false},
      {"!role", bare, true},
      {"app=mnist,role=worker", worker, true},
      {"app=mnist,role=master", worker, false},
      {"app=", Labels({{"app", ""}}), true},
      {"n>5", Labels({{"n", "7"}}), true},
      {"n<5", Labels({{"n", "7"}}), false},
      {"n>5", Labels({{"n", "x"}}), false},
  }));
  CAPTURE(text, object.dump());
  auto sel = LabelSelector::Parse(text);
  REQUIRE(sel.ok());
  CHECK(sel->Matches(object) == want);
}

TEST_CASE("name validators give the real messages", "[selector]") {
  CHECK(ValidateDns1123Subdomain("mnist-worker-0").empty());
  CHECK(ValidateDns1123Subdomain("a.b-c.d").empty());
  CHECK_FALSE(ValidateDns1123Subdomain("a..b").empty());
  CHECK_FALSE(ValidateDns1123Subdomain("-a").empty());
  CHECK(ValidateDns1123Subdomain(std::string(254, 'a')).front() ==
        "must be no more than 253 characters");
  CHECK(ValidateDns1123Label("abc-1").empty());
  CHECK_FALSE(ValidateDns1123Label("a.b").empty());
  CHECK(ValidateDns1035Label("abc-1").empty());
  CHECK_FALSE(ValidateDns1035Label("1abc").empty());
  CHECK(ValidateQualifiedName("training.kubeflow.org/job-name").empty());
  CHECK(ValidateQualifiedName("/a") == std::vector<std::string>{"prefix part must be non-empty"});
  CHECK(ValidateLabelValue("").empty());
  CHECK(ValidateLabelValue(std::string(64, 'a')) ==
        std::vector<std::string>{"must be no more than 63 characters"});
}

}  // namespace
}  // namespace pjemu::api
