#include "emulator/common/clock.h"

#include <cctype>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <limits>
#include <string>

namespace pjemu {
namespace {

std::tm ToUtc(Time t) {
  std::time_t secs = std::chrono::system_clock::to_time_t(
      std::chrono::time_point_cast<std::chrono::seconds>(t));
  if (t < std::chrono::time_point_cast<std::chrono::seconds>(t)) --secs;  // floor for pre-epoch
  std::tm tm{};
  gmtime_r(&secs, &tm);
  return tm;
}

}  // namespace

std::string FormatTime(Time t) {
  // Every write and Event stamps the time, mostly the same second as the last one formatted.
  thread_local std::int64_t last_second = std::numeric_limits<std::int64_t>::min();
  thread_local std::string last_text;
  const std::int64_t second =
      std::chrono::floor<std::chrono::seconds>(t.time_since_epoch()).count();
  if (second == last_second) return last_text;
  std::tm tm = ToUtc(t);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  last_second = second;
  last_text = buf;
  return last_text;
}

std::string FormatMicroTime(Time t) {
  std::tm tm = ToUtc(t);
  auto micros = std::chrono::duration_cast<std::chrono::microseconds>(t.time_since_epoch()).count() %
                1'000'000;
  if (micros < 0) micros += 1'000'000;
  char buf[48];
  std::size_t n = std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  std::snprintf(buf + n, sizeof buf - n, ".%06lldZ", static_cast<long long>(micros));
  return buf;
}

std::optional<Time> ParseTime(std::string_view s) {
  int y, mo, d, h, mi, se;
  int consumed = 0;
  std::string str(s);
  if (std::sscanf(str.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%n", &y, &mo, &d, &h, &mi, &se, &consumed) !=
          6 ||
      consumed != 19) {
    return std::nullopt;
  }
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || se > 60) return std::nullopt;
  std::size_t i = 19;
  std::int64_t frac_ns = 0;
  if (i < s.size() && s[i] == '.') {
    ++i;
    std::int64_t scale = 100'000'000;
    std::size_t digits = 0;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) {
      if (digits < 9) frac_ns += (s[i] - '0') * scale, scale /= 10;
      ++i, ++digits;
    }
    if (digits == 0) return std::nullopt;
  }
  int offset_min = 0;
  if (i < s.size() && (s[i] == 'Z' || s[i] == 'z')) {
    ++i;
  } else if (i + 6 == s.size() && (s[i] == '+' || s[i] == '-') && s[i + 3] == ':') {
    int oh = 0, om = 0;
    if (std::sscanf(str.c_str() + i + 1, "%2d:%2d", &oh, &om) != 2) return std::nullopt;
    offset_min = (s[i] == '+' ? 1 : -1) * (oh * 60 + om);
    i += 6;
  } else {
    return std::nullopt;
  }
  if (i != s.size()) return std::nullopt;
  std::tm tm{};
  tm.tm_year = y - 1900;
  tm.tm_mon = mo - 1;
  tm.tm_mday = d;
  tm.tm_hour = h;
  tm.tm_min = mi;
  tm.tm_sec = se;
  std::time_t secs = timegm(&tm);
  return Time(std::chrono::seconds(secs) - std::chrono::minutes(offset_min) +
              std::chrono::nanoseconds(frac_ns));
}

std::string FormatAge(Duration d) {
  // kubectl's duration.HumanDuration shape.
  auto secs = std::chrono::duration_cast<std::chrono::seconds>(d).count();
  if (secs < 0) secs = 0;
  char buf[32];
  if (secs < 120) {
    std::snprintf(buf, sizeof buf, "%llds", static_cast<long long>(secs));
  } else if (secs < 600) {
    long long m = secs / 60, s = secs % 60;
    if (s == 0) std::snprintf(buf, sizeof buf, "%lldm", m);
    else std::snprintf(buf, sizeof buf, "%lldm%llds", m, s);
  } else if (secs < 3 * 3600) {
    std::snprintf(buf, sizeof buf, "%lldm", static_cast<long long>(secs / 60));
  } else if (secs < 8 * 3600) {
    long long h = secs / 3600, m = (secs % 3600) / 60;
    if (m == 0) std::snprintf(buf, sizeof buf, "%lldh", h);
    else std::snprintf(buf, sizeof buf, "%lldh%lldm", h, m);
  } else if (secs < 48 * 3600) {
    std::snprintf(buf, sizeof buf, "%lldh", static_cast<long long>(secs / 3600));
  } else if (secs < 8 * 86400) {
    long long dd = secs / 86400, h = (secs % 86400) / 3600;
    if (h == 0) std::snprintf(buf, sizeof buf, "%lldd", dd);
    else std::snprintf(buf, sizeof buf, "%lldd%lldh", dd, h);
  } else if (secs < 2 * 365 * 86400LL) {
    std::snprintf(buf, sizeof buf, "%lldd", static_cast<long long>(secs / 86400));
  } else {
    std::snprintf(buf, sizeof buf, "%lldy", static_cast<long long>(secs / (365 * 86400LL)));
  }
  return buf;
}

std::optional<Duration> ParseDuration(std::string_view s) {
  if (s.empty()) return std::nullopt;
  if (s == "0") return Duration(0);
  Duration total(0);
  std::size_t i = 0;
  while (i < s.size()) {
    std::size_t start = i;
    double value = 0;
    bool any = false;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) {
      value = value * 10 + (s[i] - '0'), ++i, any = true;
    }
    if (i < s.size() && s[i] == '.') {
      ++i;
      double scale = 0.1;
      while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) {
        value += (s[i] - '0') * scale, scale /= 10, ++i, any = true;
      }
    }
    if (!any || i == start) return std::nullopt;
    std::size_t unit_start = i;
    while (i < s.size() && std::isalpha(static_cast<unsigned char>(s[i]))) ++i;
    std::string_view unit = s.substr(unit_start, i - unit_start);
    double ns_per;
    if (unit == "ns") ns_per = 1;
    else if (unit == "us" || unit == "µs") ns_per = 1e3;
    else if (unit == "ms") ns_per = 1e6;
    else if (unit == "s") ns_per = 1e9;
    else if (unit == "m") ns_per = 60e9;
    else if (unit == "h") ns_per = 3600e9;
    else return std::nullopt;
    total += Duration(static_cast<std::int64_t>(value * ns_per));
  }
  return total;
}

std::string FormatGoDuration(Duration d) {
  std::int64_t ns = std::chrono::duration_cast<std::chrono::nanoseconds>(d).count();
  if (ns == 0) return "0s";
  std::string sign = ns < 0 ? "-" : "";
  if (ns < 0) ns = -ns;
  auto seconds_text = [](std::int64_t total_ns) {
    std::string s = std::to_string(total_ns / 1'000'000'000);
    std::int64_t frac = total_ns % 1'000'000'000;
    if (frac != 0) {
      char buf[16];
      std::snprintf(buf, sizeof buf, ".%09lld", static_cast<long long>(frac));
      std::string f = buf;
      while (f.back() == '0') f.pop_back();
      s += f;
    }
    return s + "s";
  };
  if (ns < 1'000'000'000) {  // Go prints ms, µs or ns below a second
    auto unit = [&](std::int64_t scale, const char* suffix) {
      std::string s = std::to_string(ns / scale);
      std::int64_t frac = ns % scale;
      if (frac != 0) {
        std::string f = std::to_string(frac + scale).substr(1);
        while (f.back() == '0') f.pop_back();
        s += "." + f;
      }
      return sign + s + suffix;
    };
    if (ns < 1000) return sign + std::to_string(ns) + "ns";
    if (ns < 1'000'000) return unit(1000, "µs");
    return unit(1'000'000, "ms");
  }
  const std::int64_t minute = 60LL * 1'000'000'000;
  const std::int64_t hour = 60 * minute;
  if (ns < minute) return sign + seconds_text(ns);
  std::string out = sign;
  if (ns >= hour) out += std::to_string(ns / hour) + "h";
  out += std::to_string((ns % hour) / minute) + "m";
  return out + seconds_text(ns % minute);
}

}  // namespace pjemu
