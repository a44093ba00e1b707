// The fused relu + max-pool must equal torch's relu + max_pool2d bit for bit, forward and
// backward, including ties and windows with no positive value.
#include "trainer/relu_pool.h"

#include <torch/torch.h>

// LibTorch pulls in glog, whose CHECK macro would shadow Catch's.
#undef CHECK
#include <catch2/catch.hpp>

namespace pjemu::trainer {
namespace {

void Compare(torch::Tensor x) {
  torch::Tensor a = x.clone().requires_grad_(true);
  torch::Tensor b = x.clone().requires_grad_(true);
  torch::Tensor ya = ReluMaxPool2x2(a);
  torch::Tensor yb = torch::max_pool2d(torch::relu(b), 2, 2);
  REQUIRE(torch::equal(ya, yb));
  torch::Tensor g = torch::randn(ya.sizes());
  ya.backward(g);
  yb.backward(g);
  CHECK(torch::equal(a.grad(), b.grad()));
}

TEST_CASE("ReluMaxPool2x2 equals relu + max_pool2d", "[trainer]") {
  torch::manual_seed(3);
  Compare(torch::randn({4, 3, 24, 24}));
  // Many ties and many all-negative windows: small integers.
  Compare(torch::randint(-2, 3, {2, 5, 8, 8}).to(torch::kFloat32));
  Compare(torch::zeros({1, 1, 4, 4}));
}

}  // namespace
}  // namespace pjemu::trainer
