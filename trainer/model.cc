#include "trainer/model.h"

#include <torch/torch.h>

#include <cstdlib>

#include "trainer/relu_pool.h"

namespace pjemu::trainer {

NetImpl::NetImpl() {
  conv1_ = register_module("conv1", torch::nn::Conv2d(torch::nn::Conv2dOptions(1, 20, 5)));
  conv2_ = register_module("conv2", torch::nn::Conv2d(torch::nn::Conv2dOptions(20, 50, 5)));
  fc1_ = register_module("fc1", torch::nn::Linear(4 * 4 * 50, 500));
  fc2_ = register_module("fc2", torch::nn::Linear(500, 10));
}

torch::Tensor NetImpl::forward(torch::Tensor x) {
  // PJEMU_TRAINER_UNFUSED=1 selects torch's relu + max_pool2d (for A/B measurements only).
  static const bool fused = std::getenv("PJEMU_TRAINER_UNFUSED") == nullptr;
  if (fused && x.device().is_cpu()) {
    // Same values and gradients as relu + max_pool2d, in one pass (relu_pool.h).
    x = ReluMaxPool2x2(conv1_->forward(x));
    x = ReluMaxPool2x2(conv2_->forward(x));
  } else {
    x = torch::max_pool2d(torch::relu(conv1_->forward(x)), 2, 2);
    x = torch::max_pool2d(torch::relu(conv2_->forward(x)), 2, 2);
  }
  x = x.view({-1, 4 * 4 * 50});
  x = torch::relu(fc1_->forward(x));
  x = fc2_->forward(x);
  return torch::log_softmax(x, 1);
}

}  // namespace pjemu::trainer
