// Where the CLI finds pjemu-trainer for the image map's ${PJEMU_TRAINER}: next to the running
// pjemu executable (both are built into build/bin), else "pjemu-trainer" on $PATH.
// Thread safety: a pure function of the file system.
#pragma once

#include <string>

namespace pjemu::cli {

std::string DefaultTrainerPath();

}  // namespace pjemu::cli
