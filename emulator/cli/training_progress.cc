#include "emulator/cli/training_progress.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <regex>

namespace pjemu::cli {

bool ApplyMetricsLine(std::string_view line, TrainingProgress* p) {
  Json j = Json::parse(line, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return false;
  std::string type = j.value("type", "");
  if (type == "step" || type == "epoch") p->metrics_seen = true;
  if (type == "step") {
    std::int64_t epoch = j.value("epoch", std::int64_t{0});
    if (epoch != p->epoch) p->epoch_fraction = 0;
    p->epoch = epoch;
    if (j.contains("loss") && j["loss"].is_number()) p->loss = j["loss"].get<double>();
    p->steps = j.value("step", p->steps);
    return true;
  }
  if (type == "epoch") {
    p->epoch = j.value("epoch", p->epoch);
    p->epoch_fraction = 1.0;
    if (j.contains("accuracy") && j["accuracy"].is_number()) {
      p->accuracy = j["accuracy"].get<double>();
    }
    if (j.contains("test_loss") && j["test_loss"].is_number()) {
      p->test_loss = j["test_loss"].get<double>();
    }
    p->steps = j.value("steps", p->steps);
    return true;
  }
  return false;
}

bool ApplyLogLine(std::string_view line, TrainingProgress* p) {
  // The reference prints the test accuracy as "accuracy=0.6950" after each epoch.
  static const std::regex kAccuracy(R"(^accuracy=([0-9.]+)\s*$)");
  std::match_results<std::string_view::const_iterator> a;
  if (std::regex_search(line.begin(), line.end(), a, kAccuracy)) {
    if (!p->metrics_seen) p->accuracy = std::atof(a[1].str().c_str());
    return true;
  }
  // T9k's tutorial script (seed 004), every rank: "epoch 1/10, batch   125/375 with loss:
  // 1.5640", then "test loss: 1.4957, test accuracy: 0.9660" at the end.
  static const std::regex kT9kTest(R"(test loss: [0-9.]+, test accuracy: ([0-9.]+))");
  if (std::regex_search(line.begin(), line.end(), a, kT9kTest)) {
    if (!p->metrics_seen) p->accuracy = std::atof(a[1].str().c_str());
    return true;
  }
  static const std::regex kT9kTrain(R"(epoch (\d+)/\d+, batch +(\d+)/(\d+) with loss: ([0-9.]+))");
  std::match_results<std::string_view::const_iterator> m;
  if (std::regex_search(line.begin(), line.end(), m, kT9kTrain)) {
    p->epoch = std::atoll(m[1].str().c_str());
    const double steps = std::max(1.0, std::atof(m[3].str().c_str()));
    p->epoch_fraction = std::clamp(std::atof(m[2].str().c_str()) / steps, 0.0, 1.0);
    p->loss = std::atof(m[4].str().c_str());
    return true;
  }
  static const std::regex kTrain(
      R"(Train Epoch: (\d+) \[(\d+)/(\d+) \((\d+)%\)\]\s*loss=([0-9.eE+-]+))");
  if (!std::regex_search(line.begin(), line.end(), m, kTrain)) return false;
  p->epoch = std::atoll(m[1].str().c_str());
  // The percentage is of this rank's batches (the sample counts are of the whole data set, so
  // at world size 2 they stop at half), as the reference script prints it.
  p->epoch_fraction = std::clamp(std::atof(m[4].str().c_str()) / 100.0, 0.0, 1.0);
  p->loss = std::atof(m[5].str().c_str());
  return true;
}

std::int64_t EpochsFromArgs(const Json& container) {
  std::vector<std::string> argv;
  for (const char* field : {"command", "args"}) {
    if (container.contains(field) && container[field].is_array()) {
      for (const Json& a : container[field]) {
        if (a.is_string()) argv.push_back(a.get<std::string>());
      }
    }
  }
  for (std::size_t i = 0; i < argv.size(); ++i) {
    if (argv[i].rfind("--epochs=", 0) == 0) return std::atoll(argv[i].c_str() + 9);
    if (argv[i] == "--epochs" && i + 1 < argv.size()) return std::atoll(argv[i + 1].c_str());
  }
  return 1;
}

std::string RenderProgress(const TrainingProgress& p, int width) {
  if (p.epoch == 0 && !p.loss) return "";
  double fraction = p.epoch_fraction;
  if (p.epochs > 0) fraction = std::clamp((p.epoch - 1 + p.epoch_fraction) / p.epochs, 0.0, 1.0);
  int filled = static_cast<int>(fraction * width + 0.5);
  std::string bar = std::string(filled, '#') + std::string(width - filled, '.');
  std::string epochs = p.epochs > 0 ? fmt::format("{}/{}", p.epoch, p.epochs)
                                    : fmt::format("{}", p.epoch);
  std::string text = fmt::format("epoch {} [{}] {:3.0f}%", epochs, bar, fraction * 100);
  if (p.loss) text += fmt::format("  loss {:.4f}", *p.loss);
  if (p.accuracy) text += fmt::format("  accuracy {:.4f}", *p.accuracy);
  return text;
}

}  // namespace pjemu::cli
