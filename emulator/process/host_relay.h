// HostRelay: a TCP port inside a network namespace that pjemu made (the pod network's bridge
// namespace) relayed to a port on the host's loopback, so pods, which have no route to the host,
// reach one host service: the API server for in-cluster clients (KUBERNETES_SERVICE_HOST), as a
// cluster's pods reach the `kubernetes` Service. The listening socket is made by a thread that
// enters the namespace and leaves it again (setns acts on the calling thread only); accepted
// connections are joined to a fresh 127.0.0.1 connection made in the host's namespace, and bytes
// are copied both ways until either side closes. Nothing listens on the host itself.
// Thread safety: Start and the destructor from one thread; the relay runs on its own threads.
#pragma once

#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "emulator/common/status.h"

namespace pjemu::process {

class HostRelay {
 public:
  // Listens on `ip`:`port` inside the network namespace at `netns_path` (/run/netns/...) and
  // relays each connection to 127.0.0.1:`host_port`. Errors: kUnavailable with the reason
  // (the namespace cannot be entered, the address cannot be bound).
  static Result<std::unique_ptr<HostRelay>> Start(const std::string& netns_path,
                                                  const std::string& ip, int port, int host_port);
  // Closes the listener and every relayed connection, and joins the threads.
  ~HostRelay();
  HostRelay(const HostRelay&) = delete;
  HostRelay& operator=(const HostRelay&) = delete;

 private:
  HostRelay() = default;
  void AcceptLoop();
  void Pipe(int client);

  int listen_fd_ = -1;
  int stop_pipe_[2] = {-1, -1};  // written once by the destructor: every loop wakes and ends
  int host_port_ = 0;
  std::thread acceptor_;
  std::mutex mu_;
  std::condition_variable done_;
  int active_ = 0;  // GUARDED_BY(mu_): connections being relayed (each a detached thread)
};

}  // namespace pjemu::process
