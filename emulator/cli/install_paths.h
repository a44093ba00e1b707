// Where the CLI finds the pieces that ship next to it: pjemu-trainer for the image map's
// ${PJEMU_TRAINER} (next to the running pjemu executable, both are built into build/bin; else
// "pjemu-trainer" on $PATH) and the default image map (fixtures/images.yaml in the working
// directory, else <prefix>/share/pjemu/images.yaml of an installed pjemu, else the source tree
// pjemu was built from).
// Thread safety: pure functions of the file system.
#pragma once

#include <string>

namespace pjemu::cli {

std::string DefaultTrainerPath();
std::string DefaultImageMap();

}  // namespace pjemu::cli
