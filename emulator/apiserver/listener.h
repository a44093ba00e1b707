// Listener: accepts TCP connections for the API server and hands each to a Session (private to
// emulator/apiserver; the shape of Beast's chat-multi `listener`). Connections beyond
// ApiServerLimits::max_connections are closed at once.
// Thread safety: runs on the io_context; Close() may be called from any thread.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <memory>

#include "emulator/apiserver/session.h"

namespace pjemu::apiserver {

class Listener : public std::enable_shared_from_this<Listener> {
 public:
  Listener(boost::asio::io_context& ioc, std::shared_ptr<ServerShared> shared);
  // Binds and listens on address:port; the error names the endpoint.
  Status Open(const std::string& address, std::uint16_t port);
  std::uint16_t port() const { return port_; }
  void Run();
  void Close();

 private:
  void DoAccept();
  void OnAccept(boost::system::error_code ec, boost::asio::ip::tcp::socket socket);

  boost::asio::io_context& ioc_;
  boost::asio::ip::tcp::acceptor acceptor_;
  std::shared_ptr<ServerShared> shared_;
  std::uint16_t port_ = 0;
};

}  // namespace pjemu::apiserver
