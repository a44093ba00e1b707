#include "trainer/fast_kernels.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace pjemu::trainer::fast {
namespace {

constexpr int64_t kK = 5;                 // kernel size of both convolutions
constexpr int64_t kIn1 = 28, kOut1 = 24;  // conv1: 28x28 -> 24x24
constexpr int64_t kIn2 = 12, kOut2 = 8;   // conv2: 12x12 -> 8x8
constexpr int64_t kC1 = 20, kC2 = 50;     // conv2's input and output channels
constexpr int64_t kRow2 = kK * kK * kC1;  // 500 columns of conv2
constexpr int64_t kSeg2 = kK * kC1;       // 100 contiguous floats: one kernel row, all channels

}  // namespace

// The loops are plain C++; GCC builds each one for AVX-512, AVX2 and the baseline and picks at
// load time, so the binary stays portable (no -march flag) yet the channel loops are vectorized
// on this machine.
#define PJEMU_KERNEL __attribute__((target_clones("avx512f", "avx2", "default")))

PJEMU_KERNEL void Im2ColConv1(const float* x, int64_t n0, int64_t n1, float* cols) {
  for (int64_t n = n0; n < n1; ++n) {
    const float* img = x + n * kIn1 * kIn1;
    float* row = cols + n * kOut1 * kOut1 * kK * kK;
    for (int64_t oh = 0; oh < kOut1; ++oh) {
      for (int64_t ow = 0; ow < kOut1; ++ow) {
        for (int64_t kh = 0; kh < kK; ++kh) {
          const float* src = img + (oh + kh) * kIn1 + ow;
          for (int64_t kw = 0; kw < kK; ++kw) row[kh * kK + kw] = src[kw];
        }
        row += kK * kK;
      }
    }
  }
}

PJEMU_KERNEL void Im2ColConv2(const float* in, int64_t n0, int64_t n1, float* cols) {
  for (int64_t n = n0; n < n1; ++n) {
    const float* img = in + n * kIn2 * kIn2 * kC1;
    float* row = cols + n * kOut2 * kOut2 * kRow2;
    for (int64_t oh = 0; oh < kOut2; ++oh) {
      for (int64_t ow = 0; ow < kOut2; ++ow) {
        for (int64_t kh = 0; kh < kK; ++kh) {
          std::memcpy(row + kh * kSeg2, img + ((oh + kh) * kIn2 + ow) * kC1, kSeg2 * sizeof(float));
        }
        row += kRow2;
      }
    }
  }
}

PJEMU_KERNEL void Col2ImConv2(const float* dcols, int64_t n0, int64_t n1, float* din) {
  std::memset(din + n0 * kIn2 * kIn2 * kC1, 0, (n1 - n0) * kIn2 * kIn2 * kC1 * sizeof(float));
  for (int64_t n = n0; n < n1; ++n) {
    float* img = din + n * kIn2 * kIn2 * kC1;
    const float* row = dcols + n * kOut2 * kOut2 * kRow2;
    for (int64_t oh = 0; oh < kOut2; ++oh) {
      for (int64_t ow = 0; ow < kOut2; ++ow) {
        for (int64_t kh = 0; kh < kK; ++kh) {
          float* dst = img + ((oh + kh) * kIn2 + ow) * kC1;
          const float* src = row + kh * kSeg2;
          for (int64_t i = 0; i < kSeg2; ++i) dst[i] += src[i];
        }
        row += kRow2;
      }
    }
  }
}

void PermuteConv2Weight(const float* w, float* wp) {
  for (int64_t o = 0; o < kC2; ++o) {
    for (int64_t c = 0; c < kC1; ++c) {
      for (int64_t k = 0; k < kK * kK; ++k) wp[o * kRow2 + k * kC1 + c] = w[o * kRow2 + c * 25 + k];
    }
  }
}

void UnpermuteConv2Weight(const float* wp, float* w) {
  for (int64_t o = 0; o < kC2; ++o) {
    for (int64_t c = 0; c < kC1; ++c) {
      for (int64_t k = 0; k < kK * kK; ++k) w[o * kRow2 + c * 25 + k] = wp[o * kRow2 + k * kC1 + c];
    }
  }
}

PJEMU_KERNEL void BiasReluPool(const PoolShape& s, const float* y, const float* bias, int64_t n0,
                               int64_t n1, float* out, uint8_t* arg) {
  const int64_t oh = s.h / 2, ow = s.w / 2, c = s.c, row = s.w * c;
  for (int64_t n = n0; n < n1; ++n) {
    const float* yn = y + n * s.h * row;
    for (int64_t i = 0; i < oh; ++i) {
      for (int64_t j = 0; j < ow; ++j) {
        const float* a = yn + (2 * i) * row + (2 * j) * c;  // (0,0); (0,1) = a + c
        const float* b = a + row;                           // (1,0); (1,1) = b + c
        float* o = out + n * s.out_n + (i * ow + j) * s.out_pixel;
        uint8_t* g = arg + ((n * oh + i) * ow + j) * c;
        for (int64_t ch = 0; ch < c; ++ch) {
          // ATen's order: a later cell wins only when strictly greater.
          float m = a[ch];
          uint8_t k = 0;
          if (a[c + ch] > m) m = a[c + ch], k = 1;
          if (b[ch] > m) m = b[ch], k = 2;
          if (b[c + ch] > m) m = b[c + ch], k = 3;
          const float v = m + bias[ch];
          const bool pos = v > 0;
          o[ch * s.out_channel] = pos ? v : 0.0f;
          g[ch] = pos ? k : 255;
        }
      }
    }
  }
}

PJEMU_KERNEL void BiasReluPoolBackward(const PoolShape& s, const float* dout, const uint8_t* arg,
                                       int64_t n0, int64_t n1, float* dy, float* dbias) {
  const int64_t oh = s.h / 2, ow = s.w / 2, c = s.c, row = s.w * c;
  for (int64_t n = n0; n < n1; ++n) {
    float* yn = dy + n * s.h * row;
    for (int64_t i = 0; i < oh; ++i) {
      for (int64_t j = 0; j < ow; ++j) {
        float* a = yn + (2 * i) * row + (2 * j) * c;
        float* b = a + row;
        const float* d = dout + n * s.out_n + (i * ow + j) * s.out_pixel;
        const uint8_t* g = arg + ((n * oh + i) * ow + j) * c;
        for (int64_t ch = 0; ch < c; ++ch) {
          const uint8_t k = g[ch];
          const float v = k == 255 ? 0.0f : d[ch * s.out_channel];
          a[ch] = k == 0 ? v : 0.0f;
          a[c + ch] = k == 1 ? v : 0.0f;
          b[ch] = k == 2 ? v : 0.0f;
          b[c + ch] = k == 3 ? v : 0.0f;
          dbias[ch] += v;
        }
      }
    }
  }
}

double LogSoftmaxNll(const float* z, const int64_t* target, int64_t classes, int64_t batch,
                     int64_t n0, int64_t n1, float* dz) {
  double loss = 0;
  const float inv = 1.0f / static_cast<float>(batch);
  for (int64_t n = n0; n < n1; ++n) {
    const float* zn = z + n * classes;
    float* dn = dz + n * classes;
    float m = zn[0];
    for (int64_t k = 1; k < classes; ++k) m = std::max(m, zn[k]);
    float sum = 0;
    for (int64_t k = 0; k < classes; ++k) sum += std::exp(zn[k] - m);
    const float lse = m + std::log(sum);
    for (int64_t k = 0; k < classes; ++k) {
      dn[k] = std::exp(zn[k] - lse) * inv;
    }
    dn[target[n]] -= inv;
    loss -= zn[target[n]] - lse;
  }
  return loss;
}

}  // namespace pjemu::trainer::fast
