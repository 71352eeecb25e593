// Runs every tests/scenarios/*.scn file as one test case (see scenario.h for the
// format). A scenario fails with each unmet expectation and its line number.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "tests/sched/scenario.h"

namespace tessera::testing {
namespace {

std::vector<std::string> ScenarioFiles() {
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(TESSERA_SCENARIO_DIR)) {
    if (e.path().extension() == ".scn") files.push_back(e.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

class ScenarioTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ScenarioTest, MeetsEveryExpectation) {
  auto failures = RunScenarioFile(GetParam());
  ASSERT_TRUE(failures.has_value()) << failures.error().ToString();
  for (const std::string& f : *failures) ADD_FAILURE() << f;
}

INSTANTIATE_TEST_SUITE_P(Scenarios, ScenarioTest, ::testing::ValuesIn(ScenarioFiles()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string name = std::filesystem::path(info.param).stem().string();
                           std::replace_if(name.begin(), name.end(), [](char c) { return !std::isalnum(c); }, '_');
                           return name;
                         });

TEST(ScenarioFilesTest, DirectoryHasScenarios) { EXPECT_GE(ScenarioFiles().size(), 10u); }

}  // namespace
}  // namespace tessera::testing
