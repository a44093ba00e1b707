// SqliteDurability: the store's Durability (emulator/store/durability.h) in one SQLite database,
// <data_dir>/pjemu.db, in WAL mode with synchronous=FULL: every Commit() is one transaction whose
// WAL frames are fsynced before it returns, so a write the API acknowledged survives SIGKILL and
// power loss, and a write interrupted half-way is rolled back by SQLite on the next open.
// Tables: objects (the current state: resource, namespace, name, rv, JSON), changes (the newest
// `history` changes, so watches resume across a restart) and meta (schema version, global RV).
// Open() refuses, with a message naming the file, a database that is not one, fails SQLite's
// quick_check, is empty or lost while its WAL remains, or holds rows that do not decode: nothing
// is dropped silently. A flock on <data_dir>/pjemu.lock keeps a second server off the same dir.
// Thread safety: Commit() is called under the Store's mutex; Open() from one thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "emulator/common/clock.h"
#include "emulator/common/status.h"
#include "emulator/store/durability.h"
#include "emulator/store/store.h"

struct sqlite3;
struct sqlite3_stmt;

namespace pjemu::persist {

struct PersistOptions {
  std::string data_dir;        // created when missing
  std::size_t history = 1000;  // changes kept on disk for watches that resume after a restart
  // SQLite's PRAGMA max_page_count (0 = unlimited): tests use it to emulate a full disk.
  std::int64_t max_page_count = 0;
};

class SqliteDurability final : public store::Durability {
 public:
  // Opens or creates the database and loads its snapshot. kInternal naming the file for an
  // unusable directory or database (see above); kUnavailable when another process holds it.
  static Result<std::unique_ptr<SqliteDurability>> Open(const PersistOptions& options);
  ~SqliteDurability() override;
  SqliteDurability(const SqliteDurability&) = delete;
  SqliteDurability& operator=(const SqliteDurability&) = delete;

  Status Commit(const std::vector<store::Change>& changes) override;

  // What Open() loaded (rv 0 for a new database). Valid until the next Commit.
  const store::Snapshot& snapshot() const { return snapshot_; }
  const std::string& path() const { return path_; }

 private:
  explicit SqliteDurability(PersistOptions options) : options_(std::move(options)) {}
  // Open(): Init (the directory, its lock, the database checked and configured), then Load.
  Status Init();
  Status UseDataDir();
  Status FindOrCreateDatabase();
  Status CreateFresh();
  Status QuickCheck();
  Status Configure();
  Status PrepareStatements();
  Status Load();
  Result<std::uint64_t> LoadMeta();
  Status LoadObjects();
  Status LoadChanges();
  Status Corrupt(const std::string& what) const;  // kInternal "data file <path> is corrupt: ..."
  Status Exec(const char* sql);
  Status Error(const std::string& what) const;  // kInternal "<what>: <sqlite message> (<path>)"
  Status Prepare(const char* sql, sqlite3_stmt** stmt);
  Status Write(const store::Change& change);

  PersistOptions options_;
  std::string path_;
  int lock_fd_ = -1;
  sqlite3* db_ = nullptr;
  sqlite3_stmt* upsert_ = nullptr;
  sqlite3_stmt* remove_ = nullptr;
  sqlite3_stmt* change_ = nullptr;
  sqlite3_stmt* set_rv_ = nullptr;
  sqlite3_stmt* prune_ = nullptr;
  store::Snapshot snapshot_;
};

// A Store over a data directory: the durability (declared first, so it outlives the store) and
// the store restored from it. `store_options.durability` and `.restore` are set here.
struct PersistedStore {
  std::unique_ptr<SqliteDurability> durability;
  std::unique_ptr<store::Store> store;
};
Result<PersistedStore> OpenStore(const Clock& clock, store::StoreOptions store_options,
                                 const PersistOptions& options);

}  // namespace pjemu::persist
