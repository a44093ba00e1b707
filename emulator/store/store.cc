#include "emulator/store/store.h"

#include <algorithm>

#include "emulator/api/json_fields.h"
#include "emulator/api/kueue.h"
#include "emulator/api/managed_fields.h"
#include "emulator/store/object_meta.h"
#include "emulator/store/service_ip.h"
#include "emulator/store/store_impl.h"

namespace pjemu::store {
namespace {

using api::WatchEvent;

Status UnknownResource() {
  return Status(Code::kNotFound, "the server could not find the requested resource");
}

// The status kube-apiserver's create strategies leave on a new object: types with a status
// subresource drop the client's status (nodes keep theirs: the kubelet registers with it).
void ResetStatusOnCreate(const api::ResourceType& type, Json& object) {
  if (!type.has_status || type.kind == "Node") return;
  object.erase("status");
  if (type.kind == "Pod" && type.group.empty()) {
    object["status"] = {{"phase", "Pending"}};
  } else if (type.kind == "Namespace" && type.group.empty()) {
    object["status"] = {{"phase", "Active"}};
  }
}

}  // namespace

Store::Impl::Impl(const Clock& clock, StoreOptions options)
    : clock(clock),
      options(options),
      // After a restart, uids and generateName suffixes must not replay the first run's.
      random(options.restore ? options.seed ^ (options.restore->rv * 0x9E3779B97F4A7C15ULL)
                             : options.seed),
      sweeper(options.pack_after_writes, mu),
      hub(options.watch_history, options.watch_queue_limit) {}

TypeRef Store::Impl::Canonical(const api::ResourceType& type) {
  return api::FindResource(type.group, type.plural);
}

namespace {

// Deferred versions one object may stack before they are computed (bounds what a chain holds).
constexpr std::size_t kMaxDeferred = 16;

}  // namespace

ObjectPtr Store::Impl::Find(TypeRef type, const Key& key, Form form) const {
  auto t = objects.find(type->PluralGroup());
  if (t == objects.end()) return nullptr;
  auto it = t->second.find(key);
  return it == t->second.end() ? nullptr : it->second->Read(form);
}

namespace {

std::vector<std::string> OwnerUids(const Json* object) {
  std::vector<std::string> out;
  if (!object || !object->contains("metadata")) return out;
  const Json& meta = (*object)["metadata"];
  if (!meta.contains("ownerReferences") || !meta["ownerReferences"].is_array()) return out;
  for (const auto& ref : meta["ownerReferences"]) {
    if (ref.is_object() && ref.contains("uid") && ref["uid"].is_string()) out.push_back(ref["uid"]);
  }
  return out;
}

// metadata.ownerReferences as stored (null when absent): compared before OwnerUids is built.
const Json& OwnerReferences(const Json* object) {
  static const Json kNone;
  return object ? api::Field(api::Field(*object, "metadata"), "ownerReferences") : kNone;
}

// An Event's involvedObject.uid ("" when none), read in place.
std::string_view InvolvedUid(const Json* object) {
  if (!object) return {};
  const Json& uid = api::Field(api::Field(*object, "involvedObject"), "uid");
  return uid.is_string() ? std::string_view(uid.get_ref<const std::string&>()) : std::string_view();
}

}  // namespace

namespace {

const Json* LabelsOf(const Json* object) {
  if (!object) return nullptr;
  auto meta = object->find("metadata");
  if (meta == object->end() || !meta->is_object()) return nullptr;
  auto labels = meta->find("labels");
  return labels != meta->end() && labels->is_object() ? &*labels : nullptr;
}

std::string LabelIndexKey(const std::string& label, const std::string& value) {
  return label + '\n' + value;
}

}  // namespace

const EntryBag* Store::Impl::WithLabel(TypeRef type, const std::string& label,
                                       const std::string& value) const {
  auto t = by_label.find(type->PluralGroup());
  if (t == by_label.end()) return nullptr;
  auto it = t->second.find(LabelIndexKey(label, value));
  return it == t->second.end() ? nullptr : &it->second;
}

void Store::Impl::Reindex(TypeRef type, const Entry& entry, const Json* before, const Json* after) {
  const Json* old_labels = LabelsOf(before);
  const Json* new_labels = LabelsOf(after);
  if (old_labels != new_labels && (!old_labels || !new_labels || *old_labels != *new_labels)) {
    auto& index = by_label[type->PluralGroup()];
    if (old_labels) {
      for (const auto& [k, v] : old_labels->items()) {
        if (!v.is_string()) continue;
        auto it = index.find(LabelIndexKey(k, v.get<std::string>()));
        if (it == index.end()) continue;
        it->second.erase(&entry);
        if (it->second.empty()) index.erase(it);
      }
    }
    if (new_labels) {
      for (const auto& [k, v] : new_labels->items()) {
        if (v.is_string()) index[LabelIndexKey(k, v.get<std::string>())].insert(&entry);
      }
    }
  }
  // Most writes keep the owners (and an Event its object): the indexes then stay as they are.
  if (OwnerReferences(before) != OwnerReferences(after)) {
    const std::vector<std::string> old_owners = OwnerUids(before), new_owners = OwnerUids(after);
    const TypedEntry typed{type, &entry};
    for (const auto& uid : old_owners) {
      auto it = dependents.find(uid);
      if (it == dependents.end()) continue;
      it->second.erase(typed);
      if (it->second.empty()) dependents.erase(it);
    }
    for (const auto& uid : new_owners) dependents[uid].insert(typed);
  }
  if (type != &api::Events()) return;
  const std::string_view old_involved = InvolvedUid(before), new_involved = InvolvedUid(after);
  if (old_involved == new_involved) return;
  if (!old_involved.empty()) {
    auto it = events_about.find(std::string(old_involved));
    if (it != events_about.end()) {
      it->second.erase(&entry);
      if (it->second.empty()) events_about.erase(it);
    }
  }
  if (!new_involved.empty()) events_about[std::string(new_involved)].insert(&entry);
}

ObjectPtr Store::Impl::Put(TypeRef type, Json object, WatchEvent::Type event, ObjectPtr old,
                           const api::ManagedWrite* deferred) {
  ++rv;
  MutableMeta(object)["resourceVersion"] = std::to_string(rv);
  api::CompactManagedFields(object);  // the stored form (api/managed_fields.h)
  auto ptr = std::make_shared<const Json>(std::move(object));
  Key key{MetaString(*ptr, "namespace"), MetaString(*ptr, "name")};
  Entry& entry = *objects[type->PluralGroup()].try_emplace(std::move(key)).first;
  SlotPtr& slot = entry.second;
  SlotPtr before = slot;
  // The old version's slot, so the history shares it rather than holding a second copy.
  SlotPtr old_slot = before && old && before->Unpacked() == old ? before : nullptr;
  if (old && !old_slot) old_slot = sweeper.Make(std::move(old));
  const ObjectPtr before_tree = before ? before->Tree() : nullptr;
  Reindex(type, entry, before_tree.get(), ptr.get());
  slot = sweeper.Make(ptr);
  if (deferred && before) {
    if (before->deferred_depth() >= kMaxDeferred) before->Served();
    slot->Defer({before, type, *deferred, before->deferred_depth() + 1});
  }
  // An update keeps the uid (immutable) and the key: only a new object is indexed.
  if (std::string uid = MetaString(*ptr, "uid");
      !before_tree || MetaString(*before_tree, "uid") != uid) {
    by_uid[std::move(uid)] = {type, &entry};
  }
  Record(type, entry.first, event, slot, std::move(old_slot), std::move(before));
  return ptr;
}

void Store::Impl::Record(TypeRef type, const Key& key, WatchEvent::Type event, SlotPtr object,
                         SlotPtr old, SlotPtr slot_before) {
  if (pending.empty()) rv_before_pending = rv - 1;
  if (options.durability) {
    undo.push_back({type, key, std::move(slot_before),
                    event == WatchEvent::Type::kDeleted ? nullptr : object});
  }
  pending.push_back({rv, type, event, object->Unpacked(), old ? old->Tree() : nullptr});
  pending_slots.emplace_back(std::move(object), std::move(old));
}

Status Store::Impl::CommitPending() {
  if (pending.empty()) return Status::Ok();
  Status committed = options.durability ? options.durability->Commit(pending) : Status::Ok();
  if (committed.ok()) {
    for (std::size_t i = 0; i < pending.size(); ++i) {
      hub.Record(pending[i].rv, *pending[i].type, pending[i].event, pending_slots[i].first,
                 pending_slots[i].second);
    }
  } else {
    // Undo in reverse order, so each entry finds the map as it left it.
    for (auto it = undo.rbegin(); it != undo.rend(); ++it) {
      Objects& by_key = objects[it->type->PluralGroup()];
      Entry& entry = *by_key.try_emplace(it->key).first;
      ObjectPtr after = it->after ? it->after->Tree() : nullptr;
      ObjectPtr before = it->before ? it->before->Tree() : nullptr;
      Reindex(it->type, entry, after.get(), before.get());
      if (after) by_uid.erase(MetaString(*after, "uid"));
      if (before) by_uid[MetaString(*before, "uid")] = {it->type, &entry};
      if (it->before) {
        entry.second = it->before;
      } else {
        by_key.erase(it->key);  // out of every index above
      }
    }
    rv = rv_before_pending;
  }
  pending.clear();
  pending_slots.clear();
  undo.clear();
  sweeper.MaybeSweep();  // the request's trees are held by its own copies, if at all
  return committed;
}

void Store::Impl::Restore(const Snapshot& snapshot) {
  for (const auto& [type, object] : snapshot.objects) {
    auto ptr = std::make_shared<const Json>(object);
    Key key{MetaString(*ptr, "namespace"), MetaString(*ptr, "name")};
    Entry& entry = *objects[type->PluralGroup()].try_emplace(std::move(key)).first;
    entry.second = sweeper.Make(ptr);
    Reindex(type, entry, nullptr, ptr.get());
    by_uid[MetaString(*ptr, "uid")] = {type, &entry};
  }
  rv = snapshot.rv;
  hub.Restore(snapshot.compacted_rv);
  for (const auto& c : snapshot.history) {
    hub.Record(c.rv, *c.type, c.event, sweeper.Make(c.object),
               c.old ? sweeper.Make(c.old) : nullptr);
  }
}

Status Store::Impl::CheckBody(TypeRef type, std::string_view ns, Json& object) const {
  if (!object.is_object()) return BadRequestError("the request body must be a JSON object");
  for (auto [field, want] : {std::pair<const char*, std::string>{"apiVersion", type->ApiVersion()},
                             {"kind", type->kind}}) {
    auto it = object.find(field);
    if (it == object.end() || (it->is_string() && it->get<std::string>().empty())) {
      object[field] = want;
    } else if (!it->is_string() || it->get<std::string>() != want) {
      return BadRequestError(
          std::string("the ") + (field == std::string("kind") ? "kind" : "API version") +
          " in the data (" + (it->is_string() ? it->get<std::string>() : it->dump()) +
          ") does not match the expected " +
          (field == std::string("kind") ? "kind" : "API version") + " (" + want + ")");
    }
  }
  if (object.contains("metadata") && !object["metadata"].is_object()) {
    return BadRequestError("metadata: must be an object");
  }
  Json& meta = MutableMeta(object);
  if (!type->namespaced) {
    meta.erase("namespace");
    return Status::Ok();
  }
  std::string body_ns = MetaString(object, "namespace");
  if (!ns.empty() && !body_ns.empty() && body_ns != ns) {
    return BadRequestError(
        "the namespace of the provided object does not match the namespace sent on the request");
  }
  if (ns.empty() && body_ns.empty()) {
    return BadRequestError("an empty namespace may not be set during creation");
  }
  if (body_ns.empty()) meta["namespace"] = std::string(ns);
  return Status::Ok();
}

Status Store::Impl::ClusterIpLocked(TypeRef type, Json& object, const Json* old) const {
  if (type != &api::Services()) return Status::Ok();
  return AssignClusterIp(object, old, [&] {
    std::set<std::string> used;
    auto all = SelectLocked(type, "", {});
    if (!all.ok()) return used;
    for (const ObjectPtr& svc : *all) {
      if (svc.get() == old) continue;
      std::string ip = api::Str(api::Field(*svc, "spec"), "clusterIP");
      if (!ip.empty() && ip != "None") used.insert(ip);
    }
    return used;
  });
}

Status Store::Impl::Admit(TypeRef type, Json& object, const Json* old,
                          const api::WriteOptions& options) {
  // The type's own defaulting, then the mutating webhooks, the type's validation and the
  // validating webhooks, as the API server orders its admission chain. The webhooks are
  // Kueue's for the job kinds it integrates (api/kueue.h).
  const api::Admission& admission = type->admission;
  if (admission.defaulter) admission.defaulter(object);
  api::kueue::MutateQueuedJob(*type, object, old);
  if (admission.validator) RETURN_IF_ERROR(admission.validator(object, old, options.warnings));
  return api::kueue::ValidateQueuedJob(*type, object, old);
}

Result<ObjectPtr> Store::Impl::CreateLocked(TypeRef type, std::string_view ns, Json object,
                                            const api::WriteOptions& options, bool managed) {
  RETURN_IF_ERROR(CheckBody(type, ns, object));
  std::string name = MetaString(object, "name");
  std::string generate = MetaString(object, "generateName");
  if (name.empty() && generate.empty()) {
    return InvalidError(*type, "",
                        {RequiredField("metadata.name", "name or generateName is required")});
  }
  std::vector<FieldError> errs = ValidateObjectMeta(*type, object);
  if (name.empty()) {
    // As the real server: the prefix is validated with a trailing '-' masked as a letter.
    std::string masked = generate;
    if (masked.back() == '-') masked.back() = 'a';
    if (auto e = ValidateObjectName(*type, masked); !e.empty()) {
      std::string detail;
      for (const auto& m : e) detail += (detail.empty() ? "" : "; ") + m;
      errs.push_back(InvalidField("metadata.generateName", generate, detail));
    }
  }
  if (!errs.empty()) return InvalidError(*type, name.empty() ? generate : name, errs);
  std::string namespace_name = MetaString(object, "namespace");
  if (type->namespaced && !Find(&api::Namespaces(), {"", namespace_name})) {
    return NotFoundError("namespaces", namespace_name);
  }
  if (type->namespaced) RETURN_IF_ERROR(RefuseInTerminating(type, namespace_name, name));
  if (name.empty()) {
    // Newer servers retry a generateName collision internally; so do we (8 tries).
    for (int i = 0; i < 8 && (name.empty() || Find(type, {namespace_name, name}, Form::kInProcess));
         ++i) {
      name = generate + random.NameSuffix(5);
    }
    MutableMeta(object)["name"] = name;
  }
  if (Find(type, {namespace_name, name}, Form::kInProcess)) {  // whether it exists: not served
    return AlreadyExistsError(type->PluralGroup(), name);
  }

  ResetStatusOnCreate(*type, object);
  AddNamespaceFinalizer(type, object);
  RETURN_IF_ERROR(ClusterIpLocked(type, object, nullptr));
  Json& meta = MutableMeta(object);  // taken after the writes above, which may move it
  meta["uid"] = MakeUid([&] { return random.Uniform(~0ULL); });
  meta["creationTimestamp"] = FormatTime(clock.Now());
  meta["generation"] = 1;
  for (const char* f :
       {"deletionTimestamp", "deletionGracePeriodSeconds", "resourceVersion", "selfLink"}) {
    meta.erase(f);
  }
  if (!managed) {
    api::UpdateManagedFields(*type, nullptr, object,
                             {options.field_manager, api::Subresource::kNone,
                              FormatTime(clock.Now()), /*stored_form=*/true});
  }
  RETURN_IF_ERROR(Admit(type, object, nullptr, options));
  if (options.dry_run) return std::make_shared<const Json>(std::move(object));
  return Put(type, std::move(object), WatchEvent::Type::kAdded, nullptr);
}

Result<std::vector<ObjectPtr>> Store::Impl::SelectLocked(TypeRef type, std::string_view ns,
                                                         const api::ListOptions& options,
                                                         Form form) const {
  ASSIGN_OR_RETURN(auto labels, api::LabelSelector::Parse(options.label_selector));
  ASSIGN_OR_RETURN(auto fields, api::FieldSelector::Parse(options.field_selector, *type));
  std::vector<ObjectPtr> items;
  const bool one_ns = type->namespaced && !ns.empty();
  // An equality term narrows the candidates to the label index's smallest set, sorted into list
  // order. A packed candidate that another equality term's set lacks cannot match: it is
  // skipped before it is decoded (a Service's selector names its job, replica type and index;
  // the job's set, the smallest, holds the pods of every replica).
  std::vector<const EntryBag*> with_terms;
  const EntryBag* candidates = nullptr;
  static const EntryBag kNone;
  for (const auto& req : labels.requirements()) {
    using Op = api::LabelRequirement::Op;
    if (req.values.size() != 1 ||
        (req.op != Op::kEquals && req.op != Op::kDoubleEquals && req.op != Op::kIn)) {
      continue;
    }
    const EntryBag* with = WithLabel(type, req.key, req.values[0]);
    if (!with) with = &kNone;
    with_terms.push_back(with);
    if (!candidates || with->size() < candidates->size()) candidates = with;
  }
  auto t = objects.find(type->PluralGroup());
  if (t == objects.end()) return items;
  auto keep = [&](const ObjectPtr& object) {
    if (labels.Matches(*object) && fields.Matches(*object)) items.push_back(object);
  };
  auto in_every_term = [&](const Entry* entry) {
    for (const EntryBag* with : with_terms) {
      if (with != candidates && with->count(entry) == 0) return false;
    }
    return true;
  };
  if (candidates) {
    std::vector<const Entry*> listed;
    for (const Entry* entry : *candidates) {
      if (!one_ns || entry->first.first == ns) listed.push_back(entry);
    }
    std::sort(listed.begin(), listed.end(), EntryOrder());
    for (const Entry* entry : listed) {
      if (entry->second->packed() && !in_every_term(entry)) continue;
      keep(entry->second->Read(form));
    }
  } else {
    const Key ns_start{std::string(ns), ""};
    for (auto it = one_ns ? t->second.lower_bound(ns_start) : t->second.begin();
         it != t->second.end() && (!one_ns || it->first.first == ns); ++it) {
      keep(it->second->Read(form));
    }
  }
  return items;
}

Json Store::Impl::ListJson(TypeRef type, std::uint64_t list_rv,
                           const std::vector<ObjectPtr>& items) {
  Json array = Json::array();
  for (const ObjectPtr& item : items) array.push_back(*item);
  return Json{{"apiVersion", type->ApiVersion()},
              {"kind", type->ListKind()},
              {"metadata", {{"resourceVersion", std::to_string(list_rv)}}},
              {"items", std::move(array)}};
}

Result<Json> Store::Impl::ListLocked(TypeRef type, std::string_view ns,
                                     const api::ListOptions& options) const {
  ASSIGN_OR_RETURN(std::vector<ObjectPtr> items, SelectLocked(type, ns, options));
  return ListJson(type, rv, items);
}

Result<std::shared_ptr<api::Watch>> Store::Impl::WatchLocked(TypeRef type, std::string_view ns,
                                                             const api::WatchOptions& options,
                                                             Form form) {
  WatchFilter filter;
  filter.form = form;
  filter.type = *type;
  filter.ns = type->namespaced ? std::string(ns) : "";
  filter.bookmarks = options.allow_bookmarks;
  ASSIGN_OR_RETURN(filter.labels, api::LabelSelector::Parse(options.label_selector));
  ASSIGN_OR_RETURN(filter.fields, api::FieldSelector::Parse(options.field_selector, *type));
  const std::string& text = options.resource_version;
  bool synthetic = text.empty() || text == "0";
  std::uint64_t from = 0;
  if (!synthetic) {
    from = ParseRv(text);
    if (from == 0) return BadRequestError("invalid resource version \"" + text + "\"");
    if (from > rv) {
      return Status(Code::kTimeout,
                    "Too large resource version: " + text + ", current: " + std::to_string(rv));
    }
  }
  std::vector<SlotPtr> current;
  if (auto t = objects.find(type->PluralGroup()); synthetic && t != objects.end()) {
    for (const auto& [key, slot] : t->second) current.push_back(slot);
  }
  ASSIGN_OR_RETURN(auto stream, hub.Open(std::move(filter), synthetic, from, current));
  return std::shared_ptr<api::Watch>(std::move(stream));
}

// ---- Store ----

Store::Store(const Clock& clock, StoreOptions options)
    : impl_(std::make_unique<Impl>(clock, options)) {
  if (options.restore && options.restore->rv > 0) {
    impl_->Restore(*options.restore);
    return;
  }
  if (!options.default_namespaces) return;
  for (const char* ns : {"default", "kube-system", "kube-public", "kubeflow"}) {
    Json object = {{"metadata", {{"name", ns}}}};
    auto created = Create(api::Namespaces(), "", object);
    (void)created;  // cannot fail on an empty store
  }
}

Store::~Store() = default;

Result<Json> Store::Create(const api::ResourceType& type, std::string_view ns, Json object,
                           const api::WriteOptions& options) {
  ASSIGN_OR_RETURN(ObjectPtr created, CreateShared(type, ns, std::move(object), options));
  return Json(*created);  // the copy is made outside the lock
}

Result<ObjectPtr> Store::CreateShared(const api::ResourceType& type, std::string_view ns,
                                      Json object, const api::WriteOptions& options) {
  TypeRef t = Impl::Canonical(type);
  if (!t) return UnknownResource();
  return impl_->Locked([&] { return impl_->CreateLocked(t, ns, std::move(object), options); });
}

Result<Json> Store::Get(const api::ResourceType& type, std::string_view ns, std::string_view name,
                        Form form) const {
  ASSIGN_OR_RETURN(ObjectPtr object, GetShared(type, ns, name, form));
  return Json(*object);  // the copy is made outside the lock
}

Result<ObjectPtr> Store::GetShared(const api::ResourceType& type, std::string_view ns,
                                   std::string_view name, Form form) const {
  TypeRef t = Impl::Canonical(type);
  if (!t) return UnknownResource();
  std::lock_guard<std::mutex> lock(impl_->mu);
  ObjectPtr obj = impl_->Find(t, {t->namespaced ? std::string(ns) : "", std::string(name)}, form);
  if (!obj) return NotFoundError(t->PluralGroup(), std::string(name));
  impl_->sweeper.MaybeSweep();  // reads decode too: a run of reads with no write still sweeps
  return obj;
}

Result<Json> Store::List(const api::ResourceType& type, std::string_view ns,
                         const api::ListOptions& options, Form form) const {
  ASSIGN_OR_RETURN(SharedList list, ListShared(type, ns, options, form));
  return Impl::ListJson(Impl::Canonical(type), list.resource_version, list.items);
}

Result<SharedList> Store::ListShared(const api::ResourceType& type, std::string_view ns,
                                     const api::ListOptions& options, Form form) const {
  TypeRef t = Impl::Canonical(type);
  if (!t) return UnknownResource();
  std::lock_guard<std::mutex> lock(impl_->mu);
  SharedList list;
  ASSIGN_OR_RETURN(list.items, impl_->SelectLocked(t, ns, options, form));
  list.resource_version = impl_->rv;
  impl_->sweeper.MaybeSweep();  // as GetShared: what this list decoded is held by `list`
  return list;
}

Result<Json> Store::Update(const api::ResourceType& type, std::string_view ns, Json object,
                           api::Subresource sub, const api::WriteOptions& options, Form form) {
  ASSIGN_OR_RETURN(ObjectPtr updated,
                   UpdateShared(type, ns, std::move(object), sub, options, form));
  return Json(*updated);
}

Result<ObjectPtr> Store::UpdateShared(const api::ResourceType& type, std::string_view ns,
                                      Json object, api::Subresource sub,
                                      const api::WriteOptions& options, Form form) {
  TypeRef t = Impl::Canonical(type);
  if (!t) return UnknownResource();
  return impl_->Locked(
      [&] { return impl_->UpdateLocked(t, ns, std::move(object), sub, options, form); });
}

Result<Json> Store::Patch(const api::ResourceType& type, std::string_view ns, std::string_view name,
                          api::PatchType patch_type, const Json& patch, api::Subresource sub,
                          const api::WriteOptions& options, Form form) {
  ASSIGN_OR_RETURN(ObjectPtr patched,
                   PatchShared(type, ns, name, patch_type, patch, sub, options, form));
  return Json(*patched);
}

Result<ObjectPtr> Store::PatchShared(const api::ResourceType& type, std::string_view ns,
                                     std::string_view name, api::PatchType patch_type,
                                     const Json& patch, api::Subresource sub,
                                     const api::WriteOptions& options, Form form) {
  TypeRef t = Impl::Canonical(type);
  if (!t) return UnknownResource();
  return impl_->Locked(
      [&] { return impl_->PatchLocked(t, ns, name, patch_type, patch, sub, options, form); });
}

Result<ObjectPtr> Store::BindPod(std::string_view ns, std::string_view name,
                                 const api::PodBinding& binding, bool dry_run) {
  return impl_->Locked([&] { return impl_->BindLocked(ns, name, binding, dry_run); });
}

Result<Json> Store::Apply(const api::ResourceType& type, std::string_view ns,
                          std::string_view name, const Json& config, api::Subresource sub,
                          const api::WriteOptions& options, bool* created) {
  TypeRef t = Impl::Canonical(type);
  if (!t) return UnknownResource();
  ASSIGN_OR_RETURN(ObjectPtr applied, impl_->Locked([&] {
    return impl_->ServerSideApplyLocked(t, ns, name, config, sub, options, created);
  }));
  return Json(*applied);
}

Result<Json> Store::Delete(const api::ResourceType& type, std::string_view ns,
                           std::string_view name, const api::DeleteOptions& options) {
  TypeRef t = Impl::Canonical(type);
  if (!t) return UnknownResource();
  return impl_->Locked([&] { return impl_->DeleteLocked(t, ns, name, options); });
}

Result<Json> Store::DeleteCollection(const api::ResourceType& type, std::string_view ns,
                                     const api::ListOptions& list_options,
                                     const api::DeleteOptions& options) {
  TypeRef t = Impl::Canonical(type);
  if (!t) return UnknownResource();
  return impl_->Locked([&]() -> Result<Json> {
    ASSIGN_OR_RETURN(Json list, impl_->ListLocked(t, ns, list_options));
    Json deleted = Json::array();
    for (const auto& item : list["items"]) {
      auto r =
          impl_->DeleteLocked(t, MetaString(item, "namespace"), MetaString(item, "name"), options);
      if (r.ok()) {
        deleted.push_back(std::move(r).value());
      } else if (r.status().code() != Code::kNotFound) {
        return r.status();  // a GC cascade may already have removed it: that is fine
      }
    }
    list["items"] = std::move(deleted);
    list["metadata"]["resourceVersion"] = std::to_string(impl_->rv);
    return list;
  });
}

Result<std::shared_ptr<api::Watch>> Store::Watch(const api::ResourceType& type, std::string_view ns,
                                                 const api::WatchOptions& options, Form form) {
  TypeRef t = Impl::Canonical(type);
  if (!t) return UnknownResource();
  return impl_->Locked([&] { return impl_->WatchLocked(t, ns, options, form); });
}

void Store::SendBookmarks() {
  impl_->Locked([&] {
    impl_->hub.Bookmark(impl_->rv);
    return 0;
  });
}

std::uint64_t Store::ResourceVersion() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->rv;
}

}  // namespace pjemu::store
