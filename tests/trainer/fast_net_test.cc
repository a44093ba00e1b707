// The fast step (--kernels=fast) against torch's modules and autograd: the same loss and every
// parameter gradient within float summation-order tolerance, on full and short batches, with one
// and two threads; the fused bias + relu + pool equals ATen's relu + max_pool2d exactly.
#include "trainer/fast_net.h"

#include <ATen/Parallel.h>
#include <torch/torch.h>

#include "trainer/fast_kernels.h"
#include "trainer/flat_sgd.h"
#include "trainer/model.h"
#include "trainer/threads.h"

// LibTorch pulls in glog, whose CHECK macro would shadow Catch's.
#undef CHECK
#include <catch2/catch.hpp>

namespace pjemu::trainer {
namespace {

// Relative L2 error of `got` against `want`.
double RelErr(const torch::Tensor& got, const torch::Tensor& want) {
  return (got - want).norm().item<double>() / (want.norm().item<double>() + 1e-30);
}

void CompareStep(int threads, int64_t max_batch, int64_t batch, uint64_t seed) {
  ApplyThreadPlan(1);  // OpenBLAS to one thread, as the trainer's main does
  const int saved = at::get_num_threads();
  at::set_num_threads(threads);
  torch::manual_seed(seed);
  Net fast_model;
  Net ref_model;
  {
    torch::NoGradGuard no_grad;
    auto src = fast_model->parameters();
    auto dst = ref_model->parameters();
    for (size_t i = 0; i < src.size(); ++i) dst[i].copy_(src[i]);
  }
  FlatSgd sgd(*fast_model, 0.01, 0.5);  // binds the .grad() views FastNet writes
  sgd.grads().fill_(7.0f);              // must be overwritten, not accumulated
  FastNet fast(*fast_model, max_batch);
  // Images like ToTensor's: [0, 1], many exact zeros (FashionMNIST's background).
  torch::Tensor x = torch::rand({batch, 1, 28, 28}).sub_(0.3).clamp_min_(0);
  torch::Tensor target = torch::randint(0, 10, {batch}, torch::kInt64);

  const float loss = fast.TrainStep(x, target);
  torch::Tensor ref_loss = torch::nll_loss(ref_model->forward(x), target);
  ref_loss.backward();
  CHECK(loss == Approx(ref_loss.item<float>()).epsilon(1e-5));
  auto got = fast_model->named_parameters();
  auto want = ref_model->named_parameters();
  for (const auto& p : want) {
    INFO(p.key() << " threads=" << threads << " batch=" << batch);
    CHECK(RelErr(got[p.key()].grad(), p.value().grad()) < 1e-4);
  }
  at::set_num_threads(saved);
}

TEST_CASE("FastNet gradients equal autograd's on the reference modules", "[trainer]") {
  CompareStep(1, 64, 64, 11);
  CompareStep(1, 64, 17, 12);  // the epoch's short last batch
  CompareStep(2, 64, 64, 13);
  CompareStep(2, 32, 3, 14);
}

TEST_CASE("FastNet's second step sees the updated weights", "[trainer]") {
  torch::manual_seed(5);
  Net fast_model;
  Net ref_model;
  {
    torch::NoGradGuard no_grad;
    auto src = fast_model->parameters();
    auto dst = ref_model->parameters();
    for (size_t i = 0; i < src.size(); ++i) dst[i].copy_(src[i]);
  }
  FlatSgd fast_sgd(*fast_model, 0.1, 0.5);
  FlatSgd ref_sgd(*ref_model, 0.1, 0.5);
  FastNet fast(*fast_model, 16);
  for (int step = 0; step < 3; ++step) {
    torch::Tensor x = torch::rand({16, 1, 28, 28});
    torch::Tensor target = torch::randint(0, 10, {16}, torch::kInt64);
    fast.TrainStep(x, target);
    fast_sgd.Step();
    ref_sgd.ZeroGrad();
    torch::nll_loss(ref_model->forward(x), target).backward();
    ref_sgd.Step();
  }
  CHECK(RelErr(fast_sgd.params(), ref_sgd.params()) < 1e-5);
}

// [N,H,W,C] <-> the kernels' split row order [N,H,2,W/2,C] (fast_kernels.h).
torch::Tensor ToSplit(const torch::Tensor& y) {
  const int64_t n = y.size(0), h = y.size(1), w = y.size(2), c = y.size(3);
  return y.view({n, h, w / 2, 2, c}).permute({0, 1, 3, 2, 4}).contiguous();
}
torch::Tensor FromSplit(const torch::Tensor& y, int64_t w) {
  const int64_t n = y.size(0), h = y.size(1), c = y.size(-1);
  return y.view({n, h, 2, w / 2, c}).permute({0, 1, 3, 2, 4}).reshape({n, h, w, c});
}

// y [N,H,W,C] (natural order) through the kernels; out is compared in the shape's layout.
void ComparePool(const fast::PoolShape& s, const torch::Tensor& y, const torch::Tensor& b,
                 bool channels_last_out) {
  const int64_t n = y.size(0), c = s.c, oh = s.h / 2, ow = s.w / 2;
  torch::Tensor ys = ToSplit(y);
  torch::Tensor out = torch::empty({n, c * oh * ow});
  torch::Tensor arg = torch::empty({n * oh * ow * c}, torch::kUInt8);
  fast::BiasReluPool(s, ys.data_ptr<float>(), b.data_ptr<float>(), 0, n, out.data_ptr<float>(),
                     arg.data_ptr<uint8_t>());
  torch::Tensor nchw = y.permute({0, 3, 1, 2}).contiguous().requires_grad_(true);
  torch::Tensor want = torch::max_pool2d(torch::relu(nchw + b.view({1, c, 1, 1})), 2, 2);
  torch::Tensor want_out = channels_last_out ? want.permute({0, 2, 3, 1}) : want;
  REQUIRE(torch::equal(out, want_out.reshape({n, c * oh * ow})));

  torch::Tensor g = torch::randn({n, c * oh * ow});
  torch::Tensor dy = torch::empty_like(ys);
  torch::Tensor db = torch::zeros({c});
  fast::BiasReluPoolBackward(s, g.data_ptr<float>(), arg.data_ptr<uint8_t>(), 0, n,
                             dy.data_ptr<float>(), db.data_ptr<float>());
  torch::Tensor gw =
      channels_last_out ? g.view({n, oh, ow, c}).permute({0, 3, 1, 2}) : g.view({n, c, oh, ow});
  want.backward(gw);
  CHECK(torch::equal(FromSplit(dy, s.w), nchw.grad().permute({0, 2, 3, 1})));
  CHECK(RelErr(db, nchw.grad().sum({0, 2, 3})) < 1e-6);
}

TEST_CASE("BiasReluPool equals relu(y + b) then max_pool2d, ties included", "[trainer]") {
  torch::manual_seed(3);
  // Small integers: many ties and many windows cut by relu.
  SECTION("conv2's shape, output as fc1's [N,50,4,4]") {
    torch::Tensor y = torch::randint(-3, 4, {3, 8, 8, 50}).to(torch::kFloat32);
    torch::Tensor b = torch::randint(-1, 2, {50}).to(torch::kFloat32);
    ComparePool(fast::PoolShape{8, 8, 50, 800, 1, 16}, y, b, false);
  }
  SECTION("conv1's shape, output channels-last [N,12,12,20]") {
    torch::Tensor y = torch::randint(-3, 4, {2, 24, 24, 20}).to(torch::kFloat32);
    torch::Tensor b = torch::randint(-1, 2, {20}).to(torch::kFloat32);
    ComparePool(fast::PoolShape{24, 24, 20, 12 * 12 * 20, 20, 1}, y, b, true);
  }
}

}  // namespace
}  // namespace pjemu::trainer
