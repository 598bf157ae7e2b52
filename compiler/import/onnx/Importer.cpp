#include "Importer.h"

#include <algorithm>
#include <set>

#include "OnnxFile.h"
#include "support/Diagnostic.h"

namespace kime::onnx_import {

namespace {

const OpTable& opTable() {
  static const OpTable table = [] {
    OpTable t;
    addShapeOps(t);
    addSelectOps(t);
    addMathOps(t);
    addNnOps(t);
    return t;
  }();
  return table;
}

Layout tokensLayout() { return Layout{{{{Atom::Kind::Batch, 1}}, {{Atom::Kind::Len, 1}}}}; }

// Whether `v` reads Graph value `value` (directly, or through its pending rows).
bool holds(const Value& v, const std::string& value) {
  if (auto a = std::get_if<ActVal>(&v)) return a->value == value;
  if (auto s = std::get_if<ScoresVal>(&v)) return s->q.value == value || s->k.value == value;
  if (auto s = std::get_if<SeqSumVal>(&v)) return s->x.value == value;
  if (auto r = std::get_if<RowNormVal>(&v)) return r->x.value == value;
  return false;
}

}  // namespace

std::string describeValue(const Value& v) {
  struct {
    std::string operator()(const ConstVal& c) { return "a constant " + describe(c.t); }
    std::string operator()(const SymVal& s) { return "the sizes " + describe(s.v); }
    std::string operator()(const FilledVal& f) { return "a filled tensor " + describe(f.layout); }
    std::string operator()(const IndexVal& i) {
      static const char* names[] = {"the token ids", "the question types", "token_type_ids", "the positions"};
      return std::string(names[int(i.which)]) + " " + describe(i.layout);
    }
    std::string operator()(const MaskVal& m) { return "a function of attention_mask " + describe(m.layout); }
    std::string operator()(const PosTableVal& p) { return "a table by position " + describe(p.layout); }
    std::string operator()(const ActVal& a) { return "rows " + describe(a.layout); }
    std::string operator()(const ScoresVal& s) {
      return std::string(s.probabilities ? "attention probabilities " : "attention scores ") + describe(s.layout);
    }
    std::string operator()(const SeqSumVal& s) { return "a sum over each sequence " + describe(s.layout); }
    std::string operator()(const SeqLenVal& s) { return "each sequence's length " + describe(s.layout); }
    std::string operator()(const RowNormVal& r) { return "each row's L2 norm " + describe(r.layout); }
  } visitor;
  return std::visit(visitor, v);
}

Importer::Importer(const onnx::ModelProto& m, std::string source, const OnnxImportOptions& o)
    : model_(m),
      source_(std::move(source)),
      options_(o),
      graph_(!o.name.empty()            ? o.name
             : m.graph().name().empty() ? "model"
                                        : m.graph().name()) {}

bool Importer::has(size_t k) const { return int(k) < node_->input_size() && !node_->input(int(k)).empty(); }

const Value& Importer::in(size_t k) const {
  if (!has(k)) refuse("input " + std::to_string(k) + " is missing");
  auto it = values_.find(node_->input(int(k)));
  if (it == values_.end()) refuse("input \"" + node_->input(int(k)) + "\" is defined by no earlier node");
  return it->second;
}

void Importer::out(size_t k, Value v) {
  if (int(k) >= node_->output_size()) refuse("has no output " + std::to_string(k));
  if (auto a = std::get_if<ActVal>(&v); a && a->tree && a->originTree != a->tree)
    a->origin = node_->output(int(k)), a->originTree = a->tree;
  values_[node_->output(int(k))] = std::move(v);
}

void Importer::refuse(const std::string& why) const {
  if (!node_) throw Refusal(source_ + ": " + why);
  const std::string name = node_->name().empty() ? node_->output_size() ? node_->output(0) : "?" : node_->name();
  throw Refusal(source_ + ": node '" + name + "' (" + node_->op_type() + "): " + why);
}

std::string Importer::hint(size_t k) const {
  if (node_ && int(k) < node_->output_size() && !node_->output(int(k)).empty()) return node_->output(int(k));
  return node_ && !node_->name().empty() ? node_->name() : "v";
}

const onnx::AttributeProto* Importer::attr(const std::string& name) const {
  for (const auto& a : node_->attribute())
    if (a.name() == name) return &a;
  return nullptr;
}

bool Importer::hasAttr(const std::string& name) const { return attr(name) != nullptr; }

int64_t Importer::attrInt(const std::string& name, int64_t fallback) const {
  const auto* a = attr(name);
  return a ? a->i() : fallback;
}

double Importer::attrFloat(const std::string& name, double fallback) const {
  const auto* a = attr(name);
  return a ? double(a->f()) : fallback;
}

std::string Importer::attrString(const std::string& name) const {
  const auto* a = attr(name);
  return a ? a->s() : std::string();
}

std::vector<int64_t> Importer::attrInts(const std::string& name) const {
  const auto* a = attr(name);
  return a ? std::vector<int64_t>(a->ints().begin(), a->ints().end()) : std::vector<int64_t>{};
}

const Tensor& Importer::constIn(size_t k, const std::string& what) const {
  const Value& v = in(k);
  if (auto c = std::get_if<ConstVal>(&v)) return c->t;
  refuse(what + " must be a constant, not " + describeValue(v));
}

std::vector<SymInt> Importer::symIn(size_t k, const std::string& what) const {
  const Value& v = in(k);
  if (auto s = std::get_if<SymVal>(&v)) return s->v;
  if (auto c = std::get_if<ConstVal>(&v); c && !c->t.isFloat()) {
    std::vector<SymInt> out;
    for (size_t i = 0; i < c->t.size(); ++i) out.push_back(SymInt::of(c->t.i[i]));
    return out;
  }
  refuse(what + " must be integers (sizes), not " + describeValue(v));
}

void Importer::noteVocab(int64_t rows) { vocab_ = vocab_ ? std::min(vocab_, rows) : rows; }
void Importer::noteTypes(int64_t rows) { types_ = types_ ? std::min(types_, rows) : rows; }

void Importer::notePaddingId(int64_t id) {
  if (id < 0 || (paddingId_ >= 0 && paddingId_ != id))
    refuse("compares the token ids with " + std::to_string(id) +
           (paddingId_ >= 0 ? ", and elsewhere with " + std::to_string(paddingId_) : std::string()) +
           ": kime refuses one padding id in batches, not more");
  paddingId_ = id;
}

bool Importer::heldOnlyThrough(const std::string& value, const RowExpr* tree) const {
  for (const auto& [name, v] : values_) {
    auto left = usesLeft_.find(name);
    if (left == usesLeft_.end() || left->second == 0 || !holds(v, value)) continue;
    const ActVal* a = std::get_if<ActVal>(&v);
    if (!a || a->tree.get() != tree) return false;
  }
  return true;
}

bool Importer::readOnlyHere(const std::string& value) const {
  for (const auto& [name, v] : values_) {
    auto left = usesLeft_.find(name);
    if (left == usesLeft_.end() || left->second == 0 || !holds(v, value)) continue;
    if (left->second != size_t(std::count(node_->input().begin(), node_->input().end(), name))) return false;
  }
  return true;
}

void Importer::declareInputs() {
  std::set<std::string> initializers;
  for (const onnx::TensorProto& t : model_.graph().initializer()) {
    initializers.insert(t.name());
    values_[t.name()] = ConstVal{tensorFromProto(t, source_ + ": initializer \"" + t.name() + "\"")};
  }
  bool qtype = false;
  for (const onnx::ValueInfoProto& in : model_.graph().input()) {
    if (initializers.count(in.name())) continue;
    const auto& type = in.type().tensor_type();
    const auto kind = kindOfOnnxType(type.elem_type());
    const int rank = type.has_shape() ? type.shape().dim_size() : -1;
    const std::string where = "input '" + in.name() + "'";
    if (!kind || *kind == Tensor::Kind::Float)
      throw CompileError(source_ + ": " + where +
                         " is not of integers: kime's inputs are token ids, the mask and types");
    auto needRank = [&](int r) {
      if (rank != r)
        throw CompileError(source_ + ": " + where + " must have " + std::to_string(r) + " dims ([B" +
                           (r == 2 ? ", L]" : "]") + "), not " + std::to_string(rank));
    };
    if (in.name() == "input_ids") {
      needRank(2);
      values_[in.name()] = IndexVal{IndexVal::Which::Ids, tokensLayout()};
    } else if (in.name() == "attention_mask") {
      needRank(2);
      values_[in.name()] = MaskVal{1, 0, Tensor::Kind::Int, tokensLayout()};
      hasMask_ = true;
    } else if (in.name() == "token_type_ids") {
      needRank(2);
      values_[in.name()] = IndexVal{IndexVal::Which::TokenType, tokensLayout()};
    } else if (rank == 1 && !qtype) {
      qtype = true;
      values_[in.name()] = IndexVal{IndexVal::Which::QType, Layout{{{{Atom::Kind::Batch, 1}}}}};
    } else {
      throw CompileError(source_ + ": " + where +
                         " is not one kime takes: input_ids [B, L], attention_mask [B, L], token_type_ids [B, L] "
                         "and one [B] integer input (the question type)");
    }
  }
  if (!values_.count("input_ids")) throw CompileError(source_ + ": the model has no input 'input_ids' [B, L]");
}

void Importer::importNode(const onnx::NodeProto& n) {
  node_ = &n;
  if (!n.domain().empty() && n.domain() != "ai.onnx")
    refuse("ops of domain \"" + n.domain() + "\" are not ONNX's own, and kime imports only those");
  auto it = opTable().find(n.op_type());
  if (it == opTable().end()) refuse(n.op_type() + " is not an encoder op kime imports");
  try {
    it->second(*this);
  } catch (const Refusal&) {
    throw;
  } catch (const std::bad_alloc&) {
    refuse("needs more memory than there is (a constant too large to fold?)");
  } catch (const std::exception& e) {  // the constant folding's and the layouts' own errors
    refuse(e.what());
  }
  for (const std::string& name : n.input())
    if (!name.empty() && usesLeft_[name] > 0) --usesLeft_[name];
}

OnnxImport Importer::run() {
  for (const auto& o : model_.opset_import())
    if ((o.domain().empty() || o.domain() == "ai.onnx") && o.version() < 13)
      throw CompileError(source_ + ": opset " + std::to_string(o.version()) +
                         ": kime imports opsets 13 and later (Softmax and the axes of several ops meant other "
                         "things before; export with opset_version=17)");
  declareInputs();
  for (const onnx::NodeProto& n : model_.graph().node())
    for (const std::string& name : n.input()) ++usesLeft_[name];
  for (const auto& o : model_.graph().output()) ++usesLeft_[o.name()];
  for (const onnx::NodeProto& n : model_.graph().node()) importNode(n);
  node_ = nullptr;
  const std::vector<GraphOutput> outputs = graphOutputs();
  if (!vocab_) throw CompileError(source_ + ": the model reads no table by input_ids (its token embedding)");
  OnnxImport result;
  result.graph = graph_.finish(outputs, vocab_, types_ ? types_ : 1);
  if (paddingId_ >= vocab_)
    throw CompileError(source_ + ": the token ids are compared with " + std::to_string(paddingId_) +
                       ", past the vocabulary of " + std::to_string(vocab_));
  result.graph.paddingId = paddingId_;
  result.weights = graph_.checkpoint(result.graph);
  return result;
}

}  // namespace kime::onnx_import

namespace kime {

OnnxImport importOnnxFile(const std::string& path, const OnnxImportOptions& options) {
  const onnx::ModelProto m = onnx_import::readOnnxFile(path);
  return onnx_import::Importer(m, path, options).run();
}

OnnxImport importOnnxBytes(const std::string& bytes, const std::string& source, const OnnxImportOptions& options) {
  const onnx::ModelProto m = onnx_import::parseOnnx(bytes, source, "", false);
  return onnx_import::Importer(m, source, options).run();
}

}  // namespace kime
