#include "agent/image_ref.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

namespace tessera {
namespace {

ImageRef Parsed(const std::string& text) {
  auto ref = ParseImageRef(text);
  EXPECT_TRUE(ref.has_value()) << text << ": " << (ref ? "" : ref.error().message());
  return ref ? *ref : ImageRef{};
}

TEST(ImageRefTest, ADockerHubNameIsUnderLibraryWithTheLatestTag) {
  const ImageRef ref = Parsed("busybox");
  EXPECT_EQ(ref.registry, "docker.io");
  EXPECT_EQ(ref.repository, "library/busybox");
  EXPECT_EQ(ref.tag, "latest");
  EXPECT_EQ(ref.Canonical(), "docker.io/library/busybox:latest");
  EXPECT_EQ(ref.Name(), "docker.io/library/busybox");
  EXPECT_EQ(Parsed("pytorch/pytorch:2.1").Canonical(), "docker.io/pytorch/pytorch:2.1");
}

TEST(ImageRefTest, ARegistryIsTheFirstPartWhenItHasADotAColonOrIsLocalhost) {
  EXPECT_EQ(Parsed("myregistry.azurecr.io/llm-trainer:v1.0").Canonical(), "myregistry.azurecr.io/llm-trainer:v1.0");
  const ImageRef local = Parsed("127.0.0.1:5000/team/trainer:v1");
  EXPECT_EQ(local.registry, "127.0.0.1:5000");
  EXPECT_EQ(local.repository, "team/trainer");
  EXPECT_TRUE(local.Loopback());
  EXPECT_TRUE(Parsed("localhost/x").Loopback());
  EXPECT_TRUE(Parsed("[::1]:5000/x").Loopback());
  EXPECT_FALSE(Parsed("registry.example.com/x").Loopback());
  // Without a dot or colon the first part is a repository's, on Docker Hub.
  EXPECT_EQ(Parsed("team/trainer").Canonical(), "docker.io/team/trainer:latest");
}

TEST(ImageRefTest, ADigestNamesTheImageAloneAndATagBeforeItIsDropped) {
  const std::string digest = "sha256:" + std::string(64, 'a');
  EXPECT_EQ(Parsed("busybox@" + digest).Canonical(), "docker.io/library/busybox@" + digest);
  const ImageRef both = Parsed("busybox:1.36@" + digest);
  EXPECT_EQ(both.tag, "1.36");
  EXPECT_EQ(both.Canonical(), "docker.io/library/busybox@" + digest);
  EXPECT_FALSE(ParseImageRef("busybox@sha256:abc").has_value()) << "a sha256 digest has 64 hex digits";
}

TEST(ImageRefTest, BadReferencesSayWhyInTheKubeletsWords) {
  for (const char* bad : {"", ":tag", "a//b", "a/", "busybox:", "busybox:-x", "bad name", "a@sha256", "-a"}) {
    auto ref = ParseImageRef(bad);
    ASSERT_FALSE(ref.has_value()) << "\"" << bad << "\" parsed";
    EXPECT_EQ(ref.error().message(), fmt::format("couldn't parse image reference \"{}\": invalid reference format", bad));
  }
  auto upper = ParseImageRef("Busybox");
  ASSERT_FALSE(upper.has_value());
  EXPECT_NE(upper.error().message().find("repository name must be lowercase"), std::string::npos);
}

TEST(ImageRefTest, PullPolicyDefaultsAsKubernetesDoes) {
  EXPECT_EQ(*ImagePullPolicy("", Parsed("busybox")), PullPolicy::kAlways);
  EXPECT_EQ(*ImagePullPolicy("", Parsed("busybox:latest")), PullPolicy::kAlways);
  EXPECT_EQ(*ImagePullPolicy("", Parsed("busybox:1.36")), PullPolicy::kIfNotPresent);
  EXPECT_EQ(*ImagePullPolicy("", Parsed("busybox@sha256:" + std::string(64, '0'))), PullPolicy::kIfNotPresent);
  EXPECT_EQ(*ImagePullPolicy("Never", Parsed("busybox")), PullPolicy::kNever);
  EXPECT_EQ(*ImagePullPolicy("Always", Parsed("busybox:1")), PullPolicy::kAlways);
  auto bad = ImagePullPolicy("Sometimes", Parsed("busybox"));
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().message().find("supported values: \"Always\", \"IfNotPresent\", \"Never\""), std::string::npos);
}

}  // namespace
}  // namespace tessera
