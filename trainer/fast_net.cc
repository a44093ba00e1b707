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
// conv2 runs in blocks of this many samples, each on one thread: a block's im2col matrix and
// input-gradient columns (kBlock*64 x 500 floats, 0.5 MB) stay in L2 between their producer
// and consumer (README, Speed work 12).
constexpr int64_t kBlock = 4;
// Per-thread bias-gradient partials: conv2's 50 at 0, conv1's 20 at kPartialConv1.
constexpr int64_t kPartialConv1 = 64, kPartialStride = 128;
// conv1's output [N,24,24,20] -> pool [N,12,12,20] channels-last (conv2's input).
constexpr fast::PoolShape kPool1{24, 24, 20, 12 * 12 * 20, 20, 1};
// conv2's output [N,8,8,50] -> pool written as [N,50,4,4] = fc1's input in torch's flatten order.
constexpr fast::PoolShape kPool2{8, 8, 50, 800, 1, 16};

torch::Tensor Param(torch::nn::Module& m, const std::string& name) {
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

FastNet::FastNet(torch::nn::Module& model, int64_t max_batch)
    : threads_(std::max(1, at::get_num_threads())), max_batch_(max_batch) {
  // Concurrent calls into a multi-threaded OpenBLAS are not safe (and would oversubscribe):
  // split the GEMMs over our threads only when the BLAS is held to one thread (threads.h does
  // that unless OPENBLAS_NUM_THREADS says otherwise; the BLAS then threads each GEMM itself).
  const char* blas_threads = std::getenv("OPENBLAS_NUM_THREADS");
  split_gemms_ = threads_ > 1 && (blas_threads == nullptr || std::string(blas_threads) == "1");
  w1_ = Param(model, "conv1.weight");
  b1_ = Param(model, "conv1.bias");
  w2_ = Param(model, "conv2.weight");
  b2_ = Param(model, "conv2.bias");
  fw1_ = Param(model, "fc1.weight");
  fb1_ = Param(model, "fc1.bias");
  fw2_ = Param(model, "fc2.weight");
  fb2_ = Param(model, "fc2.bias");
  gw1_ = Grad(w1_);
  gb1_ = Grad(b1_);
  gw2_ = Grad(w2_);
  gb2_ = Grad(b2_);
  gfw1_ = Grad(fw1_);
  gfb1_ = Grad(fb1_);
  gfw2_ = Grad(fw2_);
  gfb2_ = Grad(fb2_);
  const auto f32 = torch::TensorOptions().dtype(torch::kFloat32);
  const int64_t b = max_batch;
  cols1_ = torch::empty({b * kPix1, 25}, f32);
  y1_ = torch::empty({b * kPix1, 20}, f32);
  p1_ = torch::empty({b, 12, 12, 20}, f32);
  cols2_ = torch::empty({b * kPix2, 500}, f32);
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
  dcols2_ = torch::empty({b * kPix2, 500}, f32);
  dp1_ = torch::empty({b, 12, 12, 20}, f32);
  dy1_ = torch::empty({b * kPix1, 20}, f32);
  partial_ = torch::empty({threads_, 500 * 800}, f32);  // the largest weight gradient
  bias_partial_ = torch::empty({threads_, kPartialStride}, f32);
  arg1_ = torch::empty({b * 12 * 12 * 20}, torch::kUInt8);
  arg2_ = torch::empty({b * 4 * 4 * 50}, torch::kUInt8);
}

void FastNet::ForChunks(int64_t n, const std::function<void(int64_t, int64_t, int)>& fn) {
  if (threads_ == 1 || n < threads_) {
    fn(0, n, 0);
    return;
  }
  const int64_t grain = (n + threads_ - 1) / threads_;
  at::parallel_for(0, n, grain, [&](int64_t n0, int64_t n1) {
    fn(n0, n1, std::min(at::get_thread_num(), threads_ - 1));
  });
}

void FastNet::Gemm(torch::Tensor out, const torch::Tensor& a, const torch::Tensor& b,
                   const torch::Tensor* bias) {
  auto one = [&](torch::Tensor o, const torch::Tensor& x) {
    if (bias != nullptr) {
      at::addmm_out(o, *bias, x, b);
    } else {
      at::mm_out(o, x, b);
    }
  };
  const int64_t rows = a.size(0);
  if (!split_gemms_ || rows < 16 * threads_) {
    one(out, a);
    return;
  }
  ForChunks(rows, [&](int64_t r0, int64_t r1, int) {
    one(out.narrow(0, r0, r1 - r0), a.narrow(0, r0, r1 - r0));
  });
}

void FastNet::GemmAtB(torch::Tensor out, const torch::Tensor& a, const torch::Tensor& b) {
  const int64_t k = a.size(0);
  if (!split_gemms_ || k < 16 * threads_) {
    MatMul(out, a, true, b);
    return;
  }
  const int64_t m = out.size(0), n = out.size(1);
  // The chunk of thread 0 goes to `out`, the others' to their partial rows; OpenMP may run fewer
  // chunks than threads_ (a smaller team), so only the partials written are summed.
  std::vector<char> written(threads_, 0);
  ForChunks(k, [&](int64_t k0, int64_t k1, int t) {
    torch::Tensor dst = t == 0 ? out : partial_[t].narrow(0, 0, m * n).view({m, n});
    MatMul(dst, a.narrow(0, k0, k1 - k0), true, b.narrow(0, k0, k1 - k0));
    written[t] = 1;
  });
  TORCH_CHECK(written[0], "FastNet: thread 0 ran no chunk");
  float* o = F(out);
  for (int t = 1; t < threads_; ++t) {
    if (!written[t]) continue;
    const float* p = F(partial_) + t * partial_.size(1);
    for (int64_t i = 0; i < m * n; ++i) o[i] += p[i];
  }
}

void FastNet::ForSamples(int64_t n, const std::function<void(int64_t, int64_t, int)>& fn) {
  if (split_gemms_) {
    ForChunks(n, fn);
  } else {
    fn(0, n, 0);
  }
}

void FastNet::SumPartials(int64_t c, int64_t offset, float* out) {
  std::memset(out, 0, c * sizeof(float));
  const float* p = F(bias_partial_) + offset;
  for (int t = 0; t < threads_; ++t) {
    for (int64_t i = 0; i < c; ++i) out[i] += p[t * kPartialStride + i];
  }
}

void FastNet::Conv2Forward(int64_t bs) {
  uint8_t* arg1 = arg1_.data_ptr<uint8_t>();
  uint8_t* arg2 = arg2_.data_ptr<uint8_t>();
  ForSamples(bs, [&](int64_t n0, int64_t n1, int) {
    fast::BiasReluPool(kPool1, F(y1_), F(b1_), n0, n1, F(p1_), arg1);
    for (int64_t b0 = n0; b0 < n1; b0 += kBlock) {
      const int64_t b1 = std::min(n1, b0 + kBlock);
      fast::Im2ColConv2(F(p1_), b0, b1, F(cols2_));
      torch::Tensor y2 = y2_.narrow(0, b0 * kPix2, (b1 - b0) * kPix2);
      at::mm_out(y2, cols2_.narrow(0, b0 * kPix2, (b1 - b0) * kPix2), w2p_.t());
      fast::BiasReluPool(kPool2, F(y2_), F(b2_), b0, b1, F(f_), arg2);
    }
  });
}

void FastNet::Conv2Backward(int64_t bs) {
  const uint8_t* arg1 = arg1_.data_ptr<uint8_t>();
  const uint8_t* arg2 = arg2_.data_ptr<uint8_t>();
  bias_partial_.zero_();
  ForSamples(bs, [&](int64_t n0, int64_t n1, int t) {
    float* partial = F(bias_partial_) + t * kPartialStride;
    for (int64_t b0 = n0; b0 < n1; b0 += kBlock) {
      const int64_t b1 = std::min(n1, b0 + kBlock);
      fast::BiasReluPoolBackward(kPool2, F(df_), arg2, b0, b1, F(dy2_), partial);
      MatMul(dcols2_.narrow(0, b0 * kPix2, (b1 - b0) * kPix2),
             dy2_.narrow(0, b0 * kPix2, (b1 - b0) * kPix2), false, w2p_);
      fast::Col2ImConv2(F(dcols2_), b0, b1, F(dp1_));
      fast::BiasReluPoolBackward(kPool1, F(dp1_), arg1, b0, b1, F(dy1_), partial + kPartialConv1);
    }
  });
  SumPartials(50, 0, F(gb2_));
  SumPartials(20, kPartialConv1, F(gb1_));
  GemmAtB(gw2p_, dy2_.narrow(0, 0, bs * kPix2), cols2_.narrow(0, 0, bs * kPix2));
  fast::UnpermuteConv2Weight(F(gw2p_), F(gw2_));
}

float FastNet::TrainStep(const torch::Tensor& x_in, const torch::Tensor& target_in) {
  torch::NoGradGuard no_grad;
  const torch::Tensor x = x_in.contiguous();
  const torch::Tensor target = target_in.contiguous();
  const int64_t bs = x.size(0);
  TORCH_CHECK(bs <= max_batch_ && x.numel() == bs * 28 * 28, "FastNet: bad batch");
  auto rows = [](const torch::Tensor& t, int64_t n) { return t.narrow(0, 0, n); };
  const torch::Tensor cols1 = rows(cols1_, bs * kPix1), y1 = rows(y1_, bs * kPix1);
  const torch::Tensor f = rows(f_, bs), h = rows(h_, bs), z = rows(z_, bs), dz = rows(dz_, bs);
  const torch::Tensor dh = rows(dh_, bs), df = rows(df_, bs), dy1 = rows(dy1_, bs * kPix1);
  const float* xp = F(x);

  // conv1 (im2col + GEMM); pool1, conv2 and pool2 in blocks of samples.
  ForChunks(bs, [&](int64_t n0, int64_t n1, int) { fast::Im2ColConv1(xp, n0, n1, F(cols1)); });
  Gemm(y1, cols1, w1_.view({20, 25}).t());
  fast::PermuteConv2Weight(F(w2_), F(w2p_));
  Conv2Forward(bs);
  // fc1 + relu, fc2, log-softmax + NLL.
  Gemm(h, f, fw1_.t(), &fb1_);
  float* hp = F(h);
  for (int64_t i = 0; i < bs * 500; ++i) hp[i] = hp[i] > 0 ? hp[i] : 0.0f;
  Gemm(z, h, fw2_.t(), &fb2_);
  const double loss = fast::LogSoftmaxNll(F(z), target.data_ptr<int64_t>(), 10, bs, 0, bs, F(dz));

  // Backward, last layer first.
  GemmAtB(gfw2_, dz, h);
  at::sum_out(gfb2_, dz, 0);
  Gemm(dh, dz, fw2_);
  float* dhp = F(dh);
  for (int64_t i = 0; i < bs * 500; ++i) dhp[i] = hp[i] > 0 ? dhp[i] : 0.0f;
  GemmAtB(gfw1_, dh, f);
  at::sum_out(gfb1_, dh, 0);
  Gemm(df, dh, fw1_);
  Conv2Backward(bs);
  GemmAtB(gw1_.view({20, 25}), dy1, cols1);
  return static_cast<float>(loss / static_cast<double>(bs));
}

}  // namespace pjemu::trainer
