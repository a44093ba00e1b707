#include "trainer/checkpoint.h"

#include <torch/serialize.h>
#include <torch/torch.h>

#include <cstdio>
#include <filesystem>

namespace pjemu::trainer {
namespace {

torch::Tensor Scalar(int64_t v) { return torch::tensor({v}, torch::kInt64); }

Result<int64_t> ReadScalar(torch::serialize::InputArchive& in, const char* key) {
  torch::Tensor t;
  if (!in.try_read(key, t) || t.numel() != 1) {
    return InternalError(std::string("checkpoint lacks ") + key);
  }
  return t.item<int64_t>();
}

}  // namespace

std::string CheckpointPath(const std::string& dir) { return dir + "/checkpoint.pt"; }

Status SaveCheckpoint(const std::string& dir, const Checkpoint& c) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return InternalError("cannot create --checkpoint-dir " + dir + ": " + ec.message());
  const std::string path = CheckpointPath(dir);
  const std::string tmp = path + ".tmp";
  try {
    torch::serialize::OutputArchive out;
    out.write("params", c.params);
    if (c.momentum.defined()) out.write("momentum", c.momentum);
    out.write("epoch", Scalar(c.epoch));
    out.write("next_batch", Scalar(c.next_batch));
    out.write("global_step", Scalar(c.global_step));
    out.write("world_size", Scalar(c.world_size));
    out.write("batch_size", Scalar(c.batch_size));
    out.save_to(tmp);
  } catch (const std::exception& e) {
    return InternalError("write checkpoint " + tmp + ": " + e.what());
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    return InternalError("rename checkpoint " + tmp + " -> " + path);
  }
  return Status::Ok();
}

Result<std::optional<Checkpoint>> LoadCheckpoint(const std::string& dir) {
  const std::string path = CheckpointPath(dir);
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return std::optional<Checkpoint>();
  Checkpoint c;
  try {
    torch::serialize::InputArchive in;
    in.load_from(path);
    if (!in.try_read("params", c.params))
      return InternalError("checkpoint " + path + " lacks params");
    torch::Tensor m;
    if (in.try_read("momentum", m)) c.momentum = m;
    ASSIGN_OR_RETURN(c.epoch, ReadScalar(in, "epoch"));
    ASSIGN_OR_RETURN(c.next_batch, ReadScalar(in, "next_batch"));
    ASSIGN_OR_RETURN(c.global_step, ReadScalar(in, "global_step"));
    ASSIGN_OR_RETURN(c.world_size, ReadScalar(in, "world_size"));
    ASSIGN_OR_RETURN(c.batch_size, ReadScalar(in, "batch_size"));
  } catch (const std::exception& e) {
    std::string msg = e.what();
    return InternalError("unreadable checkpoint " + path + ": " + msg.substr(0, msg.find('\n')));
  }
  return std::optional<Checkpoint>(std::move(c));
}

}  // namespace pjemu::trainer
