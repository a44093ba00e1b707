#include "trainer/flat_sgd.h"

#include <torch/torch.h>

namespace pjemu::trainer {

FlatSgd::FlatSgd(torch::nn::Module& model, double lr, double momentum)
    : lr_(lr), momentum_factor_(momentum) {
  auto ps = model.parameters();
  int64_t total = 0;
  for (const auto& p : ps) total += p.numel();
  params_ = torch::empty({total}, torch::kFloat32);
  grads_ = torch::zeros({total}, torch::kFloat32);
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

void FlatSgd::Step() {
  torch::NoGradGuard no_grad;
  torch::Tensor d_p = grads_;
  if (momentum_factor_ != 0) {
    if (!momentum_.defined()) {
      momentum_ = grads_.clone();
    } else {
      momentum_.mul_(momentum_factor_).add_(grads_, 1.0);
    }
    d_p = momentum_;
  }
  params_.add_(d_p, -lr_);
}

void FlatSgd::SetMomentum(const torch::Tensor& m) {
  if (m.defined()) {
    momentum_ = m.to(torch::kFloat32).clone().view({-1});
  } else {
    momentum_ = torch::Tensor();
  }
}

}  // namespace pjemu::trainer
