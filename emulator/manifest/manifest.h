// Manifest loading: the first step of `pjemu apply/validate/run`. Reads a YAML (multi-document,
// YAML 1.1 scalars as kubectl reads them) or JSON file into JSON objects, expands `kind: List`,
// and keeps the line of every field so later stages (admission checks in check.h, the CLI)
// can report "job.yaml:12: spec.pytorchReplicaSpecs.Master.replicas: expected an integer".
// Hostile input (huge, deep, alias bombs, duplicate keys, binary) gives a one-line error.
// Thread safety: free functions over values; a Manifest is a plain value.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "emulator/common/status.h"

namespace pjemu::manifest {

// Limits, as the real API server's: a request body is at most 3 MiB.
inline constexpr size_t kMaxManifestBytes = 3 * 1024 * 1024;
inline constexpr int kMaxNestingDepth = 64;
// Values after alias expansion, per document: an alias bomb stops here. A real object is far
// smaller (etcd keeps objects under 1.5 MiB); at 1,000,000 the billion-laughs fixture took 12 s
// of CPU under AddressSanitizer, past the fuzz stage's 10-second timeout on a loaded machine.
inline constexpr size_t kMaxExpandedValues = 200'000;

struct Manifest {
  Json object;         // the object as kubectl would send it (apiVersion and kind are set)
  std::string source;  // the file name as given, or the source_name of LoadManifestText
  int line = 0;        // 1-based line where the document's content starts
  // JSON pointer ("/spec/pytorchReplicaSpecs/Master/replicas") -> 1-based line of that field.
  std::map<std::string, int> field_lines;

  // Line of a field named by a Kubernetes field path: "spec.pytorchReplicaSpecs.Master.replicas",
  // "spec.pytorchReplicaSpecs[Master].template.spec.containers[0].image" or
  // "metadata.annotations[sidecar.istio.io/inject]". Falls back to the nearest enclosing field
  // that has a line, then to the document line.
  int LineOf(std::string_view field_path) const;
  // The same for a JSON pointer ("/spec/replicas"; "" is the document).
  int LineOfPointer(std::string_view pointer) const;
  // "job.yaml:12".
  std::string Where(std::string_view field_path) const;
};

// Loads every object in a file (YAML or JSON, sniffed like kubectl: JSON when the first
// non-space byte is '{'). Empty documents are skipped; a file with no objects is an error.
// Errors: kNotFound (no such file), kRequestEntityTooLarge (over 3 MiB), kBadRequest (syntax,
// encoding, structure, missing apiVersion/kind), each one line starting "<path>:<line>: " (or
// "<path>: " when no line applies); LoadErrorOf (check.h) gives file and line back as values.
Result<std::vector<Manifest>> LoadManifestFile(const std::string& path);
// The same for text already in memory; `source_name` is used in errors and Manifest::source.
Result<std::vector<Manifest>> LoadManifestText(std::string_view text, std::string_view source_name);

// kInvalid "job.yaml:12: spec.pytorchReplicaSpecs.Master.replicas: <message>".
Status FieldError(const Manifest& manifest, std::string_view field_path, std::string_view message);
// kInvalid "job.yaml:12: spec.pytorchReplicaSpecs.Master.replicas: expected an integer", for
// `expected` = "an integer".
Status TypeError(const Manifest& manifest, std::string_view field_path, std::string_view expected);

// The same with the field named by a JSON pointer ("/spec/replicas"), printed as a field path.
Status TypeError(const Manifest& manifest, const Json::json_pointer& pointer,
                 std::string_view expected);

// Field path ("a.b[0].c", "a[b.c]") -> JSON pointer ("/a/b/0/c", "/a/b.c").
std::string FieldPathToPointer(std::string_view field_path);
// JSON pointer -> field path: "/a/b/0/c" -> "a.b[0].c", "/m/x.y~1z" -> "m[x.y/z]".
std::string PointerToFieldPath(std::string_view pointer);

}  // namespace pjemu::manifest
