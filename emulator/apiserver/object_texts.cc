#include "emulator/apiserver/object_texts.h"

#include "emulator/api/managed_fields.h"

namespace pjemu::apiserver {
namespace {

// True when `object` (or a list's item) may carry managedFields in the store's compact form.
bool MayHoldManagedFields(const Json& object) {
  if (!object.is_object()) return false;
  if (auto items = object.find("items"); items != object.end() && items->is_array()) return true;
  auto meta = object.find("metadata");
  return meta != object.end() && meta->is_object() && meta->contains("managedFields");
}

}  // namespace

std::string CompactText(const Json& object) {
  if (MayHoldManagedFields(object)) {  // the wire form: fieldsV1 as objects again
    Json wire = object;
    api::ExpandManagedFields(wire);
    return wire.dump(-1, ' ', false, Json::error_handler_t::replace);
  }
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
