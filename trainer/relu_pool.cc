#include "trainer/relu_pool.h"

#include <ATen/Parallel.h>
#include <torch/torch.h>

namespace pjemu::trainer {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

class ReluMaxPoolFn : public torch::autograd::Function<ReluMaxPoolFn> {
 public:
  static torch::Tensor forward(AutogradContext* ctx, torch::Tensor x) {
    x = x.contiguous();
    const int64_t n = x.size(0), c = x.size(1), h = x.size(2), w = x.size(3);
    const int64_t oh = h / 2, ow = w / 2;
    torch::Tensor out = torch::empty({n, c, oh, ow}, x.options());
    // Which of the 4 window cells won (0..3), 255 when the output is 0 (relu cut it).
    torch::Tensor arg = torch::empty({n, c, oh, ow}, x.options().dtype(torch::kUInt8));
    const float* in = x.data_ptr<float>();
    float* o = out.data_ptr<float>();
    uint8_t* a = arg.data_ptr<uint8_t>();
    at::parallel_for(0, n * c, 1, [&](int64_t begin, int64_t end) {
      for (int64_t p = begin; p < end; ++p) {
        const float* plane = in + p * h * w;
        float* op = o + p * oh * ow;
        uint8_t* ap = a + p * oh * ow;
        for (int64_t i = 0; i < oh; ++i) {
          const float* r0 = plane + (2 * i) * w;
          const float* r1 = r0 + w;
          for (int64_t j = 0; j < ow; ++j) {
            // ATen's order: (0,0), (0,1), (1,0), (1,1); a later cell wins only when greater.
            float m = r0[2 * j];
            uint8_t k = 0;
            if (r0[2 * j + 1] > m) m = r0[2 * j + 1], k = 1;
            if (r1[2 * j] > m) m = r1[2 * j], k = 2;
            if (r1[2 * j + 1] > m) m = r1[2 * j + 1], k = 3;
            const bool pos = m > 0;
            op[i * ow + j] = pos ? m : 0.0f;
            ap[i * ow + j] = pos ? k : 255;
          }
        }
      }
    });
    ctx->save_for_backward({arg});
    ctx->saved_data["h"] = h;
    ctx->saved_data["w"] = w;
    return out;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    torch::Tensor arg = ctx->get_saved_variables()[0];
    const int64_t h = ctx->saved_data["h"].toInt(), w = ctx->saved_data["w"].toInt();
    torch::Tensor g = grads[0].contiguous();
    const int64_t n = arg.size(0), c = arg.size(1), oh = arg.size(2), ow = arg.size(3);
    torch::Tensor gi = torch::empty({n, c, h, w}, g.options());
    const float* go = g.data_ptr<float>();
    const uint8_t* a = arg.data_ptr<uint8_t>();
    float* out = gi.data_ptr<float>();
    at::parallel_for(0, n * c, 1, [&](int64_t begin, int64_t end) {
      for (int64_t p = begin; p < end; ++p) {
        const float* gp = go + p * oh * ow;
        const uint8_t* ap = a + p * oh * ow;
        float* r0base = out + p * h * w;
        for (int64_t i = 0; i < oh; ++i) {
          float* r0 = r0base + (2 * i) * w;
          float* r1 = r0 + w;
          for (int64_t j = 0; j < ow; ++j) {
            const uint8_t k = ap[i * ow + j];
            const float v = gp[i * ow + j];
            r0[2 * j] = k == 0 ? v : 0.0f;
            r0[2 * j + 1] = k == 1 ? v : 0.0f;
            r1[2 * j] = k == 2 ? v : 0.0f;
            r1[2 * j + 1] = k == 3 ? v : 0.0f;
          }
        }
      }
    });
    return {gi};
  }
};

}  // namespace

torch::Tensor ReluMaxPool2x2(const torch::Tensor& x) {
  TORCH_CHECK(x.dim() == 4 && x.size(2) % 2 == 0 && x.size(3) % 2 == 0 &&
                  x.scalar_type() == torch::kFloat32 && x.device().is_cpu(),
              "ReluMaxPool2x2: want a CPU float [N,C,H,W] with even H, W");
  return ReluMaxPoolFn::apply(x);
}

}  // namespace pjemu::trainer
