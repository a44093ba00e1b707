// LoadScenario: yaml-cpp nodes -> Scenario, every error as "path:line: field: problem".
#include <yaml-cpp/yaml.h>

#include <csignal>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

#include "emulator/api/resource_quantity.h"
#include "emulator/api/resources.h"
#include "emulator/cluster/cluster_config.h"
#include "emulator/scenario/scenario.h"
#include "emulator/scenario/yaml_reader.h"

namespace pjemu::scenario {

namespace internal {

Status Reader::Options(const YAML::Node& n, scenario::Options* o) {
  RETURN_IF_ERROR(Keys(
      n, "options", {"time", "seed", "timeout", "settle", "gpus", "backoff_scale", "image_map", "nodes",
          "config", "gang_scheduler_name"}));
  if (n["time"]) {
    ASSIGN_OR_RETURN(std::string t, String(n["time"], "options.time"));
    if (t != "virtual" && t != "real") {
      return Error(n["time"], "options.time",
                   "Unsupported value: \"" + t + "\": supported values: \"virtual\", \"real\"");
    }
    o->virtual_time = t == "virtual";
  }
  if (n["seed"]) {
    ASSIGN_OR_RETURN(o->seed, Int(n["seed"], "options.seed"));
  }
  if (n["timeout"]) {
    ASSIGN_OR_RETURN(o->timeout, Dur(n["timeout"], "options.timeout"));
  }
  if (n["settle"]) {
    ASSIGN_OR_RETURN(o->settle, Dur(n["settle"], "options.settle"));
  }
  if (n["gpus"]) {
    ASSIGN_OR_RETURN(o->gpus, Int(n["gpus"], "options.gpus"));
  }
  if (n["image_map"]) {
    ASSIGN_OR_RETURN(o->image_map, String(n["image_map"], "options.image_map"));
  }
  if (n["nodes"]) {
    ASSIGN_OR_RETURN(o->nodes, Int(n["nodes"], "options.nodes"));
    if (o->nodes < 1 || o->nodes > 250)
      return Error(n["nodes"], "options.nodes", "must be in 1..250");
  }
  if (n["gang_scheduler_name"]) {
    ASSIGN_OR_RETURN(o->gang_scheduler_name,
                     String(n["gang_scheduler_name"], "options.gang_scheduler_name"));
  }
  if (n["config"]) {
    ASSIGN_OR_RETURN(o->config, String(n["config"], "options.config"));
    auto nodes = cluster::LoadClusterConfig(o->config);
    if (!nodes.ok()) return Error(n["config"], "options.config", nodes.status().message());
    o->node_configs = std::move(*nodes);
  }
  if (n["backoff_scale"]) {
    if (!YAML::convert<double>::decode(n["backoff_scale"], o->backoff_scale) ||
        o->backoff_scale <= 0) {
      return Error(n["backoff_scale"], "options.backoff_scale", "expected a number above 0");
    }
  }
  return Status::Ok();
}

Status Reader::Job(const YAML::Node& n, JobSource* job) {
  RETURN_IF_ERROR(Keys(n, "jobs[]", {"fixture", "inline"}));
  job->line = Line(n);
  if (n["fixture"]) {
    ASSIGN_OR_RETURN(job->fixture, String(n["fixture"], "jobs[].fixture"));
  }
  if (n["inline"]) {
    ASSIGN_OR_RETURN(job->inline_object, ToJson(n["inline"]));
  }
  if (job->fixture.empty() == job->inline_object.is_null()) {
    return Error(n, "jobs[]", "give exactly one of fixture or inline");
  }
  return Status::Ok();
}

Status Reader::Process(const YAML::Node& n, ProcessRule* r) {
  RETURN_IF_ERROR(Keys(n, "processes[]",
                       {"pod", "container", "runtime", "exit_code", "output", "peak_memory"}));
  if (n["peak_memory"]) {
    ASSIGN_OR_RETURN(std::string q, String(n["peak_memory"], "processes[].peak_memory"));
    auto parsed = api::Quantity::Parse(q);
    if (!parsed.ok()) {
      return Error(n["peak_memory"], "processes[].peak_memory", parsed.status().message());
    }
    r->peak_memory_bytes = parsed->Value();
  }
  r->line = Line(n);
  if (n["pod"]) {
    ASSIGN_OR_RETURN(r->pod, String(n["pod"], "processes[].pod"));
  }
  if (n["container"]) {
    ASSIGN_OR_RETURN(r->container, String(n["container"], "processes[].container"));
  }
  if (n["runtime"]) {
    ASSIGN_OR_RETURN(r->runtime, Dur(n["runtime"], "processes[].runtime"));
  }
  if (n["exit_code"]) {
    ASSIGN_OR_RETURN(r->exit_code, Int(n["exit_code"], "processes[].exit_code"));
  }
  if (n["output"]) {
    if (!n["output"].IsSequence())
      return Error(n["output"], "processes[].output", "expected a list");
    for (const auto& line : n["output"]) r->output.push_back(line.as<std::string>());
  }
  return Status::Ok();
}

}  // namespace internal

Result<Scenario> ParseScenario(const std::string& text, const std::string& path) {
  internal::Reader r(path);
  Scenario sc;
  sc.path = path;
  try {
    YAML::Node root = YAML::Load(text);
    RETURN_IF_ERROR(r.Keys(
        root, "scenario", {"name", "options", "objects", "jobs", "processes", "faults", "expect"}));
    if (root["name"]) {
      ASSIGN_OR_RETURN(sc.name, r.String(root["name"], "name"));
    }
    if (root["options"]) RETURN_IF_ERROR(r.Options(root["options"], &sc.options));
    if (!root["jobs"] || !root["jobs"].IsSequence() || root["jobs"].size() == 0) {
      return r.Error(root["jobs"] ? root["jobs"] : root, "jobs", "a scenario needs a list of jobs");
    }
    for (const auto& n : root["jobs"]) {
      RETURN_IF_ERROR(r.Job(n, &sc.jobs.emplace_back()));
    }
    for (const auto& n : root["objects"]) {
      ASSIGN_OR_RETURN(Json object, r.ToJson(n));
      if (!object.is_object() ||
          api::FindByKind(object.value("apiVersion", ""), object.value("kind", "")) == nullptr ||
          object.value("metadata", Json::object()).value("name", "").empty()) {
        return r.Error(n, "objects[]",
                       "needs apiVersion, kind (of a known resource) and "
                       "metadata.name");
      }
      sc.objects.push_back(std::move(object));
    }
    for (const auto& n : root["processes"]) {
      RETURN_IF_ERROR(r.Process(n, &sc.processes.emplace_back()));
    }
    for (const auto& n : root["faults"]) {
      sc.fault_lines.push_back(internal::Reader::Line(n));
      RETURN_IF_ERROR(r.Fault(n, &sc.faults.emplace_back()));
    }
    if (!root["expect"] || !root["expect"].IsSequence() || root["expect"].size() == 0) {
      return r.Error(root["expect"] ? root["expect"] : root, "expect",
                     "a scenario needs a list of expectations");
    }
    for (const auto& n : root["expect"]) {
      RETURN_IF_ERROR(r.Expect(n, &sc.expect.emplace_back()));
    }
  } catch (const YAML::ParserException& e) {
    return Status(Code::kInvalid, path + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg);
  } catch (const YAML::Exception& e) {
    return Status(Code::kInvalid, path + ":" + std::to_string(e.mark.line + 1) + ": " + e.what());
  }
  return sc;
}

Result<Scenario> LoadScenario(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status(Code::kNotFound, path + ": cannot read: " + std::strerror(errno));
  std::stringstream ss;
  ss << in.rdbuf();
  return ParseScenario(ss.str(), path);
}

}  // namespace pjemu::scenario
