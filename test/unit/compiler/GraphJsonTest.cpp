// The Graph's JSON form: what it accepts, round trips, and each refusal's message.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "TestData.h"
#include "support/Diagnostic.h"

namespace kime {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

ModelConfig smallConfig() {
  ModelConfig c;
  c.vocab = 4096, c.types = 4, c.hidden = 256, c.layers = 4, c.heads = 4, c.kvHeads = 4;
  c.ffn = 1024;
  return c;
}

json smallJson() { return json::parse(writeGraphJson(buildEncoderGraph(smallConfig(), shapes::DType::F32, "small"))); }

std::string errorOf(const json& j) {
  try {
    parseGraphJson(j.dump(), "g.json");
  } catch (const CompileError& e) {
    return e.what();
  }
  return "no error";
}

size_t nodeIndex(const json& j, const std::string& name) {
  for (size_t i = 0; i < j["nodes"].size(); ++i)
    if (j["nodes"][i]["name"] == name) return i;
  return SIZE_MAX;
}

json& weightDecl(json& j, const std::string& name) {
  for (json& w : j["weights"])
    if (w["name"] == name) return w;
  throw std::runtime_error("no weight " + name);
}

TEST(GraphJson, WriteThenParseGivesTheSameGraph) {
  for (const char* act : {"swiglu", "gelu"})
    for (const char* pos : {"rope", "learned"}) {
      ModelConfig c = smallConfig();
      c.act = act, c.pos = pos, c.norm = "layer", c.bias = true, c.kvHeads = 2;
      Graph g = buildEncoderGraph(c, shapes::DType::BF16, "m");
      std::string text = writeGraphJson(g);
      Graph back = parseGraphJson(text, "g.json");
      EXPECT_TRUE(back == g) << act << " " << pos;
      EXPECT_EQ(writeGraphJson(back), text);
    }
}

TEST(GraphJson, AWeightOfTheWrongWidthNamesTheNodeAndTheField) {
  json j = smallJson();
  weightDecl(j, "layers.3.mlp.up.weight")["shape"] = {1024, 255};
  EXPECT_EQ(errorOf(j), "g.json: node " + std::to_string(nodeIndex(j, "layers.3.mlp.up")) +
                            " (linear \"layers.3.mlp.up\"): weight [1024, 255] does not match "
                            "input width 256");
}

TEST(GraphJson, RefusesUnknownOpsFieldsAndMissingOperands) {
  json j = smallJson();
  j["nodes"][3]["op"] = "conv";
  EXPECT_EQ(errorOf(j), "g.json: node 3: unknown op \"conv\"");
  j = smallJson();
  j["nodes"][5]["wieght"] = "x";
  EXPECT_THAT(errorOf(j), HasSubstr("g.json: node 5 (rms_norm \"layers.0.attn_norm\"): unknown field \"wieght\""));
  j = smallJson();
  j["nodes"][5].erase("weight");
  EXPECT_EQ(errorOf(j), "g.json: node 5 (rms_norm \"layers.0.attn_norm\"): operand \"weight\" is missing");
  j = smallJson();
  j["nodes"][5]["eps"] = "small";
  EXPECT_EQ(errorOf(j),
            "g.json: node 5 (rms_norm \"layers.0.attn_norm\"): field \"eps\" must be a number, not \"small\"");
  j = smallJson();
  j["bogus"] = 1;
  EXPECT_EQ(errorOf(j), "g.json: unknown field \"bogus\"");
}

TEST(GraphJson, RefusesReferencesToLaterOrUnknownValues) {
  json j = smallJson();
  j["nodes"][0]["index"] = "positions";  // defined at node 3
  EXPECT_EQ(errorOf(j),
            "g.json: node 0 (gather_rows \"embed.tok.rows\"): operand \"index\" names "
            "\"positions\", which is not an input, a weight or an earlier node");
}

TEST(GraphJson, RefusesDuplicateNamesAndUnusedWeights) {
  json j = smallJson();
  j["nodes"][1]["name"] = "embed.tok.rows";
  EXPECT_EQ(errorOf(j),
            "g.json: node 1 (gather_rows \"embed.tok.rows\"): the name \"embed.tok.rows\" is already taken");
  j = smallJson();
  j["weights"].push_back({{"name", "spare"}, {"dtype", "f32"}, {"shape", {3}}});
  EXPECT_EQ(errorOf(j), "g.json: weight \"spare\" is declared but no node reads it");
  j = smallJson();
  j["weights"][0]["dtype"] = "f64";
  EXPECT_EQ(errorOf(j), "g.json: weight 0: dtype \"f64\" is not f32, f16 or bf16");
}

TEST(GraphJson, RefusesOtherFormatsInputsAndOutputs) {
  json j = smallJson();
  j["format"] = 4;
  EXPECT_EQ(errorOf(j), "g.json: graph format 4 is not supported (this kime reads formats 1 to 3)");
  j["format"] = 0;
  EXPECT_EQ(errorOf(j), "g.json: graph format 0 is not supported (this kime reads formats 1 to 3)");
  j["format"] = 3;  // format 3's outputs are a list
  EXPECT_EQ(errorOf(j), "g.json: outputs must be an array of {\"name\", \"value\"} (graph format 3)");
  j = smallJson();
  j["inputs"][4]["dtype"] = "u32";
  EXPECT_EQ(errorOf(j),
            "g.json: inputs must be exactly the batch's arrays: ids [T] u32, cu [S+1] u32, "
            "markers [M] u32, mcu [S+1] u32, qtype [S] u8");
  j = smallJson();
  j["outputs"]["act"] = "head.act.rows";
  EXPECT_EQ(errorOf(j),
            "g.json: output \"act\" must be [S, 2] f32 in graph format 2, but \"head.act.rows\" is [S, 256] f32 "
            "(format 3 has outputs of any width)");
}

// Format 3: outputs by name, each [M], [M, K], [S] or [S, K]; written back as format 3, read the same.
TEST(GraphJson, FormatThreeHasNamedOutputsOfAnyWidth) {
  json j = smallJson();
  j["format"] = 3;
  j["outputs"] = json::array(
      {{{"name", "pooled"}, {"value", "head.act.rows"}}, {{"name", "tags"}, {"value", "head.marker.logits"}}});
  const Graph g = parseGraphJson(j.dump(), "g.json");
  ASSERT_EQ(g.outputs.size(), 2u);
  const std::vector<OutputDesc> want = {{"pooled", OutputKind::PerSequence, 256}, {"tags", OutputKind::PerMarker, 1}};
  EXPECT_EQ(outputDescs(g), want);
  const std::string text = writeGraphJson(g);
  EXPECT_NE(text.find("\"format\": 3"), std::string::npos);
  EXPECT_EQ(parseGraphJson(text, "again.json"), g);

  j["outputs"][1]["name"] = "pooled";
  EXPECT_EQ(errorOf(j), "g.json: output 1 (\"pooled\"): the name is already taken by another output");
  j["outputs"][1] = {{"name", "hidden"}, {"value", "final_norm"}};
  EXPECT_EQ(errorOf(j),
            "g.json: output 1 (\"hidden\") must be [M], [M, K], [S] or [S, K] f32 (per marker or per sequence), "
            "but \"final_norm\" is [T, 256] f32");
  j["outputs"][1] = {{"name", "x"}, {"value", "nowhere"}};
  EXPECT_EQ(errorOf(j), "g.json: output 1 (\"x\") names \"nowhere\", which is not a value");
  j["outputs"] = json::array();
  EXPECT_EQ(errorOf(j), "g.json: the graph has no outputs");
}

// Format 3's token_types: each token's type, [T] u8, an index of gather_rows; not in format 2.
TEST(GraphJson, TokenTypesAreFormatThreesPerTokenIndex) {
  json j = smallJson();
  j["nodes"].push_back({{"op", "token_types"}, {"name", "types"}, {"cu", "cu"}});
  EXPECT_EQ(errorOf(j), "g.json: node " + std::to_string(j["nodes"].size() - 1) +
                            " (token_types \"types\"): op \"token_types\" is new in graph format 3, and this file "
                            "says format 2");
  j["format"] = 3;
  j["outputs"] =
      json::array({{{"name", "logits"}, {"value", "head.marker.logits"}}, {{"name", "act"}, {"value", "head.act"}}});
  const Graph g = parseGraphJson(j.dump(), "g.json");
  EXPECT_EQ(checkGraph(g).back(), (shapes::Shape{{shapes::Dim::symbol(shapes::Sym::T)}, shapes::DType::U8}));
  const std::string text = writeGraphJson(g);  // seed outputs, but a format-3 op: format 3
  EXPECT_NE(text.find("\"format\": 3"), std::string::npos);
  EXPECT_EQ(parseGraphJson(text, "again.json"), g);
}

// Format 3's padding_id: a token id below vocab, written and read back; not in format 2.
TEST(GraphJson, APaddingIdIsFormatThreesAndATokenId) {
  json j = smallJson();
  j["padding_id"] = 1;
  EXPECT_EQ(errorOf(j), "g.json: \"padding_id\" is new in graph format 3");
  j = smallJson();
  j["format"] = 3;
  j["outputs"] = json::array({{{"name", "act"}, {"value", "head.act"}}});
  j["padding_id"] = 1;
  const Graph g = parseGraphJson(j.dump(), "g.json");
  EXPECT_EQ(g.paddingId, 1);
  EXPECT_EQ(parseGraphJson(writeGraphJson(g), "again.json"), g);
  j["padding_id"] = 4096;
  EXPECT_EQ(errorOf(j), "g.json: padding_id 4096 is not a token id (below vocab 4096)");
}

TEST(GraphJson, ReadsFormatOneAndRefusesItsNewerOps) {
  json j = smallJson();
  EXPECT_EQ(j["format"], 2);
  j["format"] = 1;
  EXPECT_EQ(errorOf(j), "no error");
  const size_t g = nodeIndex(j, "layers.0.mlp.gate.silu");
  j["nodes"][g]["op"] = "relu";
  EXPECT_EQ(errorOf(j), "g.json: node " + std::to_string(g) +
                            " (relu \"layers.0.mlp.gate.silu\"): op \"relu\" is new in graph format 2, and this file "
                            "says format 1");
  j["format"] = 2;
  EXPECT_EQ(errorOf(j), "no error");
}

TEST(GraphJson, FormatTwoOpsRoundTrip) {
  json j = smallJson();
  const size_t g = nodeIndex(j, "layers.0.mlp.gate.silu");
  for (const char* op : {"gelu_tanh", "relu", "tanh", "sigmoid"}) {
    j["nodes"][g]["op"] = op;
    EXPECT_EQ(errorOf(j), "no error") << op;
  }
  const size_t first = nodeIndex(j, "head.act.rows");
  j["nodes"][first]["op"] = "mean_seqs";
  const Graph back = parseGraphJson(j.dump(), "g.json");
  EXPECT_EQ(back.nodes[first].kind, OpKind::MeanSeqs);
  EXPECT_EQ(writeGraphJson(parseGraphJson(writeGraphJson(back), "again.json")), writeGraphJson(back));
  const size_t res = nodeIndex(j, "layers.0.attn.residual");
  j["nodes"][res]["op"] = "sub";
  EXPECT_EQ(parseGraphJson(j.dump(), "g.json").nodes[res].kind, OpKind::Sub);
}

TEST(GraphJson, RefusesBadAttentionAndRope) {
  json j = smallJson();
  size_t a = nodeIndex(j, "layers.1.attn");
  j["nodes"][a]["kv_heads"] = 3;
  EXPECT_EQ(errorOf(j), "g.json: node " + std::to_string(a) +
                            " (attention \"layers.1.attn\"): 4 heads are not a multiple of 3 kv heads");
  j = smallJson();
  size_t r = nodeIndex(j, "layers.0.attn.q.rope");
  j["nodes"][r]["heads"] = 3;
  EXPECT_EQ(errorOf(j), "g.json: node " + std::to_string(r) +
                            " (rope \"layers.0.attn.q.rope\"): x width 256 is not a multiple of 3 heads");
  j = smallJson();
  j["nodes"][r]["heads"] = 2.5;
  EXPECT_THAT(errorOf(j), HasSubstr("field \"heads\" must be an integer, not 2.5"));
}

TEST(GraphJson, SyntaxErrorsSayWhere) {
  try {
    parseGraphJson("{\n  \"format\": 1,\n  oops\n}", "g.json");
    FAIL() << "accepted broken JSON";
  } catch (const CompileError& e) {
    EXPECT_THAT(e.what(), HasSubstr("g.json: bad JSON: "));
    EXPECT_THAT(e.what(), HasSubstr("line 3"));
  }
}

}  // namespace
}  // namespace kime
