// The HTML report of one scenario run: a header (pass/fail, duration, failures), an SVG timeline
// with one lane per job (its conditions) and per pod (its phases, a re-created pod continuing in
// the same lane), faults as red vertical marks, an SVG loss curve per trainer rank when the run
// had one, and the text timeline. Hand-written SVG: the charts are rectangles, lines and text,
// and Debian has no C++ charting library worth a dependency for that.
#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <map>

#include "emulator/scenario/report.h"

namespace pjemu::scenario {
namespace {

using Kind = TimelineEvent::Kind;

constexpr int kLabelWidth = 260;
constexpr int kChartWidth = 720;
constexpr int kLaneHeight = 22;
constexpr int kTop = 40;

const char* ColourOf(const std::string& state) {
  static const std::map<std::string, const char*> colours = {
      {"Pending", "#f2c94c"},   {"Running", "#56ccf2"},    {"Succeeded", "#27ae60"},
      {"Failed", "#eb5757"},    {"Unknown", "#bdbdbd"},    {"Created", "#9b51e0"},
      {"Restarting", "#f2994a"}, {"Suspended", "#828282"}, {"Deleted", "#e0e0e0"}};
  auto it = colours.find(state);
  return it == colours.end() ? "#a0a0a0" : it->second;
}

double Seconds(Duration d) { return std::chrono::duration<double>(d).count(); }

struct Segment {
  double from, to;
  std::string state;
};

struct Lane {
  std::string label;
  std::vector<Segment> segments;
};

// Lanes in first-seen order: jobs first, then pods. A state lasts until the lane's next one.
std::vector<Lane> BuildLanes(const std::vector<TimelineEvent>& events, double end) {
  std::vector<Lane> lanes;
  std::map<std::string, std::size_t> index;
  auto lane = [&](const std::string& label) -> Lane& {
    auto [it, inserted] = index.emplace(label, lanes.size());
    if (inserted) lanes.push_back({label, {}});
    return lanes[it->second];
  };
  for (const TimelineEvent& e : events) {
    if (e.kind == Kind::kSubmit && e.ok) lane("job " + e.object);
  }
  for (const TimelineEvent& e : events) {
    std::string label;
    if (e.kind == Kind::kJobCondition || e.kind == Kind::kJobDeleted) label = "job " + e.object;
    if (e.kind == Kind::kPodPhase || e.kind == Kind::kPodDeleted) label = "pod " + e.object;
    if (label.empty()) continue;
    Lane& l = lane(label);
    double at = Seconds(e.at);
    if (!l.segments.empty()) l.segments.back().to = at;
    l.segments.push_back({at, end, e.state});
  }
  // Jobs above pods, each group in first-seen order.
  std::stable_partition(lanes.begin(), lanes.end(),
                        [](const Lane& l) { return l.label.rfind("job ", 0) == 0; });
  return lanes;
}

std::string TimelineSvg(const std::vector<TimelineEvent>& events, double end) {
  std::vector<Lane> lanes = BuildLanes(events, end);
  const int height = kTop + static_cast<int>(lanes.size()) * kLaneHeight + 40;
  const double scale = kChartWidth / std::max(end, 1.0);
  auto x = [&](double t) { return kLabelWidth + t * scale; };
  std::string svg = fmt::format(
      "<svg class=\"timeline\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" "
      "font-family=\"sans-serif\" font-size=\"11\">\n",
      kLabelWidth + kChartWidth + 20, height);
  // Time axis: ten ticks.
  for (int i = 0; i <= 10; ++i) {
    double t = end * i / 10;
    svg += fmt::format(
        "<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"#eee\"/>"
        "<text x=\"{0:.1f}\" y=\"{3}\" text-anchor=\"middle\" fill=\"#666\">{4}</text>\n",
        x(t), kTop - 6, height - 28, height - 14, FormatAge(std::chrono::seconds(
                                                      static_cast<long>(t + 0.5))));
  }
  for (std::size_t i = 0; i < lanes.size(); ++i) {
    int y = kTop + static_cast<int>(i) * kLaneHeight;
    svg += fmt::format("<text class=\"lane\" x=\"4\" y=\"{}\">{}</text>\n", y + 15,
                       XmlEscape(lanes[i].label));
    for (const Segment& s : lanes[i].segments) {
      double w = std::max(1.0, (s.to - s.from) * scale);
      svg += fmt::format(
          "<rect class=\"state\" x=\"{:.1f}\" y=\"{}\" width=\"{:.1f}\" height=\"{}\" "
          "fill=\"{}\"><title>{} {} at +{:.0f}s</title></rect>\n",
          x(s.from), y + 3, w, kLaneHeight - 6, ColourOf(s.state), XmlEscape(lanes[i].label),
          XmlEscape(s.state), s.from);
      if (w > 50) {
        svg += fmt::format("<text x=\"{:.1f}\" y=\"{}\" fill=\"#222\">{}</text>\n", x(s.from) + 3,
                           y + 15, XmlEscape(s.state));
      }
    }
  }
  int fault_index = 0;
  for (const TimelineEvent& e : events) {
    if (e.kind != Kind::kFault) continue;
    double fx = x(Seconds(e.at));
    const int label_y = kTop - 10 - 10 * (fault_index++ % 2);  // alternate rows: close faults
    svg += fmt::format(
        "<g class=\"fault\"><line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" "
        "stroke=\"#c0392b\" stroke-width=\"2\" stroke-dasharray=\"4 2\"/>"
        "<text x=\"{3:.1f}\" y=\"{4}\" fill=\"#c0392b\">{5}</text>"
        "<title>{5}: {6}{7}</title></g>\n",
        fx, kTop - 4, height - 28, fx + 3, label_y, XmlEscape(e.object), XmlEscape(e.state),
        e.ok ? "" : " (failed)");
  }
  svg += "</svg>\n";
  return svg;
}

std::string LossSvg(const std::map<std::string, std::vector<LossPoint>>& loss) {
  static const char* kLineColours[] = {"#2f80ed", "#eb5757", "#27ae60", "#9b51e0", "#f2994a"};
  double max_step = 1, max_loss = 0;
  for (const auto& [rank, points] : loss) {
    for (const LossPoint& p : points) {
      max_step = std::max(max_step, p.step);
      max_loss = std::max(max_loss, p.loss);
    }
  }
  if (max_loss <= 0) max_loss = 1;
  constexpr int kW = 720, kH = 240, kLeft = 50, kBottom = 30;
  auto px = [&](double step) { return kLeft + step / max_step * (kW - kLeft - 10); };
  auto py = [&](double l) { return 10 + (1 - l / max_loss) * (kH - kBottom - 10); };
  std::string svg = fmt::format(
      "<svg class=\"loss\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" "
      "font-family=\"sans-serif\" font-size=\"11\">\n"
      "<line x1=\"{2}\" y1=\"10\" x2=\"{2}\" y2=\"{3}\" stroke=\"#999\"/>"
      "<line x1=\"{2}\" y1=\"{3}\" x2=\"{4}\" y2=\"{3}\" stroke=\"#999\"/>\n"
      "<text x=\"4\" y=\"16\">{5:.2f}</text><text x=\"4\" y=\"{3}\">0</text>"
      "<text x=\"{4}\" y=\"{6}\" text-anchor=\"end\">step {7:.0f}</text>\n",
      kW, kH, kLeft, kH - kBottom, kW - 10, max_loss, kH - 12, max_step);
  std::size_t i = 0;
  for (const auto& [rank, points] : loss) {
    const char* colour = kLineColours[i % std::size(kLineColours)];
    std::string pts;
    for (const LossPoint& p : points) pts += fmt::format("{:.1f},{:.1f} ", px(p.step), py(p.loss));
    svg += fmt::format(
        "<polyline class=\"curve\" fill=\"none\" stroke=\"{}\" stroke-width=\"1.5\" "
        "points=\"{}\"><title>{}</title></polyline>\n"
        "<text x=\"{}\" y=\"{}\" fill=\"{}\">{}</text>\n",
        colour, pts, XmlEscape(rank), kW - 200, 24 + 14 * i, colour, XmlEscape(rank));
    ++i;
  }
  svg += "</svg>\n";
  return svg;
}

// The run's timeline (pods' phases and jobs' conditions, faults marked), its loss curve when it
// had one, and its text events, under headings of the given level.
std::string RunSections(const RunReport& report, int level) {
  std::vector<TimelineEvent> events = report.events.events;
  std::stable_sort(events.begin(), events.end(),
                   [](const TimelineEvent& a, const TimelineEvent& b) { return a.at < b.at; });
  double end = Seconds(report.observed.duration);
  for (const TimelineEvent& e : events) end = std::max(end, Seconds(e.at));
  std::string body = fmt::format(
      "<h{0}>Timeline</h{0}>\n<p class=\"legend\">pods' phases and jobs' conditions over "
      "cluster time since the submit; dashed red lines are faults</p>\n",
      level);
  body += TimelineSvg(events, std::max(end, 1.0));
  if (!report.events.loss.empty()) {
    body += fmt::format("<h{0}>Training loss</h{0}>\n", level) + LossSvg(report.events.loss);
  }
  std::string lines;
  for (const std::string& l : report.timeline) lines += l + "\n";
  body += fmt::format("<h{0}>Events</h{0}>\n<pre class=\"events\">", level) +
          XmlEscape(lines) + "</pre>\n";
  return body;
}

// The whole document around body: no external resources (inline CSS and SVG).
std::string Page(const std::string& title, const char* verdict, const std::string& body) {
  return fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n"
      "<title>{}: {}</title>\n<style>\n"
      "body {{ font-family: sans-serif; margin: 2em; color: #222; }}\n"
      ".verdict.pass {{ color: #27ae60; font-weight: bold; }}\n"
      ".verdict.fail {{ color: #c0392b; font-weight: bold; }}\n"
      "pre {{ background: #f7f7f7; padding: 0.5em; white-space: pre-wrap; }}\n"
      "svg {{ border: 1px solid #ddd; margin: 0.5em 0; }}\n"
      ".side {{ display: inline-block; vertical-align: top; width: 49%; }}\n"
      "</style>\n</head>\n<body>\n{}</body>\n</html>\n",
      XmlEscape(title), verdict, body);
}

}  // namespace

std::string RenderHtmlReport(const ScenarioResult& r) {
  const bool passed = r.setup.ok() && r.report.passed;
  const char* verdict = !r.skipped.empty() ? "SKIPPED" : passed ? "PASSED" : "FAILED";
  std::string body = fmt::format(
      "<h1>{}</h1>\n<p class=\"verdict {}\">{}</p>\n<p>{} &#183; wall time {:.2f}s",
      XmlEscape(r.name), passed ? "pass" : "fail", verdict, XmlEscape(r.path), r.seconds);
  if (r.setup.ok() && r.skipped.empty()) {
    body += fmt::format(" &#183; cluster time {}", FormatAge(r.report.observed.duration));
  }
  body += "</p>\n";
  if (!r.skipped.empty()) {
    body += fmt::format("<h2>Skipped</h2>\n<pre>{}</pre>\n", XmlEscape(r.skipped));
  } else if (!r.setup.ok()) {
    body += fmt::format("<h2>Could not run</h2>\n<pre class=\"error\">{}</pre>\n",
                        XmlEscape(r.setup.ToString()));
  } else {
    if (!r.report.failures.empty()) {
      body += "<h2>Failures</h2>\n<ul class=\"failures\">\n";
      for (const std::string& f : r.report.failures) {
        body += "<li><pre>" + XmlEscape(f) + "</pre></li>\n";
      }
      body += "</ul>\n";
    }
    body += RunSections(r.report, 2);
  }
  return Page(r.name, verdict, body);
}

std::string RenderCompareReport(const ScenarioResult& emulator, const ScenarioResult& cluster,
                                const std::vector<std::string>& diff) {
  const char* verdict = diff.empty() ? "AGREE" : "DIFFER";
  std::string body = fmt::format(
      "<h1>{}</h1>\n<p class=\"verdict {}\">{}</p>\n<p>{}: the embedded cluster and the "
      "cluster the kubeconfig names</p>\n",
      XmlEscape(emulator.name), diff.empty() ? "pass" : "fail", verdict, XmlEscape(emulator.path));
  if (!diff.empty()) {
    std::string lines;
    for (const std::string& l : diff) lines += l + "\n";
    body += "<h2>Where they differ</h2>\n<pre>" + XmlEscape(lines) + "</pre>\n";
  }
  const std::pair<const char*, const ScenarioResult*> sides[] = {{"emulator", &emulator},
                                                                  {"cluster", &cluster}};
  for (const auto& [side, result] : sides) {
    body += fmt::format("<div class=\"side\">\n<h2>{}</h2>\n", side) +
            RunSections(result->report, 3) + "</div>\n";
  }
  return Page(emulator.name + " compared", verdict, body);
}

}  // namespace pjemu::scenario
