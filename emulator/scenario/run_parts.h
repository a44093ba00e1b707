// Parts the embedded runner (runner.cc) and the remote one (remote_runner.cc) share (private to
// emulator/scenario): loading the jobs, creating the objects, a log's tail, the trainer's loss
// points, the faults' log. Thread safety: pure functions (LoadJobs reads the fixture files; CreateObjects writes
// through its client).
#pragma once

#include <string>
#include <vector>

#include "emulator/client/client.h"
#include "emulator/faults/injector.h"
#include "emulator/scenario/runner.h"
#include "emulator/scenario/scenario.h"
#include "emulator/scenario/timeline.h"

namespace pjemu::scenario::internal {

// Every job the scenario submits, in order: its fixtures' objects and its inline ones.
// kInvalid/kNotFound naming "path:line: fixture" when a fixture does not load.
Result<std::vector<Json>> LoadJobs(const Scenario& scenario);

// Creates the scenario's objects: in order, each in its namespace ("default" when none), a
// "+0s create <Kind> ns/name: accepted|error" line each in timeline; the first failure (with
// that context) or OK.
Status CreateObjects(client::Client& client, const Scenario& scenario,
                     std::vector<std::string>* timeline);

// The last n lines of text, CRI prefixes ("<time> <stream> <F|P> ") removed.
std::string Tail(const std::string& text, std::size_t n);

// The step records of a trainer metrics text as loss points of "ns/pod" in events.
void RecordLoss(const std::string& key, const std::string& metrics, Timeline* events);

// Every job ("ns/name") Succeeded or Failed, or deleted (TTL).
bool AllEnded(client::Client& client, const std::vector<std::string>& job_keys);

// Hands the scenario's faults to the injector, in order; the first it refuses, with the
// fault's path:line as context.
Status AddFaults(faults::Injector& injector, const Scenario& scenario);

// The injector's log (times since start) into the report's fault log and both timelines.
void RecordFaults(const faults::Injector& injector, Time start, RunReport* report);

}  // namespace pjemu::scenario::internal
