// The registry of job kinds: every kind's descriptor, in the order of kinds.txt (the order
// their controllers start). Generated at configure time from kinds.txt, the one list of kinds
// that the cluster wiring, the link list (CMakeLists.txt) and tools/check_layering.py read.
// Thread safety: immutable statics.
#pragma once

#include <vector>

#include "emulator/controller/kind.h"

namespace pjemu::kinds {

// Every registered kind's descriptor.
const std::vector<const controller::KindDescriptor*>& All();

}  // namespace pjemu::kinds
