// The device plugin's nvidia.com/gpu units with time-slicing: units = GPUs x replicas, pods
// spread over the GPUs before they share one, and a pod sees each physical GPU once.
#include "emulator/kubelet/gpu_slots.h"

#include <catch2/catch.hpp>

namespace pjemu::kubelet {
namespace {

TEST_CASE("without sharing each unit is one GPU, given out in order", "[kubelet][gpu]") {
  GpuSlots s(2, 1);
  CHECK(s.units() == 2);
  auto a = s.Allocate("a", 1);
  auto b = s.Allocate("b", 1);
  CHECK(s.VisibleDevices(a) == "0");
  CHECK(s.VisibleDevices(b) == "1");
  CHECK(s.Allocate("c", 1).empty());  // all taken
  s.Release("a");
  CHECK(s.VisibleDevices(s.Allocate("c", 1)) == "0");
}

TEST_CASE("time-slicing advertises GPUs x replicas and pods on one GPU share its index",
          "[kubelet][gpu]") {
  GpuSlots s(1, 2);
  CHECK(s.units() == 2);
  auto a = s.Allocate("a", 1);
  auto b = s.Allocate("b", 1);
  REQUIRE(a.size() == 1);
  REQUIRE(b.size() == 1);
  CHECK(a != b);  // two units...
  CHECK(s.VisibleDevices(a) == "0");
  CHECK(s.VisibleDevices(b) == "0");  // ...of the same GPU
  CHECK(s.Allocate("c", 1).empty());
}

TEST_CASE("replicas spread over the GPUs before two pods share one", "[kubelet][gpu]") {
  GpuSlots s(2, 2);
  CHECK(s.units() == 4);
  CHECK(s.VisibleDevices(s.Allocate("a", 1)) == "0");
  CHECK(s.VisibleDevices(s.Allocate("b", 1)) == "1");
  CHECK(s.VisibleDevices(s.Allocate("c", 1)) == "0");
  s.Release("b");
  CHECK(s.VisibleDevices(s.Allocate("d", 1)) == "1");  // the least used GPU
}

TEST_CASE("a pod asking several shared units lists each physical GPU once", "[kubelet][gpu]") {
  GpuSlots one(1, 4);
  CHECK(one.VisibleDevices(one.Allocate("a", 3)) == "0");
  GpuSlots two(2, 2);
  CHECK(two.VisibleDevices(two.Allocate("a", 3)) == "0,1");
  CHECK(two.Allocate("b", 2).size() == 1);  // one unit left
}

}  // namespace
}  // namespace pjemu::kubelet
