// `pjemu scenario run` as a subprocess: exit codes (0 passed, 1 an expectation failed, 2 a file
// that does not load), the JUnit XML (well-formed, one testcase per file, failure and error
// elements) and the per-file HTML report (well-formed, its SVG timeline with pod lanes and
// fault marks).
#include <boost/property_tree/ptree.hpp>
#include <boost/property_tree/xml_parser.hpp>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/cli/cli_process.h"

namespace pjemu::testing {
namespace {

using namespace std::chrono_literals;
namespace pt = boost::property_tree;

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Parses XML (throws on malformed input, failing the test).
pt::ptree ParseXml(const std::string& path) {
  pt::ptree tree;
  pt::read_xml(path, tree);
  return tree;
}

std::size_t Count(const std::string& text, const std::string& part) {
  std::size_t n = 0;
  for (auto at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

TEST_CASE("scenario run writes JUnit XML and an HTML report per file", "[cli][scenario]") {
  std::string dir = TempDir("scenario");
  // An expectation that cannot hold: the job Succeeds, the file expects Failed.
  std::string failing = WriteFile(dir, "wrong-expectation.yaml",
                                  "name: expects the wrong condition\n"
                                  "jobs:\n  - fixture: fixtures/seeds/pytorch-simple.yaml\n"
                                  "processes:\n  - pod: \"*\"\n    runtime: 2m\n"
                                  "expect:\n  - condition: Failed\n");
  std::string broken = WriteFile(dir, "broken.yaml", "name: broken\nexpect:\n  - nosuchkey: 1\n");
  std::string junit = dir + "/out/junit.xml";
  CliResult r = RunPjemu({"scenario", "run", "scenarios/exitcode-137-retried.yaml", failing, broken,
                          "--junit", junit, "--output-dir", dir + "/out"},
                         120s);
  INFO(r.out << r.err);
  CHECK(r.exit_code == 2);  // a file that does not load wins over a failed expectation
  CHECK(Contains(r.out, "scenarios/exitcode-137-retried.yaml: PASS"));
  CHECK(Contains(r.out, failing + ": FAIL"));
  CHECK(Contains(r.err, failing + ":8: expected condition Failed"));
  CHECK(Contains(r.err, broken + ":1: jobs:"));

  pt::ptree tree = ParseXml(junit);
  const pt::ptree& suite = tree.get_child("testsuites.testsuite");
  CHECK(suite.get<int>("<xmlattr>.tests") == 3);
  CHECK(suite.get<int>("<xmlattr>.failures") == 1);
  CHECK(suite.get<int>("<xmlattr>.errors") == 1);
  std::vector<std::string> names, outcomes;
  for (const auto& [tag, testcase] : suite) {
    if (tag != "testcase") continue;
    names.push_back(testcase.get<std::string>("<xmlattr>.name"));
    outcomes.push_back(testcase.count("failure")  ? "failure:" + testcase.get<std::string>(
                                                                     "failure.<xmlattr>.message")
                       : testcase.count("error") ? std::string("error")
                                                  : std::string("passed"));
  }
  REQUIRE(names.size() == 3);
  CHECK(outcomes[0] == "passed");
  CHECK(Contains(outcomes[1], "failure:" + failing + ":8: expected condition Failed"));
  CHECK(outcomes[2] == "error");
  CHECK(names[1] == "expects the wrong condition");

  // The passing file's report: well-formed, a lane per job and pod, the fault marked.
  std::string html_path = dir + "/out/exitcode-137-retried.html";
  REQUIRE(std::filesystem::exists(html_path));
  std::string html = Slurp(html_path);
  CHECK_NOTHROW(ParseXml(html_path));
  CHECK(Contains(html, "PASSED"));
  CHECK(Contains(html, "<svg class=\"timeline\""));
  CHECK(Contains(html, "job default/exitcode-137"));
  CHECK(Contains(html, "pod default/exitcode-137-worker-0"));
  CHECK(Count(html, "<g class=\"fault\">") == 1);
  CHECK(Contains(html, "Succeeded"));
  CHECK(!Contains(html, "src=\"http"));  // self-contained
  std::string failed_html = Slurp(dir + "/out/wrong-expectation.html");
  CHECK(Contains(failed_html, "FAILED"));
  CHECK(Contains(failed_html, "expected condition Failed"));
  CHECK(std::filesystem::exists(dir + "/out/broken.html"));
}

TEST_CASE("scenario run exits 0 when every file passed and 1 when one failed", "[cli][scenario]") {
  std::string dir = TempDir("scenario-codes");
  CliResult ok = RunPjemu({"scenario", "run", "scenarios/ttl-deletion.yaml",
                           "scenarios/gpu-no-gpus.yaml", "--output-dir", dir},
                          120s);
  INFO(ok.out << ok.err);
  CHECK(ok.exit_code == 0);
  CHECK(std::filesystem::exists(dir + "/ttl-deletion.html"));
  CHECK(std::filesystem::exists(dir + "/gpu-no-gpus.html"));
  std::string failing = WriteFile(dir, "never-done.yaml",
                                  "name: never done\noptions:\n  timeout: 2m\n"
                                  "jobs:\n  - fixture: fixtures/seeds/pytorch-simple.yaml\n"
                                  "processes:\n  - pod: \"*\"\n    runtime: 1h\n"
                                  "expect:\n  - condition: Succeeded\n");
  CliResult bad = RunPjemu({"scenario", "run", failing, "--output-dir", dir}, 120s);
  CHECK(bad.exit_code == 1);
  CliResult usage = RunPjemu({"scenario", "run", dir + "/does-not-exist.yaml"}, 30s);
  CHECK(usage.exit_code == 2);
}

}  // namespace
}  // namespace pjemu::testing
