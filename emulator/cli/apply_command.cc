// `pjemu apply -f FILE [-n NS]`: client-side apply like kubectl's: creates the object with the
// last-applied-configuration annotation, or merge-patches it from the previous applied
// configuration (fields dropped from the file are removed). Prints created/configured/unchanged.
#include "emulator/cli/commands.h"
#include "emulator/cli/object_writer.h"

namespace pjemu::cli {
namespace {

constexpr char kLastApplied[] = "kubectl.kubernetes.io/last-applied-configuration";

struct ApplyFlags {
  RemoteFlags remote;
  std::vector<std::string> files;
};

// The RFC 7386 merge patch that turns `from` into `to` (null deletes a key).
Json CreateMergePatch(const Json& from, const Json& to) {
  if (!from.is_object() || !to.is_object()) return to;
  Json patch = Json::object();
  for (auto it = from.begin(); it != from.end(); ++it) {
    if (!to.contains(it.key())) patch[it.key()] = nullptr;
  }
  for (auto it = to.begin(); it != to.end(); ++it) {
    if (!from.contains(it.key())) {
      patch[it.key()] = it.value();
    } else if (from[it.key()] != it.value()) {
      patch[it.key()] = CreateMergePatch(from[it.key()], it.value());
    }
  }
  return patch;
}

int RunApply(const ApplyFlags& flags) {
  return WriteEachObject(
      flags.files, flags.remote, "applying",
      [](Remote& remote, const api::ResourceType& type, const std::string& ns,
         const manifest::Manifest& m) -> Result<std::string> {
        std::string name = m.object["metadata"].value("name", "");
        Json applied = m.object;
        if (applied["metadata"].contains("annotations")) {
          applied["metadata"]["annotations"].erase(kLastApplied);
        }
        Json desired = m.object;
        desired["metadata"]["annotations"][kLastApplied] = applied.dump();
        std::string verb;
        auto current = remote.client->Get(type, ns, name);
        Result<Json> result = Status();
        if (!current.ok() && current.status().code() == Code::kNotFound) {
          result = remote.client->Create(type, ns, desired);
          verb = "created";
        } else if (!current.ok()) {
          result = current.status();
        } else {
          const Json& meta = (*current)["metadata"];
          Json last = Json::object();
          if (meta.contains("annotations") && meta["annotations"].contains(kLastApplied)) {
            last = Json::parse(meta["annotations"].value(kLastApplied, "{}"), nullptr, false);
            if (last.is_discarded()) last = Json::object();
          }
          Json patch = CreateMergePatch(last, applied);
          patch["metadata"]["annotations"][kLastApplied] = applied.dump();
          if (last == applied) {
            result = *current;
            verb = "unchanged";
          } else {
            result = remote.client->Patch(type, ns, name, api::PatchType::kMerge, patch);
            verb = "configured";
          }
        }
        RETURN_IF_ERROR(result);
        return name + " " + verb;
      });
}

}  // namespace

void SetupApply(CLI::App& command, int& exit_code) {
  auto flags = std::make_shared<ApplyFlags>();
  AddRemoteFlags(command, &flags->remote);
  command.add_option("-f,--filename", flags->files, "manifest file (YAML or JSON; - for stdin)")
      ->required();
  command.footer("\nExample:\n  pjemu apply -f fixtures/seeds/pytorch-simple.yaml");
  command.callback([flags, &exit_code] { exit_code = RunApply(*flags); });
}

}  // namespace pjemu::cli
