#include "trainer/flat_sgd.h"

#include <torch/torch.h>

#include <cmath>

namespace pjemu::trainer {

FlatSgd::FlatSgd(torch::nn::Module& model, double lr, double momentum)
    : lr_(lr), momentum_factor_(momentum) {
  auto ps = model.parameters();
  int64_t total = 0;
  for (const auto& p : ps) total += p.numel();
  // On the parameters' device (the CPU, or the GPU after model.to(device)).
  const auto options = ps.empty() ? torch::TensorOptions(torch::kFloat32)
                                  : torch::TensorOptions(torch::kFloat32).device(ps[0].device());
  params_ = torch::empty({total}, options);
  grads_ = torch::zeros({total}, options);
  int64_t off = 0;
  torch::NoGradGuard no_grad;
  for (auto& p : ps) {
    const int64_t n = p.numel();
    torch::Tensor view = params_.narrow(0, off, n).view(p.sizes());
    view.copy_(p);
    p.set_data(view);
    p.mutable_grad() = grads_.narrow(0, off, n).view(p.sizes());
    off += n;
  }
}

namespace {

// momentum = momentum * factor + grad; param = param - lr * momentum, element by element, in
// one pass instead of torch's three (mul_, add_, add_): the same roundings as theirs, the
// product by the momentum factor rounded, then the sum, and the update one fused multiply-add
// as ATen's vectorized add_ with alpha (tested bit for bit against torch::optim::SGD).
__attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default"))) void FusedSgd(
    float* __restrict param, float* __restrict momentum, const float* __restrict grad, int64_t n,
    float factor, float neg_lr) {
  for (int64_t i = 0; i < n; ++i) {
    const float m = momentum[i] * factor + grad[i];
    momentum[i] = m;
    param[i] = std::fma(m, neg_lr, param[i]);
  }
}

}  // namespace

void FlatSgd::Step() {
  torch::NoGradGuard no_grad;
  if (momentum_factor_ != 0 && momentum_.defined() && !params_.device().is_cpu()) {
    momentum_.mul_(momentum_factor_).add_(grads_);  // torch.optim.SGD's ops, on the GPU
    params_.add_(momentum_, -lr_);
    return;
  }
  if (momentum_factor_ != 0 && momentum_.defined()) {
    FusedSgd(params_.data_ptr<float>(), momentum_.data_ptr<float>(), grads_.data_ptr<float>(),
             params_.numel(), static_cast<float>(momentum_factor_), static_cast<float>(-lr_));
    return;
  }
  torch::Tensor d_p = grads_;
  if (momentum_factor_ != 0) {
    momentum_ = grads_.clone();  // the first step, as torch's momentum_buffer
    d_p = momentum_;
  }
  params_.add_(d_p, -lr_);
}

void FlatSgd::SetMomentum(const torch::Tensor& m) {
  if (m.defined()) {
    momentum_ = m.to(params_.device(), torch::kFloat32).clone().view({-1});
  } else {
    momentum_ = torch::Tensor();
  }
}

}  // namespace pjemu::trainer
