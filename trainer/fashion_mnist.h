// FashionMNIST input: idx / idx.gz reader and the reference's DistributedSampler order.
// Flow: TrainLoop loads both splits once into memory (uint8), then indexes batches by the
// sampler's indices. Thread safety: free functions on values; safe from any thread.
#pragma once

#include <torch/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "trainer/status.h"

namespace pjemu::trainer {

// One idx file: dims from the header, bytes after it.
struct IdxFile {
  std::vector<int64_t> dims;
  std::vector<uint8_t> data;
};

// Reads an idx file (ubyte only), gzip-compressed or plain (zlib reads both). Errors name the
// file: kNotFound when it is missing, kInternal ("corrupt idx file ...") for a bad magic, a
// size that does not match the header, or a truncated gzip stream.
Result<IdxFile> ReadIdx(const std::string& path);

// A split: images [N,1,28,28] uint8 and labels [N] int64.
struct Split {
  torch::Tensor images;
  torch::Tensor labels;
  int64_t size() const { return labels.size(0); }
};

// Loads "<dir>/<prefix>-images-idx3-ubyte[.gz]" and "-labels-idx1-ubyte[.gz]" (prefix "train"
// or "t10k"), checks that they agree (count, 28x28, labels 0..9).
Result<Split> LoadSplit(const std::string& dir, const std::string& prefix);

// ToTensor: x / 255 as float32, exactly as torchvision computes it.
torch::Tensor ToFloat(const torch::Tensor& images_u8);

// torch.utils.data.DistributedSampler(shuffle=True, seed, drop_last=False) at epoch 0 (the
// reference never calls set_epoch): randperm(n) from a CPU generator seeded `seed`, padded by
// repeating its head to a multiple of world_size, then every world_size-th index from rank.
std::vector<int64_t> DistributedSamplerIndices(int64_t n, int world_size, int rank,
                                               uint64_t seed = 0);

// The unpadded shard rank, rank+world, ... of 0..n-1: used for the true test accuracy.
std::vector<int64_t> UniqueShard(int64_t n, int world_size, int rank);

}  // namespace pjemu::trainer
