// CoalescedPass: "every change asks for one pass" on an EventLoop, the one implementation the
// level-based actors share (the volume, TensorBoard and Kueue controllers): their informers'
// events call Trigger(), which posts one pass unless one is posted already, or the pass is
// draining its informers itself (inside Draining(), whose events the pass is about to see);
// Arm(d) runs a pass d from now, replacing an armed one, ArmOnce(d) only when none is armed (a
// periodic retry that changes do not push back). Nothing runs before Start() or after Stop()
// (which drops what is posted or armed) or the object's end.
// Thread safety: everything on the EventLoop thread (or before the loop runs).
#pragma once

#include <functional>
#include <memory>

#include "emulator/common/event_loop.h"

namespace pjemu {

class CoalescedPass {
 public:
  CoalescedPass(EventLoop& loop, std::function<void()> pass)
      : loop_(loop), pass_(std::move(pass)) {}
  ~CoalescedPass() { Stop(); }
  CoalescedPass(const CoalescedPass&) = delete;
  CoalescedPass& operator=(const CoalescedPass&) = delete;

  void Start() {
    if (!alive_) alive_ = std::make_shared<bool>(true);
  }
  void Stop() {
    alive_.reset();
    pending_ = false;
    if (timer_) loop_.Cancel(timer_), timer_ = 0;
  }
  bool started() const { return alive_ != nullptr; }

  void Trigger() {
    if (pending_ || draining_ || !alive_) return;
    pending_ = true;
    std::weak_ptr<bool> alive = alive_;
    loop_.Post([this, alive] {
      if (alive.expired()) return;
      pending_ = false;
      pass_();
    });
  }
  void Arm(Duration after) {
    if (!alive_) return;
    if (timer_) loop_.Cancel(timer_);
    std::weak_ptr<bool> alive = alive_;
    timer_ = loop_.PostAfter(after, [this, alive] {
      if (alive.expired()) return;
      timer_ = 0;
      pass_();
    });
  }
  void ArmOnce(Duration after) {
    if (!timer_) Arm(after);
  }
  // Runs drain() (the pass draining its informers) with Trigger() off.
  template <class F>
  void Draining(F&& drain) {
    draining_ = true;
    drain();
    draining_ = false;
  }

 private:
  EventLoop& loop_;
  std::function<void()> pass_;
  std::shared_ptr<bool> alive_;
  bool pending_ = false;
  bool draining_ = false;
  EventLoop::TimerId timer_ = 0;
};

}  // namespace pjemu
