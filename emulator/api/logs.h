// PodLogs: where container logs live, between the kubelet (which writes them) and the API
// server / CLI (which serve them). Log files use the CRI logging format that a real kubelet
// writes under /var/log/pods, one line per chunk of output:
//   2016-10-06T00:17:09.669794202Z stdout F the log line
// (RFC 3339 with nanoseconds, the stream, F for a full line or P for a partial one, the bytes),
// so `logs --timestamps`, `--since-time`, `--since` and `--tail` are answered from the file.
// Thread safety: implementations are safe to call from any thread.
#pragma once

#include <string>

#include "emulator/common/status.h"

namespace pjemu::api {

struct LogRequest {
  std::string ns;
  std::string pod;
  std::string container;  // "" = the pod's only container (kBadRequest if it has several)
  bool previous = false;  // the previous, terminated instance of the container
};

struct LogFile {
  std::string path;   // the CRI-format file
  bool running;       // the container instance is still running (a follower keeps reading)
};

class PodLogs {
 public:
  virtual ~PodLogs() = default;
  // The log file of a container instance, with the real server's errors: kNotFound for an
  // unknown pod, kBadRequest for `container "x" in pod "y" is waiting to start: ...`,
  // `a container name must be specified for pod y, choose one of: [a b]`, or
  // `previous terminated container "c" in pod "p" not found`.
  virtual Result<LogFile> Find(const LogRequest& request) = 0;
};

}  // namespace pjemu::api
