// PodWorker's image step: what a container runs from (an image map entry or the node's image
// store), the pull policies, Pulling/Pulled events, ErrImagePull and ImagePullBackOff, and the
// plan an image from the store gives (Kubernetes' and containerd's rules for command and args).
#include <algorithm>
#include <chrono>

#include "emulator/api/image_reference.h"
#include "emulator/api/json_fields.h"
#include "emulator/api/resources.h"
#include "emulator/kubelet/container_env.h"
#include "emulator/kubelet/pod_worker.h"

namespace pjemu::kubelet {
namespace {

using Phase = ContainerState::Phase;

std::string Quoted(const std::string& s) { return "\"" + s + "\""; }

// The pull's time as the kubelet's event prints it: Go's time.Duration text, truncated to ms.
std::string PullDuration(Duration d) {
  return FormatGoDuration(std::chrono::duration_cast<std::chrono::milliseconds>(d));
}

// containerd's WithProcessArgs: a container command replaces the entrypoint and drops the
// image's Cmd; args replace Cmd.
std::vector<std::string> ImageArgv(const image::RunConfig& rc, std::vector<std::string> command,
                                   std::vector<std::string> args) {
  if (command.empty()) {
    if (args.empty()) args = rc.cmd;
    command = rc.entrypoint;
  }
  command.insert(command.end(), args.begin(), args.end());
  return command;
}

// The name and repo digest the container status reports: those of the reference's repository
// when the image has one, else the first.
std::string Pick(const std::vector<std::string>& list, const std::string& repo,
                 const std::string& fallback) {
  for (const std::string& s : list) {
    if (s.rfind(repo, 0) == 0 && s.size() > repo.size() &&
        (s[repo.size()] == ':' || s[repo.size()] == '@')) {
      return s;
    }
  }
  return list.empty() ? fallback : list.front();
}

}  // namespace

std::optional<ImagePlan> PodWorker::ResolveImage(bool init, std::size_t i, const Json& spec,
                                                 const EnvList& env) {
  ContainerState& c = Container(init, i);
  const auto command = ExpandList(spec.value("command", Json()), env);
  const auto args = ExpandList(spec.value("args", Json()), env);
  const ImageEntry* entry = ctx_.images.Match(c.image);
  ImagePulls* pulls = ctx_.pulls;
  if (entry && (!entry->prefer_store || !pulls)) return MapPlan(init, i, *entry, command, args);
  auto ref = api::ParseImageReference(c.image);
  if (!ref.ok()) {
    const std::string message = api::InvalidImageNameMessage(c.image, ref.status().message());
    Event("Warning", "InspectFailed", message);
    WaitImage(init, i, "InvalidImageName", message);
    return std::nullopt;
  }
  if (!pulls) {  // no image store: the image map is all there is
    auto plan = ctx_.images.Resolve(c.image, command, args, ctx_.options.image_vars);
    WaitImage(init, i, ResolveFailureReason(plan.status()), plan.status().message());
    return std::nullopt;
  }
  if (c.pulled) {  // a pull of this start just finished
    image::ImageRecord record = std::move(*c.pulled);
    c.pulled.reset();
    return StorePlan(init, i, record, *ref, command, args);
  }
  std::optional<image::ImageRecord> present = pulls->service().Present(*ref);
  if (!present && entry) return MapPlan(init, i, *entry, command, args);
  std::string policy = spec.value("imagePullPolicy", "");
  if (policy.empty()) policy = api::DefaultImagePullPolicy(c.image);
  if (present && policy != "Always") {
    Event("Normal", "Pulled", "Container image " + Quoted(c.image) + " already present on machine");
    return StorePlan(init, i, *present, *ref, command, args);
  }
  if (policy == "Never") {
    const std::string message =
        "Container image " + Quoted(c.image) + " is not present with pull policy of Never";
    Event("Warning", "ErrImageNeverPull", message);
    WaitImage(init, i, "ErrImageNeverPull", message);
    RetryImageAfter(init, i, ScaledImageRetry());
    return std::nullopt;
  }
  const std::string key = uid_ + "_" + c.image;
  if (pulls->InBackOff(key)) {
    const std::string message = "Back-off pulling image " + Quoted(c.image);
    Event("Normal", "BackOff", message);
    WaitImage(init, i, "ImagePullBackOff", message);
    RetryImageAfter(init, i, pulls->BackOffEnd(key) - ctx_.loop.Now());
    return std::nullopt;
  }
  if (!c.pulling) StartPull(init, i, *ref);
  return std::nullopt;
}

void PodWorker::StartPull(bool init, std::size_t i, const api::ImageReference& ref) {
  ContainerState& c = Container(init, i);
  Event("Normal", "Pulling", "Pulling image " + Quoted(c.image));
  c.pulling = true;
  std::weak_ptr<PodWorker> self = weak_from_this();
  ctx_.pulls->Pull(ref, PullKeyring(), [self, init, i](const PullOutcome& outcome) {
    if (auto w = self.lock()) w->OnPulled(init, i, outcome);
  });
}

void PodWorker::OnPulled(bool init, std::size_t i, const PullOutcome& outcome) {
  ContainerState& c = Container(init, i);
  c.pulling = false;
  if (terminating_ || deleted_ || evicting_ || !state_.terminal_phase.empty()) return;
  if (!outcome.image.ok()) {
    const std::string message = outcome.image.status().message();
    Event("Warning", "Failed", "Failed to pull image " + Quoted(c.image) + ": " + message);
    WaitImage(init, i, "ErrImagePull", message);
    // The kubelet's sync comes back before the window ends and finds it in back-off.
    Duration window = ctx_.pulls->Failed(uid_ + "_" + c.image);
    RetryImageAfter(init, i, window / 2);
    WriteStatus();
    return;
  }
  Event("Normal", "Pulled",
        "Successfully pulled image " + Quoted(c.image) + " in " + PullDuration(outcome.took) +
            " (" + PullDuration(outcome.waited) +
            " including waiting). Image size: " + std::to_string(outcome.image->size) + " bytes.");
  c.pulled = *outcome.image;
  c.reason = init || state_.init.empty() ? "ContainerCreating" : "PodInitializing";
  c.message.clear();
  Advance();
}

// A container kept waiting by its image: the reason shown, and `Error: <reason>` as the
// kubelet's startContainer reports it.
void PodWorker::WaitImage(bool init, std::size_t i, const std::string& reason,
                          const std::string& message) {
  ContainerState& c = Container(init, i);
  c.phase = Phase::kWaiting;
  c.reason = reason;
  c.message = message;
  Event("Warning", "Failed", "Error: " + reason);
}

void PodWorker::RetryImageAfter(bool init, std::size_t i, Duration d) {
  ContainerState& c = Container(init, i);
  if (c.timer) ctx_.loop.Cancel(c.timer);
  c.timer = After(std::max(d, Duration(0)), [init, i](PodWorker& w) {
    w.Container(init, i).timer = 0;
    if (w.terminating_ || w.deleted_ || w.evicting_ || !w.state_.terminal_phase.empty()) return;
    w.StartContainer(init, i);
    w.WriteStatus();
  });
}

Duration PodWorker::ScaledImageRetry() const {
  return std::chrono::duration_cast<Duration>(10s * ctx_.options.backoff_scale);
}

std::optional<ImagePlan> PodWorker::MapPlan(bool init, std::size_t i, const ImageEntry& entry,
                                            const std::vector<std::string>& command,
                                            const std::vector<std::string>& args) {
  ContainerState& c = Container(init, i);
  auto plan = ctx_.images.PlanFor(entry, c.image, command, args, ctx_.options.image_vars);
  if (!plan.ok()) {
    WaitImage(init, i, ResolveFailureReason(plan.status()), plan.status().message());
    return std::nullopt;
  }
  c.image_id = "pjemu://" + plan->normalized;
  c.route = plan->route;
  if (Duration pull = ctx_.puller().PullTime(c.image, *plan); pull > Duration(0)) {
    Event("Normal", "Pulling", "Pulling image " + Quoted(c.image));
    std::string image = plan->normalized;
    c.timer = After(pull, [init, i, image](PodWorker& w) {
      ContainerState& pulled = w.Container(init, i);
      pulled.timer = 0;
      pulled.map_pulled = true;
      w.ctx_.puller().Pulled(image);
      w.Event("Normal", "Pulled", "Successfully pulled image " + Quoted(pulled.image));
      w.Advance();
    });
    return std::nullopt;
  }
  // The kubelet's event for an image it has, naming the route (what `describe pod` shows); a
  // builtin's container has its image as much as any other.
  if (!c.map_pulled) {
    const char* what = plan->kind == ImagePlan::Kind::kWaitForService
                           ? "the kubelet's built-in wait for the service"
                           : "the host's programs";
    Event("Normal", "Pulled",
          "Container image " + Quoted(c.image) + " already present on machine (" + plan->route +
              ": " + what + ")");
  }
  c.map_pulled = false;
  return std::move(*plan);
}

std::optional<ImagePlan> PodWorker::StorePlan(bool init, std::size_t i,
                                              const image::ImageRecord& record,
                                              const api::ImageReference& ref,
                                              const std::vector<std::string>& command,
                                              const std::vector<std::string>& args) {
  ContainerState& c = Container(init, i);
  const image::RunConfig rc = image::RunConfigOf(record);
  ImagePlan plan;
  plan.source = ImagePlan::Source::kStore;
  plan.route = "image store (" + record.source + ")";
  plan.normalized = ref.String();
  plan.argv = ImageArgv(rc, command, args);
  for (const std::string& e : rc.env) {
    std::size_t eq = e.find('=');
    plan.env.emplace_back(e.substr(0, eq), eq == std::string::npos ? "" : e.substr(eq + 1));
  }
  plan.working_dir = rc.working_dir;
  plan.user = rc.user;
  plan.status_image = Pick(record.names, ref.Name(), record.id);
  plan.image_id = Pick(record.repo_digests, ref.Name(), record.id);
  c.image_id = plan.image_id;
  c.status_image = plan.status_image;
  c.route = plan.route;
  if (plan.argv.empty()) {
    WaitImage(init, i, "CreateContainerError", "no command specified");
    return std::nullopt;
  }
  if (!ctx_.sandbox) {
    WaitImage(init, i, "CreateContainerError",
              "image " + Quoted(c.image) +
                  " runs in a root of its own, which needs container filesystems (pjemu as "
                  "root); map it with --image-map to run it with the host's programs");
    return std::nullopt;
  }
  auto layers = ctx_.pulls->service().LayerDirs(record);
  if (!layers.ok()) {
    WaitImage(init, i, "CreateContainerError", layers.status().message());
    return std::nullopt;
  }
  plan.layers = std::move(*layers);
  return plan;
}

// The pod's imagePullSecrets and the user's Docker config, as the kubelet's keyring.
image::Keyring PodWorker::PullKeyring() {
  image::Keyring keyring;
  std::vector<std::string> missing;
  for (const Json& ref : api::ArrayOr(api::FieldAt(pod(), {"spec", "imagePullSecrets"}))) {
    const std::string name = ref.value("name", "");
    if (name.empty()) continue;
    auto secret = ctx_.client.Get(api::Secrets(), ns_, name);
    if (!secret.ok() || !keyring.AddPullSecret(*secret).ok()) missing.push_back(name);
  }
  if (!missing.empty()) {
    std::string names;
    for (const auto& n : missing) names += (names.empty() ? "" : ", ") + ns_ + "/" + n;
    Event("Warning", "FailedToRetrieveImagePullSecret",
          "Unable to retrieve some image pull secrets (" + names +
              "); attempting to pull the image may not succeed.");
  }
  (void)keyring.AddUserConfig();
  return keyring;
}

}  // namespace pjemu::kubelet
