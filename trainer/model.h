// The reference mnist.py convnet: conv 1->20 k5, conv 20->50 k5, fc 800->500, fc 500->10, relu,
// max-pool 2, log-softmax. Registered in the reference's order, so after torch::manual_seed(seed)
// it holds the same initial weights as the Python Net(). Flow: TrainLoop owns one per process.
// Thread safety: a torch module; use from one thread.
#pragma once

#include <torch/nn.h>

namespace pjemu::trainer {

class NetImpl : public torch::nn::Module {
 public:
  NetImpl();
  // x: [B,1,28,28] float -> [B,10] log-probabilities.
  torch::Tensor forward(torch::Tensor x);

 private:
  torch::nn::Conv2d conv1_{nullptr}, conv2_{nullptr};
  torch::nn::Linear fc1_{nullptr}, fc2_{nullptr};
};
TORCH_MODULE(Net);

}  // namespace pjemu::trainer
