// Random: the only source of randomness in the emulator (fault rates, generateName suffixes,
// jitter). Seeded, so the same seed replays the same run. Thread safety: one mutex; safe from
// any thread, deterministic only when called from one.
#pragma once

#include <cstdint>
#include <mutex>
#include <random>
#include <string>

namespace pjemu {

class Random {
 public:
  explicit Random(std::uint64_t seed = 1) : engine_(seed) {}
  // Uniform in [0, n). REQUIRES: n > 0.
  std::uint64_t Uniform(std::uint64_t n) {
    std::lock_guard<std::mutex> lock(mu_);
    return std::uniform_int_distribution<std::uint64_t>(0, n - 1)(engine_);
  }
  // True with probability p.
  bool Bernoulli(double p) {
    std::lock_guard<std::mutex> lock(mu_);
    return std::bernoulli_distribution(p)(engine_);
  }
  // n characters from Kubernetes' generateName alphabet (no vowels, no confusable digits).
  std::string NameSuffix(int n = 5) {
    static constexpr char kAlphabet[] = "bcdfghjklmnpqrstvwxz2456789";
    std::string s;
    for (int i = 0; i < n; ++i) s += kAlphabet[Uniform(sizeof kAlphabet - 1)];
    return s;
  }

 private:
  std::mutex mu_;
  std::mt19937_64 engine_;
};

}  // namespace pjemu
