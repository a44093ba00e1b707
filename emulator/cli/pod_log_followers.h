// PodLogFollowers: what `scenario run --kubeconfig` reads pod logs through (the remote runner's
// read_log seam, emulator/scenario/remote.h): one follower per container, each a GET
// pods/{name}/log?follow=true on a thread of its own, reconnecting every 500 ms while the
// container has not started (400) or after its stream ended; a new stream (the container
// restarted) replaces the text. Reads return the text so far; only a container's first read waits for the network.
// Thread safety: Read from any thread. Followers are detached threads sharing their state with
// the object; destroying it stops them and waits at most 2 s for them (a follower blocked on a
// silent stream ends at its next chunk, or when the server ends the stream: the pod was deleted
// with its namespace).
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "emulator/client/http_client.h"

namespace pjemu::cli {

class PodLogFollowers {
 public:
  explicit PodLogFollowers(client::HttpClientOptions options);
  ~PodLogFollowers();  // stops every follower (waits up to 2 s for them)
  PodLogFollowers(const PodLogFollowers&) = delete;
  PodLogFollowers& operator=(const PodLogFollowers&) = delete;

  // The container's log text so far ("" = the pod's only container); the first call reads it
  // with one GET (blocking) and starts following it.
  std::string Read(const std::string& ns, const std::string& pod, const std::string& container);

  struct Follower;  // the state a follower thread shares with this object

 private:
  client::HttpClientOptions options_;
  std::mutex mu_;
  std::map<std::string, std::shared_ptr<Follower>> followers_;  // GUARDED_BY(mu_)
};

}  // namespace pjemu::cli
