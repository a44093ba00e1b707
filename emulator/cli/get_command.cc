// `pjemu get TYPE [NAME...] [-l SELECTOR] [-o yaml|json|wide|name] [-n NS | -A]`: kubectl get
// against a running `pjemu serve`. Tables come from the server (Accept: as=Table), so the
// columns are the operator's printer columns, exactly as kubectl shows them.
#include <fmt/format.h>

#include <iostream>

#include "emulator/cli/cli.h"
#include "emulator/cli/commands.h"
#include "emulator/cli/remote.h"
#include "emulator/cli/summary_table.h"
#include "emulator/cli/yaml_output.h"

namespace pjemu::cli {
namespace {

constexpr char kTableAccept[] =
    "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;"
    "g=meta.k8s.io,application/json";

struct GetFlags {
  RemoteFlags remote;
  std::vector<std::string> args;
  std::string selector;
  std::string field_selector;
  std::string output;
};

std::string CellText(const Json& cell) {
  if (cell.is_string()) return cell.get<std::string>();
  if (cell.is_null()) return "<none>";
  return cell.dump();
}

// Prints a server Table; returns the number of rows.
std::size_t PrintTable(const Json& table, bool wide, bool with_namespace, bool headers) {
  std::vector<std::size_t> columns;
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> header;
  if (with_namespace) header.push_back("NAMESPACE");
  const Json& defs = table.value("columnDefinitions", Json::array());
  for (std::size_t i = 0; i < defs.size(); ++i) {
    if (!wide && defs[i].value("priority", 0) > 0) continue;
    columns.push_back(i);
    std::string name = defs[i].value("name", "");
    for (char& c : name) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    header.push_back(name);
  }
  if (headers) rows.push_back(header);
  std::size_t n = 0;
  for (const Json& row : table.value("rows", Json::array())) {
    std::vector<std::string> cells;
    if (with_namespace) {
      cells.push_back(row.value("object", Json::object())
                          .value("metadata", Json::object())
                          .value("namespace", ""));
    }
    const Json& values = row.value("cells", Json::array());
    for (std::size_t i : columns) cells.push_back(i < values.size() ? CellText(values[i]) : "");
    rows.push_back(std::move(cells));
    ++n;
  }
  if (n > 0) std::cout << FormatColumns(rows);
  return n;
}

int RunGet(const GetFlags& flags) {
  if (flags.args.empty()) {
    std::cerr << "error: you must specify the type of resource to get, e.g. pjemu get pytorchjobs\n";
    return static_cast<int>(ExitCode::kInvalidInput);
  }
  // "pytorchjob/name" or "TYPE NAME..."
  std::string type_word = flags.args[0];
  std::vector<std::string> names(flags.args.begin() + 1, flags.args.end());
  if (auto slash = type_word.find('/'); slash != std::string::npos) {
    names.insert(names.begin(), type_word.substr(slash + 1));
    type_word = type_word.substr(0, slash);
  }
  auto type = ResolveResource(type_word);
  if (!type.ok()) {
    std::cerr << "error: " << type.status().message() << "\n";
    return static_cast<int>(ExitCode::kFailed);
  }
  auto remote = Connect(flags.remote);
  if (!remote.ok()) {
    std::cerr << "error: " << remote.status().message() << "\n";
    return static_cast<int>(ExitCode::kInvalidInput);
  }
  const api::ResourceType& t = **type;
  client::HttpClient& client = *remote->client;
  std::string ns = flags.remote.all_namespaces ? "" : remote->ns;
  const std::string& o = flags.output;
  if (!o.empty() && o != "yaml" && o != "json" && o != "wide" && o != "name") {
    std::cerr << "error: unable to match a printer suitable for the output format \"" << o
              << "\", allowed formats are: json,name,wide,yaml\n";
    return static_cast<int>(ExitCode::kInvalidInput);
  }

  // Collect the objects (yaml/json/name) or the Table (default/wide).
  std::string query;
  auto add = [&](const std::string& kv) { query += (query.empty() ? "?" : "&") + kv; };
  if (!flags.selector.empty()) add("labelSelector=" + client::HttpClient::QueryEscape(flags.selector));
  if (!flags.field_selector.empty()) {
    add("fieldSelector=" + client::HttpClient::QueryEscape(flags.field_selector));
  }
  std::vector<std::string> targets;
  if (names.empty()) {
    targets.push_back(client::HttpClient::PathOf(t, ns) + query);
  } else {
    for (const std::string& n : names) targets.push_back(client::HttpClient::PathOf(t, ns, n));
  }
  bool table = o.empty() || o == "wide";
  Json items = Json::array();
  int rc = 0;
  bool printed_header = false;
  std::size_t rows = 0;
  for (const std::string& target : targets) {
    auto reply = client.Request("GET", target, {}, {}, table ? kTableAccept : "application/json");
    if (!reply.ok()) {
      std::cerr << ErrorLine(reply.status()) << "\n";
      return static_cast<int>(ExitCode::kFailed);
    }
    Json body = Json::parse(reply->body, nullptr, false);
    if (reply->status / 100 != 2) {
      std::cerr << ErrorLine(Status::FromStatusJson(body, reply->status)) << "\n";
      rc = static_cast<int>(ExitCode::kFailed);
      continue;
    }
    if (table && body.value("kind", "") == "Table") {
      rows += PrintTable(body, o == "wide", flags.remote.all_namespaces && t.namespaced,
                         !printed_header);
      printed_header |= rows > 0;
    } else if (body.contains("items")) {
      for (Json& item : body["items"]) {
        item["apiVersion"] = t.ApiVersion();
        item["kind"] = t.kind;
        items.push_back(std::move(item));
      }
    } else {
      items.push_back(std::move(body));
    }
  }
  if (table) {
    if (rows == 0 && rc == 0) {
      if (ns.empty()) {
        std::cerr << "No resources found\n";
      } else {
        std::cerr << "No resources found in " << ns << " namespace.\n";
      }
    }
    return rc;
  }
  if (o == "name") {
    for (const Json& item : items) {
      std::cout << KindName(t) << "/" << item["metadata"].value("name", "") << "\n";
    }
    return rc;
  }
  Json shown = items.size() == 1 && !names.empty()
                   ? items[0]
                   : Json{{"apiVersion", "v1"}, {"kind", "List"}, {"items", items},
                          {"metadata", {{"resourceVersion", ""}}}};
  if (o == "json") {
    std::cout << shown.dump(4) << "\n";
  } else {
    std::cout << ToYaml(shown);
  }
  return rc;
}

}  // namespace

void SetupGet(CLI::App& command, int& exit_code) {
  auto flags = std::make_shared<GetFlags>();
  AddRemoteFlags(command, &flags->remote, /*with_all_namespaces=*/true);
  command.add_option("args", flags->args, "TYPE [NAME...] or TYPE/NAME");
  command.add_option("-l,--selector", flags->selector, "label selector, e.g. app=x,tier!=db");
  command.add_option("--field-selector", flags->field_selector, "field selector");
  command.add_option("-o,--output", flags->output, "yaml|json|wide|name");
  command.footer(
      "\nExamples:\n  pjemu get pytorchjobs -n kubeflow\n"
      "  pjemu get -o yaml pytorchjobs pytorch-simple -n kubeflow\n"
      "  pjemu get pods -l training.kubeflow.org/job-name=pytorch-simple -n kubeflow -o wide");
  command.callback([flags, &exit_code] { exit_code = RunGet(*flags); });
}

}  // namespace pjemu::cli
