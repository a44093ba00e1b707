// TensorBoardController: the TensorBoard kind (tensorstack.dev/v1beta1, T9k's) in one actor. T9k
// runs a TensorBoard server pod per object; pjemu runs none: its console is the TensorBoard UI,
// and reads the event files itself (emulator/ui/tfevents.h). What this controller owns is the
// object's status, level-based, for every TensorBoard:
//  - the log dirs of its spec resolved to host folders (log_dirs.h): a claim's sub-path through
//    its bound PersistentVolume, or a host folder;
//  - status.conditions: one `Ready` condition, "True" (reason LogDirsResolved) when every log
//    dir resolves, else "False" with the reason (LogDirNotReady while a claim is missing or not
//    bound yet, InvalidLogDir for a spec that can never resolve, Suspended for spec.suspend) and
//    the message naming the field, claim or volume; lastTransitionTime changes only with status;
//  - status.phase: Running when Ready, Suspended when suspended, else Pending;
//  - status.url: where the console shows it (options.url_prefix + "<namespace>/<name>");
//  - status.logDirs: [{source, path}], the resolved host folders (pjemu's own field: the console
//    reads the event files from these, and only from these).
// A job controller that made the TensorBoard reads Ready from status.conditions.
// Reads TensorBoards, claims and volumes through three client::Informers; every change asks for
// one coalesced pass over all TensorBoards that writes only the statuses that differ (through
// the status subresource, with the object's resourceVersion). A pass that met an error, and
// every resync_interval anyway (a folder inside a volume may become a link out of it), passes
// again.
// Thread safety: constructor, Start and Stop on the EventLoop thread (or before it runs);
// everything else runs on the EventLoop thread.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "emulator/client/client.h"
#include "emulator/client/informer.h"
#include "emulator/common/coalesced_pass.h"
#include "emulator/common/event_loop.h"
#include "emulator/tensorboard/log_dirs.h"

namespace pjemu::tensorboard {

struct TensorBoardControllerOptions {
  // status.url = url_prefix + "<namespace>/<name>": the console's TensorBoard page.
  std::string url_prefix = "/ui/#/tensorboards/";
  Duration retry_interval = 5s;
  Duration resync_interval = 30s;
};

// The status the controller wants for `board` given its log dirs' resolution (`resolved`:
// the folders, or why not), keeping the Ready condition's lastTransitionTime from `board`'s
// current status when the condition's status is unchanged. Pure (exposed for tests).
Json DesiredStatus(const Json& board, const Result<std::vector<ResolvedLogDir>>& resolved,
                   Time now, const std::string& url);

class TensorBoardController {
 public:
  TensorBoardController(client::Client& client, EventLoop& loop,
                        TensorBoardControllerOptions options = {});
  ~TensorBoardController();  // Stop()
  TensorBoardController(const TensorBoardController&) = delete;
  TensorBoardController& operator=(const TensorBoardController&) = delete;

  // Starts the informers: the Client's errors.
  Status Start();
  void Stop();
  // One pass over every TensorBoard (what each change triggers).
  void SyncAll();

 private:
  bool Sync(const Json& board);

  client::Client& client_;
  EventLoop& loop_;
  TensorBoardControllerOptions options_;
  // Caches by "<namespace>/<name>" (boards, claims) or name (volumes), kept by the informers.
  std::map<std::string, Json> boards_, claims_, volumes_;
  std::unique_ptr<client::Informer> board_informer_, claim_informer_, volume_informer_;
  CoalescedPass passes_{loop_, [this] { SyncAll(); }};
};

}  // namespace pjemu::tensorboard
