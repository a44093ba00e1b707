// The fast training step (--kernels=fast, what --kernels=auto picks): forward and backward of
// the reference convnet (model.h) written out by hand over buffers allocated once. Both
// convolutions are im2col in channels-last order (rows in the split order of fast_kernels.h)
// plus GEMMs for forward, input gradient and weight gradient: conv1 over the whole batch, conv2
// block by block of 4 samples (M=256, K=500, N=50) with its pools, so each block's matrices stay
// in L2, its weight gradient one GEMM over the batch; bias, relu and the 2x2 max-pool are one
// pass; the fc layers are direct GEMMs; the loss is log-softmax + NLL in one pass. The GEMMs go
// to the BLAS through ATen (at::mm_out / addmm_out). With T > 1
// intra-op threads the work is split by samples or rows (or by the reduction dimension for
// weight gradients) when the BLAS itself is held to one thread (threads.h: call ApplyThreadPlan
// first; concurrent calls into a multi-threaded OpenBLAS race).
// Same values as the reference kernels up to float summation order (tested against ATen).
// Flow: train_loop.cc -> FastNet::TrainStep, then the gradient all-reduce and FlatSgd.
// Thread safety: one thread calls it; it uses at::parallel_for inside.
#pragma once

#include <torch/nn/module.h>
#include <torch/types.h>

#include <functional>

namespace pjemu::trainer {

class FastNet {
 public:
  // `model` is a NetImpl whose parameters have .grad() tensors (FlatSgd binds them); they must
  // stay alive and in place. `max_batch` bounds the batch size TrainStep accepts.
  FastNet(torch::nn::Module& model, int64_t max_batch);

  // x: [B,1,28,28] float (B <= max_batch), target: [B] int64. Writes (does not accumulate) every
  // parameter's gradient of the mean NLL loss and returns that loss.
  float TrainStep(const torch::Tensor& x, const torch::Tensor& target);

 private:
  // out = a @ b (+ bias), rows split over the threads.
  void Gemm(torch::Tensor out, const torch::Tensor& a, const torch::Tensor& b,
            const torch::Tensor* bias = nullptr);
  // out = a^T @ b, the reduction (rows of a and b) split over the threads.
  void GemmAtB(torch::Tensor out, const torch::Tensor& a, const torch::Tensor& b);
  // fn(n0, n1, thread) over [0, n) in one chunk per thread.
  void ForChunks(int64_t n, const std::function<void(int64_t, int64_t, int)>& fn);
  // fn over the samples [0, n): in chunks over the threads when the GEMMs may be split (fn
  // calls the BLAS), else in one call on this thread.
  void ForSamples(int64_t n, const std::function<void(int64_t, int64_t, int)>& fn);
  // Sums the per-thread partial bias gradients at `offset` of each thread's row into out[c].
  void SumPartials(int64_t c, int64_t offset, float* out);
  // pool1 -> conv2 (im2col + GEMM) -> pool2 into fc1's input, block by block of samples.
  void Conv2Forward(int64_t bs);
  // From fc1's input gradient: pool2's backward, conv2's input gradient (GEMM + col2im) and
  // pool1's backward block by block, then conv2's weight and both bias gradients.
  void Conv2Backward(int64_t bs);

  int threads_;
  bool split_gemms_;  // GEMMs split over threads_ (the BLAS is held to one thread)
  int64_t max_batch_;
  torch::Tensor w1_, b1_, w2_, b2_, fw1_, fb1_, fw2_, fb2_;          // parameters
  torch::Tensor gw1_, gb1_, gw2_, gb2_, gfw1_, gfb1_, gfw2_, gfb2_;  // their gradients
  // Activations and gradients, sized for max_batch_.
  torch::Tensor cols1_, y1_, p1_, cols2_, w2p_, y2_, f_, h_, z_, dz_, dh_, df_, dy2_, gw2p_,
      dcols2_, dp1_, dy1_, partial_, bias_partial_;
  torch::Tensor arg1_, arg2_;  // uint8 pool winners
};

}  // namespace pjemu::trainer
