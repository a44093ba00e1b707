#include "emulator/apiserver/listener.h"

#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>

namespace pjemu::apiserver {

namespace net = boost::asio;
using tcp = net::ip::tcp;

Listener::Listener(net::io_context& ioc, std::shared_ptr<ServerShared> shared)
    : ioc_(ioc), acceptor_(net::make_strand(ioc)), shared_(std::move(shared)) {}

Status Listener::Open(const std::string& address, std::uint16_t port) {
  boost::system::error_code ec;
  std::string where = address + ":" + std::to_string(port);
  auto ip = net::ip::make_address(address, ec);
  if (ec) return BadRequestError("apiserver: invalid listen address \"" + address + "\"");
  tcp::endpoint endpoint(ip, port);
  acceptor_.open(endpoint.protocol(), ec);
  if (!ec) acceptor_.set_option(net::socket_base::reuse_address(true), ec);
  if (!ec) acceptor_.bind(endpoint, ec);
  if (!ec) acceptor_.listen(net::socket_base::max_listen_connections, ec);
  if (ec) return InternalError("apiserver: cannot listen on " + where + ": " + ec.message());
  port_ = acceptor_.local_endpoint().port();
  return Status::Ok();
}

void Listener::Run() { DoAccept(); }

void Listener::Close() {
  net::post(acceptor_.get_executor(), [self = shared_from_this()] {
    boost::system::error_code ec;
    self->acceptor_.close(ec);
  });
}

void Listener::DoAccept() {
  acceptor_.async_accept(
      net::make_strand(ioc_),
      [self = shared_from_this()](boost::system::error_code ec, tcp::socket socket) {
        self->OnAccept(ec, std::move(socket));
      });
}

void Listener::OnAccept(boost::system::error_code ec, tcp::socket socket) {
  if (ec == net::error::operation_aborted || !acceptor_.is_open()) return;
  if (!ec) {
    if (shared_->connections.load() >= shared_->limits.max_connections) {
      boost::system::error_code ignored;
      socket.close(ignored);
    } else {
      ++shared_->connections;
      StartSession(std::move(socket), shared_);
    }
  }
  DoAccept();
}

}  // namespace pjemu::apiserver
