#include "emulator/tensorboard/tensorboard_controller.h"

#include "emulator/api/json_fields.h"
#include "emulator/api/resources.h"

namespace pjemu::tensorboard {
namespace {

using api::Field;
using api::Str;

// The Ready condition of the current status, or null.
const Json* ReadyCondition(const Json& status) {
  for (const Json& c : api::ArrayOr(Field(status, "conditions"))) {
    if (Str(c, "type") == "Ready") return &c;
  }
  return nullptr;
}

// Two statuses equal but for the Ready condition's times.
bool SameStatus(Json a, Json b) {
  for (Json* s : {&a, &b}) {
    if (!s->is_object() || !(*s)["conditions"].is_array()) continue;
    for (Json& c : (*s)["conditions"]) {
      if (c.is_object()) c.erase("lastTransitionTime");
    }
  }
  return a == b;
}

}  // namespace

Json DesiredStatus(const Json& board, const Result<std::vector<ResolvedLogDir>>& resolved,
                   Time now, const std::string& url) {
  const Json& current = Field(board, "status");
  bool suspended = Field(Field(board, "spec"), "suspend") == Json(true);
  bool ready = resolved.ok() && !suspended;
  Json condition = {{"type", "Ready"}, {"status", ready ? "True" : "False"}};
  Json dirs = Json::array();
  if (resolved.ok()) {
    for (const ResolvedLogDir& d : *resolved) dirs.push_back({{"source", d.source}, {"path", d.path}});
  }
  if (suspended) {
    condition["reason"] = "Suspended";
    condition["message"] = "spec.suspend is true: the console does not serve it";
  } else if (ready) {
    condition["reason"] = "LogDirsResolved";
    condition["message"] = "TensorBoard is ready: " + std::to_string(dirs.size()) +
                           " log dir(s) resolved, served by the console at " + url;
  } else {
    condition["reason"] =
        resolved.status().code() == Code::kUnavailable ? "LogDirNotReady" : "InvalidLogDir";
    condition["message"] = resolved.status().message();
  }
  const Json* before = ReadyCondition(current);
  condition["lastTransitionTime"] =
      before != nullptr && Str(*before, "status") == Str(condition, "status") &&
              !Str(*before, "lastTransitionTime").empty()
          ? Str(*before, "lastTransitionTime")
          : FormatTime(now);
  Json status = current.is_object() ? current : Json::object();
  status["phase"] = ready ? "Running" : suspended ? "Suspended" : "Pending";
  status["conditions"] = Json::array({condition});
  status["url"] = url;
  status["logDirs"] = std::move(dirs);
  return status;
}

TensorBoardController::TensorBoardController(client::Client& client, EventLoop& loop,
                                             TensorBoardControllerOptions options)
    : client_(client), loop_(loop), options_(std::move(options)) {}

TensorBoardController::~TensorBoardController() { Stop(); }

Status TensorBoardController::Start() {
  if (passes_.started()) return Status::Ok();
  passes_.Start();
  auto keep = [this](std::map<std::string, Json>& cache) {
    return [this, &cache](const api::WatchEvent& e) {
      client::ApplyToCache(cache, e);
      passes_.Trigger();
    };
  };
  board_informer_ = std::make_unique<client::Informer>(
      client_, loop_, api::TensorBoards(), client::InformerOptions::Named("tensorboards"),
      keep(boards_));
  claim_informer_ = std::make_unique<client::Informer>(
      client_, loop_, api::PersistentVolumeClaims(),
      client::InformerOptions::Named("tensorboard claims"), keep(claims_));
  volume_informer_ = std::make_unique<client::Informer>(
      client_, loop_, api::PersistentVolumes(),
      client::InformerOptions::Named("tensorboard volumes"), keep(volumes_));
  for (client::Informer* informer :
       {claim_informer_.get(), volume_informer_.get(), board_informer_.get()}) {
    if (Status s = informer->Start(); !s.ok()) {
      Stop();
      return s.WithContext("tensorboard");
    }
  }
  passes_.Trigger();
  return Status::Ok();
}

void TensorBoardController::Stop() {
  if (!passes_.started()) return;
  passes_.Stop();
  for (auto* informer : {&board_informer_, &claim_informer_, &volume_informer_}) {
    if (*informer) (*informer)->Stop();
  }
}

void TensorBoardController::SyncAll() {
  if (!passes_.started()) return;
  passes_.Draining([this] {  // the caches take in this pass's own writes, without a new pass
    for (auto* informer : {&claim_informer_, &volume_informer_, &board_informer_}) (*informer)->Drain();
  });
  bool ok = true;
  std::map<std::string, Json> boards = boards_;  // a write's event may change the cache
  for (const auto& [key, board] : boards) ok = Sync(board) && ok;
  passes_.Arm(ok ? options_.resync_interval : options_.retry_interval);
}

bool TensorBoardController::Sync(const Json& board) {
  const Json& meta = Field(board, "metadata");
  if (!Str(meta, "deletionTimestamp").empty()) return true;
  const std::string ns = Str(meta, "namespace");
  const std::string name = Str(meta, "name");
  Result<std::vector<ResolvedLogDir>> resolved = Status(Code::kInvalid, "");
  auto sources = ParseLogDirs(Field(board, "spec"));
  if (!sources.ok()) {
    resolved = sources.status();
  } else {
    resolved = ResolveLogDirs(
        *sources,
        [&](const std::string& claim) -> const Json* {
          auto it = claims_.find(ns + "/" + claim);
          return it == claims_.end() ? nullptr : &it->second;
        },
        [&](const std::string& volume) -> const Json* {
          auto it = volumes_.find(volume);
          return it == volumes_.end() ? nullptr : &it->second;
        });
  }
  Json status = DesiredStatus(board, resolved, loop_.clock().Now(),
                              options_.url_prefix + ns + "/" + name);
  if (SameStatus(status, Field(board, "status"))) return true;
  Json updated = board;
  updated["status"] = std::move(status);
  auto written = client_.Update(api::TensorBoards(), ns, std::move(updated), api::Subresource::kStatus);
  // Gone meanwhile: nothing to do; a conflict: the informer brings the new version.
  return written.ok() || written.status().code() == Code::kNotFound;
}

}  // namespace pjemu::tensorboard
