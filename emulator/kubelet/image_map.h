// ImageMap: what the kubelet runs for a container image, since no container runtime exists on
// a laptop or CI. The built-in map (fixtures/images.yaml, KubeletOptions::image_map_path) with
// a user's map (`--image-map`) layered over it (LoadLayered); each entry matches image
// references (exact or with * and ? wildcards, against both the reference as written and its
// normalized form docker.io/library/name:tag), the first match winning, and says what the
// image holds and how to run it:
//  - run: host      the container's command runs as-is with the host's programs;
//  - rewrite:       argv prefixes rewritten onto local programs (${VAR} from KubeletOptions);
//  - builtin: wait-for-service when the command matches `nslookup <name>`: the operator's
//    init-pytorch loop, answered by the kubelet from the Services and Pods in the store;
//  - entrypoint/cmd: the image's defaults when the pod gives no command/args;
//  - pull_delay:    virtual "image pull" time before the container is created;
//  - files:         what the image's filesystem holds: path inside the pod -> host file or
//                   directory (relative to the map file), mounted copy-on-write;
//  - env:           the image config's Env, under the container's own env;
//  - workingDir:    the image config's WorkingDir, when the container sets none;
//  - prefer: store  the entry is a fallback: an image the node's image store holds runs from
//                   the store (its own root), and the entry only maps it while the store lacks
//                   it (the built-in map's base images).
// Any other key is an error naming file and line (kKnownEntryKeys).
// Thread safety: immutable after Load; Resolve is const.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "emulator/common/clock.h"
#include "emulator/common/status.h"

namespace pjemu::kubelet {

struct ImageRewrite {
  std::vector<std::string> from;  // argv prefix to match
  std::vector<std::string> to;    // replacement prefix (after ${VAR} substitution)
};

// Ordered (target, value) pairs, in the map file's order.
using ImagePairs = std::vector<std::pair<std::string, std::string>>;

struct ImageEntry {
  std::string pattern;
  std::vector<std::string> entrypoint;
  std::vector<std::string> cmd;
  std::vector<ImageRewrite> rewrites;
  bool wait_for_service = false;  // builtin: wait-for-service
  bool prefer_store = false;      // prefer: store
  Duration pull_delay{0};
  ImagePairs files;         // absolute path inside the pod -> absolute host path (exists)
  ImagePairs env;           // NAME -> value
  std::string working_dir;  // "" = none (the container's cwd is then /)
  std::string source;       // the map file the entry comes from
  int line = 0;             // where the entry starts in the file, for messages
};

// The keys an entry may have, in the order messages list them.
inline constexpr const char* kKnownEntryKeys[] = {"image",      "entrypoint", "cmd",     "env",
                                                  "files",      "workingDir", "rewrite", "builtin",
                                                  "pull_delay", "run",        "prefer"};

// What the kubelet does for one container.
struct ImagePlan {
  enum class Kind { kExec, kWaitForService };
  Kind kind = Kind::kExec;
  // Where the image came from: an image map entry (the host's programs) or the node's image
  // store (the image's own root).
  enum class Source { kMap, kStore };
  Source source = Source::kMap;
  std::string route;  // for `describe pod`: "image map fixtures/images.yaml:12", "image store"
  std::vector<std::string> argv;  // kExec: the final argv
  std::string service;            // kWaitForService: the name looked up
  int max_tries = 100;            // kWaitForService: from `seq N` in the script
  Duration pull_delay{0};
  std::string normalized;   // docker.io/library/alpine:3.10
  ImagePairs files;         // the entry's files: pod path -> host path
  ImagePairs env;           // the image's env (under the container's: ImageEnvUnder)
  std::string working_dir;  // the image's working directory; the container's workingDir wins
  // kStore: the image's layer directories (top first), its config's User, and what the
  // container status reports (image: the stored name; imageID: repo@sha256:... or the ID).
  std::vector<std::string> layers;
  std::string user;
  std::string status_image;
  std::string image_id;
};

// docker.io/library/busybox:latest for "busybox"; kInvalid (InvalidImageName) with the
// kubelet's message `Failed to apply default image tag "<x>": couldn't parse image reference
// "<x>": invalid reference format` when the reference does not parse.
Result<std::string> NormalizeImage(const std::string& image);

// Shell-style wildcard match (* any run, ? one character).
bool WildcardMatch(const std::string& pattern, const std::string& text);

class ImageMap {
 public:
  // kInvalid with "<path>:<line>: <problem>" for a malformed file (an unknown key, a `files`
  // source that does not exist, a relative target); kNotFound when missing.
  static Result<ImageMap> Load(const std::string& path);
  // Relative `files` sources are taken from source's directory.
  static Result<ImageMap> Parse(const std::string& yaml_text, const std::string& source);
  // Several maps as one, each later path layered over the earlier ones: its entries come
  // first, so they win on the first-match rule ({built-in, user}: the user's entries win, the
  // built-in ones still map what the user's do not). Empty paths and repeats of a file already
  // loaded are skipped. Errors are Load's.
  static Result<ImageMap> LoadLayered(const std::vector<std::string>& paths);

  // The plan for a container: kInvalid (InvalidImageName) for a bad reference, kNotFound
  // (ErrImagePull) when no entry matches, with a message saying how to map the image.
  // command/args are the container's (empty when not given), already $(VAR)-expanded; the
  // image's entrypoint/cmd fill in by Kubernetes' rules; vars fill ${NAME} in rewrites.
  Result<ImagePlan> Resolve(const std::string& image, const std::vector<std::string>& command,
                            const std::vector<std::string>& args,
                            const std::map<std::string, std::string>& vars) const;

  // The entry that maps `image` (first match: exact spelling, then the patterns against the
  // reference as written and normalized), or nullptr.
  const ImageEntry* Match(const std::string& image) const;
  // The plan of a matched entry (Resolve after the match).
  Result<ImagePlan> PlanFor(const ImageEntry& entry, const std::string& image,
                            const std::vector<std::string>& command,
                            const std::vector<std::string>& args,
                            const std::map<std::string, std::string>& vars) const;

  const std::vector<ImageEntry>& entries() const { return entries_; }
  // The file, or the layered files from highest priority down joined by " over ".
  const std::string& source() const { return source_; }

 private:
  std::vector<ImageEntry> entries_;
  std::string source_;
};

// The container's waiting reason when Resolve failed, as the kubelet reports it: ErrImagePull
// (no entry maps the image), InvalidImageName (the reference is no image name), else
// CreateContainerError (e.g. no command to run). `pjemu run`'s pre-check says the same.
const char* ResolveFailureReason(const Status& resolve_error);

}  // namespace pjemu::kubelet
