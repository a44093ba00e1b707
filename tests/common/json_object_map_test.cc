// JsonObjectMap: Json's member table keeps std::map's order and semantics in a sorted vector.
#include "emulator/common/json_object_map.h"

#include <catch2/catch.hpp>
#include <cstdint>
#include <map>
#include <string>

#include "emulator/common/status.h"

using pjemu::Json;
using pjemu::JsonKeyLess;
using Table = pjemu::JsonObjectMap<std::string, int>;

namespace {

// Names from a fixed linear congruential sequence, so each run sees the same ones; short names
// over a small alphabet repeat often, and the bytes above 0x7f sort after ASCII.
struct Names {
  std::uint32_t state = 4242;
  std::string operator()() {
    static const std::string alphabet = std::string("abAB\x80") + '\0';
    std::string s;
    for (std::uint32_t n = Next() % 5; n > 0; --n) s += alphabet[Next() % alphabet.size()];
    return s;
  }
  std::uint32_t Next() { return (state = state * 1664525u + 1013904223u) >> 8; }
};

std::map<std::string, int, JsonKeyLess> AsMap(const Table& t) { return {t.begin(), t.end()}; }

}  // namespace

TEST_CASE("a member table keeps std::map's order and answers as std::map does", "[common]") {
  Names name;
  Table table;
  std::map<std::string, int, JsonKeyLess> model;
  for (int i = 0; i < 4000; ++i) {
    const std::string key = name();
    INFO("step " << i << " key size " << key.size());
    switch (name.Next() % 4) {
      case 0: {  // emplace keeps a present member, as std::map's does
        auto [it, added] = table.emplace(key, i);
        auto [mit, madded] = model.emplace(key, i);
        REQUIRE(added == madded);
        REQUIRE(it->second == mit->second);
        break;
      }
      case 1:  // operator[] adds or overwrites
        table[key] = i;
        model[key] = i;
        break;
      case 2:  // erase by name
        REQUIRE(table.erase(key) == model.erase(key));
        break;
      default: {  // a hint that may be wrong: the member still lands in order
        auto hint = table.begin() + static_cast<std::ptrdiff_t>(name.Next() % (table.size() + 1));
        auto it = table.emplace_hint(hint, key, i);
        auto mit = model.emplace(key, i).first;
        REQUIRE(it->first == key);
        REQUIRE(it->second == mit->second);
      }
    }
    REQUIRE(table.size() == model.size());
    // Found alike whether the table is scanned (short) or searched (long).
    REQUIRE((table.find(key) == table.end()) == (model.find(key) == model.end()));
    REQUIRE(table.count(std::string_view(key)) == model.count(key));
  }
  REQUIRE(table.size() > 12);  // the searched path was reached
  CHECK(AsMap(table) == model);
  std::string last;
  bool first = true;
  for (const auto& [key, value] : table) {
    CHECK((first || JsonKeyLess()(last, key)));
    last = key;
    first = false;
  }
}

TEST_CASE("erasing by iterator returns the next member, and ranges erase", "[common]") {
  Table t{{"c", 3}, {"a", 1}, {"b", 2}, {"d", 4}};
  REQUIRE(t.begin()->first == "a");
  auto it = t.erase(t.find("b"));
  REQUIRE(it->first == "c");
  t.erase(t.begin(), t.begin() + 1);
  REQUIRE(t.size() == 2);
  CHECK(t.begin()->first == "c");
  CHECK(t.at("d") == 4);
  CHECK_THROWS_AS(t.at("z"), std::out_of_range);
}

TEST_CASE("Json built on the member table writes the texts std::map wrote", "[common]") {
  Json j = Json::parse(R"({"b":1,"a":{"z":[1,{"y":2,"x":3}],"\u00e9":4,"A":5},"":6})");
  CHECK(j.dump() == R"({"":6,"a":{"A":5,"z":[1,{"x":3,"y":2}],"é":4},"b":1})");
  Json copy = j;
  copy["a"]["m"] = 7;
  CHECK(copy != j);
  copy["a"].erase("m");
  CHECK(copy == j);
  CHECK(Json::from_msgpack(Json::to_msgpack(j)) == j);
  // A repeated member in a text: the last one wins, as nlohmann's parser made it with std::map.
  CHECK(Json::parse(R"({"a":1,"a":2})").dump() == R"({"a":2})");
}
