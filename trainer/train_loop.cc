#include "trainer/train_loop.h"

#include <fmt/format.h>
#include <torch/torch.h>

#include <atomic>
#include <chrono>
#include <ctime>
#include <mutex>

#include "trainer/checkpoint.h"
#include "trainer/fashion_mnist.h"
#include "trainer/fast_net.h"
#include "trainer/flat_sgd.h"
#include "trainer/metrics_log.h"
#include "trainer/model.h"
#include "trainer/termination.h"

namespace pjemu::trainer {
namespace {

// Steps between periodic checkpoints (also saved at the end of each epoch and on SIGTERM).
constexpr int64_t kCheckpointEvery = 100;

// CPU seconds of this process (all threads): steadier than wall time on a shared machine.
double CpuSeconds() {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

void PrintLine(std::FILE* out, const std::string& line) {
  std::fputs(line.c_str(), out);
  std::fputc('\n', out);
  std::fflush(out);
}

// The run's position, shared with Comm's watchdog thread for a SIGTERM checkpoint.
struct Position {
  std::atomic<int64_t> epoch{1};
  std::atomic<int64_t> next_batch{0};
  std::atomic<int64_t> global_step{0};
};

class Run {
 public:
  Run(const Options& o, const DeviceChoice& device, Comm& comm, std::FILE* out)
      : o_(o),
        comm_(comm),
        out_(out),
        cuda_(device.cuda),
        device_(device.cuda
                    ? torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(device.index))
                    : torch::Device(torch::kCPU)) {}

  Result<RunSummary> Go() {
    start_ = std::chrono::steady_clock::now();
    ASSIGN_OR_RETURN(train_, LoadSplit(o_.data_dir, "train"));
    ASSIGN_OR_RETURN(test_, LoadSplit(o_.data_dir, "t10k"));
    if (cuda_) MoveDataToDevice();
    RETURN_IF_ERROR(metrics_.Open(o_.dir, comm_.rank()));
    torch::manual_seed(o_.seed);
    model_ = Net();
    if (cuda_) model_->to(device_);  // the reference's Net().to(device): same initial weights
    sgd_ = std::make_unique<FlatSgd>(*model_, o_.lr, o_.momentum);
    // auto = fast: faster than torch's kernels at one thread per rank too since Speed work 7-12
    // (trainer/README.md); --kernels=reference keeps the reference's exact loss lines. The fast
    // kernels are CPU code: on CUDA every setting runs torch's modules (cuDNN, as the reference).
    if (o_.kernels != "reference" && !cuda_) {
      fast_ = std::make_unique<FastNet>(*model_, o_.batch_size);
    }
    RETURN_IF_ERROR(SyncInitialState());
    if (!o_.checkpoint_dir.empty()) {
      comm_.SetOnTermWhileBlocked([this] { (void)SaveNow(); });
    }
    return Epochs();
  }

 private:
  // On CUDA both splits go to the GPU once, the images already as ToFloat's float32 (188 MB
  // for the training split), so a batch is two index_selects on the device and no copy.
  void MoveDataToDevice() {
    for (Split* split : {&train_, &test_}) {
      split->images = ToFloat(split->images.to(device_));
      split->labels = split->labels.to(device_);
    }
  }

  // A batch's ToTensor'd images: sliced on the GPU from the float copy, or converted on the CPU.
  torch::Tensor Images(const Split& split, const torch::Tensor& idx) const {
    if (cuda_) return split.images.index_select(0, idx);
    return ToFloat(split.images.index_select(0, idx));
  }

  // Rank 0's weights (and checkpoint, if any) go to every rank, as DDP broadcasts at start.
  Status SyncInitialState() {
    // meta: {status (0 none, 1 resumed, -1 error), epoch, next_batch, global_step, has_momentum}
    torch::Tensor meta = torch::zeros({5}, torch::kInt64);
    Status load_status;
    if (comm_.rank() == 0 && !o_.checkpoint_dir.empty()) {
      load_status = LoadOwnCheckpoint(meta);
      if (!load_status.ok()) meta[0] = -1;
    }
    std::vector<torch::Tensor> m{meta.to(device_)};  // NCCL takes CUDA tensors only
    RETURN_IF_ERROR(comm_.Broadcast(m));
    meta = m[0].cpu();
    if (!load_status.ok()) return load_status;
    if (meta[0].item<int64_t>() < 0) {
      return InternalError("rank 0 could not load its checkpoint from --checkpoint-dir");
    }
    pos_.epoch = meta[1].item<int64_t>() > 0 ? meta[1].item<int64_t>() : 1;
    pos_.next_batch = meta[2].item<int64_t>();
    pos_.global_step = meta[3].item<int64_t>();
    if (meta[4].item<int64_t>() != 0 && !sgd_->momentum().defined()) {
      sgd_->SetMomentum(torch::zeros_like(sgd_->params()));
    }
    std::vector<torch::Tensor> state{sgd_->params()};
    if (sgd_->momentum().defined()) state.push_back(sgd_->momentum());
    RETURN_IF_ERROR(comm_.Broadcast(state));
    if (meta[0].item<int64_t>() == 1) {
      PrintLine(out_, fmt::format("Resuming from {} at epoch {}, batch {} (step {})",
                                  CheckpointPath(o_.checkpoint_dir), pos_.epoch.load(),
                                  pos_.next_batch.load(), pos_.global_step.load()));
    }
    return Status::Ok();
  }

  Status LoadOwnCheckpoint(torch::Tensor& meta) {
    ASSIGN_OR_RETURN(std::optional<Checkpoint> c, LoadCheckpoint(o_.checkpoint_dir));
    if (!c) return Status::Ok();
    const std::string path = CheckpointPath(o_.checkpoint_dir);
    if (c->world_size != comm_.world_size() || c->batch_size != o_.batch_size) {
      return Status(
          Code::kInvalid,
          fmt::format("checkpoint {} was written with WORLD_SIZE={} --batch-size={}, "
                      "this run has {} and {}",
                      path, c->world_size, c->batch_size, comm_.world_size(), o_.batch_size));
    }
    if (c->params.numel() != sgd_->params().numel() ||
        (c->momentum.defined() && c->momentum.numel() != sgd_->params().numel())) {
      return InternalError("checkpoint " + path + " does not fit this model");
    }
    {
      torch::NoGradGuard no_grad;
      sgd_->params().copy_(c->params.view({-1}));
    }
    sgd_->SetMomentum(c->momentum);
    meta[0] = 1;
    meta[1] = c->epoch;
    meta[2] = c->next_batch;
    meta[3] = c->global_step;
    meta[4] = c->momentum.defined() ? 1 : 0;
    return Status::Ok();
  }

  Status SaveNow() {
    std::lock_guard<std::mutex> lock(save_mu_);
    if (comm_.rank() != 0 || o_.checkpoint_dir.empty()) return Status::Ok();
    Checkpoint c;
    c.params = sgd_->params().cpu();  // checkpoints hold CPU tensors, whatever trained them
    c.momentum = sgd_->momentum().defined() ? sgd_->momentum().cpu() : torch::Tensor();
    c.epoch = pos_.epoch;
    c.next_batch = pos_.next_batch;
    c.global_step = pos_.global_step;
    c.world_size = comm_.world_size();
    c.batch_size = o_.batch_size;
    return SaveCheckpoint(o_.checkpoint_dir, c);
  }

  Result<RunSummary> Epochs() {
    RunSummary summary;
    const int ws = comm_.world_size();
    const int64_t train_n = train_.size();
    bool stop = false;
    for (int64_t epoch = pos_.epoch; epoch <= o_.epochs && !stop; ++epoch) {
      pos_.epoch = epoch;
      const std::vector<int64_t> order = DistributedSamplerIndices(train_n, ws, comm_.rank());
      const int64_t n = static_cast<int64_t>(order.size());
      const int64_t batches = (n + o_.batch_size - 1) / o_.batch_size;
      torch::Tensor order_t = torch::tensor(order, torch::kInt64).to(device_);
      const auto epoch_start = std::chrono::steady_clock::now();
      const double epoch_cpu_start = CpuSeconds();
      int64_t trained_samples = 0, epoch_steps = 0;
      for (int64_t b = pos_.next_batch; b < batches; ++b) {
        if (TerminationRequested()) {
          RETURN_IF_ERROR(SaveNow());
          summary.terminated = true;
          return summary;
        }
        if (o_.max_steps > 0 && pos_.global_step >= o_.max_steps) {
          stop = true;
          break;
        }
        const int64_t lo = b * o_.batch_size;
        const int64_t len = std::min<int64_t>(o_.batch_size, n - lo);
        torch::Tensor idx = order_t.narrow(0, lo, len);
        torch::Tensor data = Images(train_, idx);
        torch::Tensor target = train_.labels.index_select(0, idx);
        RETURN_IF_ERROR(Step(data, target));
        ++epoch_steps;
        trained_samples += len;
        pos_.global_step = pos_.global_step + 1;
        pos_.next_batch = b + 1;
        if (b % o_.log_interval == 0) {
          const float loss = LastLoss();  // on CUDA the only wait for the GPU in a step
          PrintLine(out_, fmt::format("Train Epoch: {} [{}/{} ({})]\tloss={:.4f}", epoch, b * len,
                                      train_n, Percent(b, batches), loss));
          metrics_.Step(epoch, pos_.global_step, b, batches, loss, b * len, Seconds(start_));
        }
        if (pos_.global_step % kCheckpointEvery == 0) RETURN_IF_ERROR(SaveNow());
      }
      const double train_s = Seconds(epoch_start);
      const double train_cpu_s = CpuSeconds() - epoch_cpu_start;
      if (!stop || epoch_steps > 0) RETURN_IF_ERROR(SaveNow());
      ASSIGN_OR_RETURN(summary, Test());
      PrintLine(out_, fmt::format("\naccuracy={:.4f}\n", summary.accuracy));
      PrintLine(out_, fmt::format("{{metricName: accuracy, metricValue: {:.4f}}};"
                                  "{{metricName: loss, metricValue: {:.4f}}}",
                                  summary.accuracy, summary.test_loss));
      const double sps = train_s > 0 ? static_cast<double>(trained_samples) * ws / train_s : 0;
      metrics_.Epoch(epoch, summary.accuracy, summary.test_loss, epoch_steps, train_s, train_cpu_s,
                     sps, Seconds(start_));
      if (!stop) {
        pos_.epoch = epoch + 1;
        pos_.next_batch = 0;
      }
    }
    summary.steps = pos_.global_step;
    if (o_.save_model && comm_.rank() == 0) RETURN_IF_ERROR(SaveModel());
    RETURN_IF_ERROR(comm_.Barrier());  // rank 0 serves the store: it leaves last
    return summary;
  }

  // Python's "{:.0f}".format(100.0 * b / batches): round-half-even on the double, as printf.
  static std::string Percent(int64_t b, int64_t batches) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.0f%%", 100.0 * static_cast<double>(b) / batches);
    return buf;
  }

  // One optimizer step; its loss is read back only when logged (LastLoss), so on CUDA the
  // steps queue up on the GPU without waiting for each other.
  Status Step(const torch::Tensor& data, const torch::Tensor& target) {
    if (fast_) {
      last_loss_ = fast_->TrainStep(data, target);  // writes every gradient
    } else {
      sgd_->ZeroGrad();
      torch::Tensor loss = torch::nll_loss(model_->forward(data), target);
      loss.backward();
      last_loss_tensor_ = loss.detach();
    }
    if (comm_.world_size() > 1) {
      // DDP 1.13 multiplies each gradient by 1/world_size, then sums over ranks.
      sgd_->grads().mul_(1.0 / comm_.world_size());
      std::vector<torch::Tensor> g{sgd_->grads()};
      RETURN_IF_ERROR(comm_.AllReduceSum(g));
    }
    sgd_->Step();
    return Status::Ok();
  }

  float LastLoss() const { return fast_ ? last_loss_ : last_loss_tensor_.item<float>(); }

  // The true accuracy: each rank tests a disjoint shard, the counts are summed over ranks.
  Result<RunSummary> Test() {
    torch::NoGradGuard no_grad;
    const std::vector<int64_t> shard = UniqueShard(test_.size(), comm_.world_size(), comm_.rank());
    torch::Tensor shard_t = torch::tensor(shard, torch::kInt64).to(device_);
    double correct = 0, loss_sum = 0;
    const int64_t n = static_cast<int64_t>(shard.size());
    for (int64_t lo = 0; lo < n; lo += o_.test_batch_size) {
      torch::Tensor idx = shard_t.narrow(0, lo, std::min<int64_t>(o_.test_batch_size, n - lo));
      torch::Tensor target = test_.labels.index_select(0, idx);
      torch::Tensor output = model_->forward(Images(test_, idx));
      loss_sum += torch::nll_loss(output, target, {}, at::Reduction::Sum).item<double>();
      correct += output.argmax(1).eq(target).sum().item<double>();
    }
    std::vector<torch::Tensor> s{torch::tensor({correct, loss_sum}, torch::kFloat64).to(device_)};
    RETURN_IF_ERROR(comm_.AllReduceSum(s));
    torch::Tensor sums = s[0].cpu();
    RunSummary r;
    r.accuracy = sums[0].item<double>() / test_.size();
    r.test_loss = sums[1].item<double>() / test_.size();
    r.steps = pos_.global_step;
    return r;
  }

  Status SaveModel() {
    const std::string tmp = "mnist_cnn.pt.tmp";
    try {
      torch::save(model_, tmp);
    } catch (const std::exception& e) {
      return InternalError(std::string("--save-model: ") + e.what());
    }
    if (std::rename(tmp.c_str(), "mnist_cnn.pt") != 0) {
      return InternalError("--save-model: cannot rename mnist_cnn.pt.tmp");
    }
    return Status::Ok();
  }

  const Options& o_;
  Comm& comm_;
  std::FILE* out_;
  const bool cuda_;
  const torch::Device device_;
  std::chrono::steady_clock::time_point start_;
  Split train_, test_;
  MetricsLog metrics_;
  Net model_{nullptr};
  std::unique_ptr<FlatSgd> sgd_;
  std::unique_ptr<FastNet> fast_;   // null with --kernels=reference and on CUDA
  float last_loss_ = 0;             // the fast step's loss
  torch::Tensor last_loss_tensor_;  // the modules' loss, read when logged
  Position pos_;
  std::mutex save_mu_;
};

}  // namespace

Result<RunSummary> RunTraining(const Options& options, const DeviceChoice& device, Comm& comm,
                               std::FILE* out) {
  try {
    Run run(options, device, comm, out);
    return run.Go();
  } catch (const std::exception& e) {
    std::string msg = e.what();
    return InternalError("training failed: " + msg.substr(0, msg.find('\n')));
  }
}

}  // namespace pjemu::trainer
