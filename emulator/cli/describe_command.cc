// `pjemu describe TYPE NAME | TYPE/NAME`: kubectl's generic describer (every field in Title Case,
// metadata first) followed by the object's Events table, against `pjemu serve`.
#include <fmt/format.h>

#include <iostream>

#include "emulator/cli/cli.h"
#include "emulator/cli/commands.h"
#include "emulator/cli/remote.h"
#include "emulator/cli/summary_table.h"

namespace pjemu::cli {
namespace {

struct DescribeFlags {
  RemoteFlags remote;
  std::vector<std::string> args;
};

// "pytorchReplicaSpecs" -> "Pytorch Replica Specs" (kubectl's camelCase splitting).
std::string TitleCase(const std::string& key) {
  std::string out;
  for (std::size_t i = 0; i < key.size(); ++i) {
    char c = key[i];
    if (i == 0) {
      out += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      continue;
    }
    bool upper = std::isupper(static_cast<unsigned char>(c));
    bool prev_lower = std::islower(static_cast<unsigned char>(key[i - 1]));
    bool next_lower = i + 1 < key.size() && std::islower(static_cast<unsigned char>(key[i + 1]));
    if (upper && (prev_lower || (next_lower && std::isupper(static_cast<unsigned char>(key[i - 1]))))) {
      out += ' ';
    }
    out += c;
  }
  return out;
}

std::string ScalarText(const Json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

void Describe(const Json& v, int indent, std::string* out) {
  std::string pad(indent, ' ');
  if (v.is_object()) {
    for (auto it = v.begin(); it != v.end(); ++it) {
      const Json& child = it.value();
      if (child.is_object() || child.is_array()) {
        *out += pad + TitleCase(it.key()) + ":\n";
        Describe(child, indent + 2, out);
      } else {
        *out += pad + TitleCase(it.key()) + ":  " + ScalarText(child) + "\n";
      }
    }
  } else if (v.is_array()) {
    for (const Json& item : v) {
      if (item.is_object()) {
        Describe(item, indent, out);
      } else {
        *out += pad + ScalarText(item) + "\n";
      }
    }
  }
}

std::string Map(const Json& meta, const char* field) {
  if (!meta.contains(field) || meta[field].empty()) return "<none>";
  std::string out;
  for (auto it = meta[field].begin(); it != meta[field].end(); ++it) {
    if (!out.empty()) out += "\n              ";
    out += it.key() + "=" + ScalarText(it.value());
  }
  return out;
}

std::string EventAge(const Json& e, Time now) {
  std::string ts = e.value("lastTimestamp", Json()).is_string() ? e.value("lastTimestamp", "")
                                                                 : "";
  if (ts.empty() && e.contains("eventTime") && e["eventTime"].is_string()) ts = e["eventTime"];
  if (ts.empty() && e.contains("firstTimestamp") && e["firstTimestamp"].is_string()) {
    ts = e["firstTimestamp"];
  }
  auto t = ParseTime(ts);
  if (!t) return "<unknown>";
  std::string age = FormatAge(std::chrono::duration_cast<Duration>(now - *t));
  int count = e.value("count", 1);
  if (count > 1) age += fmt::format(" (x{})", count);
  return age;
}

int RunDescribe(const DescribeFlags& flags) {
  auto remote = Connect(flags.remote);
  if (!remote.ok()) {
    std::cerr << "error: " << remote.status().message() << "\n";
    return static_cast<int>(ExitCode::kInvalidInput);
  }
  auto refs = ParseObjectArgs(flags.args);
  if (!refs.ok()) {
    std::cerr << "error: " << refs.status().message() << "\n";
    return static_cast<int>(ExitCode::kInvalidInput);
  }
  int rc = 0;
  bool first = true;
  for (const ObjectRef& ref : *refs) {
    auto obj = remote->client->Get(*ref.type, remote->ns, ref.name);
    if (!obj.ok()) {
      std::cerr << ErrorLine(obj.status()) << "\n";
      rc = static_cast<int>(ExitCode::kFailed);
      continue;
    }
    if (!first) std::cout << "\n\n";
    first = false;
    Json o = *obj;
    Json meta = o["metadata"];
    std::string out;
    out += fmt::format("{:<14}{}\n", "Name:", meta.value("name", ""));
    if (ref.type->namespaced) out += fmt::format("{:<14}{}\n", "Namespace:", meta.value("namespace", ""));
    out += fmt::format("{:<14}{}\n", "Labels:", Map(meta, "labels"));
    out += fmt::format("{:<14}{}\n", "Annotations:", Map(meta, "annotations"));
    out += fmt::format("{:<14}{}\n", "API Version:", o.value("apiVersion", ""));
    out += fmt::format("{:<14}{}\n", "Kind:", o.value("kind", ""));
    for (const char* k : {"name", "namespace", "labels", "annotations"}) meta.erase(k);
    Json rest = o;
    rest.erase("apiVersion");
    rest.erase("kind");
    rest["metadata"] = meta;
    Describe(rest, 0, &out);
    // Events whose involvedObject is this object (kubectl's field selector).
    std::string selector = "involvedObject.name=" + ref.name +
                           ",involvedObject.namespace=" + remote->ns +
                           ",involvedObject.kind=" + ref.type->kind +
                           ",involvedObject.uid=" + o["metadata"].value("uid", "");
    api::ListOptions lo;
    lo.field_selector = selector;
    auto events = remote->client->List(api::Events(), remote->ns, lo);
    if (events.ok() && !(*events)["items"].empty()) {
      Time now = RealClock().Now();
      std::vector<std::vector<std::string>> rows = {{"Type", "Reason", "Age", "From", "Message"},
                                                    {"----", "------", "----", "----", "-------"}};
      for (const Json& e : (*events)["items"]) {
        rows.push_back({e.value("type", ""), e.value("reason", ""), EventAge(e, now),
                        e.value("source", Json::object()).value("component", ""),
                        e.value("message", "")});
      }
      out += "Events:\n";
      std::string table = FormatColumns(rows);
      std::size_t start = 0, nl;
      while ((nl = table.find('\n', start)) != std::string::npos) {
        out += "  " + table.substr(start, nl - start) + "\n";
        start = nl + 1;
      }
    } else {
      out += "Events:       <none>\n";
    }
    std::cout << out;
  }
  return rc;
}

}  // namespace

void SetupDescribe(CLI::App& command, int& exit_code) {
  auto flags = std::make_shared<DescribeFlags>();
  AddRemoteFlags(command, &flags->remote);
  command.add_option("args", flags->args, "TYPE NAME... or TYPE/NAME...")->required();
  command.footer("\nExample:\n  pjemu describe pytorchjob pytorch-simple -n kubeflow");
  command.callback([flags, &exit_code] { exit_code = RunDescribe(*flags); });
}

}  // namespace pjemu::cli
