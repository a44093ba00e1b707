#include "emulator/process/io_sampler.h"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <sstream>

#include "emulator/process/proc_stats.h"

namespace pjemu::process {
namespace {

std::string ReadText(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::int64_t Number(std::string_view text) {
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  std::int64_t v = 0;
  std::from_chars(text.data(), text.data() + text.size(), v);
  return v;
}

double Rate(std::int64_t now, std::int64_t before, double seconds) {
  return std::max<std::int64_t>(0, now - before) / seconds;
}

}  // namespace

IoCounters ParseProcIo(std::string_view text) {
  IoCounters c;
  const std::pair<std::string_view, std::int64_t IoCounters::*> kFields[] = {
      {"read_bytes", &IoCounters::read_bytes}, {"write_bytes", &IoCounters::write_bytes},
      {"syscr", &IoCounters::syscr},           {"syscw", &IoCounters::syscw}};
  while (!text.empty()) {
    std::size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    std::size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    for (const auto& [name, field] : kFields) {
      if (line.substr(0, colon) == name) c.*field = Number(line.substr(colon + 1));
    }
  }
  return c;
}

std::pair<std::int64_t, std::int64_t> ParseNetDev(std::string_view text) {
  std::int64_t rx = 0, tx = 0;
  std::istringstream lines{std::string(text)};
  std::string line;
  while (std::getline(lines, line)) {
    std::size_t colon = line.find(':');
    if (colon == std::string::npos) continue;  // the two header lines
    std::string name = line.substr(0, colon);
    name.erase(0, name.find_first_not_of(' '));
    if (name == "lo") continue;
    // Receive: bytes packets errs drop fifo frame compressed multicast; then transmit: bytes ...
    std::istringstream fields(line.substr(colon + 1));
    std::int64_t v[9] = {};
    for (std::int64_t& f : v) fields >> f;
    rx += v[0];
    tx += v[8];
  }
  return {rx, tx};
}

IoSampler::IoSampler(const Clock& clock, Lister lister, IoSamplerOptions options)
    : clock_(clock), lister_(std::move(lister)), options_(std::move(options)) {}

IoSampler::~IoSampler() { Stop(); }

void IoSampler::Start() {
  sampling_.Start(options_.interval, [this] { SampleOnce(); });
}

void IoSampler::Stop() { sampling_.Stop(); }

IoCounters IoSampler::ReadGroup(Pid leader) const {
  IoCounters sum;
  for (pid_t member : GroupMembers(leader)) {
    IoCounters c = ParseProcIo(ReadText(options_.proc_root + "/" + std::to_string(member) + "/io"));
    sum.read_bytes += c.read_bytes;
    sum.write_bytes += c.write_bytes;
    sum.syscr += c.syscr;
    sum.syscw += c.syscw;
  }
  auto [rx, tx] = ParseNetDev(ReadText(options_.proc_root + "/" + std::to_string(leader) + "/net/dev"));
  sum.rx_bytes = rx;
  sum.tx_bytes = tx;
  return sum;
}

void IoSampler::SampleOnce() {
  std::vector<std::pair<Pid, std::string>> live = lister_();
  std::vector<std::pair<const std::pair<Pid, std::string>*, IoCounters>> read;
  for (const auto& entry : live) read.emplace_back(&entry, ReadGroup(entry.first));
  Time now = clock_.Now();
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [entry, counters] : read) {
    Series& series = series_[entry->second];
    bool same_pid = !series.samples.empty() && series.samples.back().pid == entry->first;
    IoSample sample;
    sample.time = now;
    sample.pid = entry->first;
    if (same_pid && series.has_last && now > series.last_time) {
      double s = std::chrono::duration<double>(now - series.last_time).count();
      const IoCounters& b = series.last;
      sample.read_bytes_per_s = Rate(counters.read_bytes, b.read_bytes, s);
      sample.write_bytes_per_s = Rate(counters.write_bytes, b.write_bytes, s);
      sample.reads_per_s = Rate(counters.syscr, b.syscr, s);
      sample.writes_per_s = Rate(counters.syscw, b.syscw, s);
      sample.rx_bytes_per_s = Rate(counters.rx_bytes, b.rx_bytes, s);
      sample.tx_bytes_per_s = Rate(counters.tx_bytes, b.tx_bytes, s);
    }
    series.last = counters;
    series.last_time = now;
    series.has_last = true;
    series.samples.push_back(sample);
    if (series.samples.size() > options_.max_samples) series.samples.erase(series.samples.begin());
  }
  while (series_.size() > options_.max_containers) {
    auto oldest = series_.begin();
    for (auto it = series_.begin(); it != series_.end(); ++it) {
      if (it->second.last_time < oldest->second.last_time) oldest = it;
    }
    series_.erase(oldest);
  }
}

std::map<std::string, std::vector<IoSample>> IoSampler::Samples(const std::string& name_prefix) const {
  std::map<std::string, std::vector<IoSample>> out;
  std::lock_guard<std::mutex> lock(mu_);
  for (auto it = series_.lower_bound(name_prefix);
       it != series_.end() && it->first.rfind(name_prefix, 0) == 0; ++it) {
    out[it->first.substr(name_prefix.size())] = it->second.samples;
  }
  return out;
}

}  // namespace pjemu::process
