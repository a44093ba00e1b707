#include "emulator/persist/sqlite_durability.h"

#include <fcntl.h>
#include <sqlite3.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "emulator/api/json_fields.h"

namespace pjemu::persist {
namespace {

namespace fs = std::filesystem;
using api::WatchEvent;

constexpr char kSchemaVersion[] = "1";

const api::ResourceType* TypeByKey(const std::string& key) {
  for (const auto& t : api::AllResources()) {
    if (t.PluralGroup() == key) return &t;
  }
  return nullptr;
}

int EventCode(WatchEvent::Type t) { return static_cast<int>(t); }

std::string Column(sqlite3_stmt* s, int i) {
  const unsigned char* text = sqlite3_column_text(s, i);
  return text ? reinterpret_cast<const char*>(text) : "";
}

std::string MetaField(const Json& object, const char* field) {
  return api::Str(api::Field(object, "metadata"), field);
}

// Finalizes a statement when it goes out of scope.
struct Stmt {
  sqlite3_stmt* s = nullptr;
  ~Stmt() { sqlite3_finalize(s); }
};

}  // namespace

Result<std::unique_ptr<SqliteDurability>> SqliteDurability::Open(const PersistOptions& options) {
  if (options.data_dir.empty()) return InternalError("persist: no data directory given");
  std::unique_ptr<SqliteDurability> d(new SqliteDurability(options));
  RETURN_IF_ERROR(d->Init());
  RETURN_IF_ERROR(d->Load());
  return d;
}

SqliteDurability::~SqliteDurability() {
  for (sqlite3_stmt* s : {upsert_, remove_, change_, set_rv_, prune_}) sqlite3_finalize(s);
  if (db_) sqlite3_close(db_);
  if (lock_fd_ >= 0) ::close(lock_fd_);
}

Status SqliteDurability::Error(const std::string& what) const {
  std::string reason = db_ ? sqlite3_errmsg(db_) : "cannot open";
  return InternalError("storage: " + what + ": " + reason + " (" + path_ + ")");
}

Status SqliteDurability::Exec(const char* sql) {
  char* err = nullptr;
  if (sqlite3_exec(db_, sql, nullptr, nullptr, &err) == SQLITE_OK) return Status::Ok();
  std::string msg = err ? err : sqlite3_errmsg(db_);
  sqlite3_free(err);
  return InternalError("storage: " + msg + " (" + path_ + ")");
}

Status SqliteDurability::Prepare(const char* sql, sqlite3_stmt** stmt) {
  if (sqlite3_prepare_v2(db_, sql, -1, stmt, nullptr) != SQLITE_OK) return Error("prepare");
  return Status::Ok();
}

Status SqliteDurability::Init() {
  RETURN_IF_ERROR(UseDataDir());
  RETURN_IF_ERROR(FindOrCreateDatabase());
  if (sqlite3_open_v2(path_.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) !=
      SQLITE_OK) {
    return Error("open");
  }
  sqlite3_extended_result_codes(db_, 1);
  RETURN_IF_ERROR(QuickCheck());
  RETURN_IF_ERROR(Configure());
  return PrepareStatements();
}

// Creates the data directory, sets path_ and takes the directory's lock.
Status SqliteDurability::UseDataDir() {
  std::error_code ec;
  fs::path dir = fs::absolute(options_.data_dir, ec);
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir)) {
    return InternalError("cannot use data directory " + dir.string() + ": " +
                         (ec ? ec.message() : "not a directory"));
  }
  path_ = (dir / "pjemu.db").string();
  // One server per data directory: two would each hold their own view of the objects.
  std::string lock_path = (dir / "pjemu.lock").string();
  lock_fd_ = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (lock_fd_ < 0) {
    return InternalError("cannot use data directory " + dir.string() + ": " + lock_path + ": " +
                         std::strerror(errno));
  }
  if (::flock(lock_fd_, LOCK_EX | LOCK_NB) != 0) {
    return Status(Code::kUnavailable, "data directory " + dir.string() +
                                          " is in use by another pjemu (" + lock_path +
                                          " is locked)");
  }
  return Status::Ok();
}

// SQLite takes an empty or missing file for a new database: refuse when there is evidence
// that one existed (its WAL, or a zero-length file where a database was); else create one.
Status SqliteDurability::FindOrCreateDatabase() {
  std::error_code ec;
  bool exists = fs::exists(path_, ec);
  if (exists && fs::file_size(path_, ec) == 0 && !ec) {
    return InternalError("data file " + path_ +
                         " is empty (truncated?); refusing to start with an empty store. Move "
                         "the data directory away to start afresh");
  }
  if (!exists && fs::exists(path_ + "-wal", ec)) {
    return InternalError("data file " + path_ + " is missing but " + path_ +
                         "-wal is there; refusing to start with an empty store");
  }
  if (!exists) return CreateFresh();
  return Status::Ok();
}

// quick_check reads every page: a garbled or truncated file stops the start here.
Status SqliteDurability::QuickCheck() {
  Stmt check;
  if (sqlite3_prepare_v2(db_, "PRAGMA quick_check", -1, &check.s, nullptr) != SQLITE_OK) {
    return Corrupt(sqlite3_errmsg(db_));
  }
  int rc;
  std::string problems;
  while ((rc = sqlite3_step(check.s)) == SQLITE_ROW) {
    std::string line = Column(check.s, 0);
    if (line != "ok") problems += (problems.empty() ? "" : "; ") + line;
  }
  if (rc != SQLITE_DONE) return Corrupt(sqlite3_errmsg(db_));
  if (!problems.empty()) return Corrupt(problems);
  return Status::Ok();
}

// WAL mode, synchronous=FULL, and the page cap when one is given.
Status SqliteDurability::Configure() {
  {
    Stmt mode;
    if (sqlite3_prepare_v2(db_, "PRAGMA journal_mode=WAL", -1, &mode.s, nullptr) != SQLITE_OK ||
        sqlite3_step(mode.s) != SQLITE_ROW || Column(mode.s, 0) != "wal") {
      return Error("cannot switch to WAL mode");
    }
  }
  RETURN_IF_ERROR(Exec("PRAGMA synchronous=FULL"));
  if (options_.max_page_count > 0) {
    std::string pragma = "PRAGMA max_page_count=" + std::to_string(options_.max_page_count);
    RETURN_IF_ERROR(Exec(pragma.c_str()));
  }
  return Status::Ok();
}

Status SqliteDurability::PrepareStatements() {
  RETURN_IF_ERROR(Prepare(
      "INSERT INTO objects(resource, namespace, name, rv, object) VALUES(?1, ?2, ?3, ?4, ?5) "
      "ON CONFLICT(resource, namespace, name) DO UPDATE SET rv = ?4, object = ?5",
      &upsert_));
  RETURN_IF_ERROR(Prepare(
      "DELETE FROM objects WHERE resource = ?1 AND namespace = ?2 AND name = ?3", &remove_));
  RETURN_IF_ERROR(
      Prepare("INSERT INTO changes(rv, resource, event, object, old) VALUES(?1, ?2, ?3, ?4, ?5)",
              &change_));
  RETURN_IF_ERROR(Prepare("UPDATE meta SET value = ?1 WHERE key = 'rv'", &set_rv_));
  RETURN_IF_ERROR(Prepare("DELETE FROM changes WHERE rv <= ?1", &prune_));
  return Status::Ok();
}

// A new database is built under another name and renamed into place, so that a pjemu.db that
// exists was complete once: an empty one is damage, never a first start cut short.
Status SqliteDurability::CreateFresh() {
  std::string fresh = path_ + ".new";
  std::error_code ec;
  fs::remove(fresh, ec);
  sqlite3* db = nullptr;
  int rc = sqlite3_open_v2(fresh.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr);
  char* err = nullptr;
  if (rc == SQLITE_OK) {
    rc = sqlite3_exec(db,
                      "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;"
                      "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);"
                      "CREATE TABLE objects(resource TEXT NOT NULL, namespace TEXT NOT NULL, "
                      "  name TEXT NOT NULL, rv INTEGER NOT NULL, object TEXT NOT NULL, "
                      "  PRIMARY KEY(resource, namespace, name)) WITHOUT ROWID;"
                      "CREATE TABLE changes(rv INTEGER PRIMARY KEY, resource TEXT NOT NULL, "
                      "  event INTEGER NOT NULL, object TEXT NOT NULL, old TEXT);"
                      "INSERT INTO meta(key, value) VALUES('schema', '1'), ('rv', '0');",
                      nullptr, nullptr, &err);
  }
  std::string reason = err ? err : (db ? sqlite3_errmsg(db) : "cannot open");
  sqlite3_free(err);
  sqlite3_close(db);  // a clean close checkpoints the WAL into the file and removes it
  if (rc != SQLITE_OK) {
    return InternalError("cannot create data file " + fresh + ": " + reason);
  }
  fs::rename(fresh, path_, ec);
  if (ec) return InternalError("cannot create data file " + path_ + ": " + ec.message());
  // The rename is durable once the directory is synced.
  int dir_fd = ::open(fs::path(path_).parent_path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd >= 0) {
    ::fsync(dir_fd);
    ::close(dir_fd);
  }
  return Status::Ok();
}

Status SqliteDurability::Load() {
  snapshot_ = {};
  ASSIGN_OR_RETURN(snapshot_.rv, LoadMeta());
  RETURN_IF_ERROR(LoadObjects());
  RETURN_IF_ERROR(LoadChanges());
  const std::uint64_t rv = snapshot_.rv;
  if (!snapshot_.history.empty() && snapshot_.history.back().rv != rv) {
    return Corrupt("the change log ends at " + std::to_string(snapshot_.history.back().rv) +
                   ", the store at " + std::to_string(rv));
  }
  snapshot_.compacted_rv = snapshot_.history.empty() ? rv : snapshot_.history.front().rv - 1;
  return Status::Ok();
}

Status SqliteDurability::Corrupt(const std::string& what) const {
  return InternalError("data file " + path_ + " is corrupt: " + what);
}

// The global resourceVersion, once the schema version is the one this pjemu reads.
Result<std::uint64_t> SqliteDurability::LoadMeta() {
  std::string schema;
  std::uint64_t rv = 0;
  {
    Stmt s;
    if (sqlite3_prepare_v2(db_, "SELECT key, value FROM meta", -1, &s.s, nullptr) != SQLITE_OK) {
      return Error("read meta");
    }
    while (sqlite3_step(s.s) == SQLITE_ROW) {
      std::string key = Column(s.s, 0), value = Column(s.s, 1);
      if (key == "schema") schema = value;
      if (key == "rv") rv = std::strtoull(value.c_str(), nullptr, 10);
    }
  }
  if (schema != kSchemaVersion) {
    return Corrupt("schema version \"" + schema + "\", this pjemu reads \"" + kSchemaVersion +
                   "\"");
  }
  return rv;
}

// Every row of objects into snapshot_.objects, each checked against its metadata.
Status SqliteDurability::LoadObjects() {
  Stmt s;
  if (sqlite3_prepare_v2(db_, "SELECT resource, namespace, name, rv, object FROM objects", -1, &s.s,
                         nullptr) != SQLITE_OK) {
    return Error("read objects");
  }
  int rc;
  while ((rc = sqlite3_step(s.s)) == SQLITE_ROW) {
    std::string resource = Column(s.s, 0), ns = Column(s.s, 1), name = Column(s.s, 2);
    std::string where = "object " + resource + " " + (ns.empty() ? "" : ns + "/") + name;
    const api::ResourceType* type = TypeByKey(resource);
    if (!type) return Corrupt(where + ": unknown resource");
    Json object = Json::parse(Column(s.s, 4), nullptr, false);
    std::uint64_t object_rv = sqlite3_column_int64(s.s, 3);
    if (object.is_discarded() || !object.is_object()) return Corrupt(where + ": not JSON");
    if (MetaField(object, "name") != name || MetaField(object, "namespace") != ns ||
        MetaField(object, "resourceVersion") != std::to_string(object_rv) ||
        object_rv > snapshot_.rv) {
      return Corrupt(where + ": its metadata does not match its row");
    }
    snapshot_.objects.emplace_back(type, std::move(object));
  }
  if (rc != SQLITE_DONE) return Corrupt(sqlite3_errmsg(db_));
  return Status::Ok();
}

// The change log, in order and without gaps, into snapshot_.history.
Status SqliteDurability::LoadChanges() {
  Stmt s;
  if (sqlite3_prepare_v2(db_, "SELECT rv, resource, event, object, old FROM changes ORDER BY rv",
                         -1, &s.s, nullptr) != SQLITE_OK) {
    return Error("read changes");
  }
  int rc;
  while ((rc = sqlite3_step(s.s)) == SQLITE_ROW) {
    store::Change c;
    c.rv = sqlite3_column_int64(s.s, 0);
    std::string where = "change " + std::to_string(c.rv);
    c.type = TypeByKey(Column(s.s, 1));
    int event = sqlite3_column_int(s.s, 2);
    Json object = Json::parse(Column(s.s, 3), nullptr, false);
    if (!c.type || event < 0 || event > EventCode(WatchEvent::Type::kDeleted) ||
        object.is_discarded() || c.rv > snapshot_.rv ||
        (!snapshot_.history.empty() && c.rv != snapshot_.history.back().rv + 1)) {
      return Corrupt(where + ": does not decode");
    }
    c.event = static_cast<WatchEvent::Type>(event);
    c.object = std::make_shared<const Json>(std::move(object));
    if (sqlite3_column_type(s.s, 4) != SQLITE_NULL) {
      Json old = Json::parse(Column(s.s, 4), nullptr, false);
      if (old.is_discarded()) return Corrupt(where + ": does not decode");
      c.old = std::make_shared<const Json>(std::move(old));
    }
    snapshot_.history.push_back(std::move(c));
  }
  if (rc != SQLITE_DONE) return Corrupt(sqlite3_errmsg(db_));
  return Status::Ok();
}

Status SqliteDurability::Write(const store::Change& c) {
  const Json& object = *c.object;
  std::string resource = c.type->PluralGroup();
  std::string ns = MetaField(object, "namespace"), name = MetaField(object, "name");
  std::string text = object.dump();
  auto run = [&](sqlite3_stmt* s) {
    int rc = sqlite3_step(s);
    sqlite3_reset(s);
    sqlite3_clear_bindings(s);
    return rc == SQLITE_DONE;
  };
  if (c.event == WatchEvent::Type::kDeleted) {
    sqlite3_bind_text(remove_, 1, resource.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(remove_, 2, ns.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(remove_, 3, name.c_str(), -1, SQLITE_TRANSIENT);
    if (!run(remove_)) return Error("delete " + resource + " " + name);
  } else {
    sqlite3_bind_text(upsert_, 1, resource.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(upsert_, 2, ns.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(upsert_, 3, name.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(upsert_, 4, static_cast<sqlite3_int64>(c.rv));
    sqlite3_bind_text(upsert_, 5, text.c_str(), -1, SQLITE_TRANSIENT);
    if (!run(upsert_)) return Error("write " + resource + " " + name);
  }
  if (options_.history == 0) return Status::Ok();
  sqlite3_bind_int64(change_, 1, static_cast<sqlite3_int64>(c.rv));
  sqlite3_bind_text(change_, 2, resource.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_int(change_, 3, EventCode(c.event));
  sqlite3_bind_text(change_, 4, text.c_str(), -1, SQLITE_TRANSIENT);
  std::string old = c.old ? c.old->dump() : "";
  if (c.old) sqlite3_bind_text(change_, 5, old.c_str(), -1, SQLITE_TRANSIENT);
  if (!run(change_)) return Error("log change " + std::to_string(c.rv));
  return Status::Ok();
}

Status SqliteDurability::Commit(const std::vector<store::Change>& changes) {
  if (changes.empty()) return Status::Ok();
  if (Status s = Exec("BEGIN IMMEDIATE"); !s.ok()) return s;
  Status status = Status::Ok();
  for (const auto& c : changes) {
    status = Write(c);
    if (!status.ok()) break;
  }
  std::uint64_t last = changes.back().rv;
  if (status.ok()) {
    std::string rv = std::to_string(last);
    sqlite3_bind_text(set_rv_, 1, rv.c_str(), -1, SQLITE_TRANSIENT);
    int rc = sqlite3_step(set_rv_);
    sqlite3_reset(set_rv_);
    if (rc != SQLITE_DONE) status = Error("write resourceVersion");
  }
  if (status.ok() && last > options_.history) {
    sqlite3_bind_int64(prune_, 1, static_cast<sqlite3_int64>(last - options_.history));
    int rc = sqlite3_step(prune_);
    sqlite3_reset(prune_);
    if (rc != SQLITE_DONE) status = Error("prune the change log");
  }
  // COMMIT returns once the WAL frames are fsynced (synchronous=FULL).
  if (status.ok()) status = Exec("COMMIT");
  if (!status.ok() && !sqlite3_get_autocommit(db_)) (void)Exec("ROLLBACK");
  return status;
}

Result<PersistedStore> OpenStore(const Clock& clock, store::StoreOptions store_options,
                                 const PersistOptions& options) {
  PersistedStore out;
  ASSIGN_OR_RETURN(out.durability, SqliteDurability::Open(options));
  store_options.durability = out.durability.get();
  store_options.restore = &out.durability->snapshot();
  out.store = std::make_unique<store::Store>(clock, store_options);
  return out;
}

}  // namespace pjemu::persist
