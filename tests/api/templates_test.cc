// Templates (api/templates.h): where a knob's value goes, how values are read
// by type, and what a render refuses.
#include "api/templates.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace tessera {
namespace {

using ::testing::HasSubstr;
using nlohmann::json;

TEST(SetAtPathTest, MakesObjectsAndListsOnTheWayAndEscapesDots) {
  json o = json::object();
  ASSERT_TRUE(SetAtPath(o, "spec.template.spec.containers[0].image", "img").ok());
  ASSERT_TRUE(SetAtPath(o, "spec.template.spec.containers[0].resources.limits.nvidia\\.com/gpu", "2").ok());
  ASSERT_TRUE(SetAtPath(o, "spec.list[2]", 7).ok());
  EXPECT_EQ(o["spec"]["template"]["spec"]["containers"][0]["image"], "img");
  EXPECT_EQ(o["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"], "2");
  EXPECT_EQ(o["spec"]["list"], json({nullptr, nullptr, 7}));
}

TEST(SetAtPathTest, RefusesMalformedPathsAndCrossingOtherTypes) {
  json o{{"spec", {{"n", 3}, {"l", json::array()}}}};
  EXPECT_THAT(SetAtPath(o, "spec.n.x", 1).message(), HasSubstr("spec.n is not an object"));
  EXPECT_THAT(SetAtPath(o, "spec..x", 1).message(), HasSubstr("an empty field name"));
  EXPECT_THAT(SetAtPath(o, "spec.l[x]", 1).message(), HasSubstr("[x] is not a list index"));
  EXPECT_THAT(SetAtPath(o, "spec.l[0", 1).message(), HasSubstr("a [ without its ]"));
  EXPECT_THAT(SetAtPath(o, "spec.", 1).message(), HasSubstr("ends with a dot"));
  EXPECT_THAT(SetAtPath(o, "spec.n[0]", 1).message(), HasSubstr("spec.n is not a list"));
}

json Tmpl(json parameters) {
  return json{{"apiVersion", "tessera.dev/v1"},
              {"kind", "Template"},
              {"metadata", {{"name", "nb"}}},
              {"spec",
               {{"displayName", "Notebook"},
                {"object", {{"apiVersion", "tessera.dev/v1"}, {"kind", "Notebook"}, {"spec", {{"gpu", "0.25"}}}}},
                {"parameters", std::move(parameters)}}}};
}

TEST(RenderTemplateTest, ValuesByTypeThenDefaultsThenTheObjectsOwn) {
  const json t = Tmpl({{{"name", "gpu"}, {"path", "spec.gpu"}, {"type", "quantity"}},
                       {{"name", "idle"}, {"path", "spec.idle.timeout"}, {"default", "2h"}},
                       {{"name", "suspend"}, {"path", "spec.suspend"}, {"type", "boolean"}},
                       {{"name", "port"}, {"path", "spec.port"}, {"type", "integer"}},
                       {{"name", "command"}, {"path", "spec.command"}, {"type", "command"}}});
  auto o = RenderTemplate(t, {.name = "a", .ns = "team"});
  ASSERT_TRUE(o.has_value()) << o.error().message();
  EXPECT_EQ((*o)["spec"]["gpu"], "0.25");
  EXPECT_EQ((*o)["spec"]["idle"]["timeout"], "2h");
  EXPECT_FALSE((*o)["spec"].contains("suspend"));
  EXPECT_EQ((*o)["metadata"], json({{"name", "a"}, {"namespace", "team"}, {"labels", {{"tessera.dev/template", "nb"}}}}));
  o = RenderTemplate(t, {.name = "a",
                         .ns = "team",
                         .parameters = {{"gpu", 1}, {"suspend", "true"}, {"port", "9000"}, {"command", {"sleep", "1"}}}});
  ASSERT_TRUE(o.has_value()) << o.error().message();
  EXPECT_EQ((*o)["spec"]["gpu"], "1");
  EXPECT_EQ((*o)["spec"]["suspend"], true);
  EXPECT_EQ((*o)["spec"]["port"], 9000);
  EXPECT_EQ((*o)["spec"]["command"], json({"sleep", "1"}));
}

TEST(RenderTemplateTest, RefusalsNameTheParameter) {
  const json t = Tmpl({{{"name", "gpu"}, {"path", "spec.gpu"}, {"type", "quantity"}, {"enum", {"0.25", "1"}}},
                       {{"name", "port"}, {"path", "spec.port"}, {"type", "integer"}, {"minimum", 1024}, {"maximum", 9999}},
                       {{"name", "image"}, {"path", "spec.image"}, {"required", true}}});
  auto err = [&](std::map<std::string, json> p) {
    auto o = RenderTemplate(t, {.name = "a", .ns = "team", .parameters = std::move(p)});
    return o ? std::string("(rendered)") : o.error().message();
  };
  EXPECT_THAT(err({}), HasSubstr("parameters.image: required by template nb"));
  EXPECT_THAT(err({{"image", "i"}, {"imagee", "j"}}), HasSubstr("has no parameter imagee (did you mean image?)"));
  EXPECT_THAT(err({{"image", "i"}, {"gpu", "0.5"}}), HasSubstr("parameters.gpu: \"0.5\" is not one of 0.25, 1"));
  EXPECT_THAT(err({{"image", "i"}, {"gpu", "x"}}), HasSubstr("parameters.gpu: string \"x\" is not a quantity"));
  EXPECT_THAT(err({{"image", "i"}, {"port", 80}}), HasSubstr("parameters.port: 80 is below the minimum of 1024"));
  EXPECT_THAT(err({{"image", "i"}, {"port", "99999"}}), HasSubstr("parameters.port: 99999 is above the maximum of 9999"));
  EXPECT_THAT(err({{"image", "i"}, {"port", "8o8o"}}), HasSubstr("parameters.port: string \"8o8o\" is not an integer"));
  // What the kind refuses, in its words.
  const json bad = Tmpl({{{"name", "idle"}, {"path", "spec.idle.timeout"}}});
  auto o = RenderTemplate(bad, {.name = "a", .ns = "team", .parameters = {{"idle", "soon"}}});
  ASSERT_FALSE(o.has_value());
  EXPECT_THAT(o.error().message(), HasSubstr("makes an invalid Notebook"));
  EXPECT_THAT(o.error().message(), HasSubstr("spec.idle.timeout"));
}

}  // namespace
}  // namespace tessera
