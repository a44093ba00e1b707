// The fast training step (--kernels=fast, what --kernels=auto picks): forward and backward of
// the reference convnet (model.h) written out by hand over buffers allocated once. Both
// convolutions are im2col in channels-last order (rows in the split order of fast_kernels.h)
// plus GEMMs for forward, input gradient and weight gradient, run block by block of 4 samples
// with their pools (conv2: M=256, K=500, N=50), so each block's matrices stay in L2; the
// backward makes a block's columns again for the weight gradients, accumulated block by block;
// bias, relu and the 2x2 max-pool are one pass; the fc layers are direct GEMMs; the loss is
// log-softmax + NLL in one pass. The GEMMs go to the BLAS through ATen (at::mm_out / addmm_out),
// one thread each.
//
// With T > 1 intra-op threads the batch is split into T shares, one per thread, each run whole
// by its own Engine (data parallel inside the process, one parallel region a step); the shares'
// gradients are then summed into the model's. Splitting each GEMM instead cost a thread wake-up
// per layer and ran no faster than one thread (trainer/README.md, Speed work 14). When
// OPENBLAS_NUM_THREADS asks for a multi-threaded BLAS (concurrent calls into it would race) one
// Engine runs the whole batch and the BLAS threads each GEMM.
// Same values as the reference kernels up to float summation order (tested against autograd).
// Flow: train_loop.cc -> FastNet::TrainStep, then the gradient all-reduce and FlatSgd.
// Thread safety: one thread calls it; it uses at::parallel_for inside.
#pragma once

#include <torch/nn/module.h>
#include <torch/types.h>

#include <memory>
#include <vector>

namespace pjemu::trainer {

class FastNet {
 public:
  // `model` is a NetImpl whose parameters have .grad() tensors (FlatSgd binds them); they must
  // stay alive and in place. `max_batch` bounds the batch size TrainStep accepts.
  FastNet(torch::nn::Module& model, int64_t max_batch);
  ~FastNet();

  // x: [B,1,28,28] float (B <= max_batch), target: [B] int64. Writes (does not accumulate) every
  // parameter's gradient of the mean NLL loss and returns that loss.
  float TrainStep(const torch::Tensor& x, const torch::Tensor& target);

  // The parameters or their gradients, in the model's order (conv1, conv2, fc1, fc2; weight,
  // bias).
  struct Tensors {
    torch::Tensor w1, b1, w2, b2, fw1, fb1, fw2, fb2;
  };
  class Engine;

 private:
  int64_t max_batch_;
  Tensors model_grads_;                           // views of FlatSgd's buffer
  std::vector<std::unique_ptr<Engine>> engines_;  // engine 0 writes model_grads_
  std::vector<Tensors> share_grads_;              // engines 1..: their own gradients
};

}  // namespace pjemu::trainer
