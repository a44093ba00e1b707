#include "emulator/ui/metrics_reader.h"

#include <fstream>
#include <sstream>

namespace pjemu::ui {

Json ReadMetrics(const std::string& path, std::size_t max_bytes) {
  Json out = {{"steps", Json::array()}, {"epochs", Json::array()}, {"truncated", false}};
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return out;
  std::streamoff size = in.tellg();
  std::streamoff start = 0;
  if (size > static_cast<std::streamoff>(max_bytes)) {
    start = size - static_cast<std::streamoff>(max_bytes);
    out["truncated"] = true;
  }
  in.seekg(start);
  std::string text(static_cast<std::size_t>(size - start), '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(in.gcount()));
  std::istringstream lines(text);
  std::string line;
  if (start > 0) std::getline(lines, line);  // the partial line the window cut
  while (std::getline(lines, line)) {
    Json record = Json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (!record.is_object()) continue;
    std::string type = record.value("type", "");
    if (type == "step" && record["loss"].is_number() && record["step"].is_number()) {
      out["steps"].push_back(
          Json::array({record["step"], record["loss"], record.value("epoch", 0)}));
    } else if (type == "epoch" && record["epoch"].is_number()) {
      Json epoch = Json::object();
      for (const char* key :
           {"epoch", "accuracy", "test_loss", "samples_per_second", "train_seconds", "steps"}) {
        if (record.contains(key) && record[key].is_number()) epoch[key] = record[key];
      }
      out["epochs"].push_back(std::move(epoch));
    }
  }
  return out;
}

}  // namespace pjemu::ui
