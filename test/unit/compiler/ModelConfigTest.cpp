// The model builder: every config of the family builds a valid graph; bad configs are refused.
#include <gtest/gtest.h>

#include "TestData.h"
#include "support/Diagnostic.h"

namespace kime {
namespace {

std::string errorOf(const std::string& text) {
  try {
    parseModelConfig(text, "c.json");
  } catch (const CompileError& e) {
    return e.what();
  }
  return "no error";
}

TEST(ModelConfig, BuildsEveryVariantOfTheFamily) {
  for (const char* norm : {"rms", "layer"})
    for (const char* act : {"swiglu", "gelu"})
      for (const char* pos : {"rope", "learned"})
        for (bool bias : {false, true}) {
          ModelConfig c;
          c.vocab = 50, c.types = 3, c.hidden = 24, c.layers = 2, c.heads = 6, c.kvHeads = 2;
          c.ffn = 40, c.norm = norm, c.act = act, c.pos = pos, c.bias = bias, c.maxPos = 64;
          Graph g = buildEncoderGraph(c, shapes::DType::F32, "m");
          EXPECT_NO_THROW(checkGraph(g));
          size_t biases = 0;
          for (const WeightDecl& w : g.weights)
            biases += w.name.find(".attn.") != std::string::npos && w.name.size() > 5 &&
                      w.name.substr(w.name.size() - 5) == ".bias";
          EXPECT_EQ(biases, bias ? 8u : 0u);
        }
}

TEST(ModelConfig, ReadsTheGoldenConfigs) {
  for (const std::string& name : test::goldenCases()) EXPECT_NO_THROW(test::goldenGraph(name)) << name;
}

TEST(ModelConfig, RefusesBadConfigs) {
  const std::string base =
      R"("vocab": 10, "types": 2, "hidden": 8, "layers": 1, "ffn": 16, "act": "gelu", "pos": "rope")";
  EXPECT_EQ(errorOf("{" + base + R"(, "heads": 2})"), "c.json: field \"norm\" is missing");
  EXPECT_EQ(errorOf("{" + base + R"(, "heads": 3, "norm": "rms"})"), "c.json: hidden 8 is not a multiple of 3 heads");
  EXPECT_EQ(errorOf("{" + base + R"(, "heads": 4, "kv_heads": 3, "norm": "rms"})"),
            "c.json: 4 heads are not a multiple of 3 kv_heads");
  EXPECT_EQ(errorOf("{" + base + R"(, "heads": 8, "norm": "rms"})"), "c.json: rope needs an even head size, not 1");
  EXPECT_EQ(errorOf("{" + base + R"(, "heads": 2, "norm": "rms", "colour": 1})"), "c.json: unknown field \"colour\"");
  EXPECT_EQ(errorOf(R"({"vocab": 10})"), "c.json: field \"types\" is missing");
  EXPECT_EQ(errorOf("{" + base + R"(, "heads": 0, "norm": "rms"})"), "c.json: heads must be positive, not 0");
  EXPECT_EQ(errorOf("{" + base + R"(, "heads": 2, "norm": "batch"})"),
            "c.json: norm must be \"rms\" or \"layer\", not \"batch\"");
}

}  // namespace
}  // namespace kime
