// FlatSgd must reproduce torch's SGD with momentum bit for bit (the loss lines depend on it).
#include "trainer/flat_sgd.h"

#include <torch/torch.h>

#include "trainer/model.h"

// LibTorch pulls in glog, whose CHECK macro would shadow Catch's.
#undef CHECK
#include <catch2/catch.hpp>

namespace pjemu::trainer {
namespace {

TEST_CASE("FlatSgd equals torch::optim::SGD with momentum", "[trainer]") {
  torch::manual_seed(1);
  Net a;
  torch::manual_seed(1);
  Net b;
  FlatSgd flat(*a, 0.01, 0.5);
  torch::optim::SGD ref(b->parameters(), torch::optim::SGDOptions(0.01).momentum(0.5));
  torch::manual_seed(7);
  for (int step = 0; step < 4; ++step) {
    torch::Tensor x = torch::rand({8, 1, 28, 28});
    torch::Tensor y = torch::randint(0, 10, {8}, torch::kInt64);
    flat.ZeroGrad();
    torch::nll_loss(a->forward(x), y).backward();
    flat.Step();
    ref.zero_grad();
    torch::nll_loss(b->forward(x), y).backward();
    ref.step();
  }
  auto pa = a->parameters(), pb = b->parameters();
  REQUIRE(pa.size() == pb.size());
  for (size_t i = 0; i < pa.size(); ++i) CHECK(torch::equal(pa[i], pb[i]));
  // The parameters really live in the flat buffer.
  CHECK(flat.params().numel() == 431080);
  CHECK(pa[0].data_ptr<float>() == flat.params().data_ptr<float>());
  CHECK(flat.momentum().defined());
}

}  // namespace
}  // namespace pjemu::trainer
