#include "trainer/fast_kernels.h"

#include <immintrin.h>

#include <algorithm>
#include <array>
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
constexpr int64_t kMaxRun = 256;          // PoolShape w/2*c at most (fast_kernels.h)

// The output columns 0..w-1 in the split order of a conv's rows: even columns, then odd ones.
template <int64_t W>
constexpr std::array<int64_t, W> SplitColumns() {
  std::array<int64_t, W> cols{};
  for (int64_t k = 0; k < W; ++k) cols[k] = k < W / 2 ? 2 * k : 2 * (k - W / 2) + 1;
  return cols;
}

}  // namespace

// The loops are plain C++; GCC builds each one for AVX-512, AVX2 and the baseline and picks at
// load time, so the binary stays portable (no -march flag) yet the channel loops are vectorized
// on this machine.
#define PJEMU_KERNEL __attribute__((target_clones("avx512f", "avx2", "default")))

PJEMU_KERNEL void Im2ColConv1(const float* x, int64_t n0, int64_t n1, float* cols) {
  for (int64_t n = n0; n < n1; ++n) {
    const float* img = x + n * kIn1 * kIn1;
    float* row = cols + (n - n0) * kOut1 * kOut1 * kK * kK;
    for (int64_t oh = 0; oh < kOut1; ++oh) {
      for (int64_t ow : SplitColumns<kOut1>()) {
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
    float* row = cols + (n - n0) * kOut2 * kOut2 * kRow2;
    for (int64_t oh = 0; oh < kOut2; ++oh) {
      for (int64_t ow : SplitColumns<kOut2>()) {
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
    const float* row = dcols + (n - n0) * kOut2 * kOut2 * kRow2;
    for (int64_t oh = 0; oh < kOut2; ++oh) {
      for (int64_t ow : SplitColumns<kOut2>()) {
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

// Windows over c lanes (a: their top row, b: the bottom row, the right cells c floats after the
// left ones): v = relu(max + bias), win = the winning cell 0..3 in ATen's first-maximum order,
// 255 where relu cut the value. Branch-free selects over restrict pointers (a float cell index),
// and not inlined (GCC drops restrict when inlining), so that GCC vectorizes it: the branchy loop
// mispredicted on random winners and the two pool passes took 23 % of a one-thread step
// (trainer/README.md, Speed work 7).
PJEMU_KERNEL static void PoolWindow(const float* __restrict a, const float* __restrict b,
                                    const float* __restrict bias, int64_t c, float* __restrict v,
                                    uint8_t* __restrict win) {
  for (int64_t ch = 0; ch < c; ++ch) {
    // A later cell wins only when strictly greater.
    float m = a[ch], k = 0.0f;
    k = a[c + ch] > m ? 1.0f : k;
    m = a[c + ch] > m ? a[c + ch] : m;
    k = b[ch] > m ? 2.0f : k;
    m = b[ch] > m ? b[ch] : m;
    k = b[c + ch] > m ? 3.0f : k;
    m = b[c + ch] > m ? b[c + ch] : m;
    const float val = m + bias[ch];
    v[ch] = val > 0 ? val : 0.0f;
    win[ch] = static_cast<uint8_t>(val > 0 ? k : 255.0f);
  }
}

// The adjoint of PoolWindow: d (the output gradient) goes to the winning cell (a0 = (0,0),
// a1 = (0,1), b0 = (1,0), b1 = (1,1)), zeros elsewhere; dbias gets d where relu passed it.
static void PoolWindowBackwardPortable(const float* __restrict d, const uint8_t* __restrict win,
                                       int64_t c, float* __restrict a0, float* __restrict a1,
                                       float* __restrict b0, float* __restrict b1,
                                       float* __restrict dbias) {
  for (int64_t ch = 0; ch < c; ++ch) {
    const int k = win[ch];
    const float v = d[ch];
    a0[ch] = k == 0 ? v : 0.0f;
    a1[ch] = k == 1 ? v : 0.0f;
    b0[ch] = k == 2 ? v : 0.0f;
    b1[ch] = k == 3 ? v : 0.0f;
    dbias[ch] += k < 4 ? v : 0.0f;
  }
}

// v where the winner k is cell i, else 0 (16 lanes).
__attribute__((target("avx512f"), always_inline)) static inline __m512 WinnerCell(__m512i k,
                                                                                  __m512 v, int i) {
  return _mm512_maskz_mov_ps(_mm512_cmpeq_epi32_mask(k, _mm512_set1_epi32(i)), v);
}

// The same with AVX-512 masks, 16 lanes at a time. GCC's vectorization of the loop above
// (byte compares widened with spills) ran 10x slower: 0.74 against 0.07 ms for conv1's pool
// gradient of a 64-sample batch, measured alone (trainer/README.md, Speed work 7).
__attribute__((target("avx512f"))) static void PoolWindowBackwardAvx512(
    const float* __restrict d, const uint8_t* __restrict win, int64_t c, float* __restrict a0,
    float* __restrict a1, float* __restrict b0, float* __restrict b1, float* __restrict dbias) {
  int64_t ch = 0;
  for (; ch + 16 <= c; ch += 16) {
    // The maskz form: GCC 12 warns about the undefined source of _mm512_cvtepu8_epi32.
    const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(win + ch));
    const __m512i k = _mm512_maskz_cvtepu8_epi32(0xFFFF, bytes);
    const __m512 v = _mm512_loadu_ps(d + ch);
    _mm512_storeu_ps(a0 + ch, WinnerCell(k, v, 0));
    _mm512_storeu_ps(a1 + ch, WinnerCell(k, v, 1));
    _mm512_storeu_ps(b0 + ch, WinnerCell(k, v, 2));
    _mm512_storeu_ps(b1 + ch, WinnerCell(k, v, 3));
    const __m512 db = _mm512_loadu_ps(dbias + ch);
    const __mmask16 passed = _mm512_cmplt_epi32_mask(k, _mm512_set1_epi32(4));
    _mm512_storeu_ps(dbias + ch, _mm512_mask_add_ps(db, passed, db, v));
  }
  PoolWindowBackwardPortable(d + ch, win + ch, c - ch, a0 + ch, a1 + ch, b0 + ch, b1 + ch,
                             dbias + ch);
}

static void PoolWindowBackward(const float* d, const uint8_t* win, int64_t c, float* a0, float* a1,
                               float* b0, float* b1, float* dbias) {
  static const bool avx512 = __builtin_cpu_supports("avx512f");
  (avx512 ? PoolWindowBackwardAvx512 : PoolWindowBackwardPortable)(d, win, c, a0, a1, b0, b1,
                                                                   dbias);
}

// One call per output row (n, i): with the split row order the four cells of all w/2 windows
// are four runs of w/2*c floats, (0,0) at row 2i's even columns, (0,1) at its odd ones, (1,0)
// and (1,1) the same in row 2i+1. Strided outputs (pool2 writes fc1's [C,4,4] order) go through
// a buffer in (j, ch) order.
PJEMU_KERNEL void BiasReluPool(const PoolShape& s, const float* y, const float* bias, int64_t n0,
                               int64_t n1, float* out, uint8_t* arg) {
  const int64_t oh = s.h / 2, ow = s.w / 2, c = s.c, run = ow * c;
  const bool contiguous = s.out_channel == 1 && s.out_pixel == c;
  float tiled[kMaxRun], v[kMaxRun];
  for (int64_t q = 0; q < run; ++q) tiled[q] = bias[q % c];
  for (int64_t n = n0; n < n1; ++n) {
    for (int64_t i = 0; i < oh; ++i) {
      const float* a = y + (n * s.h + 2 * i) * s.w * c;
      float* o = out + n * s.out_n + i * ow * s.out_pixel;
      PoolWindow(a, a + 2 * run, tiled, run, contiguous ? o : v, arg + (n * oh + i) * run);
      for (int64_t q = 0; !contiguous && q < run; ++q) {
        o[(q / c) * s.out_pixel + (q % c) * s.out_channel] = v[q];
      }
    }
  }
}

PJEMU_KERNEL void BiasReluPoolBackward(const PoolShape& s, const float* dout, const uint8_t* arg,
                                       int64_t n0, int64_t n1, float* dy, float* dbias) {
  const int64_t oh = s.h / 2, ow = s.w / 2, c = s.c, run = ow * c;
  const bool contiguous = s.out_channel == 1 && s.out_pixel == c;
  float gathered[kMaxRun], tiled_dbias[kMaxRun] = {};
  for (int64_t n = n0; n < n1; ++n) {
    for (int64_t i = 0; i < oh; ++i) {
      float* a = dy + (n * s.h + 2 * i) * s.w * c;
      const float* d = dout + n * s.out_n + i * ow * s.out_pixel;
      for (int64_t q = 0; !contiguous && q < run; ++q) {
        gathered[q] = d[(q / c) * s.out_pixel + (q % c) * s.out_channel];
      }
      PoolWindowBackward(contiguous ? d : gathered, arg + (n * oh + i) * run, run, a, a + run,
                         a + 2 * run, a + 3 * run, tiled_dbias);
    }
  }
  for (int64_t q = 0; q < run; ++q) dbias[q % c] += tiled_dbias[q];
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
