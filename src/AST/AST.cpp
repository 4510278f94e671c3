// Python spellings of the AST's operator enums.
#include "tle/AST/AST.h"

namespace tle::ast {

const char *spelling(BinaryOp op) {
  switch (op) {
  case BinaryOp::Add: return "+";
  case BinaryOp::Sub: return "-";
  case BinaryOp::Mul: return "*";
  case BinaryOp::Div: return "/";
  case BinaryOp::FloorDiv: return "//";
  case BinaryOp::Mod: return "%";
  case BinaryOp::Pow: return "**";
  case BinaryOp::MatMul: return "@";
  case BinaryOp::Shl: return "<<";
  case BinaryOp::Shr: return ">>";
  case BinaryOp::BitAnd: return "&";
  case BinaryOp::BitOr: return "|";
  case BinaryOp::BitXor: return "^";
  }
  return "?";
}

const char *spelling(UnaryOp op) {
  switch (op) {
  case UnaryOp::Neg: return "-";
  case UnaryOp::Pos: return "+";
  case UnaryOp::Not: return "not";
  case UnaryOp::Invert: return "~";
  }
  return "?";
}

const char *spelling(CompareOp op) {
  switch (op) {
  case CompareOp::Lt: return "<";
  case CompareOp::Le: return "<=";
  case CompareOp::Gt: return ">";
  case CompareOp::Ge: return ">=";
  case CompareOp::Eq: return "==";
  case CompareOp::Ne: return "!=";
  case CompareOp::Is: return "is";
  case CompareOp::IsNot: return "is not";
  case CompareOp::In: return "in";
  case CompareOp::NotIn: return "not in";
  }
  return "?";
}

} // namespace tle::ast
