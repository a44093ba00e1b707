// pjemu-trainer's TensorBoard writer, in a file of its own: trainer/ has its own Status macros
// and Torch's compile flags, which must not meet the emulator's headers in one file.
#include <string>

#include "trainer/event_file_writer.h"

namespace pjemu::ui::testing {

std::string WriteTrainerEvents(const std::string& dir) {
  double now = 1700000000.0;
  trainer::EventFileWriter writer([&] { return now += 1; });
  for (auto s : {writer.Open(dir + "/log", "host", 7), writer.AddScalar("loss", 2.25f, 10),
                 writer.AddScalar("loss", 0.0f, 20), writer.AddScalar("accuracy", 0.5f, 1)}) {
    if (!s.ok()) return s.message();
  }
  return "";
}

}  // namespace pjemu::ui::testing
