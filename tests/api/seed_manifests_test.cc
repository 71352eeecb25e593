// The seed's manifests (../shared/examples/seed/*.yaml) must apply unchanged
// (DESIGN.md section 4): every file parses and every object in it validates.
#include <gtest/gtest.h>

#include "tests/testing/seed_dir.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "api/manifest.h"
#include "api/validation.h"
#include "tests/testing/read_file.h"

namespace tessera {
namespace {

namespace fs = std::filesystem;
using ::tessera::testing::SeedDir;

#ifndef TESSERA_SOURCE_DIR
#define TESSERA_SOURCE_DIR "."
#endif


std::vector<fs::path> SeedFiles() {
  std::vector<fs::path> files;
  fs::path dir = SeedDir();
  if (dir.empty()) return files;
  for (const auto& entry : fs::directory_iterator(dir)) {
    std::string ext = entry.path().extension().string();
    if (entry.is_regular_file() && (ext == ".yaml" || ext == ".yml" || ext == ".json")) {
      files.push_back(entry.path());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

using testing::ReadFile;

// The seed directory is where DESIGN.md says, with the seven files the articles show.
TEST(SeedManifestsTest, SeedDirectoryHoldsTheSevenManifests) {
  ASSERT_FALSE(SeedDir().empty())
      << "seed manifests not found: looked for " TESSERA_SOURCE_DIR
         "/../shared/examples/seed and ../shared/examples/seed (from the working directory "
      << fs::current_path() << ")";
  EXPECT_EQ(SeedFiles().size(), 7u);
}

// Every object of every seed file parses and validates, unchanged.
TEST(SeedManifestsTest, EverySeedManifestParsesAndValidates) {
  std::vector<fs::path> files = SeedFiles();
  ASSERT_FALSE(files.empty()) << "no seed manifests found (see SeedDirectoryHoldsTheSevenManifests)";
  std::map<std::string, int> kinds;  // store key -> objects seen
  for (const fs::path& file : files) {
    SCOPED_TRACE(file.string());
    auto docs = ParseManifests(ReadFile(file));
    ASSERT_TRUE(docs.has_value()) << docs.error().ToString();
    EXPECT_FALSE(docs->empty());
    for (const ManifestDocument& doc : *docs) {
      auto kind = ValidateManifest(doc.object);
      ASSERT_TRUE(kind.has_value()) << doc.Where() << ": " << kind.error().ToString();
      ++kinds[std::string((*kind)->store_key)];
    }
  }
  // 3 namespaces, 2 quotas, 1 role, 1 network policy, 3 priority classes,
  // 1 cluster queue + 1 local queue, 1 Volcano job.
  EXPECT_EQ(kinds["/Namespace"], 3);
  EXPECT_EQ(kinds["/ResourceQuota"], 2);
  EXPECT_EQ(kinds["rbac.authorization.k8s.io/Role"], 1);
  EXPECT_EQ(kinds["networking.k8s.io/NetworkPolicy"], 1);
  EXPECT_EQ(kinds["scheduling.k8s.io/PriorityClass"], 3);
  EXPECT_EQ(kinds["kueue.x-k8s.io/ClusterQueue"], 1);
  EXPECT_EQ(kinds["kueue.x-k8s.io/LocalQueue"], 1);
  EXPECT_EQ(kinds["batch.volcano.sh/Job"], 1);
}

// The seed's quoted quantities stay strings and its plain ones numbers, as the
// YAML says: "8" in the quota, 16 in the cluster queue.
TEST(SeedManifestsTest, SeedScalarsKeepTheirYamlTypes) {
  fs::path dir = SeedDir();
  ASSERT_FALSE(dir.empty());
  auto quotas = ParseManifests(ReadFile(dir / "02-resourcequotas.yaml"));
  ASSERT_TRUE(quotas.has_value()) << quotas.error().ToString();
  EXPECT_EQ((*quotas)[0].object["spec"]["hard"]["requests.nvidia.com/gpu"], nlohmann::json("8"));
  auto kueue = ParseManifests(ReadFile(dir / "06-kueue.yaml"));
  ASSERT_TRUE(kueue.has_value()) << kueue.error().ToString();
  const auto& gpu = (*kueue)[0].object["spec"]["resourceGroups"][0]["flavors"][0]["resources"][2];
  EXPECT_EQ(gpu["name"], nlohmann::json("nvidia.com/gpu"));
  EXPECT_EQ(gpu["nominalQuota"], nlohmann::json(16));
}

}  // namespace
}  // namespace tessera
