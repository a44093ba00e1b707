// Given a training log line, ApplyLogLine should read the epoch, loss and accuracy that the
// run's progress bar and summary show: the reference mnist.py's lines and T9k's tutorial
// script's (seed 004), also behind torchrun's "[default0]:" prefix.
#include "emulator/cli/training_progress.h"

#include <catch2/catch.hpp>

namespace pjemu::cli {
namespace {

TEST_CASE("the reference's train and accuracy lines") {
  TrainingProgress p;
  CHECK(ApplyLogLine("Train Epoch: 1 [640/60000 (50%)]\tloss=2.2000", &p));
  CHECK(p.epoch == 1);
  CHECK(p.epoch_fraction == Approx(0.5));
  CHECK(*p.loss == Approx(2.2));
  CHECK(ApplyLogLine("accuracy=0.6954", &p));
  CHECK(*p.accuracy == Approx(0.6954));
}

TEST_CASE("T9k's tutorial lines, behind torchrun's prefix") {
  TrainingProgress p;
  CHECK(ApplyLogLine("[default0]:epoch 2/10, batch   125/375 with loss: 1.5640", &p));
  CHECK(p.epoch == 2);
  CHECK(p.epoch_fraction == Approx(125.0 / 375));
  CHECK(*p.loss == Approx(1.564));
  CHECK(ApplyLogLine("[default3]:test loss: 1.4957, test accuracy: 0.9660", &p));
  CHECK(*p.accuracy == Approx(0.966));
  CHECK_FALSE(ApplyLogLine("epoch 1/10 with val loss: 1.5090, val accuracy: 0.9522", &p));
  CHECK(*p.accuracy == Approx(0.966));
}

}  // namespace
}  // namespace pjemu::cli
