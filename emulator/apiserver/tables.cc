#include "emulator/apiserver/tables.h"

#include <algorithm>
#include <map>
#include <vector>

#include "emulator/api/json_fields.h"
#include "emulator/api/persistent_volumes.h"
#include "emulator/api/pod_status.h"

namespace pjemu::apiserver {
namespace {

using api::ArrayOr, api::Field, api::ObjectOr, api::Str;

struct Column {
  const char* name;
  const char* type;
  const char* format;
  int priority;
  const char* description;
};

std::string Age(const std::string& timestamp, Time now) {
  auto t = ParseTime(timestamp);
  if (!t) return "<unknown>";
  if (*t > now) return "0s";
  return FormatAge(now - *t);
}

// ---- Config and storage types: columns and cells as kubectl's printers (1.29) show them ----

constexpr char kAgeDoc[] =
    "CreationTimestamp is a timestamp representing the server time when this object was created.";

std::size_t SizeOf(const Json& j) { return j.is_object() ? j.size() : 0; }

// helper.GetAccessModesAsString: "RWO,ROX,RWX,RWOP" in that order, each once.
std::string AccessModes(const Json& modes) {
  static constexpr std::pair<const char*, const char*> kShort[] = {{"ReadWriteOnce", "RWO"},
                                                                   {"ReadOnlyMany", "ROX"},
                                                                   {"ReadWriteMany", "RWX"},
                                                                   {"ReadWriteOncePod", "RWOP"}};
  std::string out;
  for (const auto& [mode, abbrev] : kShort) {
    for (const Json& m : ArrayOr(modes)) {
      if (m == mode) {
        out += (out.empty() ? "" : ",") + std::string(abbrev);
        break;
      }
    }
  }
  return out;
}

std::string StorageOf(const Json& capacity) {
  const Json& v = Field(capacity, "storage");
  return v.is_string() ? v.get<std::string>() : v.is_number() ? v.dump() : "";
}

std::string OrDefault(const std::string& s, const char* fallback) {
  return s.empty() ? fallback : s;
}

std::vector<Json> ConfigMapCells(const Json& cm, Time now) {
  return {std::to_string(SizeOf(Field(cm, "data")) + SizeOf(Field(cm, "binaryData"))),
          Age(Str(Field(cm, "metadata"), "creationTimestamp"), now)};
}

std::vector<Json> SecretCells(const Json& secret, Time now) {
  return {Str(secret, "type"), std::to_string(SizeOf(Field(secret, "data"))),
          Age(Str(Field(secret, "metadata"), "creationTimestamp"), now)};
}

std::vector<Json> ServiceAccountCells(const Json& sa, Time now) {
  const Json& secrets = Field(sa, "secrets");
  return {static_cast<std::int64_t>(secrets.is_array() ? secrets.size() : 0),
          Age(Str(Field(sa, "metadata"), "creationTimestamp"), now)};
}

std::vector<Json> ClaimCells(const Json& pvc, Time now) {
  const Json& spec = Field(pvc, "spec");
  const Json& status = Field(pvc, "status");
  std::string phase = Str(status, "phase");
  if (!Field(Field(pvc, "metadata"), "deletionTimestamp").is_null()) phase = "Terminating";
  const bool bound = !Str(spec, "volumeName").empty();
  return {phase,
          Str(spec, "volumeName"),
          bound ? StorageOf(Field(status, "capacity")) : "",
          bound ? AccessModes(Field(status, "accessModes")) : "",
          Str(spec, "storageClassName"),
          Age(Str(Field(pvc, "metadata"), "creationTimestamp"), now),
          Str(spec, "volumeMode")};
}

std::vector<Json> VolumeCells(const Json& pv, Time now) {
  const Json& spec = Field(pv, "spec");
  const Json& status = Field(pv, "status");
  const Json& claim = Field(spec, "claimRef");
  std::string phase = Str(status, "phase");
  if (!Field(Field(pv, "metadata"), "deletionTimestamp").is_null()) phase = "Terminating";
  return {StorageOf(Field(spec, "capacity")),
          AccessModes(Field(spec, "accessModes")),
          Str(spec, "persistentVolumeReclaimPolicy"),
          phase,
          claim.is_object() ? Str(claim, "namespace") + "/" + Str(claim, "name") : "",
          Str(spec, "storageClassName"),
          Str(status, "reason"),
          Age(Str(Field(pv, "metadata"), "creationTimestamp"), now),
          Str(spec, "volumeMode")};
}

std::vector<Json> StorageClassCells(const Json& sc, Time now) {
  const Json& expand = Field(sc, "allowVolumeExpansion");
  return {OrDefault(Str(sc, "provisioner"), ""), OrDefault(Str(sc, "reclaimPolicy"), "Delete"),
          OrDefault(Str(sc, "volumeBindingMode"), "Immediate"),
          expand.is_boolean() && expand.get<bool>() ? "true" : "false",
          Age(Str(Field(sc, "metadata"), "creationTimestamp"), now)};
}

// storageutil.IsDefaultAnnotation: the name cell of the default class reads "x (default)".
std::string StorageClassName(const Json& sc) {
  std::string name = Str(Field(sc, "metadata"), "name");
  return api::IsDefaultStorageClass(sc) ? name + " (default)" : name;
}

// The PodDisruptionBudget printer: an IntOrString or "N/A", and the computed disruptions.
std::vector<Json> BudgetCells(const Json& pdb, Time now) {
  auto int_or_string = [](const Json& v) {
    return v.is_null() ? std::string("N/A") : v.is_string() ? v.get<std::string>() : v.dump();
  };
  const Json& spec = Field(pdb, "spec");
  const Json& allowed = Field(Field(pdb, "status"), "disruptionsAllowed");
  return {int_or_string(Field(spec, "minAvailable")), int_or_string(Field(spec, "maxUnavailable")),
          allowed.is_number_integer() ? allowed.get<std::int64_t>() : 0,
          Age(Str(Field(pdb, "metadata"), "creationTimestamp"), now)};
}

// kubectl's Job printer (printJob, 1.33): its STATUS word, "succeeded/completions", and the
// duration from startTime to completionTime (or to now while it runs).
std::vector<Json> JobCells(const Json& job, Time now) {
  const Json& spec = Field(job, "spec");
  const Json& status = Field(job, "status");
  auto has = [&](const char* type) {
    for (const Json& c : ArrayOr(Field(status, "conditions"))) {
      if (Str(c, "type") == type && Str(c, "status") == "True") return true;
    }
    return false;
  };
  std::string state = "Running";
  if (has("Complete")) state = "Complete";
  else if (has("Failed")) state = "Failed";
  else if (!Str(Field(job, "metadata"), "deletionTimestamp").empty()) state = "Terminating";
  else if (has("Suspended")) state = "Suspended";
  else if (has("FailureTarget")) state = "FailureTarget";
  else if (has("SuccessCriteriaMet")) state = "SuccessCriteriaMet";
  const std::int64_t succeeded = api::OptInt(status, "succeeded").value_or(0);
  std::string completions;
  if (auto c = api::OptInt(spec, "completions")) {
    completions = std::to_string(succeeded) + "/" + std::to_string(*c);
  } else {
    const std::int64_t parallelism = api::OptInt(spec, "parallelism").value_or(0);
    completions = std::to_string(succeeded) + "/1" +
                  (parallelism > 1 ? " of " + std::to_string(parallelism) : "");
  }
  std::string duration;
  auto start = ParseTime(Str(status, "startTime"));
  auto end = ParseTime(Str(status, "completionTime"));
  if (start) duration = FormatAge((end ? *end : now) - *start);
  std::string names, images;
  for (const Json& c : ArrayOr(api::FieldAt(spec, {"template", "spec", "containers"}))) {
    names += (names.empty() ? "" : ",") + Str(c, "name");
    images += (images.empty() ? "" : ",") + Str(c, "image");
  }
  std::string selector;
  for (const auto& [k, v] : ObjectOr(api::FieldAt(spec, {"selector", "matchLabels"})).items()) {
    selector += (selector.empty() ? "" : ",") + k + "=" + (v.is_string() ? v.get<std::string>() : "");
  }
  return {state, completions, duration, Age(Str(Field(job, "metadata"), "creationTimestamp"), now),
          names, images, selector.empty() ? "<none>" : selector};
}

struct TypedTable {
  const char* group;
  const char* plural;
  std::vector<Column> columns;  // after Name
  std::vector<Json> (*cells)(const Json& object, Time now);
};

const std::vector<TypedTable>& TypedTables() {
  static const std::vector<TypedTable> kTables = {
      {"",
       "configmaps",
       {{"Data", "string", "", 0, "Data contains the configuration data."},
        {"Age", "string", "", 0, kAgeDoc}},
       ConfigMapCells},
      {"",
       "secrets",
       {{"Type", "string", "", 0, "The type of secret"},
        {"Data", "string", "", 0, "Data contains the secret data."},
        {"Age", "string", "", 0, kAgeDoc}},
       SecretCells},
      {"",
       "serviceaccounts",
       {{"Secrets", "string", "", 0, "Secrets is a list of the secrets used by this account."},
        {"Age", "string", "", 0, kAgeDoc}},
       ServiceAccountCells},
      {"",
       "persistentvolumeclaims",
       {{"Status", "string", "", 0, "Phase represents the current phase of PersistentVolumeClaim."},
        {"Volume", "string", "", 0, "volumeName is the binding reference to the PersistentVolume."},
        {"Capacity", "string", "", 0, "capacity represents the actual resources of the volume."},
        {"Access Modes", "string", "", 0, "accessModes contains the desired access modes."},
        {"StorageClass", "string", "", 0, "storageClassName is the name of the StorageClass."},
        {"Age", "string", "", 0, kAgeDoc},
        {"VolumeMode", "string", "", 1, "volumeMode defines what type of volume is required."}},
       ClaimCells},
      {"",
       "persistentvolumes",
       {{"Capacity", "string", "", 0, "capacity is the description of the persistent volume."},
        {"Access Modes", "string", "", 0,
         "accessModes contains all ways the volume can be mounted."},
        {"Reclaim Policy", "string", "", 0, "persistentVolumeReclaimPolicy defines what happens."},
        {"Status", "string", "", 0, "phase indicates if a volume is available or bound."},
        {"Claim", "string", "", 0, "claimRef is part of a bi-directional binding."},
        {"StorageClass", "string", "", 0, "storageClassName is the name of StorageClass."},
        {"Reason", "string", "", 0, "reason is a brief CamelCase string that describes failures."},
        {"Age", "string", "", 0, kAgeDoc},
        {"VolumeMode", "string", "", 1,
         "volumeMode defines if a volume is used with a filesystem."}},
       VolumeCells},
      {"storage.k8s.io",
       "storageclasses",
       {{"Provisioner", "string", "", 0, "provisioner indicates the type of the provisioner."},
        {"ReclaimPolicy", "string", "", 0, "reclaimPolicy controls the reclaimPolicy."},
        {"VolumeBindingMode", "string", "", 0, "volumeBindingMode indicates how PVCs bind."},
        {"AllowVolumeExpansion", "string", "", 0, "allowVolumeExpansion shows expansion."},
        {"Age", "string", "", 0, kAgeDoc}},
       StorageClassCells},
      {"batch",
       "jobs",
       {{"Status", "string", "", 0, "Status of the job."},
        {"Completions", "string", "", 0, "The completion status of the job."},
        {"Duration", "string", "", 0, "Time required to complete the job."},
        {"Age", "string", "", 0, kAgeDoc},
        {"Containers", "string", "", 1, "Names of each container in the template."},
        {"Images", "string", "", 1, "Images referenced by each container in the template."},
        {"Selector", "string", "", 1,
         "A label query over pods that should match the pod count."}},
       JobCells},
      {"policy",
       "poddisruptionbudgets",
       {{"Min Available", "string", "", 0, "The minimum number of pods that must be available."},
        {"Max Unavailable", "string", "", 0, "The maximum number of pods that may be unavailable."},
        {"Allowed Disruptions", "integer", "", 0,
         "Calculated number of pods that may be disrupted at this time."},
        {"Age", "string", "", 0, kAgeDoc}},
       BudgetCells},
  };
  return kTables;
}

const TypedTable* TypedTableOf(const api::ResourceType& type) {
  for (const TypedTable& t : TypedTables()) {
    if (type.group == t.group && type.plural == t.plural) return &t;
  }
  return nullptr;
}

// The columns of a TypedTable: Name, then its own.
const std::vector<Column>& TypedColumnsOf(const TypedTable& t) {
  static const std::vector<std::vector<Column>> kTyped = [] {
    std::vector<std::vector<Column>> all;
    for (const TypedTable& tt : TypedTables()) {
      std::vector<Column> cols = {
          {"Name", "string", "name", 0, "Name must be unique within a namespace."}};
      cols.insert(cols.end(), tt.columns.begin(), tt.columns.end());
      all.push_back(std::move(cols));
    }
    return all;
  }();
  return kTyped[&t - TypedTables().data()];
}

// A custom resource's columns: Name, then its CRD's additionalPrinterColumns.
const std::vector<Column>* PrinterColumnsOf(const api::ResourceType& type) {
  static const std::map<const api::ResourceType*, std::vector<Column>> kAll = [] {
    std::map<const api::ResourceType*, std::vector<Column>> all;
    for (const api::ResourceType& r : api::AllResources()) {
      if (r.printer_columns.empty()) continue;
      std::vector<Column> cols = {
          {"Name", "string", "name", 0, "Name must be unique within a namespace."}};
      for (const api::PrinterColumn& c : r.printer_columns) {
        cols.push_back({c.name.c_str(), c.type.c_str(), "", c.priority, c.description.c_str()});
      }
      all.emplace(&r, std::move(cols));
    }
    return all;
  }();
  const api::ResourceType* row = api::FindResource(type.group, type.plural);
  auto it = kAll.find(row);
  return it == kAll.end() ? nullptr : &it->second;
}

// A printer column's cell as the CRD table convertor makes it: dates as ages, absent as null.
Json PrinterCell(const api::PrinterColumn& c, const Json& object, Time now) {
  const Json& v = api::JsonPathValue(object, c.json_path);
  if (v.is_null()) return nullptr;
  if (c.type == "date") return v.is_string() ? Json(Age(v.get<std::string>(), now)) : Json();
  if (c.type == "integer" || c.type == "number" || c.type == "boolean") return v;
  return v.is_string() ? v : Json(v.dump());
}

const std::vector<Column>& ColumnsOf(const api::ResourceType& type) {
  if (const TypedTable* t = TypedTableOf(type)) return TypedColumnsOf(*t);
  if (const std::vector<Column>* cols = PrinterColumnsOf(type)) return *cols;
  static const std::vector<Column> kPod = {
      {"Name", "string", "name", 0, "Name must be unique within a namespace."},
      {"Ready", "string", "", 0,
       "The aggregate readiness state of this pod for accepting traffic."},
      {"Status", "string", "", 0, "The aggregate status of the containers in this pod."},
      {"Restarts", "string", "", 0,
       "The number of times the containers in this pod have been restarted and when the last "
       "container in this pod has restarted."},
      {"Age", "string", "", 0,
       "CreationTimestamp is a timestamp representing the server time when this object was "
       "created."},
      {"IP", "string", "", 1,
       "IP address allocated to the pod. Routable at least within the cluster. Empty if not yet "
       "allocated."},
      {"Node", "string", "", 1, "NodeName is a request to schedule this pod onto a specific node."},
      {"Nominated Node", "string", "", 1,
       "nominatedNodeName is set only when this pod preempts other pods on the node."},
      {"Readiness Gates", "string", "", 1,
       "If specified, all readiness gates will be evaluated for pod readiness."}};
  static const std::vector<Column> kService = {
      {"Name", "string", "name", 0, "Name must be unique within a namespace."},
      {"Type", "string", "", 0, "type determines how the Service is exposed."},
      {"Cluster-IP", "string", "", 0, "clusterIP is the IP address of the service."},
      {"External-IP", "string", "", 0, "externalIPs is a list of IP addresses."},
      {"Port(s)", "string", "", 0, "The list of ports that are exposed by this service."},
      {"Age", "string", "", 0,
       "CreationTimestamp is a timestamp representing the server time when this object was "
       "created."},
      {"Selector", "string", "", 1,
       "Route service traffic to pods with label keys and values matching this selector."}};
  static const std::vector<Column> kNamespace = {
      {"Name", "string", "name", 0, "Name must be unique within a namespace."},
      {"Status", "string", "", 0, "The status of the namespace"},
      {"Age", "string", "", 0,
       "CreationTimestamp is a timestamp representing the server time when this object was "
       "created."}};
  static const std::vector<Column> kNode = {
      {"Name", "string", "name", 0, "Name must be unique within a namespace."},
      {"Status", "string", "", 0, "The status of the node"},
      {"Roles", "string", "", 0, "The roles of the node"},
      {"Age", "string", "", 0,
       "CreationTimestamp is a timestamp representing the server time when this object was "
       "created."},
      {"Version", "string", "", 0, "Kubelet Version reported by the node."},
      {"Internal-IP", "string", "", 1, "List of addresses reachable to the node."},
      {"External-IP", "string", "", 1, "List of addresses reachable to the node."}};
  static const std::vector<Column> kEvent = {
      {"Last Seen", "string", "", 0, "The last time this event occurred."},
      {"Type", "string", "", 0, "Type of this event (Normal, Warning)."},
      {"Reason", "string", "", 0, "The reason this event is generated."},
      {"Object", "string", "", 0, "The object that this event is about."},
      {"Message", "string", "", 0,
       "A human-readable description of the status of this operation."}};
  static const std::vector<Column> kDefault = {
      {"Name", "string", "name", 0, "Name must be unique within a namespace."},
      {"Age", "date", "", 0,
       "CreationTimestamp is a timestamp representing the server time when this object was "
       "created."}};
  if (type.group.empty()) {
    if (type.plural == "pods") return kPod;
    if (type.plural == "services") return kService;
    if (type.plural == "namespaces") return kNamespace;
    if (type.plural == "nodes") return kNode;
    if (type.plural == "events") return kEvent;
  }
  return kDefault;
}

std::string OrNone(const std::string& s) { return s.empty() ? "<none>" : s; }

std::vector<Json> PodCells(const Json& pod, Time now) {
  const Json& spec = Field(pod, "spec");
  const Json& status = Field(pod, "status");
  int total = Field(spec, "containers").is_array() ? Field(spec, "containers").size() : 0;
  int ready = 0;
  long long restarts = 0;
  std::string last_restart;
  for (const auto& cs : ArrayOr(Field(status, "containerStatuses"))) {
    restarts +=
        Field(cs, "restartCount").is_number() ? Field(cs, "restartCount").get<long long>() : 0;
    if (Field(cs, "ready").is_boolean() && Field(cs, "ready").get<bool>() &&
        Field(Field(cs, "state"), "running").is_object()) {
      ++ready;
    }
    const Json& last = Field(Field(cs, "lastState"), "terminated");
    std::string finished = Str(last.is_object() ? last : Json::object(), "finishedAt");
    if (!finished.empty() && finished > last_restart) last_restart = finished;
  }
  std::string restart_cell = std::to_string(restarts);
  if (restarts > 0 && !last_restart.empty()) {
    restart_cell += " (" + Age(last_restart, now) + " ago)";
  }
  int gates = Field(spec, "readinessGates").is_array() ? Field(spec, "readinessGates").size() : 0;
  std::string gates_cell = "<none>";
  if (gates > 0) {
    int true_gates = 0;
    for (const auto& g : Field(spec, "readinessGates")) {
      for (const auto& c : ArrayOr(Field(status, "conditions"))) {
        if (Str(c, "type") == Str(g, "conditionType") && Str(c, "status") == "True") ++true_gates;
      }
    }
    gates_cell = std::to_string(true_gates) + "/" + std::to_string(gates);
  }
  return {std::to_string(ready) + "/" + std::to_string(total),
          api::PodStatusText(pod),
          restart_cell,
          Age(Str(Field(pod, "metadata"), "creationTimestamp"), now),
          OrNone(Str(status, "podIP")),
          OrNone(Str(spec, "nodeName")),
          OrNone(Str(status, "nominatedNodeName")),
          gates_cell};
}

std::vector<Json> ServiceCells(const Json& svc, Time now) {
  const Json& spec = Field(svc, "spec");
  std::string ports;
  for (const auto& p : ArrayOr(Field(spec, "ports"))) {
    if (!ports.empty()) ports += ",";
    ports += std::to_string(Field(p, "port").is_number() ? Field(p, "port").get<int>() : 0);
    if (Field(p, "nodePort").is_number()) ports += ":" + Field(p, "nodePort").dump();
    ports += "/" + (Str(p, "protocol").empty() ? std::string("TCP") : Str(p, "protocol"));
  }
  std::string external = "<none>";
  if (Field(spec, "externalIPs").is_array() && !Field(spec, "externalIPs").empty()) {
    external.clear();
    for (const auto& ip : Field(spec, "externalIPs")) {
      external += (external.empty() ? "" : ",") + ip.get<std::string>();
    }
  }
  std::string selector;
  for (const auto& [k, v] : ObjectOr(Field(spec, "selector")).items()) {
    selector +=
        (selector.empty() ? "" : ",") + k + "=" + (v.is_string() ? v.get<std::string>() : "");
  }
  std::string type = Str(spec, "type").empty() ? "ClusterIP" : Str(spec, "type");
  return {type,
          OrNone(Str(spec, "clusterIP")),
          external,
          OrNone(ports),
          Age(Str(Field(svc, "metadata"), "creationTimestamp"), now),
          OrNone(selector)};
}

std::vector<Json> NodeCells(const Json& node, Time now) {
  const Json& status = Field(node, "status");
  std::string ready = "Unknown";
  for (const auto& c : ArrayOr(Field(status, "conditions"))) {
    if (Str(c, "type") == "Ready") ready = Str(c, "status") == "True" ? "Ready" : "NotReady";
  }
  if (Field(Field(node, "spec"), "unschedulable").is_boolean() &&
      Field(Field(node, "spec"), "unschedulable").get<bool>()) {
    ready += ",SchedulingDisabled";
  }
  std::string roles;
  const std::string prefix = "node-role.kubernetes.io/";
  for (const auto& [k, v] : ObjectOr(Field(Field(node, "metadata"), "labels")).items()) {
    if (k.rfind(prefix, 0) == 0) roles += (roles.empty() ? "" : ",") + k.substr(prefix.size());
  }
  std::string internal, external;
  for (const auto& a : ArrayOr(Field(status, "addresses"))) {
    if (Str(a, "type") == "InternalIP" && internal.empty()) internal = Str(a, "address");
    if (Str(a, "type") == "ExternalIP" && external.empty()) external = Str(a, "address");
  }
  return {ready,
          OrNone(roles),
          Age(Str(Field(node, "metadata"), "creationTimestamp"), now),
          Str(Field(status, "nodeInfo"), "kubeletVersion"),
          OrNone(internal),
          OrNone(external)};
}

std::vector<Json> EventCells(const Json& ev, Time now) {
  std::string last = Str(ev, "lastTimestamp");
  if (last.empty()) last = Str(ev, "eventTime");
  if (last.empty()) last = Str(ev, "firstTimestamp");
  const Json& io = Field(ev, "involvedObject");
  std::string kind = Str(io, "kind");
  std::transform(kind.begin(), kind.end(), kind.begin(), ::tolower);
  return {last.empty() ? "<unknown>" : Age(last, now), Str(ev, "type"), Str(ev, "reason"),
          kind + "/" + Str(io, "name"), Str(ev, "message")};
}

std::vector<Json> Cells(const api::ResourceType& type, const Json& object, Time now) {
  const Json& meta = Field(object, "metadata");
  std::string name = Str(meta, "name");
  std::string age = Age(Str(meta, "creationTimestamp"), now);
  std::vector<Json> cells;
  if (const TypedTable* t = TypedTableOf(type)) {
    cells = t->cells(object, now);
    cells.insert(cells.begin(), type.plural == "storageclasses" ? StorageClassName(object) : name);
    return cells;
  }
  if (const api::ResourceType* row = api::FindResource(type.group, type.plural);
      row && !row->printer_columns.empty()) {
    cells = {name};
    for (const api::PrinterColumn& c : row->printer_columns) {
      cells.push_back(PrinterCell(c, object, now));
    }
    return cells;
  }
  if (type.group.empty() && type.plural != "configmaps") {
    if (type.plural == "pods") cells = PodCells(object, now);
    if (type.plural == "services") cells = ServiceCells(object, now);
    if (type.plural == "nodes") cells = NodeCells(object, now);
    if (type.plural == "events") return EventCells(object, now);
    if (type.plural == "namespaces") {
      std::string phase = Str(Field(object, "status"), "phase");
      cells = {phase.empty() ? "Active" : phase, age};
    }
    if (!cells.empty()) {
      cells.insert(cells.begin(), name);
      return cells;
    }
  }
  return {name, age};
}

Json PartialObjectMetadata(const Json& object) {
  Json meta = Field(object, "metadata").is_object() ? Field(object, "metadata") : Json::object();
  meta.erase("managedFields");
  return {{"kind", "PartialObjectMetadata"}, {"apiVersion", "meta.k8s.io/v1"}, {"metadata", meta}};
}

Json ColumnDefinitions(const api::ResourceType& type) {
  Json out = Json::array();
  for (const auto& c : ColumnsOf(type)) {
    out.push_back({{"name", c.name},
                   {"type", c.type},
                   {"format", c.format},
                   {"description", c.description},
                   {"priority", c.priority}});
  }
  return out;
}

Json Row(const api::ResourceType& type, const Json& object, Time now) {
  return {{"cells", Cells(type, object, now)}, {"object", PartialObjectMetadata(object)}};
}

}  // namespace

bool WantsTable(const std::string& accept) {
  return accept.find("as=Table") != std::string::npos &&
         accept.find("g=meta.k8s.io") != std::string::npos;
}

Json ListToTable(const api::ResourceType& type, const Json& list, Time now) {
  Json rows = Json::array();
  for (const auto& item : ArrayOr(Field(list, "items"))) {
    rows.push_back(Row(type, item, now));
  }
  Json meta = Json::object();
  const Json& list_meta = Field(list, "metadata");
  if (!Str(list_meta, "resourceVersion").empty()) {
    meta["resourceVersion"] = Str(list_meta, "resourceVersion");
  }
  return {{"kind", "Table"},
          {"apiVersion", "meta.k8s.io/v1"},
          {"metadata", meta},
          {"columnDefinitions", ColumnDefinitions(type)},
          {"rows", rows}};
}

Json ObjectToTable(const api::ResourceType& type, const Json& object, Time now, bool with_columns) {
  Json meta = Json::object();
  std::string rv = Str(Field(object, "metadata"), "resourceVersion");
  if (!rv.empty()) meta["resourceVersion"] = rv;
  return {{"kind", "Table"},
          {"apiVersion", "meta.k8s.io/v1"},
          {"metadata", meta},
          {"columnDefinitions", with_columns ? ColumnDefinitions(type) : Json::array()},
          {"rows", {Row(type, object, now)}}};
}

}  // namespace pjemu::apiserver
