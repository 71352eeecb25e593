#include "common/uuid.h"

#include <gtest/gtest.h>

#include <regex>
#include <set>
#include <string>

namespace tessera {
namespace {

// All-zero and all-one bits show where the version (4) and variant (10) go.
TEST(UuidTest, FormatSetsVersionAndVariantBits) {
  EXPECT_EQ(FormatUuidV4(0, 0), "00000000-0000-4000-8000-000000000000");
  EXPECT_EQ(FormatUuidV4(~0ULL, ~0ULL), "ffffffff-ffff-4fff-bfff-ffffffffffff");
}

// The hex digits are the input bits in order, high nibble first.
TEST(UuidTest, FormatWritesBitsInOrder) {
  EXPECT_EQ(FormatUuidV4(0x0123456789ab0def, 0x0123456789abcdef), "01234567-89ab-4def-8123-456789abcdef");
}

// Generated UUIDs have the version-4 text form.
TEST(UuidTest, GeneratedUuidsAreVersion4Text) {
  UuidGenerator uuids;
  std::regex v4("[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}");
  for (int i = 0; i < 100; ++i) {
    std::string uuid = uuids.Next();
    EXPECT_TRUE(std::regex_match(uuid, v4)) << uuid;
  }
}

// 100,000 UUIDs from one generator are distinct.
TEST(UuidTest, GeneratedUuidsAreDistinct) {
  UuidGenerator uuids;
  std::set<std::string> seen;
  for (int i = 0; i < 100'000; ++i) seen.insert(uuids.Next());
  EXPECT_EQ(seen.size(), 100'000u);
}

// Two generators with one seed give the same sequence (tests rely on this).
TEST(UuidTest, ASeedMakesTheSequenceDeterministic) {
  UuidGenerator a(42);
  UuidGenerator b(42);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(a.Next(), b.Next());
}

}  // namespace
}  // namespace tessera
