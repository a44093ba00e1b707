#include "emulator/apiserver/protobuf_body.h"

#include <cstdint>
#include <map>
#include <optional>

#include "emulator/api/base64.h"

namespace pjemu::apiserver {
namespace {

constexpr std::string_view kMagic("k8s\0", 4);

// How one field of a message maps to JSON (k8s.io/api generated.proto numbering).
struct Message;
enum class Kind { kString, kBytes, kBool, kInt, kMessage, kMessages, kStringMap, kBytesMap, kStrings };
struct FieldSpec {
  const char* json;
  Kind kind;
  const Message* message = nullptr;
};
struct Message {
  std::map<int, FieldSpec> fields;
};

const Message& ObjectMetaMessage() {
  static const Message m{{{1, {"name", Kind::kString}},
                          {2, {"generateName", Kind::kString}},
                          {3, {"namespace", Kind::kString}},
                          {5, {"uid", Kind::kString}},
                          {6, {"resourceVersion", Kind::kString}},
                          {11, {"labels", Kind::kStringMap}},
                          {12, {"annotations", Kind::kStringMap}},
                          {14, {"finalizers", Kind::kStrings}}}};
  return m;
}

const Message* MessageOf(const api::ResourceType& type) {
  static const Message kConfigMap{{{1, {"metadata", Kind::kMessage, &ObjectMetaMessage()}},
                                   {2, {"data", Kind::kStringMap}},
                                   {3, {"binaryData", Kind::kBytesMap}},
                                   {4, {"immutable", Kind::kBool}}}};
  static const Message kSecret{{{1, {"metadata", Kind::kMessage, &ObjectMetaMessage()}},
                                {2, {"data", Kind::kBytesMap}},
                                {3, {"type", Kind::kString}},
                                {4, {"stringData", Kind::kStringMap}},
                                {5, {"immutable", Kind::kBool}}}};
  static const Message kNamespaceSpec{{{1, {"finalizers", Kind::kStrings}}}};
  static const Message kNamespace{{{1, {"metadata", Kind::kMessage, &ObjectMetaMessage()}},
                                   {2, {"spec", Kind::kMessage, &kNamespaceSpec}}}};
  // batch/v1 Job as `kubectl create job NAME --image=I -- CMD` sends it: the template's
  // containers (name, image, command, args, workingDir) and restartPolicy, and the spec's
  // scalars; fields not described here are skipped.
  static const Message kContainer{{{1, {"name", Kind::kString}},
                                   {2, {"image", Kind::kString}},
                                   {3, {"command", Kind::kStrings}},
                                   {4, {"args", Kind::kStrings}},
                                   {5, {"workingDir", Kind::kString}},
                                   {14, {"imagePullPolicy", Kind::kString}}}};
  static const Message kPodSpec{{{2, {"containers", Kind::kMessages, &kContainer}},
                                 {3, {"restartPolicy", Kind::kString}}}};
  static const Message kPodTemplate{{{1, {"metadata", Kind::kMessage, &ObjectMetaMessage()}},
                                     {2, {"spec", Kind::kMessage, &kPodSpec}}}};
  static const Message kJobSpec{{{1, {"parallelism", Kind::kInt}},
                                 {2, {"completions", Kind::kInt}},
                                 {3, {"activeDeadlineSeconds", Kind::kInt}},
                                 {5, {"manualSelector", Kind::kBool}},
                                 {6, {"template", Kind::kMessage, &kPodTemplate}},
                                 {7, {"backoffLimit", Kind::kInt}},
                                 {8, {"ttlSecondsAfterFinished", Kind::kInt}},
                                 {9, {"completionMode", Kind::kString}},
                                 {10, {"suspend", Kind::kBool}}}};
  static const Message kJob{{{1, {"metadata", Kind::kMessage, &ObjectMetaMessage()}},
                             {2, {"spec", Kind::kMessage, &kJobSpec}}}};
  if (type.group == "batch" && type.plural == "jobs") return &kJob;
  if (!type.group.empty()) return nullptr;
  if (type.plural == "configmaps") return &kConfigMap;
  if (type.plural == "secrets") return &kSecret;
  if (type.plural == "namespaces") return &kNamespace;
  return nullptr;
}

// A protobuf wire reader over one message's bytes.
class Reader {
 public:
  explicit Reader(std::string_view b) : b_(b) {}
  bool done() const { return pos_ >= b_.size(); }
  std::optional<std::uint64_t> Varint() {
    std::uint64_t v = 0;
    for (int shift = 0; shift < 64 && pos_ < b_.size(); shift += 7) {
      const auto byte = static_cast<unsigned char>(b_[pos_++]);
      v |= static_cast<std::uint64_t>(byte & 0x7f) << shift;
      if (!(byte & 0x80)) return v;
    }
    return std::nullopt;
  }
  std::optional<std::string_view> Bytes() {
    auto n = Varint();
    if (!n || *n > b_.size() - pos_) return std::nullopt;
    std::string_view out = b_.substr(pos_, *n);
    pos_ += *n;
    return out;
  }
  // Skips a field of wire type `wire`; false when malformed.
  bool Skip(int wire) {
    if (wire == 0) return Varint().has_value();
    if (wire == 2) return Bytes().has_value();
    const std::size_t n = wire == 1 ? 8 : wire == 5 ? 4 : SIZE_MAX;
    if (n == SIZE_MAX || n > b_.size() - pos_) return false;
    pos_ += n;
    return true;
  }

 private:
  std::string_view b_;
  std::size_t pos_ = 0;
};

std::optional<Json> Decode(const Message& message, std::string_view bytes);

// Calls fn(field number, bytes) for each length-delimited field of a message, skipping fields of
// other wire types; false when the message does not parse or fn returns false.
template <typename Fn>
bool ForEachBytesField(std::string_view message, Fn fn) {
  Reader r(message);
  while (!r.done()) {
    auto tag = r.Varint();
    if (!tag) return false;
    if ((*tag & 7) != 2) {
      if (!r.Skip(*tag & 7)) return false;
      continue;
    }
    auto v = r.Bytes();
    if (!v || !fn(*tag >> 3, *v)) return false;
  }
  return true;
}

// A map entry message {key = 1, value = 2}.
std::optional<std::pair<std::string, std::string>> MapEntry(std::string_view bytes) {
  std::pair<std::string, std::string> kv;
  bool ok = ForEachBytesField(bytes, [&kv](std::uint64_t field, std::string_view v) {
    if (field == 1) kv.first = v;
    if (field == 2) kv.second = v;
    return true;
  });
  if (!ok) return std::nullopt;
  return kv;
}

bool Put(Json& out, const FieldSpec& f, std::string_view bytes) {
  switch (f.kind) {
    case Kind::kString:
      out[f.json] = std::string(bytes);
      return true;
    case Kind::kBytes:
      out[f.json] = api::EncodeBase64(bytes);
      return true;
    case Kind::kStrings:
      out[f.json].push_back(std::string(bytes));
      return true;
    case Kind::kMessage: {
      auto sub = Decode(*f.message, bytes);
      if (sub) out[f.json] = std::move(*sub);
      return sub.has_value();
    }
    case Kind::kMessages: {
      auto sub = Decode(*f.message, bytes);
      if (sub) out[f.json].push_back(std::move(*sub));
      return sub.has_value();
    }
    case Kind::kStringMap:
    case Kind::kBytesMap: {
      auto kv = MapEntry(bytes);
      if (!kv) return false;
      out[f.json][kv->first] =
          f.kind == Kind::kBytesMap ? api::EncodeBase64(kv->second) : kv->second;
      return true;
    }
    default:
      return false;
  }
}

std::optional<Json> Decode(const Message& message, std::string_view bytes) {
  Json out = Json::object();
  Reader r(bytes);
  while (!r.done()) {
    auto tag = r.Varint();
    if (!tag) return std::nullopt;
    const int wire = static_cast<int>(*tag & 7);
    auto it = message.fields.find(static_cast<int>(*tag >> 3));
    if (it == message.fields.end()) {
      if (!r.Skip(wire)) return std::nullopt;
      continue;
    }
    const FieldSpec& f = it->second;
    if (wire == 0 && (f.kind == Kind::kBool || f.kind == Kind::kInt)) {
      auto v = r.Varint();
      if (!v) return std::nullopt;
      out[f.json] = f.kind == Kind::kBool ? Json(*v != 0) : Json(static_cast<std::int64_t>(*v));
      continue;
    }
    auto v = wire == 2 ? r.Bytes() : std::nullopt;
    if (!v || !Put(out, f, *v)) return std::nullopt;
  }
  return out;
}

// runtime.Unknown {typeMeta = 1 {apiVersion = 1, kind = 2}, raw = 2}.
struct Envelope {
  std::string api_version, kind;
  std::string_view raw;
};
std::optional<Envelope> Unwrap(std::string_view body) {
  Envelope e;
  auto type_meta = [&e](std::uint64_t field, std::string_view v) {
    if (field == 1) e.api_version = v;
    if (field == 2) e.kind = v;
    return true;
  };
  bool ok = ForEachBytesField(body.substr(kMagic.size()),
                              [&](std::uint64_t field, std::string_view v) {
                                if (field == 2) e.raw = v;
                                return field != 1 || ForEachBytesField(v, type_meta);
                              });
  if (!ok) return std::nullopt;
  return e;
}

}  // namespace

bool IsProtobufBody(std::string_view body) { return body.substr(0, kMagic.size()) == kMagic; }

Result<Json> ProtobufBodyToJson(const api::ResourceType& type, std::string_view body) {
  const Message* message = MessageOf(type);
  if (!message) {
    return Status(Code::kUnsupportedMediaType,
                  "the body of the request was in an unknown format - accepted media types "
                  "include: application/json, application/yaml");
  }
  auto fail = [&] {
    return BadRequestError(type.kind + " in version \"" + type.version +
                           "\" cannot be handled as a " + type.kind +
                           ": the protobuf body does not parse");
  };
  auto envelope = Unwrap(body);
  if (!envelope) return fail();
  auto object = Decode(*message, envelope->raw);
  if (!object) return fail();
  (*object)["apiVersion"] =
      envelope->api_version.empty() ? type.ApiVersion() : envelope->api_version;
  (*object)["kind"] = envelope->kind.empty() ? type.kind : envelope->kind;
  return *object;
}

}  // namespace pjemu::apiserver
