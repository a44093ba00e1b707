#include "emulator/kubelet/endpoint_waiters.h"

#include <algorithm>
#include <set>

namespace pjemu::kubelet {
namespace {

std::string TermKey(const std::string& ns, const std::string& key, const std::string& value) {
  return ns + '\n' + key + '=' + value;
}

}  // namespace

void EndpointWaiters::Add(const std::string& uid, const std::string& ns, const Json& selector) {
  if (!selector.is_object() || selector.empty()) return;
  Selector terms;
  for (const auto& [key, value] : selector.items()) {
    if (!value.is_string()) return;
    terms.emplace(key, value.get<std::string>());
  }
  std::string term = TermKey(ns, terms.begin()->first, terms.begin()->second);
  by_term_[term].emplace(uid, std::move(terms));
  by_uid_[uid].push_back(std::move(term));
}

void EndpointWaiters::Remove(const std::string& uid) {
  auto it = by_uid_.find(uid);
  if (it == by_uid_.end()) return;
  for (const std::string& term : it->second) {
    auto bucket = by_term_.find(term);
    if (bucket == by_term_.end()) continue;
    bucket->second.erase(uid);
    if (bucket->second.empty()) by_term_.erase(bucket);
  }
  by_uid_.erase(it);
}

std::vector<std::string> EndpointWaiters::Selecting(const Json& pod) const {
  std::vector<std::string> uids;
  if (by_term_.empty()) return uids;
  auto meta = pod.find("metadata");
  if (meta == pod.end() || !meta->is_object()) return uids;
  auto labels_it = meta->find("labels");
  if (labels_it == meta->end() || !labels_it->is_object()) return uids;
  const Json& labels = *labels_it;
  const std::string ns = meta->value("namespace", "default");
  auto selects = [&labels](const Selector& selector) {
    return std::all_of(selector.begin(), selector.end(), [&labels](const Selector::value_type& term) {
      auto it = labels.find(term.first);
      return it != labels.end() && it->is_string() && it->get_ref<const std::string&>() == term.second;
    });
  };
  std::set<std::string> seen;
  for (const auto& [key, value] : labels.items()) {
    if (!value.is_string()) continue;
    auto bucket = by_term_.find(TermKey(ns, key, value.get<std::string>()));
    if (bucket == by_term_.end()) continue;
    for (const auto& [uid, selector] : bucket->second) {
      if (selects(selector) && seen.insert(uid).second) uids.push_back(uid);
    }
  }
  return uids;
}

}  // namespace pjemu::kubelet
