// The orphan tests' harness reports the pids of a container's process group through a pipe,
// one per line, before it is SIGKILLed; ReadPids reads them back to the end of the pipe and
// closes it.
#pragma once

#include <sys/types.h>
#include <unistd.h>

#include <sstream>
#include <string>
#include <vector>

namespace pjemu::process::testing {

inline std::vector<pid_t> ReadPids(int fd) {
  std::string text;
  char buf[256];
  ssize_t n;
  while ((n = read(fd, buf, sizeof buf)) > 0) text.append(buf, n);
  close(fd);
  std::vector<pid_t> pids;
  std::istringstream lines(text);
  for (pid_t p; lines >> p;) pids.push_back(p);
  return pids;
}

}  // namespace pjemu::process::testing
