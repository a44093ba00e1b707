// `pjemu image ls|pull|load|rm|prune [--image-store DIR]`: the node's image store, as
// `crictl images`, `kind load image-archive` and `ctr images` handle a node's images; and the
// `--image-store` / `--image-store-max` options of run, serve and scenario.
#include <cstdio>
#include <ctime>
#include <iostream>
#include <memory>

#include "emulator/api/image_reference.h"
#include "emulator/api/resource_quantity.h"
#include "emulator/cli/commands.h"
#include "emulator/cli/inputs.h"
#include "emulator/image/archive.h"
#include "emulator/image/registry.h"
#include "emulator/image/store.h"

namespace pjemu::cli {
namespace {

struct ImageFlags {
  std::string store = image::ImageStore::DefaultRoot();
  std::string max;  // a quantity, e.g. 20Gi
  std::vector<std::string> refs;
  std::string input;
};

std::string HumanSize(std::int64_t bytes) {
  const char* units[] = {"B", "kB", "MB", "GB", "TB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1000 && u < 4) v /= 1000, ++u;
  char buf[32];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f%s" : "%.3g%s", v, units[u]);
  return buf;
}

Result<std::int64_t> ParseMax(const std::string& text) {
  if (text.empty()) return std::int64_t(0);
  auto q = api::Quantity::Parse(text);
  if (!q.ok()) return Status(Code::kInvalid, "--image-store-max: " + q.status().message());
  return q->Value();
}

Result<std::shared_ptr<image::ImageStore>> OpenStore(const ImageFlags& f) {
  image::StoreOptions so;
  so.root = f.store;
  ASSIGN_OR_RETURN(so.max_bytes, ParseMax(f.max));
  return image::ImageStore::Open(so);
}

int Fail(const Status& s) {
  std::cerr << "error: " << s.message() << "\n";
  return s.code() == Code::kInvalid || s.code() == Code::kNotFound ? 2 : 1;
}

// crictl images' columns: IMAGE, TAG, IMAGE ID (12 hex), SIZE.
int List(const ImageFlags& f) {
  auto store = OpenStore(f);
  if (!store.ok()) return Fail(store.status());
  std::printf("%-50s %-20s %-14s %s\n", "IMAGE", "TAG", "IMAGE ID", "SIZE");
  for (const image::ImageRecord& r : (*store)->List()) {
    const std::string id = r.id.substr(r.id.find(':') + 1, 12);
    std::vector<std::string> names = r.names.empty() ? std::vector<std::string>{"<none>:<none>"}
                                                     : r.names;
    for (const std::string& n : names) {
      std::size_t colon = n.rfind(':');
      std::printf("%-50s %-20s %-14s %s\n", n.substr(0, colon).c_str(),
                  n.substr(colon + 1).c_str(), id.c_str(), HumanSize(r.size).c_str());
    }
  }
  return 0;
}

int Pull(const ImageFlags& f) {
  auto store = OpenStore(f);
  if (!store.ok()) return Fail(store.status());
  image::RegistryClient client(*store, image::RegistryOptions::FromEnvironment());
  image::Keyring keyring;
  if (Status s = keyring.AddUserConfig(); !s.ok()) return Fail(s);
  for (const std::string& text : f.refs) {
    auto ref = api::ParseImageReference(text);
    if (!ref.ok()) return Fail(ref.status());
    image::PullStats stats;
    auto pulled = client.Pull(*ref, keyring, &stats);
    if (!pulled.ok()) return Fail(pulled.status());
    std::printf("%s: %s (%d layers fetched, %s)\n", ref->String().c_str(), pulled->id.c_str(),
                stats.layers_fetched, HumanSize(stats.bytes_fetched).c_str());
  }
  return 0;
}

int Load(const ImageFlags& f) {
  auto store = OpenStore(f);
  if (!store.ok()) return Fail(store.status());
  auto loaded = image::LoadArchive(**store, f.input);
  if (!loaded.ok()) return Fail(loaded.status().WithContext(f.input));
  for (const image::LoadedImage& l : *loaded) {
    if (l.names.empty()) std::printf("Loaded image ID: %s\n", l.id.c_str());
    for (const std::string& n : l.names) std::printf("Loaded image: %s\n", n.c_str());
  }
  return 0;
}

int Remove(const ImageFlags& f) {
  auto store = OpenStore(f);
  if (!store.ok()) return Fail(store.status());
  for (const std::string& ref : f.refs) {
    auto removed = (*store)->Remove(ref);
    if (!removed.ok()) return Fail(removed.status());
    for (const std::string& r : *removed) std::printf("Deleted: %s\n", r.c_str());
  }
  return 0;
}

int Prune(const ImageFlags& f) {
  auto store = OpenStore(f);
  if (!store.ok()) return Fail(store.status());
  auto report = (*store)->Prune();
  if (!report.ok()) return Fail(report.status());
  std::printf("Deleted %d images, %d layers; reclaimed %s\n", report->images, report->layers,
              HumanSize(report->bytes).c_str());
  return 0;
}

void StoreFlag(CLI::App& sub, ImageFlags& f) {
  sub.add_option("--image-store", f.store, "the image store's folder")->capture_default_str();
  sub.add_option("--image-store-max", f.max, "the store's size cap, e.g. 20Gi (0 = none)");
}

}  // namespace

void AddImageStoreOption(CLI::App& command, cluster::ClusterOptions& options) {
  options.image_store = image::ImageStore::DefaultRoot();
  command
      .add_option("--image-store", options.image_store,
                  "the node's image store (images loaded with `pjemu image load` or pulled); "
                  "\"\" = image maps only (ClusterOptions::image_store)")
      ->capture_default_str();
  command.add_option_function<std::string>(
      "--image-store-max",
      [&options](const std::string& text) {
        auto max = ParseMax(text);
        if (!max.ok()) throw CLI::ValidationError(max.status().message());
        options.image_store_max_bytes = *max;
      },
      "the image store's size cap, e.g. 20Gi (ClusterOptions::image_store_max_bytes)");
}

void SetupImage(CLI::App& command, int& exit_code) {
  auto f = std::make_shared<ImageFlags>();
  command.require_subcommand(1);
  struct Sub {
    const char* name;
    const char* summary;
    int (*run)(const ImageFlags&);
  };
  static const Sub kSubs[] = {
      {"ls", "list the stored images (IMAGE, TAG, IMAGE ID, SIZE)", List},
      {"pull", "pull images from their registries into the store", Pull},
      {"load", "load a `docker save`/`podman save` archive or an OCI layout", Load},
      {"rm", "untag an image, or remove it by ID", Remove},
      {"prune", "remove untagged images and unused layers; enforce the size cap", Prune},
  };
  for (const Sub& s : kSubs) {
    CLI::App* sub = command.add_subcommand(s.name, s.summary);
    StoreFlag(*sub, *f);
    if (std::string(s.name) == "pull" || std::string(s.name) == "rm") {
      sub->add_option("image", f->refs, "image references")->required();
    }
    if (std::string(s.name) == "load") {
      sub->add_option("-i,--input", f->input, "the archive or OCI layout folder")->required();
    }
    auto run = s.run;
    sub->callback([f, run, &exit_code] { exit_code = run(*f); });
  }
}

}  // namespace pjemu::cli
