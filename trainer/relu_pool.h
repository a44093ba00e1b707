// relu followed by max_pool2d(kernel 2, stride 2), fused into one pass forward and one backward.
// Bit-identical to torch's relu + max_pool2d (forward values and gradients, ties included: the
// first maximum of a window wins, as in ATen's CPU kernel, and max(relu(x)) == relu(max(x))),
// but it reads the activation once and skips the index tensor of int64s, which made max_pool2d
// and threshold_backward about a third of a training step on one core. Flow: model.cc.
// Thread safety: a stateless autograd function; parallel over planes via at::parallel_for.
#pragma once

#include <torch/types.h>

namespace pjemu::trainer {

// x: [N,C,H,W] float32 with even H and W -> [N,C,H/2,W/2]. Differentiable.
torch::Tensor ReluMaxPool2x2(const torch::Tensor& x);

}  // namespace pjemu::trainer
