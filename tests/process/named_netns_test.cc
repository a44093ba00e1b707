// Given root with network namespaces, a named namespace made in process should be one `ip netns`
// sees and enters (and whose name it refuses to take twice), fresh (its own lo only, IPv4
// forwarding off), configured through a route netlink socket opened inside it from any thread,
// with its sysctls its own; a failing `inside` leaves nothing; deleting it is idempotent.
// RouteNetlink's errors name the request and the reason. Skipped (with the reason) elsewhere.
#include "emulator/process/named_netns.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "emulator/process/pod_netns.h"
#include "emulator/process/route_netlink.h"

namespace pjemu::process {
namespace {

namespace fs = std::filesystem;

// The inode of a thread's network namespace (equal inodes: the same namespace).
ino_t NetnsInode(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0 ? st.st_ino : 0;
}

std::string ReadInside(const std::string& netns, const std::string& file) {
  std::string out;
  Status s = RunInNetns(NamedNetnsPath(netns), [&]() -> Status {
    std::ifstream in(file);
    std::stringstream ss;
    ss << in.rdbuf();
    out = ss.str();
    return Status::Ok();
  });
  return s.ok() ? out : "error: " + s.message();
}

// Deletes the named namespace when the test leaves, by a failed REQUIRE too.
struct NetnsGuard {
  std::string name;
  ~NetnsGuard() { (void)DeleteNamedNetns(name); }
};

std::string Name(const std::string& what) {
  return "pjemu-test-" + std::to_string(getpid()) + "-" + what;
}

TEST_CASE("named netns: made, seen by ip, configured from inside, removed", "[process][netns]") {
  const std::string name = Name("a");
  ino_t inside_ino = 0;
  std::unique_ptr<RouteNetlink> rtnl;
  Status made = AddNamedNetns(name, [&]() -> Status {
    inside_ino = NetnsInode("/proc/thread-self/ns/net");
    ASSIGN_OR_RETURN(rtnl, RouteNetlink::Open());
    return Status::Ok();
  });
  if (!made.ok()) {
    WARN("skipped: " << made.message());
    return;
  }
  NetnsGuard guard{name};
  const std::string path = NamedNetnsPath(name);
  CHECK(NetnsInode(path) == inside_ino);
  CHECK(inside_ino != NetnsInode("/proc/thread-self/ns/net"));  // this thread never left
  CHECK(AddNamedNetns(name).code() == Code::kAlreadyExists);

  // The socket opened inside configures that namespace, used from this thread.
  REQUIRE(rtnl->LinkUp("lo").ok());
  REQUIRE(rtnl->AddBridge("br-test").ok());
  REQUIRE(rtnl->AddAddress("br-test", "10.250.0.1/24").ok());
  CHECK(rtnl->AddAddress("lo", "10.250.9.9/32", /*replace=*/true).ok());
  CHECK(rtnl->AddAddress("lo", "10.250.9.9/32", /*replace=*/true).ok());  // replace: idempotent
  Status dup = rtnl->AddAddress("br-test", "10.250.0.1/24");
  CHECK_FALSE(dup.ok());
  CHECK(dup.message().find("ip addr add 10.250.0.1/24 dev br-test") != std::string::npos);
  CHECK(rtnl->AddAddress("no-such-link", "10.250.1.1/24").code() == Code::kNotFound);
  CHECK(rtnl->LinkIndex("br-test").ok());
  CHECK(RunCommand({"ip", "netns", "exec", name, "ip", "-4", "addr", "show", "dev", "br-test", "to",
                    "10.250.0.1/32"})
            .ok());
  CHECK_FALSE(RunCommand({"ip", "-4", "addr", "show", "dev", "br-test"}).ok());  // not the host's

  // Sysctls of the namespace are its own: forwarding starts off there, and is set there only.
  CHECK(ReadInside(name, "/proc/sys/net/ipv4/ip_forward") == "0\n");
  const std::string host_forward = [] {
    std::ifstream in("/proc/sys/net/ipv4/ip_forward");
    std::string v;
    std::getline(in, v);
    return v;
  }();
  REQUIRE(WriteNetnsSysctl(path, "net.ipv4.ip_forward", "1").ok());
  CHECK(ReadInside(name, "/proc/sys/net/ipv4/ip_forward") == "1\n");
  CHECK(RunCommand({"ip", "netns", "exec", name, "sh", "-c",
                    "test \"$(cat /proc/sys/net/ipv4/ip_forward)\" = 1"})
            .ok());
  std::ifstream host("/proc/sys/net/ipv4/ip_forward");
  std::string now;
  std::getline(host, now);
  CHECK(now == host_forward);

  rtnl.reset();
  REQUIRE(DeleteNamedNetns(name).ok());
  CHECK_FALSE(fs::exists(path));
  CHECK(DeleteNamedNetns(name).ok());  // idempotent
  CHECK(RunInNetns(path, [] { return Status::Ok(); }).code() == Code::kUnavailable);
}

TEST_CASE("named netns: a failing inside leaves no namespace, and bad names are refused",
          "[process][netns]") {
  const std::string name = Name("b");
  Status s = AddNamedNetns(name, [] { return InternalError("boom"); });
  if (s.code() == Code::kUnavailable) {
    WARN("skipped: " << s.message());
    return;
  }
  CHECK(s.message() == "boom");
  CHECK_FALSE(fs::exists(NamedNetnsPath(name)));
  CHECK(AddNamedNetns("../etc").code() == Code::kInvalid);
  CHECK(DeleteNamedNetns("a/b").code() == Code::kInvalid);
}

}  // namespace
}  // namespace pjemu::process
