#include "emulator/apiserver/fd_writer.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

namespace pjemu::apiserver {

FdWriter::FdWriter(int fd, std::function<void()> on_close)
    : fd_(fd), on_close_(std::move(on_close)), thread_([this] { Run(); }) {}

FdWriter::~FdWriter() {
  Stop();
  if (thread_.joinable()) {
    if (thread_.get_id() == std::this_thread::get_id()) {
      thread_.detach();
    } else {
      thread_.join();
    }
  }
}

void FdWriter::Write(std::string data) {
  if (data.empty()) return;
  std::lock_guard<std::mutex> lock(mu_);
  if (closing_ || stopped_) return;
  queue_.push_back(std::move(data));
  cv_.notify_one();
}

void FdWriter::Close() {
  std::lock_guard<std::mutex> lock(mu_);
  closing_ = true;
  cv_.notify_one();
}

void FdWriter::Stop() {
  std::lock_guard<std::mutex> lock(mu_);
  stopped_ = true;
  queue_.clear();
  cv_.notify_one();
}

void FdWriter::Run() {
  while (true) {
    std::string data;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return stopped_ || closing_ || !queue_.empty(); });
      if (stopped_ || queue_.empty()) break;  // stopped, or closing with nothing left
      data = std::move(queue_.front());
      queue_.pop_front();
    }
    std::size_t done = 0;
    while (done < data.size()) {
      // MSG_NOSIGNAL: a peer that went away is an error, not a SIGPIPE; pipes get write().
      struct stat st {};
      bool socket = fstat(fd_, &st) == 0 && S_ISSOCK(st.st_mode);
      ssize_t n = socket ? send(fd_, data.data() + done, data.size() - done, MSG_NOSIGNAL)
                         : write(fd_, data.data() + done, data.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        std::lock_guard<std::mutex> lock(mu_);
        stopped_ = true;
        queue_.clear();
        break;
      }
      done += static_cast<std::size_t>(n);
    }
  }
  if (on_close_) on_close_();
}

}  // namespace pjemu::apiserver
