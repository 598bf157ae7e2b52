#include "GraphImport.h"

#include <map>

#include "kime/IR/KimeDialect.h"
#include "mlir/IR/Builders.h"
#include "support/Diagnostic.h"

namespace kime {

using namespace mlir;

static constexpr const char* kVocabAttr = "kime.vocab";
static constexpr const char* kTypesAttr = "kime.types";
static constexpr const char* kOutputsAttr = "kime.outputs";       // the outputs' names, in order
static constexpr const char* kPaddingIdAttr = "kime.padding_id";  // Graph::paddingId, where there is one

void loadKimeDialects(MLIRContext& ctx) { ctx.loadDialect<mlir::kime::KimeDialect, func::FuncDialect>(); }

OwningOpRef<ModuleOp> importGraph(MLIRContext& ctx, const Graph& g) {
  loadKimeDialects(ctx);
  std::vector<shapes::Shape> results = checkGraph(g);
  OpBuilder b(&ctx);
  Location loc = b.getUnknownLoc();
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  b.setInsertionPointToEnd(module->getBody());

  auto typeOf = [&](const shapes::Shape& s) { return mlir::kime::KimeTensorType::fromShape(&ctx, s); };
  SmallVector<Type> inputs;
  for (const InputDecl& in : graphInputs()) inputs.push_back(typeOf(in.shape));
  std::map<std::string, shapes::Shape> shapeOf;
  for (size_t i = 0; i < g.nodes.size(); ++i) shapeOf[g.nodes[i].name] = results[i];
  SmallVector<Type> outputs;
  SmallVector<Attribute> outputNames;
  for (const GraphOutput& o : g.outputs) {
    outputs.push_back(typeOf(shapeOf.at(o.value)));
    outputNames.push_back(b.getStringAttr(o.name));
  }
  auto fn = b.create<func::FuncOp>(loc, g.name, b.getFunctionType(inputs, outputs));
  fn->setAttr(kVocabAttr, b.getI64IntegerAttr(g.vocab));
  fn->setAttr(kTypesAttr, b.getI64IntegerAttr(g.types));
  if (!g.hasSeedOutputs()) fn->setAttr(kOutputsAttr, b.getArrayAttr(outputNames));  // the seed's are the default
  if (g.paddingId >= 0) fn->setAttr(kPaddingIdAttr, b.getI64IntegerAttr(g.paddingId));
  Block* body = fn.addEntryBlock();
  b.setInsertionPointToEnd(body);

  std::map<std::string, Value> values;
  for (size_t i = 0; i < graphInputs().size(); ++i) values[graphInputs()[i].name] = body->getArgument(i);
  for (const WeightDecl& w : g.weights) {
    shapes::Shape s{{}, w.dtype};
    for (int64_t d : w.shape) s.dims.push_back(shapes::Dim::fixed(d));
    values[w.name] = b.create<mlir::kime::WeightOp>(loc, typeOf(s), w.name);
  }
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    const OpSpec& spec = opSpec(n.kind);
    OperationState st(loc, std::string("kime.") + spec.name);
    st.addAttribute("node", b.getStringAttr(n.name));
    for (const std::string& ref : n.operands)
      if (!ref.empty()) st.addOperands(values.at(ref));
    for (size_t k = 0; k < spec.attrs.size(); ++k)
      st.addAttribute(spec.attrs[k].field, spec.attrs[k].integer ? Attribute(b.getI64IntegerAttr(int64_t(n.attrs[k])))
                                                                 : Attribute(b.getF64FloatAttr(n.attrs[k])));
    st.addTypes(typeOf(results[i]));
    values[n.name] = b.create(st)->getResult(0);
  }
  SmallVector<Value> returned;
  for (const GraphOutput& o : g.outputs) returned.push_back(values.at(o.value));
  b.create<func::ReturnOp>(loc, returned);
  if (failed(module->verify()))
    throw CompileError("internal error: the imported graph \"" + g.name + "\" does not verify");
  return module;
}

namespace {

// A Graph op of the dialect as the Graph's node: its kind, name, operands (by the names of the
// values they read) and attributes.
Node exportNode(Operation& op, const DenseMap<Value, std::string>& names) {
  StringRef opName = op.getName().getStringRef();
  const OpSpec* spec = opName.consume_front("kime.") ? findOpSpec(opName.str()) : nullptr;
  if (!spec) throw CompileError("op " + op.getName().getStringRef().str() + " is not a Graph op");
  Node n{spec->kind, op.getAttrOfType<StringAttr>("node").str(), {}, {}};
  unsigned next = 0;
  for (size_t k = 0; k < spec->operands.size(); ++k) {
    // Only the last operand is ever optional, so running out of operands means it is absent.
    n.operands.push_back(next < op.getNumOperands() ? names.lookup(op.getOperand(next++)) : "");
  }
  for (const OpSpec::Attr& a : spec->attrs) {
    Attribute attr = op.getAttr(a.field);
    if (auto i = dyn_cast_or_null<IntegerAttr>(attr))
      n.attrs.push_back(double(i.getInt()));
    else if (auto f = dyn_cast_or_null<FloatAttr>(attr))
      n.attrs.push_back(f.getValueAsDouble());
    else
      throw CompileError("op " + opName.str() + " \"" + n.name + "\" lacks " + a.field);
  }
  return n;
}

// The returned values under the names of the function's kime.outputs; without it, the seed's
// logits and act.
std::vector<GraphOutput> exportOutputs(func::FuncOp fn, func::ReturnOp ret, const DenseMap<Value, std::string>& names) {
  std::vector<std::string> outputNames = {"logits", "act"};
  if (auto a = fn->getAttrOfType<ArrayAttr>(kOutputsAttr)) {
    outputNames.clear();
    for (Attribute n : a) {
      auto s = dyn_cast<StringAttr>(n);
      if (!s) throw CompileError(std::string("graph function's ") + kOutputsAttr + " must be strings");
      outputNames.push_back(s.str());
    }
  }
  if (ret.getNumOperands() != outputNames.size())
    throw CompileError("graph function returns " + std::to_string(ret.getNumOperands()) + " values for its " +
                       std::to_string(outputNames.size()) + " outputs");
  std::vector<GraphOutput> out;
  for (size_t i = 0; i < outputNames.size(); ++i) out.push_back({outputNames[i], names.lookup(ret.getOperand(i))});
  return out;
}

}  // namespace

Graph exportGraph(ModuleOp module) {
  func::FuncOp fn;
  for (auto f : module.getOps<func::FuncOp>()) {
    if (!f->hasAttr(kVocabAttr)) continue;
    if (fn) throw CompileError("the module holds more than one graph function");
    fn = f;
  }
  if (!fn) throw CompileError("the module holds no graph function (a func.func with kime.vocab)");
  if (!fn.getBody().hasOneBlock())
    throw CompileError("graph function @" + fn.getSymName().str() + " must have one block");
  auto intAttr = [&](const char* name) -> int64_t {
    auto a = fn->getAttrOfType<IntegerAttr>(name);
    if (!a) throw CompileError(std::string("graph function needs an integer ") + name);
    return a.getInt();
  };
  Graph g;
  g.name = fn.getSymName().str();
  g.vocab = intAttr(kVocabAttr);
  g.types = intAttr(kTypesAttr);
  if (fn->hasAttr(kPaddingIdAttr)) g.paddingId = intAttr(kPaddingIdAttr);
  if (fn.getNumArguments() != graphInputs().size())
    throw CompileError("graph function must take the batch's five arrays");

  DenseMap<Value, std::string> names;
  for (size_t i = 0; i < graphInputs().size(); ++i) names[fn.getArgument(i)] = graphInputs()[i].name;
  for (Operation& op : fn.getBody().front()) {
    if (auto w = dyn_cast<mlir::kime::WeightOp>(op)) {
      shapes::Shape s = cast<mlir::kime::KimeTensorType>(w.getType()).toShape();
      WeightDecl d{w.getNode().str(), {}, s.dtype};
      for (const shapes::Dim& dim : s.dims) d.shape.push_back(dim.value);
      g.weights.push_back(d);
      names[w.getResult()] = d.name;
      continue;
    }
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      g.outputs = exportOutputs(fn, ret, names);
      continue;
    }
    Node n = exportNode(op, names);
    names[op.getResult(0)] = n.name;
    g.nodes.push_back(std::move(n));
  }
  checkGraph(g);
  return g;
}

}  // namespace kime
