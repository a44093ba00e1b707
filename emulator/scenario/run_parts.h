// Parts the embedded runner (runner.cc) and the remote one (remote_runner.cc) share (private to
// emulator/scenario): loading the jobs, a log's tail, the trainer's loss points.
// Thread safety: pure functions (LoadJobs reads the fixture files).
#pragma once

#include <string>
#include <vector>

#include "emulator/scenario/scenario.h"
#include "emulator/scenario/timeline.h"

namespace pjemu::scenario::internal {

// Every job the scenario submits, in order: its fixtures' objects and its inline ones.
// kInvalid/kNotFound naming "path:line: fixture" when a fixture does not load.
Result<std::vector<Json>> LoadJobs(const Scenario& scenario);

// The last n lines of text, CRI prefixes ("<time> <stream> <F|P> ") removed.
std::string Tail(const std::string& text, std::size_t n);

// The step records of a trainer metrics text as loss points of "ns/pod" in events.
void RecordLoss(const std::string& key, const std::string& metrics, Timeline* events);

}  // namespace pjemu::scenario::internal
