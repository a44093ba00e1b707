// `pjemu logs [POD | pod/POD] [-c C] [-f] [--tail N] [--timestamps] [-p] [-l SELECTOR]`: a pod's
// log from `pjemu serve` (its /log subresource); -f streams until the container ends.
#include <iostream>

#include "emulator/cli/cli.h"
#include "emulator/cli/commands.h"
#include "emulator/cli/remote.h"

namespace pjemu::cli {
namespace {

struct LogsFlags {
  RemoteFlags remote;
  std::string pod;
  std::string container;
  std::string selector;
  bool follow = false;
  bool previous = false;
  bool timestamps = false;
  int tail = -1;
  std::string since;
};

int RunLogs(const LogsFlags& flags) {
  auto remote = Connect(flags.remote);
  if (!remote.ok()) {
    std::cerr << "error: " << remote.status().message() << "\n";
    return static_cast<int>(ExitCode::kInvalidInput);
  }
  std::vector<std::string> pods;
  std::string pod = flags.pod;
  if (pod.rfind("pod/", 0) == 0) pod = pod.substr(4);
  if (pod.rfind("pods/", 0) == 0) pod = pod.substr(5);
  if (!pod.empty()) {
    pods.push_back(pod);
  } else if (!flags.selector.empty()) {
    api::ListOptions lo;
    lo.label_selector = flags.selector;
    auto list = remote->client->List(api::Pods(), remote->ns, lo);
    if (!list.ok()) {
      std::cerr << ErrorLine(list.status()) << "\n";
      return static_cast<int>(ExitCode::kFailed);
    }
    for (const Json& p : (*list)["items"]) pods.push_back(p["metadata"].value("name", ""));
    if (pods.empty()) {
      std::cerr << "No resources found in " << remote->ns << " namespace.\n";
      return 0;
    }
  } else {
    std::cerr << "error: expected POD or -l SELECTOR\n";
    return static_cast<int>(ExitCode::kInvalidInput);
  }
  std::string query;
  auto add = [&](const std::string& kv) { query += (query.empty() ? "?" : "&") + kv; };
  if (flags.follow) add("follow=true");
  if (!flags.container.empty()) add("container=" + client::HttpClient::QueryEscape(flags.container));
  if (flags.previous) add("previous=true");
  if (flags.timestamps) add("timestamps=true");
  if (flags.tail >= 0) add("tailLines=" + std::to_string(flags.tail));
  if (!flags.since.empty()) {
    auto d = ParseDuration(flags.since);
    if (!d) {
      std::cerr << "error: invalid --since \"" << flags.since << "\"\n";
      return static_cast<int>(ExitCode::kInvalidInput);
    }
    add("sinceSeconds=" +
        std::to_string(std::max<long>(1, std::chrono::duration_cast<std::chrono::seconds>(*d).count())));
  }
  int rc = 0;
  for (const std::string& name : pods) {
    std::string target = client::HttpClient::PathOf(api::Pods(), remote->ns, name) + "/log" + query;
    Status s;
    if (flags.follow) {
      s = remote->client->Stream(target, [](std::string_view data) {
        std::cout.write(data.data(), static_cast<std::streamsize>(data.size()));
        std::cout.flush();
        return true;
      });
    } else if (auto reply = remote->client->Request("GET", target, {}, {}, "*/*"); !reply.ok()) {
      s = reply.status();
    } else if (reply->status / 100 != 2) {
      s = Status::FromStatusJson(Json::parse(reply->body, nullptr, false), reply->status);
    } else {
      std::cout << reply->body;
    }
    if (!s.ok()) {
      std::cerr << ErrorLine(s) << "\n";
      rc = static_cast<int>(ExitCode::kFailed);
    }
  }
  return rc;
}

}  // namespace

void SetupLogs(CLI::App& command, int& exit_code) {
  auto flags = std::make_shared<LogsFlags>();
  AddRemoteFlags(command, &flags->remote);
  command.add_option("pod", flags->pod, "POD or pod/POD");
  command.add_option("-c,--container", flags->container, "container name");
  command.add_option("-l,--selector", flags->selector, "print the logs of every matching pod");
  command.add_flag("-f,--follow", flags->follow, "stream until the container ends");
  command.add_flag("-p,--previous", flags->previous, "the previous terminated container");
  command.add_flag("--timestamps", flags->timestamps, "prefix lines with their RFC 3339 time");
  command.add_option("--tail", flags->tail, "last N lines (default all)");
  command.add_option("--since", flags->since, "only lines newer than a duration, e.g. 5m");
  command.footer("\nExample:\n  pjemu logs -f pytorch-simple-master-0 -n kubeflow");
  command.callback([flags, &exit_code] { exit_code = RunLogs(*flags); });
}

}  // namespace pjemu::cli
