// SGD with momentum over flat buffers: every parameter of the model becomes a view into one flat
// float tensor and every gradient a view into another, so the gradient all-reduce is a single
// call on one buffer with no gather/scatter copies, and the update is three vector ops. The
// arithmetic is torch.optim.SGD's (1.13, single-tensor path, dampening 0, no nesterov), so the
// results equal the reference bit for bit. The buffers live on the parameters' device: on the
// CPU the update is one fused loop, on CUDA torch's own mul_/add_. Flow: TrainLoop -> FlatSgd.
// Thread safety: one thread.
#pragma once

#include <torch/nn/module.h>
#include <torch/types.h>

namespace pjemu::trainer {

class FlatSgd {
 public:
  // Rebinds the parameters of `model` onto flat storage (keeps their values).
  FlatSgd(torch::nn::Module& model, double lr, double momentum);

  void ZeroGrad() { grads_.zero_(); }
  // REQUIRES: gradients are in grads() (backward ran, all-reduce done).
  void Step();

  torch::Tensor& params() { return params_; }
  torch::Tensor& grads() { return grads_; }
  // Undefined until the first Step (as torch's momentum_buffer is None).
  torch::Tensor& momentum() { return momentum_; }
  // Restores a momentum buffer (from a checkpoint): copied, or reset when undefined.
  void SetMomentum(const torch::Tensor& m);

 private:
  double lr_;
  double momentum_factor_;
  torch::Tensor params_, grads_, momentum_;
};

}  // namespace pjemu::trainer
