// Force-included into the ANTLR-using targets of clang fuzz builds: lets Debian's ANTLR 4.9 runtime headers compile with clang and libstdc++.
//
// dfa::Vocabulary (antlr4-runtime/Vocabulary.h) has `Vocabulary() = default;` and const
// std::vector members without initialisers; with libstdc++ (whose vector() is defaulted) clang
// deletes that constructor and rejects InterpreterDataReader.h, which g++ accepts. Vocabulary.h is
// read once here (it has #pragma once) with default initialisers added to those three members;
// that changes neither layout nor behaviour (they are empty either way). The macros end here.
#pragma once
#ifdef __cplusplus
#define _literalNames _literalNames {}
#define _symbolicNames _symbolicNames {}
#define _displayNames _displayNames {}
#include <antlr4-runtime/Vocabulary.h>
#undef _literalNames
#undef _symbolicNames
#undef _displayNames
#endif
