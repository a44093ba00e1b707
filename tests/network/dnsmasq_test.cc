// Given root, network namespaces and Debian's dnsmasq, Dnsmasq::Start should return without
// waiting for it: WaitStarted (and the OnSettled callback, once) then say that it answers, or,
// for an address it cannot listen on, that it did not start and why (its log's last line); an
// object destroyed while dnsmasq starts reports no failure. Skipped (with the reason) elsewhere.
#include "emulator/network/dnsmasq.h"

#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <vector>

#include "emulator/process/exec_path.h"
#include "emulator/process/named_netns.h"
#include "emulator/process/route_netlink.h"

namespace pjemu::network {
namespace {

namespace fs = std::filesystem;

// Deletes the named namespace when the test leaves, by a failed REQUIRE too.
struct NetnsGuard {
  std::string name;
  ~NetnsGuard() { (void)process::DeleteNamedNetns(name); }
};

struct Settled {
  std::mutex mu;
  std::vector<Status> calls;
  Dnsmasq::OnSettled Callback() {
    return [this](const Status& s) {
      std::lock_guard<std::mutex> lock(mu);
      calls.push_back(s);
    };
  }
};

TEST_CASE("dnsmasq: starts without waiting, then answers or says why not", "[network]") {
  if (getuid() != 0) {
    WARN("skipped: not root");
    return;
  }
  if (!process::FindExecutable("dnsmasq", {"PATH=/usr/sbin:/usr/bin:/sbin:/bin"}).ok()) {
    WARN("skipped: no dnsmasq");
    return;
  }
  const std::string ns = "pjemu-test-" + std::to_string(getpid()) + "-dns";
  Status made = process::AddNamedNetns(ns, [] {
    ASSIGN_OR_RETURN(auto rtnl, process::RouteNetlink::Open());
    RETURN_IF_ERROR(rtnl->LinkUp("lo"));
    return rtnl->AddAddress("lo", "10.96.0.10/32");
  });
  if (!made.ok()) {
    WARN("skipped: " << made.message());
    return;
  }
  NetnsGuard guard{ns};
  fs::path dir = fs::path(PJEMU_BINARY_DIR) / ("dnsmasq_test-" + std::to_string(getpid()));
  fs::create_directories(dir / "hosts");
  std::ofstream(dir / "hosts" / "services") << "10.96.0.77 web.default.svc.cluster.local\n";
  DnsmasqOptions o;
  o.netns_path = process::NamedNetnsPath(ns);
  o.listen_address = "10.96.0.10";
  o.hosts_dir = (dir / "hosts").string();
  o.log_file = (dir / "dnsmasq.log").string();

  Settled served;
  auto d = Dnsmasq::Start(o, served.Callback());
  REQUIRE(d.ok());
  CHECK((*d)->state() != Dnsmasq::State::kFailed);
  Status started = (*d)->WaitStarted();
  INFO(started.message());
  CHECK(started.ok());
  CHECK((*d)->state() == Dnsmasq::State::kServing);
  CHECK((*d)->running());
  {
    std::lock_guard<std::mutex> lock(served.mu);
    REQUIRE(served.calls.size() == 1);
    CHECK(served.calls[0].ok());
  }
  d->reset();

  // An address that is not the namespace's: dnsmasq exits, and says why.
  Settled failed;
  o.listen_address = "10.96.0.11";
  auto bad = Dnsmasq::Start(o, failed.Callback());
  REQUIRE(bad.ok());
  Status why = (*bad)->WaitStarted();
  CHECK(why.code() == Code::kUnavailable);
  CHECK(why.message().find("10.96.0.11") != std::string::npos);
  CHECK((*bad)->state() == Dnsmasq::State::kFailed);
  bad->reset();
  {
    std::lock_guard<std::mutex> lock(failed.mu);
    REQUIRE(failed.calls.size() == 1);
    CHECK(failed.calls[0].message() == why.message());
  }

  // Gone while it starts: no failure reported for the stop.
  Settled stopped;
  o.listen_address = "10.96.0.10";
  {
    auto quick = Dnsmasq::Start(o, stopped.Callback());
    REQUIRE(quick.ok());
  }
  {
    std::lock_guard<std::mutex> lock(stopped.mu);
    for (const Status& s : stopped.calls) CHECK(s.ok());
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace pjemu::network
