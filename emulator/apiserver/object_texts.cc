#include "emulator/apiserver/object_texts.h"

namespace pjemu::apiserver {

std::string CompactText(const Json& object) {
  return object.dump(-1, ' ', false, Json::error_handler_t::replace);
}

std::shared_ptr<const std::string> ObjectTexts::Text(const std::shared_ptr<const Json>& object) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = by_object_.find(object.get()); it != by_object_.end()) return it->second;
  }
  auto text = std::make_shared<const std::string>(CompactText(*object));
  std::lock_guard<std::mutex> lock(mu_);
  auto [it, inserted] = by_object_.emplace(object.get(), text);
  if (!inserted) return it->second;  // another thread made it meanwhile
  ++made_;
  order_.push_back({object, text});
  if (order_.size() > capacity_) {
    by_object_.erase(order_.front().object.get());
    order_.pop_front();
  }
  return text;
}

std::size_t ObjectTexts::made() const {
  std::lock_guard<std::mutex> lock(mu_);
  return made_;
}

}  // namespace pjemu::apiserver
