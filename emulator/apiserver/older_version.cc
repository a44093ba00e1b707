// Requests to an older version a CRD still serves (api::ServedVersion): the body converted to
// the stored version before the verb runs, the answer converted back (an object, or a list's
// items), and the version's deprecation warning on every answer. A watch converts each event
// itself (WatchStream). Tables and Statuses pass as they are; a JSON patch (a list of
// operations) is applied as sent, to the stored form.
#include "emulator/apiserver/object_texts.h"
#include "emulator/apiserver/router.h"

namespace pjemu::apiserver {
namespace {

void ToStoredBody(HttpRequest& request, const api::ServedVersion& older) {
  if (request.body.empty()) return;
  Json body = Json::parse(request.body, nullptr, /*allow_exceptions=*/false);
  if (!body.is_object()) return;  // YAML, a JSON patch, or not JSON: the verb decodes it
  older.to_stored(body);
  request.body = CompactText(body);
}

HttpResponse FromStoredBody(HttpResponse response, const api::ServedVersion& older,
                            const api::ResourceType& type) {
  if (response.stream || response.body.empty()) return response;
  Json body = Json::parse(response.body, nullptr, /*allow_exceptions=*/false);
  if (!body.is_object()) return response;
  const std::string kind = body.value("kind", "");
  if (kind == "Status" || kind == "Table") return response;
  if (kind == type.ListKind()) {
    for (Json& item : body["items"]) older.from_stored(item);
    body["apiVersion"] = type.group + "/" + older.version;
  } else {
    older.from_stored(body);
  }
  response.body = CompactText(body);
  return response;
}

}  // namespace

HttpResponse Router::RouteOlderVersion(const HttpRequest& request, const ApiPath& path,
                                       const Query& query, const api::ServedVersion& older) const {
  HttpRequest stored = request;
  ToStoredBody(stored, older);
  auto routed = RouteResource(stored, path, query);
  HttpResponse response = routed.ok() ? FromStoredBody(std::move(routed).value(), older, *path.type)
                                      : ErrorResponse(routed.status());
  if (!older.deprecation_warning.empty()) {
    response.headers.emplace_back("Warning", WarningHeader(older.deprecation_warning));
  }
  return response;
}

}  // namespace pjemu::apiserver
