// Raw loops of the fast training step (fast_net.h): the layout changes around the convolutions'
// GEMMs (im2col / col2im in channels-last order), the fused bias + relu + 2x2 max-pool and its
// backward, and log-softmax + NLL. Each works on a range of samples [n0, n1), so the caller can
// split a batch over threads; none allocates. Hand-written because ATen has no fused
// bias+relu+pool and its im2col is per sample in NCHW order; the GEMMs themselves go to the BLAS
// through ATen. Flow: fast_net.cc. Thread safety: pure functions; disjoint ranges may run in
// parallel (the bias-gradient sums go to a caller-provided buffer per range).
#pragma once

#include <cstdint>

namespace pjemu::trainer::fast {

// Row order of both convolutions' outputs ("split"): rows (n, oh, ow) are stored as
// (n, oh, ow % 2, ow / 2), i.e. [N, H, 2, W/2, C] channels last, so that the 2x2 pool that
// follows reads each window row as two contiguous runs (BiasReluPool). The im2col functions
// write their rows in this order and Col2ImConv2 reads it; any row order serves the GEMMs.

// Conv 1->C k5 on 28x28 images, samples [n0, n1): row (n - n0, oh, ow) in split order, 25
// columns kh*5 + kw, cols[row][kh*5 + kw] = x[n][oh+kh][ow+kw].
void Im2ColConv1(const float* x, int64_t n0, int64_t n1, float* cols);

// Conv 20->50 k5 on a channels-last [N,12,12,20] input, samples [n0, n1): `cols` holds their
// rows only, row (n - n0, oh, ow) in split order, 500 columns in (kh, kw, c) order (the weight
// is permuted to match, see PermuteConv2Weight).
void Im2ColConv2(const float* in, int64_t n0, int64_t n1, float* cols);
// The adjoint: din[N,12,12,20] over samples [n0, n1) = sum of the column gradients (rows as
// Im2ColConv2's; din is zeroed over the range first).
void Col2ImConv2(const float* dcols, int64_t n0, int64_t n1, float* din);
// [50,20,5,5] (torch's order) <-> [50,5,5,20] (the columns' order).
void PermuteConv2Weight(const float* w, float* wp);
void UnpermuteConv2Weight(const float* wp, float* w);

// Geometry of a bias + relu + 2x2/2 max-pool over a conv output in split row order,
// [N,H,2,W/2,C].
struct PoolShape {
  int64_t h, w, c;  // (w / 2) * c <= 256
  // Where output (n, i, j, ch) goes: n*out_n + (i*(w/2)+j)*out_pixel + ch*out_channel.
  int64_t out_n, out_pixel, out_channel;
};
// out = relu(max over the window of y + bias), which equals max_pool2d(relu(y + bias)) bit for bit
// (the bias is constant over a window). arg [N,H/2,W/2,C]: the winning cell 0..3 in ATen's
// first-maximum order, 255 where relu cut the value.
void BiasReluPool(const PoolShape& s, const float* y, const float* bias, int64_t n0, int64_t n1,
                  float* out, uint8_t* arg);
// dy (split order, as y) from the gradient of `out` (same layout as out); adds the bias
// gradient to dbias[C].
void BiasReluPoolBackward(const PoolShape& s, const float* dout, const uint8_t* arg, int64_t n0,
                          int64_t n1, float* dy, float* dbias);

// Mean NLL of log_softmax(z) for z [N,10]-like rows of `classes`; dz = d(mean loss)/dz.
// Returns the sum of the per-row losses over [n0, n1) (the caller divides by the batch size).
double LogSoftmaxNll(const float* z, const int64_t* target, int64_t classes, int64_t batch,
                     int64_t n0, int64_t n1, float* dz);

}  // namespace pjemu::trainer::fast
