// `pjemu get TYPE [NAME...] [-l SELECTOR] [-o yaml|json|wide|name] [-n NS | -A] [-w]`: kubectl get
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
  bool watch = false;
  bool watch_only = false;
};

// One object in the -o yaml|json|name shapes kubectl prints while watching (yaml objects after
// the first start with "---").
void PrintWatchedObject(const api::ResourceType& t, const std::string& o, const Json& object,
                        bool first) {
  if (o == "name") {
    std::cout << KindName(t) << "/" << object["metadata"].value("name", "") << "\n";
  } else if (o == "json") {
    std::cout << object.dump(4) << "\n";
  } else {
    if (!first) std::cout << "---\n";
    std::cout << ToYaml(object);
  }
  std::cout.flush();
}

std::string CellText(const Json& cell) {
  if (cell.is_string()) return cell.get<std::string>();
  if (cell.is_null()) return "<none>";
  return cell.dump();
}

// Column widths that only grow, kept across the prints of one `get -w` as kubectl's table
// printer keeps them (a wider cell widens its column for the rows after it).
std::string FormatWithWidths(const std::vector<std::vector<std::string>>& rows,
                             std::vector<std::size_t>* widths) {
  for (const auto& row : rows) {
    if (widths->size() < row.size()) widths->resize(row.size(), 0);
    for (std::size_t i = 0; i < row.size(); ++i) {
      (*widths)[i] = std::max((*widths)[i], row[i].size());
    }
  }
  std::string out;
  for (const auto& row : rows) {
    for (std::size_t i = 0; i < row.size(); ++i) {
      out += row[i];
      if (i + 1 < row.size()) out += std::string((*widths)[i] - row[i].size() + 3, ' ');
    }
    out += "\n";
  }
  return out;
}

// Prints a server Table; returns the number of rows. widths: kept across calls (get -w).
std::size_t PrintTable(const Json& table, bool wide, bool with_namespace, bool headers,
                       std::vector<std::size_t>* widths = nullptr) {
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
  if (n > 0) std::cout << (widths ? FormatWithWidths(rows, widths) : FormatColumns(rows));
  return n;
}

// `get -w`: the changes after list_version, one row (or object) per event until the server ends
// the watch, as kubectl prints them: rows without a header once one was printed, in columns
// that keep (and only grow) their widths.
int WatchAndPrint(client::HttpClient& client, const api::ResourceType& t,
                  const std::string& list_target, const std::string& list_version,
                  const GetFlags& flags, bool printed_header, bool first_object, Json columns,
                  std::vector<std::size_t> widths) {
  const std::string& o = flags.output;
  const bool table = o.empty() || o == "wide";
  std::string target =
      list_target + (list_target.find('?') == std::string::npos ? "?" : "&") + "watch=true";
  if (!list_version.empty()) {
    target += "&resourceVersion=" + client::HttpClient::QueryEscape(list_version);
  }
  std::string pending;
  Status s = client.Stream(
      target,
      [&](std::string_view data) {
        pending.append(data);
        std::size_t nl;
        while ((nl = pending.find('\n')) != std::string::npos) {
          Json event = Json::parse(pending.substr(0, nl), nullptr, false);
          pending.erase(0, nl + 1);
          if (event.is_discarded() || !event.is_object()) continue;
          std::string type = event.value("type", "");
          const Json& object = event.value("object", Json::object());
          if (type == "BOOKMARK") continue;
          if (type == "ERROR") {
            std::cerr << ErrorLine(Status::FromStatusJson(object, object.value("code", 500)))
                      << "\n";
            return false;
          }
          if (table && object.value("kind", "") == "Table") {
            // The server sends the column definitions once (the list's, or the first event's);
            // later rows are read against them, as kubectl does.
            Json rows_table = object;
            if (!rows_table.value("columnDefinitions", Json::array()).empty()) {
              columns = rows_table["columnDefinitions"];
            } else {
              rows_table["columnDefinitions"] = columns;
            }
            std::size_t n =
                PrintTable(rows_table, o == "wide", flags.remote.all_namespaces && t.namespaced,
                           !printed_header, &widths);
            printed_header |= n > 0;
            std::cout.flush();
          } else if (!table) {
            Json item = object;
            item["apiVersion"] = t.ApiVersion();
            item["kind"] = t.kind;
            PrintWatchedObject(t, o, item, first_object);
            first_object = false;
          }
        }
        return true;
      },
      table ? kTableAccept : "application/json");
  if (!s.ok()) {
    std::cerr << ErrorLine(s) << "\n";
    return static_cast<int>(ExitCode::kFailed);
  }
  return 0;
}

// "pytorchjob/name" or "TYPE NAME...": the type word and the names after it.
std::vector<std::string> SplitTypeAndNames(const std::vector<std::string>& args,
                                           std::string* type_word) {
  *type_word = args[0];
  std::vector<std::string> names(args.begin() + 1, args.end());
  if (auto slash = type_word->find('/'); slash != std::string::npos) {
    names.insert(names.begin(), type_word->substr(slash + 1));
    *type_word = type_word->substr(0, slash);
  }
  return names;
}

bool KnownOutput(const std::string& o) {
  return o.empty() || o == "yaml" || o == "json" || o == "wide" || o == "name";
}

// "?labelSelector=...&fieldSelector=..." ("" when both are empty).
std::string ListQuery(const std::string& selector, const std::string& field_selector) {
  std::string query;
  auto add = [&](const std::string& kv) { query += (query.empty() ? "?" : "&") + kv; };
  if (!selector.empty()) add("labelSelector=" + client::HttpClient::QueryEscape(selector));
  if (!field_selector.empty()) {
    add("fieldSelector=" + client::HttpClient::QueryEscape(field_selector));
  }
  return query;
}

// One `get`, resolved: what it reads and how it prints.
struct GetRun {
  const GetFlags& flags;
  const api::ResourceType& type;
  client::HttpClient& client;
  std::string ns;         // "" with -A
  bool table = false;     // the default and -o wide: the server's Table
  bool watching = false;  // -w or --watch-only
};

// The paths to GET: the list (narrowed by the selectors), or one per named object. kubectl
// watches one named object as a list narrowed by metadata.name.
std::vector<std::string> Targets(const GetRun& run, const std::vector<std::string>& names) {
  const GetFlags& flags = run.flags;
  std::string query = ListQuery(flags.selector, flags.field_selector);
  if (run.watching && names.size() == 1) {
    std::string field = "metadata.name=" + names[0];
    if (!flags.field_selector.empty()) field += "," + flags.field_selector;
    return {client::HttpClient::PathOf(run.type, run.ns) + ListQuery(flags.selector, field)};
  }
  if (names.empty()) return {client::HttpClient::PathOf(run.type, run.ns) + query};
  std::vector<std::string> targets;
  for (const std::string& n : names) {
    targets.push_back(client::HttpClient::PathOf(run.type, run.ns, n));
  }
  return targets;
}

// What the GETs brought back, and what was printed of it.
struct Listing {
  Json items = Json::array();  // -o yaml|json|name: the objects, with apiVersion and kind
  int rc = 0;                  // kFailed once a GET was refused
  bool printed_header = false;
  std::size_t rows = 0;  // table rows printed
  std::string list_version;
  Json columns = Json::array();
  std::vector<std::size_t> widths;  // get -w: the list's columns, kept for the watched rows
};

// One GET: its table rows printed, or its objects kept for printing. False when the server could
// not be reached (the error is printed).
bool Fetch(const GetRun& run, const std::string& target, Listing* listing) {
  const api::ResourceType& t = run.type;
  auto reply =
      run.client.Request("GET", target, {}, {}, run.table ? kTableAccept : "application/json");
  if (!reply.ok()) {
    std::cerr << ErrorLine(reply.status()) << "\n";
    return false;
  }
  Json body = Json::parse(reply->body, nullptr, false);
  if (reply->status / 100 != 2) {
    std::cerr << ErrorLine(Status::FromStatusJson(body, reply->status)) << "\n";
    listing->rc = static_cast<int>(ExitCode::kFailed);
    return true;
  }
  listing->list_version = body.value("metadata", Json::object()).value("resourceVersion", "");
  if (body.contains("columnDefinitions")) listing->columns = body["columnDefinitions"];
  if (run.flags.watch_only) return true;
  if (run.table && body.value("kind", "") == "Table") {
    listing->rows += PrintTable(
        body, run.flags.output == "wide", run.flags.remote.all_namespaces && t.namespaced,
        !listing->printed_header, run.watching ? &listing->widths : nullptr);
    listing->printed_header |= listing->rows > 0;
  } else if (body.contains("items")) {
    for (Json& item : body["items"]) {
      item["apiVersion"] = t.ApiVersion();
      item["kind"] = t.kind;
      listing->items.push_back(std::move(item));
    }
  } else {
    listing->items.push_back(std::move(body));
  }
  return true;
}

// get -w: the listed objects in the watch shapes, then the changes after the list.
int PrintAndWatch(const GetRun& run, const std::string& target, const Listing& listing) {
  if (listing.rc != 0) return listing.rc;
  bool first = true;
  if (!run.table) {
    for (const Json& item : listing.items) {
      PrintWatchedObject(run.type, run.flags.output, item, first);
      first = false;
    }
  }
  std::cout.flush();
  return WatchAndPrint(run.client, run.type, target, listing.list_version, run.flags,
                       listing.printed_header, first, listing.columns, listing.widths);
}

// The objects as -o name|json|yaml prints them: one named object alone, else a List.
int PrintObjects(const GetRun& run, bool named, const Listing& listing) {
  const std::string& o = run.flags.output;
  if (o == "name") {
    for (const Json& item : listing.items) {
      std::cout << KindName(run.type) << "/" << item["metadata"].value("name", "") << "\n";
    }
    return listing.rc;
  }
  const Json& items = listing.items;
  Json shown = items.size() == 1 && named ? items[0]
                                          : Json{{"apiVersion", "v1"},
                                                 {"kind", "List"},
                                                 {"items", items},
                                                 {"metadata", {{"resourceVersion", ""}}}};
  if (o == "json") {
    std::cout << shown.dump(4) << "\n";
  } else {
    std::cout << ToYaml(shown);
  }
  return listing.rc;
}

int RunGet(const GetFlags& flags) {
  if (flags.args.empty()) {
    std::cerr
        << "error: you must specify the type of resource to get, e.g. pjemu get pytorchjobs\n";
    return static_cast<int>(ExitCode::kInvalidInput);
  }
  std::string type_word;
  std::vector<std::string> names = SplitTypeAndNames(flags.args, &type_word);
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
  const std::string& o = flags.output;
  if (!KnownOutput(o)) {
    std::cerr << "error: unable to match a printer suitable for the output format \"" << o
              << "\", allowed formats are: json,name,wide,yaml\n";
    return static_cast<int>(ExitCode::kInvalidInput);
  }
  const GetRun run{flags,
                   **type,
                   *remote->client,
                   flags.remote.all_namespaces ? "" : remote->ns,
                   /*table=*/o.empty() || o == "wide",
                   /*watching=*/flags.watch || flags.watch_only};
  if (run.watching && names.size() > 1) {
    std::cerr << "error: you may only specify a single resource type and name when watching\n";
    return static_cast<int>(ExitCode::kInvalidInput);
  }
  const std::vector<std::string> targets = Targets(run, names);
  Listing listing;
  for (const std::string& target : targets) {
    if (!Fetch(run, target, &listing)) return static_cast<int>(ExitCode::kFailed);
  }
  if (run.watching) return PrintAndWatch(run, targets[0], listing);
  if (!run.table) return PrintObjects(run, /*named=*/!names.empty(), listing);
  if (listing.rows == 0 && listing.rc == 0) {
    if (run.ns.empty()) {
      std::cerr << "No resources found\n";
    } else {
      std::cerr << "No resources found in " << run.ns << " namespace.\n";
    }
  }
  return listing.rc;
}

}  // namespace

void SetupGet(CLI::App& command, int& exit_code) {
  auto flags = std::make_shared<GetFlags>();
  AddRemoteFlags(command, &flags->remote, /*with_all_namespaces=*/true);
  command.add_option("args", flags->args, "TYPE [NAME...] or TYPE/NAME");
  command.add_option("-l,--selector", flags->selector, "label selector, e.g. app=x,tier!=db");
  command.add_option("--field-selector", flags->field_selector, "field selector");
  command.add_option("-o,--output", flags->output, "yaml|json|wide|name");
  command.add_flag("-w,--watch", flags->watch,
                   "after listing, print each change until the server ends the watch");
  command.add_flag("--watch-only", flags->watch_only, "print only the changes, not the list");
  command.footer(
      "\nExamples:\n  pjemu get pytorchjobs -n kubeflow\n"
      "  pjemu get -o yaml pytorchjobs pytorch-simple -n kubeflow\n"
      "  pjemu get pods -l training.kubeflow.org/job-name=pytorch-simple -n kubeflow -o wide\n"
      "  pjemu get pytorchjobs -n kubeflow -w");
  command.callback([flags, &exit_code] { exit_code = RunGet(*flags); });
}

}  // namespace pjemu::cli
