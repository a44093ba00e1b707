#include "trainer/fast_net.h"

#include <ATen/Parallel.h>
#include <torch/torch.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "trainer/fast_kernels.h"

namespace pjemu::trainer {
namespace {

constexpr int64_t kPix1 = 24 * 24, kPix2 = 8 * 8;  // conv output pixels per sample
// Both convolutions run in blocks of this many samples: a block's im2col matrix and column
// gradients (conv2: kBlock*64 x 500 floats, 0.5 MB) stay in L2 between their producer and
// consumer (README, Speed work 12 and 16; blocks of 2 and 8 measured slower).
constexpr int64_t kBlock = 4;
// conv1's output [N,24,24,20] -> pool [N,12,12,20] channels-last (conv2's input).
constexpr fast::PoolShape kPool1{24, 24, 20, 12 * 12 * 20, 20, 1};
// conv2's output [N,8,8,50] -> pool written as [N,50,4,4] = fc1's input in torch's flatten order.
constexpr fast::PoolShape kPool2{8, 8, 50, 800, 1, 16};

torch::Tensor Param(const torch::nn::Module& m, const std::string& name) {
  // named_parameters() returns a new dict: keep it alive while `p` points into it (a temporary
  // here was a use-after-free, found by ASan).
  const auto params = m.named_parameters();
  const torch::Tensor* p = params.find(name);
  TORCH_CHECK(p != nullptr, "FastNet: the model has no parameter ", name);
  return *p;
}

torch::Tensor Grad(const torch::Tensor& p) {
  torch::Tensor g = p.grad();
  TORCH_CHECK(g.defined() && g.is_contiguous(), "FastNet: parameters need bound .grad() tensors");
  return g;
}

float* F(const torch::Tensor& t) { return t.data_ptr<float>(); }

// out = a @ b, or a^T @ b with transpose_a, through the BLAS. (oneDNN's dnnl_sgemm was ~1 ms a
// step faster for these shapes but corrupted the heap in some runs: README, Speed work 8.)
void MatMul(torch::Tensor out, const torch::Tensor& a, bool transpose_a, const torch::Tensor& b) {
  at::mm_out(out, transpose_a ? a.t() : a, b);
}

}  // namespace

// One thread's forward and backward over its share of the batch, into its own buffers.
class FastNet::Engine {
 public:
  // Buffers for up to `max_n` samples; writes its gradients into `grads`.
  Engine(const Tensors& params, const Tensors& grads, int64_t max_n);

  // Samples [0, n) at x (28x28 each) and target, part of a batch of `batch` samples: writes the
  // gradients of the batch's mean loss restricted to them; returns the sum of their losses.
  double Step(const float* x, const int64_t* target, int64_t n, int64_t batch);

 private:
  // conv1 (im2col + GEMM) -> pool1 -> conv2 (im2col + GEMM) -> pool2 into fc1's input, block
  // by block of samples.
  void ConvForward(const float* x, int64_t n);
  // From fc1's input gradient, block by block: pool2's backward, conv2's input gradient (GEMM +
  // col2im), pool1's backward, both convolutions' weight gradients; and the bias gradients.
  void ConvBackward(const float* x, int64_t n);

  Tensors p_, g_;
  int64_t max_n_;
  // Activations and gradients, sized for max_n_.
  torch::Tensor cols1_, y1_, p1_, cols2_, w2p_, y2_, f_, h_, z_, dz_, dh_, df_, dy2_, gw2p_,
      dcols2_, dp1_, dy1_;
  torch::Tensor arg1_, arg2_;  // uint8 pool winners
};

FastNet::Engine::Engine(const Tensors& params, const Tensors& grads, int64_t max_n)
    : p_(params), g_(grads), max_n_(max_n) {
  const auto f32 = torch::TensorOptions().dtype(torch::kFloat32);
  const int64_t b = max_n;
  cols1_ = torch::empty({kBlock * kPix1, 25}, f32);  // one block's
  y1_ = torch::empty({b * kPix1, 20}, f32);
  p1_ = torch::empty({b, 12, 12, 20}, f32);
  cols2_ = torch::empty({kBlock * kPix2, 500}, f32);  // one block's
  w2p_ = torch::empty({50, 500}, f32);
  y2_ = torch::empty({b * kPix2, 50}, f32);
  f_ = torch::empty({b, 800}, f32);
  h_ = torch::empty({b, 500}, f32);
  z_ = torch::empty({b, 10}, f32);
  dz_ = torch::empty({b, 10}, f32);
  dh_ = torch::empty({b, 500}, f32);
  df_ = torch::empty({b, 800}, f32);
  dy2_ = torch::empty({b * kPix2, 50}, f32);
  gw2p_ = torch::empty({50, 500}, f32);
  dcols2_ = torch::empty({kBlock * kPix2, 500}, f32);
  dp1_ = torch::empty({b, 12, 12, 20}, f32);
  dy1_ = torch::empty({b * kPix1, 20}, f32);
  arg1_ = torch::empty({b * 12 * 12 * 20}, torch::kUInt8);
  arg2_ = torch::empty({b * 4 * 4 * 50}, torch::kUInt8);
}

void FastNet::Engine::ConvForward(const float* x, int64_t n) {
  uint8_t* arg1 = arg1_.data_ptr<uint8_t>();
  uint8_t* arg2 = arg2_.data_ptr<uint8_t>();
  const torch::Tensor w1 = p_.w1.view({20, 25}).t();
  for (int64_t b0 = 0; b0 < n; b0 += kBlock) {
    const int64_t b1 = std::min(n, b0 + kBlock);
    fast::Im2ColConv1(x, b0, b1, F(cols1_));
    torch::Tensor y1 = y1_.narrow(0, b0 * kPix1, (b1 - b0) * kPix1);
    at::mm_out(y1, cols1_.narrow(0, 0, (b1 - b0) * kPix1), w1);
    fast::BiasReluPool(kPool1, F(y1_), F(p_.b1), b0, b1, F(p1_), arg1);
    fast::Im2ColConv2(F(p1_), b0, b1, F(cols2_));
    torch::Tensor y2 = y2_.narrow(0, b0 * kPix2, (b1 - b0) * kPix2);
    at::mm_out(y2, cols2_.narrow(0, 0, (b1 - b0) * kPix2), w2p_.t());
    fast::BiasReluPool(kPool2, F(y2_), F(p_.b2), b0, b1, F(f_), arg2);
  }
}

void FastNet::Engine::ConvBackward(const float* x, int64_t n) {
  const uint8_t* arg1 = arg1_.data_ptr<uint8_t>();
  const uint8_t* arg2 = arg2_.data_ptr<uint8_t>();
  g_.b2.zero_();  // the pool backward passes add the bias gradients into them
  g_.b1.zero_();
  torch::Tensor gw1 = g_.w1.view({20, 25});
  for (int64_t b0 = 0; b0 < n; b0 += kBlock) {
    const int64_t b1 = std::min(n, b0 + kBlock), rows2 = (b1 - b0) * kPix2,
                  rows1 = (b1 - b0) * kPix1;
    fast::BiasReluPoolBackward(kPool2, F(df_), arg2, b0, b1, F(dy2_), F(g_.b2));
    const torch::Tensor dy2 = dy2_.narrow(0, b0 * kPix2, rows2);
    MatMul(dcols2_.narrow(0, 0, rows2), dy2, false, w2p_);
    fast::Col2ImConv2(F(dcols2_), b0, b1, F(dp1_));
    fast::BiasReluPoolBackward(kPool1, F(dp1_), arg1, b0, b1, F(dy1_), F(g_.b1));
    // Both weight gradients block by block from the block's columns, made again: a hot block
    // costs less than writing and reading back the share's whole matrices (8 MB for conv2).
    fast::Im2ColConv2(F(p1_), b0, b1, F(cols2_));
    fast::Im2ColConv1(x, b0, b1, F(cols1_));
    const torch::Tensor cols2 = cols2_.narrow(0, 0, rows2), cols1 = cols1_.narrow(0, 0, rows1);
    const torch::Tensor dy1 = dy1_.narrow(0, b0 * kPix1, rows1);
    if (b0 == 0) {
      MatMul(gw2p_, dy2, true, cols2);
      MatMul(gw1, dy1, true, cols1);
    } else {
      gw2p_.addmm_(dy2.t(), cols2);
      gw1.addmm_(dy1.t(), cols1);
    }
  }
  fast::UnpermuteConv2Weight(F(gw2p_), F(g_.w2));
}

double FastNet::Engine::Step(const float* x, const int64_t* target, int64_t n, int64_t batch) {
  TORCH_CHECK(n >= 1 && n <= max_n_, "FastNet: bad share of the batch");
  torch::NoGradGuard no_grad;  // grad mode is per thread: this may be an OpenMP worker
  auto rows = [](const torch::Tensor& t, int64_t k) { return t.narrow(0, 0, k); };
  torch::Tensor f = rows(f_, n), h = rows(h_, n), z = rows(z_, n), dz = rows(dz_, n);
  torch::Tensor dh = rows(dh_, n), df = rows(df_, n);

  // conv1, pool1, conv2 and pool2 in blocks of samples.
  fast::PermuteConv2Weight(F(p_.w2), F(w2p_));
  ConvForward(x, n);
  // fc1 + relu, fc2, log-softmax + NLL.
  at::addmm_out(h, p_.fb1, f, p_.fw1.t());
  float* hp = F(h);
  for (int64_t i = 0; i < n * 500; ++i) hp[i] = hp[i] > 0 ? hp[i] : 0.0f;
  at::addmm_out(z, p_.fb2, h, p_.fw2.t());
  const double loss = fast::LogSoftmaxNll(F(z), target, 10, batch, 0, n, F(dz));

  // Backward, last layer first.
  MatMul(g_.fw2, dz, true, h);
  at::sum_out(g_.fb2, dz, 0);
  at::mm_out(dh, dz, p_.fw2);
  float* dhp = F(dh);
  for (int64_t i = 0; i < n * 500; ++i) dhp[i] = hp[i] > 0 ? dhp[i] : 0.0f;
  MatMul(g_.fw1, dh, true, f);
  at::sum_out(g_.fb1, dh, 0);
  at::mm_out(df, dh, p_.fw1);
  ConvBackward(x, n);
  return loss;
}

namespace {

FastNet::Tensors ModelTensors(torch::nn::Module& m, bool grads) {
  auto get = [&](const char* name) {
    const torch::Tensor p = Param(m, name);
    return grads ? Grad(p) : p;
  };
  return {get("conv1.weight"), get("conv1.bias"), get("conv2.weight"), get("conv2.bias"),
          get("fc1.weight"),   get("fc1.bias"),   get("fc2.weight"),   get("fc2.bias")};
}

std::vector<torch::Tensor*> List(FastNet::Tensors& t) {
  return {&t.w1, &t.b1, &t.w2, &t.b2, &t.fw1, &t.fb1, &t.fw2, &t.fb2};
}

}  // namespace

FastNet::FastNet(torch::nn::Module& model, int64_t max_batch)
    : max_batch_(max_batch), model_grads_(ModelTensors(model, true)) {
  // Concurrent calls into a multi-threaded OpenBLAS are not safe (and would oversubscribe): one
  // engine per thread only when the BLAS is held to one thread (threads.h does that unless
  // OPENBLAS_NUM_THREADS says otherwise; the BLAS then threads each GEMM itself).
  const char* blas_threads = std::getenv("OPENBLAS_NUM_THREADS");
  const bool blas_single = blas_threads == nullptr || std::string(blas_threads) == "1";
  const int64_t engines = std::clamp<int64_t>(blas_single ? at::get_num_threads() : 1, 1,
                                              std::max<int64_t>(1, max_batch));
  const int64_t share = (max_batch + engines - 1) / engines;
  const Tensors params = ModelTensors(model, false);
  engines_.push_back(std::make_unique<Engine>(params, model_grads_, share));
  for (int64_t e = 1; e < engines; ++e) {
    Tensors grads = model_grads_;
    for (torch::Tensor* g : List(grads)) *g = torch::empty_like(*g);
    share_grads_.push_back(grads);
    engines_.push_back(std::make_unique<Engine>(params, grads, share));
  }
}

FastNet::~FastNet() = default;

float FastNet::TrainStep(const torch::Tensor& x_in, const torch::Tensor& target_in) {
  torch::NoGradGuard no_grad;
  const torch::Tensor x = x_in.contiguous();
  const torch::Tensor target = target_in.contiguous();
  const int64_t bs = x.size(0);
  TORCH_CHECK(bs >= 1 && bs <= max_batch_ && x.numel() == bs * 28 * 28, "FastNet: bad batch");
  // Equal shares but the last; a batch smaller than the engines uses fewer of them.
  const int64_t engines = static_cast<int64_t>(engines_.size());
  const int64_t share = (bs + engines - 1) / engines, shares = (bs + share - 1) / share;
  std::vector<double> loss(shares, 0.0);
  auto run = [&](int64_t e) {
    const int64_t lo = e * share, n = std::min(bs, lo + share) - lo;
    loss[e] = engines_[e]->Step(F(x) + lo * 28 * 28, target.data_ptr<int64_t>() + lo, n, bs);
  };
  if (shares == 1) {
    run(0);
  } else {
    at::parallel_for(0, shares, 1, [&](int64_t e0, int64_t e1) {
      for (int64_t e = e0; e < e1; ++e) run(e);
    });
  }
  // Engine 0 wrote the model's gradients; the other shares' are added in engine order.
  double total = loss[0];
  for (int64_t e = 1; e < shares; ++e) {
    std::vector<torch::Tensor*> mine = List(model_grads_), theirs = List(share_grads_[e - 1]);
    for (size_t i = 0; i < mine.size(); ++i) mine[i]->add_(*theirs[i]);
    total += loss[e];
  }
  return static_cast<float>(total / static_cast<double>(bs));
}

}  // namespace pjemu::trainer
