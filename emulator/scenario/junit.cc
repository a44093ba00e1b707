// JUnit XML as Jenkins, GitLab and GitHub's test reporters read it (the Ant schema's subset:
// testsuites/testsuite/testcase with failure, error, skipped and system-out).
#include <fmt/format.h>

#include "emulator/scenario/report.h"

namespace pjemu::scenario {

std::string XmlEscape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t') break;
        out += c;
    }
  }
  return out;
}

namespace {

// Each line followed by a newline.
std::string Lines(const std::vector<std::string>& lines) {
  std::string out;
  for (const std::string& l : lines) out += l + "\n";
  return out;
}

}  // namespace

std::string RenderJunit(const std::vector<ScenarioResult>& results) {
  int failures = 0, errors = 0, skipped = 0;
  double total = 0;
  std::string cases;
  for (const ScenarioResult& r : results) {
    total += r.seconds;
    cases += fmt::format("    <testcase classname=\"scenarios\" name=\"{}\" file=\"{}\" time=\"{:.3f}\">\n",
                         XmlEscape(r.name), XmlEscape(r.path), r.seconds);
    if (!r.skipped.empty()) {
      ++skipped;
      cases += fmt::format("      <skipped message=\"{}\"/>\n", XmlEscape(r.skipped));
    } else if (!r.setup.ok()) {
      ++errors;
      cases += fmt::format("      <error message=\"{}\">{}</error>\n",
                           XmlEscape(r.setup.message()), XmlEscape(r.setup.ToString()));
    } else if (!r.report.passed) {
      ++failures;
      const std::string first = r.report.failures.empty() ? "failed" : r.report.failures.front();
      cases += fmt::format("      <failure message=\"{}\">{}</failure>\n", XmlEscape(first),
                           XmlEscape(Lines(r.report.failures)));
    }
    if (r.setup.ok() && r.skipped.empty()) {
      cases += fmt::format("      <system-out>{}</system-out>\n",
                           XmlEscape(Lines(r.report.timeline)));
    }
    cases += "    </testcase>\n";
  }
  return fmt::format(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<testsuites tests=\"{0}\" failures=\"{1}\" errors=\"{2}\" time=\"{3:.3f}\">\n"
      "  <testsuite name=\"pjemu scenarios\" tests=\"{0}\" failures=\"{1}\" errors=\"{2}\" "
      "skipped=\"{5}\" time=\"{3:.3f}\">\n{4}  </testsuite>\n</testsuites>\n",
      results.size(), failures, errors, total, cases, skipped);
}

}  // namespace pjemu::scenario
