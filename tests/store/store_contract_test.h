// The Store contract (src/store/store.h) as a typed test suite, run against
// every implementation. To run it against one, give it a factory type:
//
//   class MyStoreFactory {
//    public:
//     MyStoreFactory();   // fresh, empty storage for one test; the destructor releases it
//     // Opens a store over this storage. Called again after the previous store
//     // was destroyed (a reopen), and in a forked child process (crash test).
//     Result<std::unique_ptr<Store>> Open();
//   };
//   INSTANTIATE_TYPED_TEST_SUITE_P(My, StoreContractTest, ::testing::Types<MyStoreFactory>);
//
// Every test opens with a sentence on its scenario. Beyond what store.h spells
// out, the suite holds implementations to one more rule, which the watch and
// the "no revision consumed" guarantee rest on: revisions are consecutive.
// An empty store is at revision 0, each successful write takes the next
// integer, and a failed write (or batch) takes none.
#pragma once

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <latch>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <regex>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.h"
#include "common/status.h"
#include "store/store.h"

namespace tessera::store_contract {

using nlohmann::json;

// --- Helpers. -----------------------------------------------------------------

#define STORE_CONCAT_INNER_(a, b) a##b
#define STORE_CONCAT_(a, b) STORE_CONCAT_INNER_(a, b)

// `STORE_ASSERT_OK_AND_ASSIGN(auto x, store.Get(key));`: binds the value, or
// fails the test with the error's message.
#define STORE_ASSERT_OK_AND_ASSIGN(lhs, expr) \
  STORE_ASSERT_OK_AND_ASSIGN_IMPL_(STORE_CONCAT_(store_result_, __LINE__), lhs, expr)
#define STORE_ASSERT_OK_AND_ASSIGN_IMPL_(tmp, lhs, expr)          \
  auto tmp = (expr);                                              \
  ASSERT_TRUE(tmp.has_value()) << #expr << ": " << tmp.error().ToString(); \
  lhs = std::move(*tmp)

inline ObjectKey Pod(std::string ns, std::string name) { return {"/Pod", std::move(ns), std::move(name)}; }
inline ObjectKey ConfigMap(std::string ns, std::string name) {
  return {"/ConfigMap", std::move(ns), std::move(name)};
}
// Cluster-scoped: no namespace.
inline ObjectKey ClusterQueue(std::string name) { return {"kueue.x-k8s.io/ClusterQueue", "", std::move(name)}; }

// A manifest for `key`, as a client would send it: apiVersion, kind, metadata
// (name, namespace) and `spec`.
inline json Manifest(const ObjectKey& key, json spec = json::object()) {
  size_t slash = key.kind.find('/');
  std::string group = key.kind.substr(0, slash);
  json metadata = {{"name", key.name}};
  if (!key.ns.empty()) metadata["namespace"] = key.ns;
  return {{"apiVersion", group.empty() ? "v1" : group + "/v1beta1"},
          {"kind", key.kind.substr(slash + 1)},
          {"metadata", std::move(metadata)},
          {"spec", std::move(spec)}};
}

inline std::string ResourceVersion(const json& object) {
  return object.at("metadata").at("resourceVersion").get<std::string>();
}
inline std::string Uid(const json& object) { return object.at("metadata").at("uid").get<std::string>(); }

inline std::vector<std::string> Names(const std::vector<StoredObject>& items) {
  std::vector<std::string> names;
  for (const StoredObject& item : items) names.push_back(item.key.ns + "/" + item.key.name);
  return names;
}

template <typename T>
::testing::AssertionResult FailsWith(const Result<T>& result, StatusCode code) {
  if (result.has_value()) return ::testing::AssertionFailure() << "succeeded; expected " << StatusCodeName(code);
  if (result.error().code() != code) {
    return ::testing::AssertionFailure() << result.error().ToString() << "; expected " << StatusCodeName(code);
  }
  return ::testing::AssertionSuccess();
}
inline ::testing::AssertionResult FailsWith(const Status& status, StatusCode code) {
  if (status.code() != code) {
    return ::testing::AssertionFailure() << status.ToString() << "; expected " << StatusCodeName(code);
  }
  return ::testing::AssertionSuccess();
}

// --- The fixture. -------------------------------------------------------------

template <typename Factory>
class StoreContractTest : public ::testing::Test {
 protected:
  void SetUp() override { Reopen(); }

  // Closes the store, if open, and opens it again over the same storage.
  void Reopen() {
    store_.reset();
    Result<std::unique_ptr<Store>> opened = factory_.Open();
    ASSERT_TRUE(opened.has_value()) << opened.error().ToString();
    store_ = std::move(*opened);
  }
  void Close() { store_.reset(); }
  Store& store() { return *store_; }

  // Creates `key` with a manifest whose spec is `spec`; fails the test on error.
  StoredObject MustCreate(const ObjectKey& key, json spec = json::object()) {
    Result<StoredObject> created = store_->Create(key, Manifest(key, std::move(spec)));
    EXPECT_TRUE(created.has_value()) << created.error().ToString();
    return created.value_or(StoredObject{});
  }

  Factory factory_;
  std::unique_ptr<Store> store_;
};

TYPED_TEST_SUITE_P(StoreContractTest);

// --- Create, Get, List. -------------------------------------------------------

// A pod created in team-a reads back with its key, its spec and its revision.
TYPED_TEST_P(StoreContractTest, CreateThenGetReturnsTheStoredDocument) {
  Store& store = this->store();
  STORE_ASSERT_OK_AND_ASSIGN(StoredObject created, store.Create(Pod("team-a", "nb1"), Manifest(Pod("team-a", "nb1"), {{"gpu", "0.25"}})));
  STORE_ASSERT_OK_AND_ASSIGN(StoredObject got, store.Get(Pod("team-a", "nb1")));
  EXPECT_EQ(got.key, Pod("team-a", "nb1"));
  EXPECT_EQ(got.revision, created.revision);
  EXPECT_EQ(got.object, created.object);
  EXPECT_EQ(got.object["spec"]["gpu"], "0.25");
  EXPECT_EQ(got.object["metadata"]["name"], "nb1");
}

// Create stamps a v4 UUID and the revision (as a decimal string) into the
// stored document's metadata.
TYPED_TEST_P(StoreContractTest, CreateSetsUidAndResourceVersion) {
  Store& store = this->store();
  STORE_ASSERT_OK_AND_ASSIGN(StoredObject created, store.Create(Pod("team-a", "nb1"), Manifest(Pod("team-a", "nb1"))));
  EXPECT_GT(created.revision, 0);
  EXPECT_EQ(created.revision, store.Revision());
  EXPECT_EQ(ResourceVersion(created.object), std::to_string(created.revision));
  EXPECT_TRUE(std::regex_match(Uid(created.object),
                               std::regex("[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}")))
      << Uid(created.object);
  STORE_ASSERT_OK_AND_ASSIGN(StoredObject got, store.Get(Pod("team-a", "nb1")));
  EXPECT_EQ(Uid(got.object), Uid(created.object));
  EXPECT_EQ(ResourceVersion(got.object), std::to_string(created.revision));
}

// Two objects get different uids.
TYPED_TEST_P(StoreContractTest, EachCreateGetsItsOwnUid) {
  StoredObject a = this->MustCreate(Pod("team-a", "a"));
  StoredObject b = this->MustCreate(Pod("team-a", "b"));
  EXPECT_NE(Uid(a.object), Uid(b.object));
}

// A document that already carries a uid (a restore, a migration) keeps it.
TYPED_TEST_P(StoreContractTest, CreateKeepsAUidTheDocumentCarries) {
  json manifest = Manifest(Pod("team-a", "nb1"));
  manifest["metadata"]["uid"] = "5f0c2b1e-0000-4000-8000-000000000001";
  STORE_ASSERT_OK_AND_ASSIGN(StoredObject created, this->store().Create(Pod("team-a", "nb1"), manifest));
  EXPECT_EQ(Uid(created.object), "5f0c2b1e-0000-4000-8000-000000000001");
}

// Creating a key that exists fails with AlreadyExists, and neither the stored
// object nor the revision changes.
TYPED_TEST_P(StoreContractTest, CreateOfAnExistingKeyIsAlreadyExistsAndChangesNothing) {
  Store& store = this->store();
  StoredObject first = this->MustCreate(Pod("team-a", "nb1"), {{"image", "one"}});
  EXPECT_TRUE(FailsWith(store.Create(Pod("team-a", "nb1"), Manifest(Pod("team-a", "nb1"), {{"image", "two"}})),
                        StatusCode::kAlreadyExists));
  STORE_ASSERT_OK_AND_ASSIGN(StoredObject got, store.Get(Pod("team-a", "nb1")));
  EXPECT_EQ(got.object, first.object);
  EXPECT_EQ(store.Revision(), first.revision);
}

// The same name in another namespace, or of another kind, is another object.
TYPED_TEST_P(StoreContractTest, SameNameInAnotherNamespaceOrKindIsAnotherObject) {
  Store& store = this->store();
  this->MustCreate(Pod("team-a", "x"), {{"n", 1}});
  this->MustCreate(Pod("team-b", "x"), {{"n", 2}});
  this->MustCreate(ConfigMap("team-a", "x"), {{"n", 3}});
  STORE_ASSERT_OK_AND_ASSIGN(StoredObject a, store.Get(Pod("team-a", "x")));
  STORE_ASSERT_OK_AND_ASSIGN(StoredObject b, store.Get(Pod("team-b", "x")));
  STORE_ASSERT_OK_AND_ASSIGN(StoredObject c, store.Get(ConfigMap("team-a", "x")));
  EXPECT_EQ(a.object["spec"]["n"], 1);
  EXPECT_EQ(b.object["spec"]["n"], 2);
  EXPECT_EQ(c.object["spec"]["n"], 3);
}

// Getting a key that was never created fails with NotFound.
TYPED_TEST_P(StoreContractTest, GetOfAMissingKeyIsNotFound) {
  this->MustCreate(Pod("team-a", "nb1"));
  EXPECT_TRUE(FailsWith(this->store().Get(Pod("team-a", "nb2")), StatusCode::kNotFound));
  EXPECT_TRUE(FailsWith(this->store().Get(Pod("team-b", "nb1")), StatusCode::kNotFound));
}

// A document that is not a JSON object cannot be stored.
TYPED_TEST_P(StoreContractTest, CreateOfANonObjectDocumentIsInvalidArgument) {
  Store& store = this->store();
  EXPECT_TRUE(FailsWith(store.Create(Pod("team-a", "nb1"), json::array({1, 2})), StatusCode::kInvalidArgument));
  EXPECT_TRUE(FailsWith(store.Create(Pod("team-a", "nb1"), json{{"metadata", "x"}}), StatusCode::kInvalidArgument));
  EXPECT_EQ(store.Revision(), 0);
}

// A key needs a kind and a name.
TYPED_TEST_P(StoreContractTest, AKeyWithoutKindOrNameIsInvalidArgument) {
  Store& store = this->store();
  EXPECT_TRUE(FailsWith(store.Create(Pod("team-a", ""), Manifest(Pod("team-a", ""))), StatusCode::kInvalidArgument));
  EXPECT_TRUE(FailsWith(store.Create(ObjectKey{"", "team-a", "x"}, json::object()), StatusCode::kInvalidArgument));
}

// Listing one namespace returns its pods ordered by name, and nothing from
// other namespaces.
TYPED_TEST_P(StoreContractTest, ListInANamespaceIsOrderedByName) {
  this->MustCreate(Pod("team-a", "c"));
  this->MustCreate(Pod("team-b", "a"));
  this->MustCreate(Pod("team-a", "a"));
  this->MustCreate(Pod("team-a", "b"));
  STORE_ASSERT_OK_AND_ASSIGN(ListResult list, this->store().List("/Pod", "team-a"));
  EXPECT_EQ(Names(list.items), (std::vector<std::string>{"team-a/a", "team-a/b", "team-a/c"}));
}

// Listing across namespaces returns every pod, ordered by namespace, then name.
TYPED_TEST_P(StoreContractTest, ListAcrossNamespacesIsOrderedByNamespaceThenName) {
  this->MustCreate(Pod("team-b", "a"));
  this->MustCreate(Pod("team-a", "z"));
  this->MustCreate(Pod("team-a", "b"));
  this->MustCreate(Pod("team-c", "m"));
  STORE_ASSERT_OK_AND_ASSIGN(ListResult list, this->store().List("/Pod", ""));
  EXPECT_EQ(Names(list.items), (std::vector<std::string>{"team-a/b", "team-a/z", "team-b/a", "team-c/m"}));
}

// A list holds only the kind asked for; cluster-scoped kinds list with no namespace.
TYPED_TEST_P(StoreContractTest, ListReturnsOnlyTheGivenKind) {
  this->MustCreate(Pod("team-a", "p"));
  this->MustCreate(ConfigMap("team-a", "c"));
  this->MustCreate(ClusterQueue("gpu-queue"));
  STORE_ASSERT_OK_AND_ASSIGN(ListResult pods, this->store().List("/Pod", ""));
  STORE_ASSERT_OK_AND_ASSIGN(ListResult queues, this->store().List("kueue.x-k8s.io/ClusterQueue", ""));
  STORE_ASSERT_OK_AND_ASSIGN(ListResult none, this->store().List("/Secret", ""));
  EXPECT_EQ(Names(pods.items), (std::vector<std::string>{"team-a/p"}));
  EXPECT_EQ(Names(queues.items), (std::vector<std::string>{"/gpu-queue"}));
  EXPECT_TRUE(none.items.empty());
}

// A list carries the store's revision (also when the newest write was to
// another kind) and each item's own revision.
TYPED_TEST_P(StoreContractTest, ListCarriesTheStoreRevision) {
  StoredObject pod = this->MustCreate(Pod("team-a", "p"));
  StoredObject other = this->MustCreate(ConfigMap("team-a", "c"));
  STORE_ASSERT_OK_AND_ASSIGN(ListResult list, this->store().List("/Pod", "team-a"));
  EXPECT_EQ(list.revision, other.revision);
  ASSERT_EQ(list.items.size(), 1u);
  EXPECT_EQ(list.items[0].revision, pod.revision);
  EXPECT_EQ(list.items[0].object, pod.object);
}

// ListTexts is List as the documents' text: the same objects in the same
// order, each text the object List returns, and the same revision.
TYPED_TEST_P(StoreContractTest, ListTextsIsTheListAsStoredText) {
  this->MustCreate(Pod("team-a", "b"));
  this->MustCreate(Pod("team-b", "a"));
  this->MustCreate(Pod("team-a", "a"));
  this->MustCreate(ConfigMap("team-a", "c"));
  for (const std::string ns : {"team-a", ""}) {
    STORE_ASSERT_OK_AND_ASSIGN(ListResult list, this->store().List("/Pod", ns));
    STORE_ASSERT_OK_AND_ASSIGN(TextListResult texts, this->store().ListTexts("/Pod", ns));
    EXPECT_EQ(texts.revision, list.revision);
    ASSERT_EQ(texts.texts.size(), list.items.size()) << ns;
    for (size_t i = 0; i < texts.texts.size(); ++i) {
      EXPECT_EQ(nlohmann::json::parse(texts.texts[i]), list.items[i].object) << i;
    }
  }
  STORE_ASSERT_OK_AND_ASSIGN(TextListResult none, this->store().ListTexts("/Secret", ""));
  EXPECT_TRUE(none.texts.empty());
}

// --- Update. -----------------------------------------------------------------

// Updating with the revision last read replaces the document and moves it to a
// new, higher revision.
TYPED_TEST_P(StoreContractTest, UpdateWithTheMatchingRevisionSucceeds) {
  Store& store = this->store();
  StoredObject created = this->MustCreate(Pod("team-a", "nb1"), {{"image", "one"}});
  STORE_ASSERT_OK_AND_ASSIGN(StoredObject updated, store.Update(Pod("team-a", "nb1"), Manifest(Pod("team-a", "nb1"), {{"image", "two"}}), created.revision));
  EXPECT_GT(updated.revision, created.revision);
  EXPECT_EQ(ResourceVersion(updated.object), std::to_string(updated.revision));
  STORE_ASSERT_OK_AND_ASSIGN(StoredObject got, store.Get(Pod("team-a", "nb1")));
  EXPECT_EQ(got.revision, updated.revision);
  EXPECT_EQ(got.object["spec"]["image"], "two");
  EXPECT_EQ(store.Revision(), updated.revision);
}

// Expected revision 0 updates whatever is stored.
TYPED_TEST_P(StoreContractTest, UpdateWithRevisionZeroIsUnconditional) {
  Store& store = this->store();
  this->MustCreate(Pod("team-a", "nb1"), {{"image", "one"}});
  STORE_ASSERT_OK_AND_ASSIGN(StoredObject second, store.Update(Pod("team-a", "nb1"), Manifest(Pod("team-a", "nb1"), {{"image", "two"}}), 0));
  STORE_ASSERT_OK_AND_ASSIGN(StoredObject third, store.Update(Pod("team-a", "nb1"), Manifest(Pod("team-a", "nb1"), {{"image", "three"}}), 0));
  EXPECT_GT(third.revision, second.revision);
  STORE_ASSERT_OK_AND_ASSIGN(StoredObject got, store.Get(Pod("team-a", "nb1")));
  EXPECT_EQ(got.object["spec"]["image"], "three");
}

// Two clients read revision r; the first updates; the second, still sending r,
// gets Conflict, and the object, the revision and the event log stay as the
// first left them.
TYPED_TEST_P(StoreContractTest, UpdateWithAStaleRevisionIsConflictAndChangesNothing) {
  Store& store = this->store();
  StoredObject created = this->MustCreate(Pod("team-a", "nb1"), {{"image", "one"}});
  STORE_ASSERT_OK_AND_ASSIGN(StoredObject first, store.Update(Pod("team-a", "nb1"), Manifest(Pod("team-a", "nb1"), {{"image", "first"}}), created.revision));
  Result<StoredObject> second = store.Update(Pod("team-a", "nb1"), Manifest(Pod("team-a", "nb1"), {{"image", "second"}}), created.revision);
  EXPECT_TRUE(FailsWith(second, StatusCode::kConflict));
  STORE_ASSERT_OK_AND_ASSIGN(StoredObject got, store.Get(Pod("team-a", "nb1")));
  EXPECT_EQ(got.object, first.object);
  EXPECT_EQ(store.Revision(), first.revision);
  STORE_ASSERT_OK_AND_ASSIGN(std::vector<StoreEvent> after, store.EventsSince(first.revision, 100));
  EXPECT_TRUE(after.empty());
}

// An update keeps the uid, whether the new document leaves it out or carries
// another one.
TYPED_TEST_P(StoreContractTest, UpdateKeepsTheUid) {
  Store& store = this->store();
  StoredObject created = this->MustCreate(Pod("team-a", "nb1"));
  STORE_ASSERT_OK_AND_ASSIGN(StoredObject without_uid, store.Update(Pod("team-a", "nb1"), Manifest(Pod("team-a", "nb1")), 0));
  json other_uid = Manifest(Pod("team-a", "nb1"));
  other_uid["metadata"]["uid"] = "00000000-0000-4000-8000-000000000000";
  STORE_ASSERT_OK_AND_ASSIGN(StoredObject with_other_uid, store.Update(Pod("team-a", "nb1"), other_uid, 0));
  EXPECT_EQ(Uid(without_uid.object), Uid(created.object));
  EXPECT_EQ(Uid(with_other_uid.object), Uid(created.object));
  STORE_ASSERT_OK_AND_ASSIGN(StoredObject got, store.Get(Pod("team-a", "nb1")));
  EXPECT_EQ(Uid(got.object), Uid(created.object));
}

// Updating a key that does not exist fails with NotFound and writes nothing.
TYPED_TEST_P(StoreContractTest, UpdateOfAMissingKeyIsNotFound) {
  Store& store = this->store();
  EXPECT_TRUE(FailsWith(store.Update(Pod("team-a", "ghost"), Manifest(Pod("team-a", "ghost")), 0), StatusCode::kNotFound));
  EXPECT_TRUE(FailsWith(store.Get(Pod("team-a", "ghost")), StatusCode::kNotFound));
  EXPECT_EQ(store.Revision(), 0);
}

// --- Delete. -----------------------------------------------------------------

// Deleting removes the object; the result and the DELETED event carry the
// object as it was last stored, stamped with the deletion's revision.
TYPED_TEST_P(StoreContractTest, DeleteRemovesTheObjectAndItsEventCarriesTheLastObject) {
  Store& store = this->store();
  StoredObject created = this->MustCreate(Pod("team-a", "nb1"), {{"image", "one"}});
  STORE_ASSERT_OK_AND_ASSIGN(StoredObject updated, store.Update(Pod("team-a", "nb1"), Manifest(Pod("team-a", "nb1"), {{"image", "last"}}), created.revision));
  STORE_ASSERT_OK_AND_ASSIGN(StoredObject deleted, store.Delete(Pod("team-a", "nb1"), updated.revision));
  EXPECT_GT(deleted.revision, updated.revision);
  EXPECT_EQ(deleted.object["spec"]["image"], "last");
  EXPECT_EQ(ResourceVersion(deleted.object), std::to_string(deleted.revision));
  EXPECT_TRUE(FailsWith(store.Get(Pod("team-a", "nb1")), StatusCode::kNotFound));

  STORE_ASSERT_OK_AND_ASSIGN(std::vector<StoreEvent> events, store.EventsSince(updated.revision, 100));
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].type, EventType::kDeleted);
  EXPECT_EQ(events[0].revision, deleted.revision);
  EXPECT_EQ(events[0].object.key, Pod("team-a", "nb1"));
  EXPECT_EQ(events[0].object.revision, deleted.revision);
  EXPECT_EQ(events[0].object.object, deleted.object);
  EXPECT_EQ(Uid(events[0].object.object), Uid(created.object));
}

// Deleting with a stale revision fails with Conflict and keeps the object.
TYPED_TEST_P(StoreContractTest, DeleteWithAStaleRevisionIsConflictAndKeepsTheObject) {
  Store& store = this->store();
  StoredObject created = this->MustCreate(Pod("team-a", "nb1"));
  STORE_ASSERT_OK_AND_ASSIGN(StoredObject updated, store.Update(Pod("team-a", "nb1"), Manifest(Pod("team-a", "nb1")), 0));
  EXPECT_TRUE(FailsWith(store.Delete(Pod("team-a", "nb1"), created.revision), StatusCode::kConflict));
  STORE_ASSERT_OK_AND_ASSIGN(StoredObject got, store.Get(Pod("team-a", "nb1")));
  EXPECT_EQ(got.revision, updated.revision);
  EXPECT_EQ(store.Revision(), updated.revision);
}

// Deleting a key that does not exist fails with NotFound.
TYPED_TEST_P(StoreContractTest, DeleteOfAMissingKeyIsNotFound) {
  EXPECT_TRUE(FailsWith(this->store().Delete(Pod("team-a", "ghost"), 0), StatusCode::kNotFound));
  EXPECT_EQ(this->store().Revision(), 0);
}

// An object deleted and created again is a new object: a new uid.
TYPED_TEST_P(StoreContractTest, RecreatingADeletedObjectGivesItANewUid) {
  StoredObject first = this->MustCreate(Pod("team-a", "nb1"));
  STORE_ASSERT_OK_AND_ASSIGN(StoredObject deleted, this->store().Delete(Pod("team-a", "nb1"), 0));
  StoredObject second = this->MustCreate(Pod("team-a", "nb1"));
  EXPECT_NE(Uid(second.object), Uid(first.object));
  EXPECT_GT(second.revision, deleted.revision);
}

// --- Revisions. --------------------------------------------------------------

// A new store is at revision 0 and has no events.
TYPED_TEST_P(StoreContractTest, AnEmptyStoreIsAtRevisionZero) {
  EXPECT_EQ(this->store().Revision(), 0);
  STORE_ASSERT_OK_AND_ASSIGN(std::vector<StoreEvent> events, this->store().EventsSince(0, 100));
  EXPECT_TRUE(events.empty());
}

// Writes to different kinds and namespaces share one revision sequence, which
// increases strictly; Revision() is the newest.
TYPED_TEST_P(StoreContractTest, RevisionsIncreaseStrictlyAcrossKinds) {
  Store& store = this->store();
  std::vector<int64_t> revisions;
  revisions.push_back(this->MustCreate(Pod("team-a", "p")).revision);
  revisions.push_back(this->MustCreate(ClusterQueue("q")).revision);
  revisions.push_back(this->MustCreate(ConfigMap("team-b", "c")).revision);
  STORE_ASSERT_OK_AND_ASSIGN(StoredObject updated, store.Update(Pod("team-a", "p"), Manifest(Pod("team-a", "p")), 0));
  revisions.push_back(updated.revision);
  STORE_ASSERT_OK_AND_ASSIGN(StoredObject deleted, store.Delete(ClusterQueue("q"), 0));
  revisions.push_back(deleted.revision);
  for (size_t i = 1; i < revisions.size(); ++i) EXPECT_GT(revisions[i], revisions[i - 1]) << "write " << i;
  EXPECT_EQ(store.Revision(), revisions.back());
}

// --- Apply. ------------------------------------------------------------------

// A batch (create a, create b, update a, delete b) applies in order, each write
// with its own revision, and appends one event per write.
TYPED_TEST_P(StoreContractTest, ApplyAppliesEveryWriteInOrder) {
  Store& store = this->store();
  int64_t before = store.Revision();
  std::vector<WriteOp> ops;
  ops.push_back({WriteOp::Kind::kCreate, Pod("team-a", "a"), Manifest(Pod("team-a", "a"), {{"v", 1}}), 0});
  ops.push_back({WriteOp::Kind::kCreate, Pod("team-a", "b"), Manifest(Pod("team-a", "b")), 0});
  ops.push_back({WriteOp::Kind::kUpdate, Pod("team-a", "a"), Manifest(Pod("team-a", "a"), {{"v", 2}}), 0});
  ops.push_back({WriteOp::Kind::kDelete, Pod("team-a", "b"), json(), 0});
  STORE_ASSERT_OK_AND_ASSIGN(std::vector<StoredObject> results, store.Apply(std::move(ops)));
  ASSERT_EQ(results.size(), 4u);
  for (size_t i = 1; i < results.size(); ++i) EXPECT_GT(results[i].revision, results[i - 1].revision);
  EXPECT_EQ(store.Revision(), results.back().revision);

  STORE_ASSERT_OK_AND_ASSIGN(StoredObject a, store.Get(Pod("team-a", "a")));
  EXPECT_EQ(a.object["spec"]["v"], 2);
  EXPECT_EQ(a.revision, results[2].revision);
  EXPECT_TRUE(FailsWith(store.Get(Pod("team-a", "b")), StatusCode::kNotFound));

  STORE_ASSERT_OK_AND_ASSIGN(std::vector<StoreEvent> events, store.EventsSince(before, 100));
  ASSERT_EQ(events.size(), 4u);
  std::vector<EventType> types;
  for (size_t i = 0; i < events.size(); ++i) {
    types.push_back(events[i].type);
    EXPECT_EQ(events[i].revision, results[i].revision);
  }
  EXPECT_EQ(types, (std::vector<EventType>{EventType::kAdded, EventType::kAdded, EventType::kModified,
                                           EventType::kDeleted}));
}

// A batch whose second write fails (its key exists) applies nothing: the first
// and third writes are absent, no event is appended, no revision is consumed
// (the next write gets the next revision), and the error is the failing write's.
TYPED_TEST_P(StoreContractTest, ApplyWithAFailingWriteAppliesNothing) {
  Store& store = this->store();
  StoredObject existing = this->MustCreate(Pod("team-a", "taken"));
  int64_t before = store.Revision();
  std::vector<WriteOp> ops;
  ops.push_back({WriteOp::Kind::kCreate, Pod("team-a", "a"), Manifest(Pod("team-a", "a")), 0});
  ops.push_back({WriteOp::Kind::kCreate, Pod("team-a", "taken"), Manifest(Pod("team-a", "taken")), 0});
  ops.push_back({WriteOp::Kind::kCreate, Pod("team-a", "b"), Manifest(Pod("team-a", "b")), 0});
  EXPECT_TRUE(FailsWith(store.Apply(std::move(ops)), StatusCode::kAlreadyExists));

  EXPECT_TRUE(FailsWith(store.Get(Pod("team-a", "a")), StatusCode::kNotFound));
  EXPECT_TRUE(FailsWith(store.Get(Pod("team-a", "b")), StatusCode::kNotFound));
  STORE_ASSERT_OK_AND_ASSIGN(StoredObject taken, store.Get(Pod("team-a", "taken")));
  EXPECT_EQ(taken.object, existing.object);
  EXPECT_EQ(store.Revision(), before);
  STORE_ASSERT_OK_AND_ASSIGN(std::vector<StoreEvent> events, store.EventsSince(before, 100));
  EXPECT_TRUE(events.empty());
  EXPECT_EQ(this->MustCreate(Pod("team-a", "next")).revision, before + 1);
}

// A batch with a stale expected revision fails with Conflict and applies nothing.
TYPED_TEST_P(StoreContractTest, ApplyWithAStaleRevisionIsConflictAndAppliesNothing) {
  Store& store = this->store();
  StoredObject created = this->MustCreate(Pod("team-a", "a"));
  STORE_ASSERT_OK_AND_ASSIGN(StoredObject updated, store.Update(Pod("team-a", "a"), Manifest(Pod("team-a", "a")), 0));
  std::vector<WriteOp> ops;
  ops.push_back({WriteOp::Kind::kCreate, Pod("team-a", "b"), Manifest(Pod("team-a", "b")), 0});
  ops.push_back({WriteOp::Kind::kDelete, Pod("team-a", "a"), json(), created.revision});
  EXPECT_TRUE(FailsWith(store.Apply(std::move(ops)), StatusCode::kConflict));
  EXPECT_TRUE(FailsWith(store.Get(Pod("team-a", "b")), StatusCode::kNotFound));
  EXPECT_EQ(store.Revision(), updated.revision);
}

// An empty batch succeeds and writes nothing.
TYPED_TEST_P(StoreContractTest, ApplyOfAnEmptyBatchWritesNothing) {
  STORE_ASSERT_OK_AND_ASSIGN(std::vector<StoredObject> results, this->store().Apply({}));
  EXPECT_TRUE(results.empty());
  EXPECT_EQ(this->store().Revision(), 0);
}

// Units sharing a commit: the second unit (a create of a taken key, then a
// create that would succeed) fails alone; the first and third are applied, in
// order, with consecutive revisions; the failed unit leaves nothing behind.
TYPED_TEST_P(StoreContractTest, ApplyUnitsAppliesEachUnitWholeOrNotAtAll) {
  Store& store = this->store();
  this->MustCreate(Pod("team-a", "taken"));
  const int64_t before = store.Revision();
  std::vector<std::vector<WriteOp>> units(3);
  units[0].push_back({WriteOp::Kind::kCreate, Pod("team-a", "a"), Manifest(Pod("team-a", "a")), 0});
  units[0].push_back({WriteOp::Kind::kUpdate, Pod("team-a", "a"), Manifest(Pod("team-a", "a"), {{"v", 2}}), 0});
  units[1].push_back({WriteOp::Kind::kCreate, Pod("team-a", "lost"), Manifest(Pod("team-a", "lost")), 0});
  units[1].push_back({WriteOp::Kind::kCreate, Pod("team-a", "taken"), Manifest(Pod("team-a", "taken")), 0});
  units[2].push_back({WriteOp::Kind::kDelete, Pod("team-a", "taken"), json(), 0});
  std::vector<Store::UnitResult> results = store.ApplyUnits(std::move(units));
  ASSERT_EQ(results.size(), 3u);
  ASSERT_TRUE(results[0].has_value()) << results[0].error().message();
  EXPECT_TRUE(FailsWith(results[1], StatusCode::kAlreadyExists));
  ASSERT_TRUE(results[2].has_value()) << results[2].error().message();
  ASSERT_EQ(results[0]->size(), 2u);
  ASSERT_EQ(results[2]->size(), 1u);
  EXPECT_EQ((*results[0])[0].revision, before + 1);
  EXPECT_EQ((*results[0])[1].revision, before + 2);
  EXPECT_EQ((*results[2])[0].revision, before + 3);
  EXPECT_EQ(store.Revision(), before + 3);

  STORE_ASSERT_OK_AND_ASSIGN(StoredObject a, store.Get(Pod("team-a", "a")));
  EXPECT_EQ(a.object["spec"]["v"], 2);
  EXPECT_TRUE(FailsWith(store.Get(Pod("team-a", "lost")), StatusCode::kNotFound));
  EXPECT_TRUE(FailsWith(store.Get(Pod("team-a", "taken")), StatusCode::kNotFound));
  STORE_ASSERT_OK_AND_ASSIGN(std::vector<StoreEvent> events, store.EventsSince(before, 100));
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0].object.key.name, "a");
  EXPECT_EQ(events[1].object.key.name, "a");
  EXPECT_EQ(events[2].object.key.name, "taken");
  EXPECT_EQ(events[2].type, EventType::kDeleted);
}

// Many units, some conflicting (a stale expected revision), from several
// threads at once (so that they share group commits with other writes): each
// good unit lands, each stale one fails with Conflict, revisions have no gaps.
TYPED_TEST_P(StoreContractTest, ApplyUnitsFromSeveralThreadsKeepsEachUnitsOutcome) {
  Store& store = this->store();
  StoredObject target = this->MustCreate(Pod("team-a", "target"));
  STORE_ASSERT_OK_AND_ASSIGN(StoredObject moved, store.Update(Pod("team-a", "target"), Manifest(Pod("team-a", "target")), 0));
  const int64_t before = store.Revision();
  constexpr int kThreads = 4, kUnits = 50;
  std::vector<std::vector<Store::UnitResult>> results(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::vector<std::vector<WriteOp>> units(kUnits);
      for (int u = 0; u < kUnits; ++u) {
        const std::string name = "p" + std::to_string(t) + "-" + std::to_string(u);
        units[u].push_back({WriteOp::Kind::kCreate, Pod("team-a", name), Manifest(Pod("team-a", name)), 0});
        // Every fifth unit also updates the target at its first, stale revision.
        if (u % 5 == 0) {
          units[u].push_back({WriteOp::Kind::kUpdate, Pod("team-a", "target"), Manifest(Pod("team-a", "target")),
                              target.revision});
        }
      }
      results[t] = store.ApplyUnits(std::move(units));
    });
  }
  for (std::thread& t : threads) t.join();
  int64_t applied = 0;
  for (int t = 0; t < kThreads; ++t) {
    ASSERT_EQ(results[t].size(), static_cast<size_t>(kUnits));
    for (int u = 0; u < kUnits; ++u) {
      const std::string name = "p" + std::to_string(t) + "-" + std::to_string(u);
      if (u % 5 == 0) {
        EXPECT_TRUE(FailsWith(results[t][u], StatusCode::kConflict)) << name;
        EXPECT_TRUE(FailsWith(store.Get(Pod("team-a", name)), StatusCode::kNotFound)) << name;
      } else {
        ASSERT_TRUE(results[t][u].has_value()) << name << ": " << results[t][u].error().message();
        ++applied;
        EXPECT_TRUE(store.Get(Pod("team-a", name)).has_value()) << name;
      }
    }
  }
  EXPECT_EQ(store.Revision(), before + applied);
  STORE_ASSERT_OK_AND_ASSIGN(StoredObject still, store.Get(Pod("team-a", "target")));
  EXPECT_EQ(still.revision, moved.revision);
}

// --- Events. -----------------------------------------------------------------

// Create, update and delete of one pod, seen from revision 0: ADDED, MODIFIED,
// DELETED, oldest first, each with the document as of that write.
TYPED_TEST_P(StoreContractTest, EventsSinceZeroReturnsEveryWriteInOrder) {
  Store& store = this->store();
  StoredObject created = this->MustCreate(Pod("team-a", "nb1"), {{"v", 1}});
  STORE_ASSERT_OK_AND_ASSIGN(StoredObject updated, store.Update(Pod("team-a", "nb1"), Manifest(Pod("team-a", "nb1"), {{"v", 2}}), 0));
  STORE_ASSERT_OK_AND_ASSIGN(StoredObject deleted, store.Delete(Pod("team-a", "nb1"), 0));
  STORE_ASSERT_OK_AND_ASSIGN(std::vector<StoreEvent> events, store.EventsSince(0, 100));
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0].type, EventType::kAdded);
  EXPECT_EQ(events[0].revision, created.revision);
  EXPECT_EQ(events[0].object.object, created.object);
  EXPECT_EQ(events[1].type, EventType::kModified);
  EXPECT_EQ(events[1].revision, updated.revision);
  EXPECT_EQ(events[1].object.object, updated.object);
  EXPECT_EQ(events[2].type, EventType::kDeleted);
  EXPECT_EQ(events[2].revision, deleted.revision);
  for (const StoreEvent& event : events) {
    EXPECT_EQ(event.object.key, Pod("team-a", "nb1"));
    EXPECT_EQ(event.object.revision, event.revision);
  }
}

// A watcher that stopped at any revision r resumes with exactly the events
// after r: the tail of the full log.
TYPED_TEST_P(StoreContractTest, EventsSinceResumesFromAnyRevision) {
  Store& store = this->store();
  for (int i = 0; i < 6; ++i) this->MustCreate(Pod("team-a", "p" + std::to_string(i)));
  for (int i = 0; i < 4; ++i) {
    ASSERT_TRUE(store.Update(Pod("team-a", "p" + std::to_string(i)), Manifest(Pod("team-a", "p" + std::to_string(i))), 0).has_value());
  }
  STORE_ASSERT_OK_AND_ASSIGN(std::vector<StoreEvent> all, store.EventsSince(0, 1000));
  ASSERT_EQ(all.size(), 10u);  // 6 creates + 4 updates
  for (size_t i = 0; i < all.size(); ++i) {
    int64_t from = i == 0 ? 0 : all[i - 1].revision;
    STORE_ASSERT_OK_AND_ASSIGN(std::vector<StoreEvent> tail, store.EventsSince(from, 1000));
    ASSERT_EQ(tail.size(), all.size() - i) << "from revision " << from;
    for (size_t j = 0; j < tail.size(); ++j) {
      EXPECT_EQ(tail[j].revision, all[i + j].revision);
      EXPECT_EQ(tail[j].object.object, all[i + j].object.object);
    }
  }
  STORE_ASSERT_OK_AND_ASSIGN(std::vector<StoreEvent> none, store.EventsSince(all.back().revision, 1000));
  EXPECT_TRUE(none.empty());
}

// With a limit of 3, seven events come in pages of 3, 3 and 1.
TYPED_TEST_P(StoreContractTest, EventsSinceStopsAtTheLimit) {
  Store& store = this->store();
  for (int i = 0; i < 7; ++i) this->MustCreate(Pod("team-a", "p" + std::to_string(i)));
  std::vector<size_t> pages;
  std::vector<int64_t> seen;
  int64_t from = 0;
  while (true) {
    STORE_ASSERT_OK_AND_ASSIGN(std::vector<StoreEvent> page, store.EventsSince(from, 3));
    if (page.empty()) break;
    pages.push_back(page.size());
    for (const StoreEvent& event : page) seen.push_back(event.revision);
    from = page.back().revision;
  }
  EXPECT_EQ(pages, (std::vector<size_t>{3, 3, 1}));
  EXPECT_EQ(seen.size(), 7u);
  EXPECT_TRUE(std::is_sorted(seen.begin(), seen.end()));
  EXPECT_EQ(seen.back(), store.Revision());
}

// --- Compaction. -------------------------------------------------------------

// Ten writes, compacted to the newest 3: resuming after revision r10-3 works
// (all events after it are kept); resuming from earlier fails with Gone, whose
// message tells the client to list again.
TYPED_TEST_P(StoreContractTest, CompactionMakesOlderRevisionsGone) {
  Store& store = this->store();
  for (int i = 0; i < 10; ++i) this->MustCreate(Pod("team-a", "p" + std::to_string(i)));
  STORE_ASSERT_OK_AND_ASSIGN(std::vector<StoreEvent> all, store.EventsSince(0, 100));
  ASSERT_EQ(all.size(), 10u);
  ASSERT_TRUE(store.Compact(3).ok());

  // Kept: the events at all[7], all[8], all[9].
  STORE_ASSERT_OK_AND_ASSIGN(std::vector<StoreEvent> recent, store.EventsSince(all[6].revision, 100));
  ASSERT_EQ(recent.size(), 3u);
  EXPECT_EQ(recent.front().revision, all[7].revision);

  Result<std::vector<StoreEvent>> old = store.EventsSince(all[5].revision, 100);  // all[6] was dropped
  EXPECT_TRUE(FailsWith(old, StatusCode::kGone));
  if (!old.has_value()) {
    EXPECT_NE(old.error().message().find("list"), std::string::npos) << old.error().message();
  }
  EXPECT_TRUE(FailsWith(store.EventsSince(0, 100), StatusCode::kGone));
}

// Compaction drops events, never objects: after compacting everything, the
// objects and the revision are intact, and a watch started from a fresh
// list's revision sees the writes that follow.
TYPED_TEST_P(StoreContractTest, AfterCompactionAWatchResumesFromAList) {
  Store& store = this->store();
  for (int i = 0; i < 5; ++i) this->MustCreate(Pod("team-a", "p" + std::to_string(i)));
  int64_t before = store.Revision();
  ASSERT_TRUE(store.Compact(0).ok());
  EXPECT_EQ(store.Revision(), before);
  STORE_ASSERT_OK_AND_ASSIGN(ListResult list, store.List("/Pod", "team-a"));
  EXPECT_EQ(list.items.size(), 5u);
  EXPECT_EQ(list.revision, before);
  StoredObject next = this->MustCreate(Pod("team-a", "p5"));
  STORE_ASSERT_OK_AND_ASSIGN(std::vector<StoreEvent> events, store.EventsSince(list.revision, 100));
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].revision, next.revision);
}

// Compacting with a negative count is a caller error.
TYPED_TEST_P(StoreContractTest, CompactWithANegativeCountIsInvalidArgument) {
  EXPECT_TRUE(FailsWith(this->store().Compact(-1), StatusCode::kInvalidArgument));
}

// --- Concurrency. ------------------------------------------------------------

// Eight threads read the same revision of one object and update it at once:
// exactly one wins, seven get Conflict, and the object moved one revision.
TYPED_TEST_P(StoreContractTest, ConcurrentUpdatesFromOneRevisionHaveExactlyOneWinner) {
  Store& store = this->store();
  constexpr int kThreads = 8;
  StoredObject created = this->MustCreate(Pod("team-a", "hot"));
  std::latch start(kThreads);
  std::atomic<int> wins{0};
  std::atomic<int> conflicts{0};
  std::atomic<int> other_errors{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      json manifest = Manifest(Pod("team-a", "hot"), {{"writer", t}});
      start.arrive_and_wait();
      Result<StoredObject> result = store.Update(Pod("team-a", "hot"), std::move(manifest), created.revision);
      if (result.has_value()) {
        ++wins;
      } else if (result.error().code() == StatusCode::kConflict) {
        ++conflicts;
      } else {
        ++other_errors;
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(wins.load(), 1);
  EXPECT_EQ(conflicts.load(), kThreads - 1);
  EXPECT_EQ(other_errors.load(), 0);
  EXPECT_EQ(store.Revision(), created.revision + 1);  // one update = one revision after the create
}

// Eight threads create 250 distinct pods each: all 2,000 are stored, their
// revisions are unique, and the store moved by exactly 2,000 revisions.
TYPED_TEST_P(StoreContractTest, ConcurrentCreatesAreAllStoredWithUniqueRevisions) {
  Store& store = this->store();
  constexpr int kThreads = 8;
  constexpr int kPerThread = 250;
  std::latch start(kThreads);
  std::atomic<int> errors{0};
  std::vector<std::vector<int64_t>> revisions(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      start.arrive_and_wait();
      for (int i = 0; i < kPerThread; ++i) {
        ObjectKey key = Pod("team-" + std::to_string(t), "p" + std::to_string(i));
        Result<StoredObject> created = store.Create(key, Manifest(key));
        if (!created.has_value()) {
          ++errors;
          continue;
        }
        revisions[t].push_back(created->revision);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(errors.load(), 0);
  std::set<int64_t> unique;
  for (const auto& per_thread : revisions) {
    EXPECT_TRUE(std::is_sorted(per_thread.begin(), per_thread.end()));  // one thread's writes are ordered
    unique.insert(per_thread.begin(), per_thread.end());
  }
  EXPECT_EQ(unique.size(), size_t{kThreads * kPerThread});
  STORE_ASSERT_OK_AND_ASSIGN(ListResult list, store.List("/Pod", ""));
  EXPECT_EQ(list.items.size(), size_t{kThreads * kPerThread});
  EXPECT_EQ(store.Revision(), kThreads * kPerThread);  // 8 x 250 creates on an empty store
}

// CreateAsync: many creates queued at once without waiting (as the HTTP I/O
// threads do) are each called back once, with consecutive revisions in the
// order queued from one thread, and with the stored JSON text; a create into a
// missing parent (must_exist) is NotFound and takes no revision; a duplicate is
// AlreadyExists.
TYPED_TEST_P(StoreContractTest, CreateAsyncCallsBackOnceForEachCreate) {
  Store& store = this->store();
  STORE_ASSERT_OK_AND_ASSIGN(StoredObject parent, store.Create(ConfigMap("", "team-a"), Manifest(ConfigMap("", "team-a"))));
  constexpr int kCreates = 300;
  std::mutex mu;
  std::condition_variable cv;
  int callbacks = 0;
  std::vector<int64_t> revisions(kCreates, -1);
  std::vector<std::string> texts(kCreates);
  for (int i = 0; i < kCreates; ++i) {
    ObjectKey key = Pod("team-a", "p" + std::to_string(i));
    store.CreateAsync(key, Manifest(key), parent.key, [&, i](Result<int64_t> created, std::string_view text) {
      std::lock_guard lock(mu);
      if (created.has_value()) {
        revisions[i] = *created;
        texts[i] = std::string(text);
      }
      ++callbacks;
      cv.notify_all();
    });
  }
  {
    std::unique_lock lock(mu);
    ASSERT_TRUE(cv.wait_for(lock, std::chrono::seconds(30), [&] { return callbacks == kCreates; }));
  }
  for (int i = 0; i < kCreates; ++i) {
    EXPECT_EQ(revisions[i], parent.revision + 1 + i);  // one after another, as queued
    // The text is the object as stored, with its revision and uid.
    STORE_ASSERT_OK_AND_ASSIGN(StoredObject stored, store.Get(Pod("team-a", "p" + std::to_string(i))));
    EXPECT_EQ(json::parse(texts[i]), stored.object);
    EXPECT_EQ(stored.object["metadata"]["resourceVersion"], std::to_string(revisions[i]));
    EXPECT_FALSE(stored.object["metadata"]["uid"].get<std::string>().empty());
  }

  // Missing parent, then a duplicate: both fail and consume no revision.
  const int64_t before = store.Revision();
  std::optional<Status> missing, duplicate;
  auto wait_for = [&](std::optional<Status>& slot) {
    std::unique_lock lock(mu);
    ASSERT_TRUE(cv.wait_for(lock, std::chrono::seconds(30), [&] { return slot.has_value(); }));
  };
  auto record = [&](std::optional<Status>& slot) {
    return [&](Result<int64_t> created, std::string_view) {
      std::lock_guard lock(mu);
      slot = created.has_value() ? Status::Ok() : created.error();
      cv.notify_all();
    };
  };
  store.CreateAsync(Pod("team-b", "x"), Manifest(Pod("team-b", "x")), ConfigMap("", "team-b"), record(missing));
  wait_for(missing);
  store.CreateAsync(Pod("team-a", "p0"), Manifest(Pod("team-a", "p0")), std::nullopt, record(duplicate));
  wait_for(duplicate);
  // A document that cannot be stored (not valid UTF-8) fails too.
  std::optional<Status> invalid;
  json not_utf8 = Manifest(Pod("team-a", "bad"));
  not_utf8["spec"]["image"] = std::string("\xff\xfe");
  store.CreateAsync(Pod("team-a", "bad"), std::move(not_utf8), std::nullopt, record(invalid));
  wait_for(invalid);
  EXPECT_EQ(missing->code(), StatusCode::kNotFound) << missing->ToString();
  EXPECT_EQ(duplicate->code(), StatusCode::kAlreadyExists) << duplicate->ToString();
  EXPECT_EQ(invalid->code(), StatusCode::kInvalidArgument) << invalid->ToString();
  EXPECT_EQ(store.Revision(), before);
  EXPECT_TRUE(FailsWith(store.Get(Pod("team-b", "x")), StatusCode::kNotFound));
}

// Creates queued back to back, every tenth a duplicate of one before it, so
// that failures share group commits with good writes: the good ones are each
// called back with the object as stored (intact after the group was run a
// second time without the failure), with consecutive revisions in the order
// queued; the duplicates fail alone.
TYPED_TEST_P(StoreContractTest, CreateAsyncFailuresInAGroupLeaveTheOthersWhole) {
  Store& store = this->store();
  const int64_t before = store.Revision();
  constexpr int kCreates = 200;
  std::mutex mu;
  std::condition_variable cv;
  int callbacks = 0;
  std::vector<std::optional<Result<int64_t>>> results(kCreates);
  std::vector<std::string> texts(kCreates);
  for (int i = 0; i < kCreates; ++i) {
    const bool duplicate = i % 10 == 9;
    ObjectKey key = Pod("team-a", "p" + std::to_string(duplicate ? i - 5 : i));
    store.CreateAsync(key, Manifest(key, {{"i", i}}), std::nullopt,
                      [&, i](Result<int64_t> created, std::string_view text) {
                        std::lock_guard lock(mu);
                        results[i] = std::move(created);
                        texts[i] = std::string(text);
                        ++callbacks;
                        cv.notify_all();
                      });
  }
  {
    std::unique_lock lock(mu);
    ASSERT_TRUE(cv.wait_for(lock, std::chrono::seconds(30), [&] { return callbacks == kCreates; }));
  }
  int64_t next = before + 1;
  for (int i = 0; i < kCreates; ++i) {
    ASSERT_TRUE(results[i].has_value());
    const Result<int64_t>& r = *results[i];
    if (i % 10 == 9) {
      EXPECT_TRUE(FailsWith(r, StatusCode::kAlreadyExists)) << i;
      continue;
    }
    ASSERT_TRUE(r.has_value()) << i << ": " << r.error().ToString();
    EXPECT_EQ(*r, next++) << i;
    const json text = json::parse(texts[i]);
    EXPECT_EQ(text["spec"]["i"], i);
    EXPECT_EQ(text["metadata"]["resourceVersion"], std::to_string(*r)) << i;
    STORE_ASSERT_OK_AND_ASSIGN(StoredObject stored, store.Get(Pod("team-a", "p" + std::to_string(i))));
    EXPECT_EQ(stored.object, text) << i;
  }
  EXPECT_EQ(store.Revision(), next - 1);
}

// Eight threads interleave good writes with batches that fail midway (their
// second create hits an existing key). Whatever writes end up committed
// together, each failed batch leaves nothing and takes no revision: exactly
// the 8 x 100 good creates are stored, one event and one revision each.
TYPED_TEST_P(StoreContractTest, ConcurrentFailingWritesLeaveNoTrace) {
  Store& store = this->store();
  constexpr int kThreads = 8;
  constexpr int kPerThread = 100;
  this->MustCreate(Pod("shared", "taken"));
  int64_t base = store.Revision();
  std::latch start(kThreads);
  std::atomic<int> unexpected{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      start.arrive_and_wait();
      for (int i = 0; i < kPerThread; ++i) {
        ObjectKey good = Pod("good", std::to_string(t) + "-" + std::to_string(i));
        if (!store.Create(good, Manifest(good)).has_value()) ++unexpected;
        ObjectKey doomed = Pod("doomed", std::to_string(t) + "-" + std::to_string(i));
        std::vector<WriteOp> batch;
        batch.push_back({WriteOp::Kind::kCreate, doomed, Manifest(doomed), 0});
        batch.push_back({WriteOp::Kind::kCreate, Pod("shared", "taken"), Manifest(Pod("shared", "taken")), 0});
        Result<std::vector<StoredObject>> failed = store.Apply(std::move(batch));
        if (failed.has_value() || failed.error().code() != StatusCode::kAlreadyExists) ++unexpected;
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(unexpected.load(), 0);
  STORE_ASSERT_OK_AND_ASSIGN(ListResult good, store.List("/Pod", "good"));
  STORE_ASSERT_OK_AND_ASSIGN(ListResult doomed, store.List("/Pod", "doomed"));
  EXPECT_EQ(good.items.size(), size_t{kThreads * kPerThread});
  EXPECT_TRUE(doomed.items.empty());
  EXPECT_EQ(store.Revision(), base + kThreads * kPerThread);  // one revision per good create
  STORE_ASSERT_OK_AND_ASSIGN(std::vector<StoreEvent> events, store.EventsSince(base, 1'000'000));
  ASSERT_EQ(events.size(), size_t{kThreads * kPerThread});
  for (size_t i = 0; i < events.size(); ++i) {
    EXPECT_EQ(events[i].revision, base + 1 + static_cast<int64_t>(i));  // consecutive
    EXPECT_EQ(events[i].object.key.ns, "good");
  }
}

// While four threads create pods, a reader lists them again and again: every
// list is one snapshot, so it holds exactly as many pods as revisions passed
// (only creates happen), and no item is newer than the list.
TYPED_TEST_P(StoreContractTest, ListsDuringWritesAreConsistentSnapshots) {
  Store& store = this->store();
  constexpr int kWriters = 4;
  constexpr int kPerWriter = 200;
  int64_t base = store.Revision();
  std::atomic<bool> done{false};
  std::atomic<int> write_errors{0};
  std::atomic<int> lists{0};
  std::atomic<int> inconsistent{0};
  std::thread reader([&] {
    while (!done.load()) {
      Result<ListResult> list = store.List("/Pod", "");
      if (!list.has_value()) {
        ++inconsistent;
        continue;
      }
      ++lists;
      bool ok = static_cast<int64_t>(list->items.size()) == list->revision - base;
      for (const StoredObject& item : list->items) ok = ok && item.revision <= list->revision;
      if (!ok) ++inconsistent;
    }
  });
  std::vector<std::thread> writers;
  for (int t = 0; t < kWriters; ++t) {
    writers.emplace_back([&, t] {
      for (int i = 0; i < kPerWriter; ++i) {
        ObjectKey key = Pod("w" + std::to_string(t), "p" + std::to_string(i));
        if (!store.Create(key, Manifest(key)).has_value()) ++write_errors;
      }
    });
  }
  for (std::thread& writer : writers) writer.join();
  done.store(true);
  reader.join();
  EXPECT_EQ(write_errors.load(), 0);
  EXPECT_GT(lists.load(), 0);
  EXPECT_EQ(inconsistent.load(), 0);
}

// --- Durability. -------------------------------------------------------------

// Objects, events and the revision are the same after the store is closed and
// opened again; the next write continues the revision sequence.
TYPED_TEST_P(StoreContractTest, EverythingSurvivesCloseAndReopen) {
  Store* store = &this->store();
  StoredObject a = this->MustCreate(Pod("team-a", "a"), {{"v", 1}});
  this->MustCreate(ClusterQueue("q"));
  STORE_ASSERT_OK_AND_ASSIGN(StoredObject updated, store->Update(Pod("team-a", "a"), Manifest(Pod("team-a", "a"), {{"v", 2}}), a.revision));
  STORE_ASSERT_OK_AND_ASSIGN(StoredObject deleted, store->Delete(ClusterQueue("q"), 0));
  STORE_ASSERT_OK_AND_ASSIGN(std::vector<StoreEvent> events_before, store->EventsSince(0, 100));

  ASSERT_NO_FATAL_FAILURE(this->Reopen());
  store = &this->store();
  EXPECT_EQ(store->Revision(), deleted.revision);
  STORE_ASSERT_OK_AND_ASSIGN(StoredObject got, store->Get(Pod("team-a", "a")));
  EXPECT_EQ(got.object, updated.object);
  EXPECT_TRUE(FailsWith(store->Get(ClusterQueue("q")), StatusCode::kNotFound));
  STORE_ASSERT_OK_AND_ASSIGN(std::vector<StoreEvent> events_after, store->EventsSince(0, 100));
  ASSERT_EQ(events_after.size(), events_before.size());
  for (size_t i = 0; i < events_after.size(); ++i) {
    EXPECT_EQ(events_after[i].revision, events_before[i].revision);
    EXPECT_EQ(events_after[i].type, events_before[i].type);
    EXPECT_EQ(events_after[i].object.object, events_before[i].object.object);
  }
  EXPECT_EQ(this->MustCreate(Pod("team-a", "b")).revision, deleted.revision + 1);
}

namespace internal {

// The child's side of the crash test: opens the store, creates pods crash/p0,
// p1, ... and writes each name to `fd` once its Create has returned. Runs
// until killed; exits with 2, 3 or 4 if it cannot open, create or report.
template <typename Factory>
[[noreturn]] void CreateAndReportUntilKilled(Factory& factory, int fd) {
  Result<std::unique_ptr<Store>> store = factory.Open();
  if (!store.has_value()) _exit(2);
  for (int i = 0;; ++i) {
    ObjectKey key = Pod("crash", "p" + std::to_string(i));
    if (!(*store)->Create(key, Manifest(key, {{"i", i}})).has_value()) _exit(3);
    std::string line = key.name + "\n";  // under PIPE_BUF: written whole or not at all
    if (write(fd, line.data(), line.size()) != static_cast<ssize_t>(line.size())) _exit(4);
  }
}

}  // namespace internal

// A child process creates pods in a loop and, after each Create returns, writes
// the pod's name to a pipe. Once 300 names arrived, the parent kills it with
// SIGKILL mid-traffic and reopens the store: every acknowledged pod is there,
// at most one more (created, killed before reporting), and the revisions agree
// with the event log.
TYPED_TEST_P(StoreContractTest, AcknowledgedWritesSurviveKill9) {
  constexpr size_t kAcknowledgedBeforeKill = 300;
  this->Close();
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  pid_t child = fork();
  ASSERT_GE(child, 0) << "fork failed";
  if (child == 0) {
    close(fds[0]);
    internal::CreateAndReportUntilKilled(this->factory_, fds[1]);
  }
  close(fds[1]);

  // Read names until enough arrived, kill, then read what is left in the pipe
  // (acknowledged before the kill) until end of file.
  std::vector<std::string> acknowledged;
  std::string pending;
  bool killed = false;
  char buffer[4096];
  while (true) {
    ssize_t n = read(fds[0], buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    pending.append(buffer, static_cast<size_t>(n));
    for (size_t newline; (newline = pending.find('\n')) != std::string::npos;) {
      acknowledged.push_back(pending.substr(0, newline));
      pending.erase(0, newline + 1);
    }
    if (!killed && acknowledged.size() >= kAcknowledgedBeforeKill) {
      kill(child, SIGKILL);
      killed = true;
    }
  }
  close(fds[0]);
  int wait_status = 0;
  ASSERT_EQ(waitpid(child, &wait_status, 0), child);
  ASSERT_TRUE(killed) << "the child stopped early; exit status " << (WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : -1);
  ASSERT_TRUE(WIFSIGNALED(wait_status) && WTERMSIG(wait_status) == SIGKILL);
  EXPECT_TRUE(pending.empty()) << "a partial line: " << pending;

  ASSERT_NO_FATAL_FAILURE(this->Reopen());
  Store& store = this->store();
  for (const std::string& name : acknowledged) {
    EXPECT_TRUE(store.Get(Pod("crash", name)).has_value()) << "acknowledged " << name << " is missing";
  }
  STORE_ASSERT_OK_AND_ASSIGN(ListResult list, store.List("/Pod", "crash"));
  EXPECT_GE(list.items.size(), acknowledged.size());
  EXPECT_LE(list.items.size(), acknowledged.size() + 1);
  EXPECT_EQ(list.revision, store.Revision());

  // Each pod's revision is unique, no newer than the store, and is the
  // revision of its ADDED event; there is no other event.
  STORE_ASSERT_OK_AND_ASSIGN(std::vector<StoreEvent> events, store.EventsSince(0, 1'000'000));
  ASSERT_EQ(events.size(), list.items.size());
  std::map<std::string, int64_t> added;
  for (const StoreEvent& event : events) {
    EXPECT_EQ(event.type, EventType::kAdded);
    added[event.object.key.name] = event.revision;
  }
  std::set<int64_t> revisions;
  for (const StoredObject& item : list.items) {
    EXPECT_LE(item.revision, list.revision);
    EXPECT_EQ(added[item.key.name], item.revision) << item.key.name;
    EXPECT_EQ(ResourceVersion(item.object), std::to_string(item.revision));
    revisions.insert(item.revision);
  }
  EXPECT_EQ(revisions.size(), list.items.size());
  EXPECT_GT(this->MustCreate(Pod("crash", "after")).revision, list.revision);
}

REGISTER_TYPED_TEST_SUITE_P(StoreContractTest,
                            CreateThenGetReturnsTheStoredDocument,
                            CreateSetsUidAndResourceVersion,
                            EachCreateGetsItsOwnUid,
                            CreateKeepsAUidTheDocumentCarries,
                            CreateOfAnExistingKeyIsAlreadyExistsAndChangesNothing,
                            SameNameInAnotherNamespaceOrKindIsAnotherObject,
                            GetOfAMissingKeyIsNotFound,
                            CreateOfANonObjectDocumentIsInvalidArgument,
                            AKeyWithoutKindOrNameIsInvalidArgument,
                            ListInANamespaceIsOrderedByName,
                            ListAcrossNamespacesIsOrderedByNamespaceThenName,
                            ListReturnsOnlyTheGivenKind,
                            ListCarriesTheStoreRevision,
                            ListTextsIsTheListAsStoredText,
                            UpdateWithTheMatchingRevisionSucceeds,
                            UpdateWithRevisionZeroIsUnconditional,
                            UpdateWithAStaleRevisionIsConflictAndChangesNothing,
                            UpdateKeepsTheUid,
                            UpdateOfAMissingKeyIsNotFound,
                            DeleteRemovesTheObjectAndItsEventCarriesTheLastObject,
                            DeleteWithAStaleRevisionIsConflictAndKeepsTheObject,
                            DeleteOfAMissingKeyIsNotFound,
                            RecreatingADeletedObjectGivesItANewUid,
                            AnEmptyStoreIsAtRevisionZero,
                            RevisionsIncreaseStrictlyAcrossKinds,
                            ApplyAppliesEveryWriteInOrder,
                            ApplyWithAFailingWriteAppliesNothing,
                            ApplyWithAStaleRevisionIsConflictAndAppliesNothing,
                            ApplyOfAnEmptyBatchWritesNothing,
                            ApplyUnitsAppliesEachUnitWholeOrNotAtAll,
                            ApplyUnitsFromSeveralThreadsKeepsEachUnitsOutcome,
                            EventsSinceZeroReturnsEveryWriteInOrder,
                            EventsSinceResumesFromAnyRevision,
                            EventsSinceStopsAtTheLimit,
                            CompactionMakesOlderRevisionsGone,
                            AfterCompactionAWatchResumesFromAList,
                            CompactWithANegativeCountIsInvalidArgument,
                            ConcurrentUpdatesFromOneRevisionHaveExactlyOneWinner,
                            ConcurrentCreatesAreAllStoredWithUniqueRevisions,
                            CreateAsyncCallsBackOnceForEachCreate,
                            CreateAsyncFailuresInAGroupLeaveTheOthersWhole,
                            ConcurrentFailingWritesLeaveNoTrace,
                            ListsDuringWritesAreConsistentSnapshots,
                            EverythingSurvivesCloseAndReopen,
                            AcknowledgedWritesSurviveKill9);

}  // namespace tessera::store_contract
