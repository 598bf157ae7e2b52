// What the importer knows of each ONNX value: an abstract value per kind of thing an encoder
// computes on a padded batch, each with its meaning in kime's packed world.
#ifndef KIME_IMPORT_ONNX_VALUES_H
#define KIME_IMPORT_ONNX_VALUES_H

#include <string>
#include <variant>
#include <vector>

#include "Layout.h"
#include "RowExpr.h"
#include "Tensor.h"

namespace kime::onnx_import {

// A constant: an initializer, a Constant, or anything folded from them.
struct ConstVal {
  Tensor t;
};

// An integer tensor (a shape, or sizes computed from one) whose elements involve B or L.
struct SymVal {
  std::vector<SymInt> v;
  bool scalar = false;  // rank 0; rank 1 otherwise
};

// One number over a shape that involves B or L (a ConstantOfShape, an Expand of a constant).
struct FilledVal {
  double v = 0;
  Tensor::Kind kind = Tensor::Kind::Float;
  Layout layout;
};

// Indices into tables: the token ids, the sequences' question types (per sequence, or read by
// every token of it: token_type_ids), the tokens' positions in their sequences.
struct IndexVal {
  enum class Which { Ids, QType, TokenType, Positions };
  Which which = Which::Ids;
  Layout layout;
  int64_t offset = 0;  // Positions: each token's position plus this (RoBERTa's start at padding_idx + 1)
};

// A function of attention_mask alone, elementwise: its value at a token of a sequence (the mask
// is 1 there) and at a padding token (0). In kime's packed batch every row is a token.
struct MaskVal {
  double real = 1, pad = 0;
  Tensor::Kind kind = Tensor::Kind::Int;
  Layout layout;
};

// A constant table read by position: rows [0, L) of it (a Slice by L, or a Gather by positions),
// the positions on the layout's L atom and the table's other axes its features.
// The rows of a table by position the importer computes from the positions themselves (ESM's
// rotary tables): enough to read a rotary table's frequencies off it.
constexpr int64_t kPositionRows = 512;

struct PosTableVal {
  Tensor table;  // [rows, ...]: axis 0 is the position
  Layout layout;
  std::string name;  // the table's (its initializer's name, for the weight a gather makes of it)
};

// Rows of the packed batch: a Graph value (T rows: one per token; or S rows: one per sequence),
// maybe through a RowExpr not yet made into Graph ops.
struct ActVal {
  std::string value;           // the Graph value
  int64_t width = 0;           // its row's width
  Layout layout;               // the ONNX value's dims (its features are `tree`'s output, in order)
  RowExprPtr tree;             // null: the Graph value as it is
  bool zeroedPadding = false;  // multiplied by the mask: zeros at padding in ONNX's batch
  // The ONNX value that first held `tree` (what the Graph ops made of it are named after).
  std::string origin;
  RowExprPtr originTree;
  bool perToken() const { return layout.hasAtom(Atom::Kind::Len); }
  // Graph value `value` as it is.
  static ActVal rows(std::string value, int64_t width, Layout layout) {
    ActVal a;
    a.value = std::move(value), a.width = width, a.layout = std::move(layout);
    return a;
  }
};

// q · kᵀ per head over the tokens of a sequence: [.., Lq, Lk], maybe scaled and masked.
struct ScoresVal {
  ActVal q, k;     // [.., L, hd] and [.., hd, L] with their head dims
  Layout kLayout;  // the keys' dims as the scores read them ([.., hd, L])
  int64_t heads = 0, kvHeads = 0, headDim = 0;
  double scale = 1;
  // What the key mask adds at padding keys (0: not masked), scaled with the scores after it: the
  // softmax needs it at -1e4 or below.
  double padding = 0;
  Layout layout;
  bool probabilities = false;  // after the softmax over the keys
};

// A sum over each sequence's tokens (ReduceSum over L) of rows, or of the mask (its length).
struct SeqSumVal {
  ActVal x;
  Layout layout;
};
struct SeqLenVal {
  Layout layout;
};

// Each row's L2 norm (ReduceL2 over its features), clamped below by `eps` (a Clip): what
// F.normalize and sentence-transformers' Normalize divide the rows by.
struct RowNormVal {
  ActVal x;
  Layout layout;
  double eps = 0;
};

using Value = std::variant<ConstVal, SymVal, FilledVal, IndexVal, MaskVal, PosTableVal, ActVal, ScoresVal, SeqSumVal,
                           SeqLenVal, RowNormVal>;

// "a constant [2, 3] float", "rows [B, L, 64]": what a value is, for messages.
std::string describeValue(const Value& v);

}  // namespace kime::onnx_import

#endif  // KIME_IMPORT_ONNX_VALUES_H
