#include "auth/pod_security.h"

#include <gtest/gtest.h>

namespace tessera {
namespace {

using nlohmann::json;
using Labels = std::map<std::string, std::string>;

json Spec(json container = json::object()) {
  container["name"] = "main";
  container["image"] = "busybox";
  return json{{"containers", json::array({container})}};
}

const Labels kPrivileged{{"pod-security.kubernetes.io/enforce", "privileged"}};
const Labels kRestricted{{"pod-security.kubernetes.io/enforce", "restricted"}};

TEST(PodSecurityTest, AnUnlabeledNamespaceIsBaselineAndSaysWhatItBlocksInKubernetesWords) {
  json spec = Spec();
  spec["hostNetwork"] = true;
  spec["volumes"] = {{{"name", "data"}, {"hostPath", {{"path", "/srv"}}}}};
  Status s = CheckPodSecurity(spec, {}, "web");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(s.message(),
            "pods \"web\" is forbidden: violates PodSecurity \"baseline:latest\": host namespaces (hostNetwork=true), "
            "hostPath volumes (volume \"data\")");
  EXPECT_TRUE(CheckPodSecurity(spec, kPrivileged, "web").ok());
  EXPECT_TRUE(CheckPodSecurity(Spec(), {}).ok()) << "a plain pod meets baseline";
  EXPECT_FALSE(AllowsHostNetwork({}));
  EXPECT_TRUE(AllowsHostNetwork(kPrivileged));
  EXPECT_EQ(PodSecurityLevel({}), "baseline");

  json more = Spec({{"securityContext", {{"privileged", true}, {"capabilities", {{"add", {"NET_ADMIN", "CHOWN", "SYS_ADMIN"}}}}}},
                    {"ports", {{{"containerPort", 80}, {"hostPort", 8080}}}}});
  more["hostPID"] = true;
  more["hostIPC"] = true;
  EXPECT_EQ(CheckPodSecurity(more, {}).message(),
            "violates PodSecurity \"baseline:latest\": non-default capabilities (container \"main\" must not include "
            "\"NET_ADMIN\", \"SYS_ADMIN\" in securityContext.capabilities.add), host namespaces (hostPID=true, "
            "hostIPC=true), hostPort (container \"main\" uses hostPort 8080), privileged (container \"main\" must not "
            "set securityContext.privileged=true)");
}

TEST(PodSecurityTest, RestrictedWantsAHardenedPod) {
  Status s = CheckPodSecurity(Spec(), kRestricted);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(),
            "violates PodSecurity \"restricted:latest\": allowPrivilegeEscalation != false (container \"main\" must set "
            "securityContext.allowPrivilegeEscalation=false), unrestricted capabilities (container \"main\" must set "
            "securityContext.capabilities.drop=[\"ALL\"]), runAsNonRoot != true (pod or container \"main\" must set "
            "securityContext.runAsNonRoot=true), seccompProfile (pod or container \"main\" must set "
            "securityContext.seccompProfile.type to \"RuntimeDefault\" or \"Localhost\")");
  json hardened = Spec({{"securityContext",
                         {{"allowPrivilegeEscalation", false}, {"capabilities", {{"drop", {"ALL"}}}}, {"runAsNonRoot", true}}}});
  hardened["securityContext"] = {{"seccompProfile", {{"type", "RuntimeDefault"}}}};
  hardened["volumes"] = {{{"name", "c"}, {"configMap", {{"name", "x"}}}}, {{"name", "d"}, {"persistentVolumeClaim", {{"claimName", "p"}}}}};
  EXPECT_TRUE(CheckPodSecurity(hardened, kRestricted).ok()) << CheckPodSecurity(hardened, kRestricted).message();
  hardened["volumes"].push_back({{"name", "h"}, {"hostPath", {{"path", "/"}}}});
  EXPECT_EQ(CheckPodSecurity(hardened, kRestricted).message(),
            "violates PodSecurity \"restricted:latest\": restricted volume types (volume \"h\" uses restricted volume "
            "type \"hostPath\")");
}

TEST(PodSecurityTest, TemplatesAreFoundAndLabelsChecked) {
  const json job{{"kind", "Job"}, {"spec", {{"template", {{"spec", Spec()}}}}}};
  const auto specs = PodSpecsOf(job);
  ASSERT_EQ(specs.size(), 1u);
  EXPECT_EQ(specs[0].first, "spec.template.spec");
  const json vcjob{{"kind", "Job"}, {"spec", {{"tasks", {{{"name", "a"}, {"template", {{"spec", Spec()}}}},
                                                         {{"name", "b"}, {"template", {{"spec", Spec()}}}}}}}}};
  EXPECT_EQ(PodSpecsOf(vcjob).size(), 2u);
  EXPECT_EQ(PodSpecsOf(vcjob)[1].first, "spec.tasks[1].template.spec");
  const json bad{{"metadata", {{"labels", {{"pod-security.kubernetes.io/enforce", "strict"}}}}}};
  EXPECT_EQ(ValidatePodSecurityLabels(bad).message(),
            "metadata.labels[pod-security.kubernetes.io/enforce]: Unsupported value: \"strict\": supported values: "
            "\"privileged\", \"baseline\", \"restricted\"");
  EXPECT_TRUE(ValidatePodSecurityLabels(json{{"metadata", {{"labels", kPrivileged}}}}).ok());
}

}  // namespace
}  // namespace tessera
