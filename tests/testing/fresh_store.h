// A SQLite store in a fresh test directory (FreshTestDir), for tests that
// drive the server's parts without HTTP.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>

#include "store/sqlite_store.h"
#include "tests/testing/test_dirs.h"

namespace tessera::testing {

// Opens <dir>/t.db; nullptr (and the test fails) when it cannot.
inline std::unique_ptr<Store> OpenTestStore(const std::filesystem::path& dir) {
  auto store = OpenSqliteStore((dir / "t.db").string());
  EXPECT_TRUE(store.has_value()) << store.error().ToString();
  return store ? std::move(*store) : nullptr;
}

// A fixture whose tests each get their own store; a derived fixture that adds
// objects using the store resets them in its TearDown before calling this one.
class FreshStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = FreshTestDir("tessera-store");
    store_ = OpenTestStore(dir_);
    ASSERT_NE(store_, nullptr);
  }
  void TearDown() override {
    store_.reset();
    std::filesystem::remove_all(dir_);
  }

  std::filesystem::path dir_;
  std::unique_ptr<Store> store_;
};

}  // namespace tessera::testing
