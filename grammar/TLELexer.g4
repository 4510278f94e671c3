// Raw Python 3 lexer for TLE: tokens only; src/Frontend/Lexer.cpp adds INDENT/DEDENT and line joining.
//
// This grammar produces the physical tokens of a Python 3 source file. The indentation-aware
// token source in src/Frontend (IndentingTokenSource) wraps it: it drops NEWLINE inside brackets
// (implicit line joining), collapses blank and comment-only lines, turns changes of indentation
// into INDENT/DEDENT, and turns the error tokens below (UNTERMINATED_*, ERROR_CHAR) into located
// diagnostics. Keeping that logic in C++ keeps this file free of target-language actions.
lexer grammar TLELexer;

// Synthetic tokens made by the token source: block structure, and the soft keywords `match`
// and `case` where they start a match statement / case block (elsewhere they lex as NAME).
tokens { INDENT, DEDENT, MATCH, CASE }

// ---------------------------------------------------------------------------------------------
// Keywords (Python 3.7+; the soft keywords `match`, `case`, `type` and `_` lex as NAME).

FALSE    : 'False';
NONE     : 'None';
TRUE     : 'True';
AND      : 'and';
AS       : 'as';
ASSERT   : 'assert';
ASYNC    : 'async';
AWAIT    : 'await';
BREAK    : 'break';
CLASS    : 'class';
CONTINUE : 'continue';
DEF      : 'def';
DEL      : 'del';
ELIF     : 'elif';
ELSE     : 'else';
EXCEPT   : 'except';
FINALLY  : 'finally';
FOR      : 'for';
FROM     : 'from';
GLOBAL   : 'global';
IF       : 'if';
IMPORT   : 'import';
IN       : 'in';
IS       : 'is';
LAMBDA   : 'lambda';
NONLOCAL : 'nonlocal';
NOT      : 'not';
OR       : 'or';
PASS     : 'pass';
RAISE    : 'raise';
RETURN   : 'return';
TRY      : 'try';
WHILE    : 'while';
WITH     : 'with';
YIELD    : 'yield';

// ---------------------------------------------------------------------------------------------
// Literals. A string token keeps its prefix and quotes; the AST builder decodes it.

STRING
  : STRING_PREFIX? ( SHORT_STRING | LONG_STRING )
  ;

// A quote with no closing quote on its line. An unterminated triple-quoted string lexes as an
// empty STRING followed by this token; the token source recognises that pair.
UNTERMINATED_STRING
  : STRING_PREFIX? ( '\'' ( '\\' . | ~[\\\r\n'] )* | '"' ( '\\' . | ~[\\\r\n"] )* )
  ;

IMAG_NUMBER
  : ( FLOAT_BODY | DIGIT_PART ) [jJ]
  ;

FLOAT_NUMBER
  : FLOAT_BODY
  ;

HEX_INTEGER : '0' [xX] ( '_'? HEX_DIGIT )+ ;
OCT_INTEGER : '0' [oO] ( '_'? [0-7] )+ ;
BIN_INTEGER : '0' [bB] ( '_'? [01] )+ ;

DECIMAL_INTEGER
  : [1-9] ( '_'? [0-9] )*
  | '0' ( '_'? '0' )*
  ;

// `0777`: a decimal literal with leading zeros (an error in Python 3, reported by the token
// source). Plain `0` and `00` match DECIMAL_INTEGER above, which wins ties.
LEADING_ZERO_INTEGER
  : '0' ( '_'? [0-9] )+
  ;

// ---------------------------------------------------------------------------------------------
// Operators and delimiters (longest match wins, so `**=` beats `**` beats `*`).

ELLIPSIS      : '...';
DOT           : '.';
STAR          : '*';
OPEN_PAREN    : '(';
CLOSE_PAREN   : ')';
COMMA         : ',';
COLON         : ':';
SEMI_COLON    : ';';
POWER         : '**';
ASSIGN        : '=';
OPEN_BRACK    : '[';
CLOSE_BRACK   : ']';
OR_OP         : '|';
XOR           : '^';
AND_OP        : '&';
LEFT_SHIFT    : '<<';
RIGHT_SHIFT   : '>>';
ADD           : '+';
MINUS         : '-';
DIV           : '/';
MOD           : '%';
IDIV          : '//';
NOT_OP        : '~';
OPEN_BRACE    : '{';
CLOSE_BRACE   : '}';
LESS_THAN     : '<';
GREATER_THAN  : '>';
EQUALS        : '==';
GT_EQ         : '>=';
LT_EQ         : '<=';
NOT_EQ_1      : '<>';
NOT_EQ_2      : '!=';
AT            : '@';
ARROW         : '->';
ADD_ASSIGN    : '+=';
SUB_ASSIGN    : '-=';
MULT_ASSIGN   : '*=';
AT_ASSIGN     : '@=';
DIV_ASSIGN    : '/=';
MOD_ASSIGN    : '%=';
AND_ASSIGN    : '&=';
OR_ASSIGN     : '|=';
XOR_ASSIGN    : '^=';
LEFT_SHIFT_ASSIGN  : '<<=';
RIGHT_SHIFT_ASSIGN : '>>=';
POWER_ASSIGN  : '**=';
IDIV_ASSIGN   : '//=';
WALRUS        : ':=';

// ---------------------------------------------------------------------------------------------
// Names, layout, and everything else.

NAME
  : ID_START ID_CONTINUE*
  ;

NEWLINE
  : '\r'? '\n'
  | '\r'
  ;

// A backslash at the end of a physical line joins it with the next one.
LINE_CONTINUATION
  : '\\' '\r'? '\n' -> skip
  ;

WS
  : [ \t\f]+ -> skip
  ;

COMMENT
  : '#' ~[\r\n]* -> skip
  ;

BYTE_ORDER_MARK
  : '\uFEFF' -> skip
  ;

// Any other single character (including a stray backslash or a NUL byte); reported by the
// token source as a located error.
ERROR_CHAR
  : .
  ;

// ---------------------------------------------------------------------------------------------
// Fragments.

fragment STRING_PREFIX
  : [rRuUbBfF]
  | [bB] [rR] | [rR] [bB]
  | [fF] [rR] | [rR] [fF]
  ;

fragment SHORT_STRING
  : '\'' ( '\\' . | ~[\\\r\n'] )* '\''
  | '"' ( '\\' . | ~[\\\r\n"] )* '"'
  ;

fragment LONG_STRING
  : '\'\'\'' ( '\\' . | ~'\\' )*? '\'\'\''
  | '"""' ( '\\' . | ~'\\' )*? '"""'
  ;

fragment DIGIT_PART : [0-9] ( '_'? [0-9] )* ;
fragment HEX_DIGIT  : [0-9a-fA-F] ;
fragment FRACTION   : '.' DIGIT_PART ;
fragment EXPONENT   : [eE] [+-]? DIGIT_PART ;

fragment FLOAT_BODY
  : DIGIT_PART? FRACTION EXPONENT?
  | DIGIT_PART '.' EXPONENT?
  | DIGIT_PART EXPONENT
  ;

fragment ID_START
  : [_\p{L}\p{Nl}]
  ;

fragment ID_CONTINUE
  : [_\p{L}\p{Nl}\p{Mn}\p{Mc}\p{Nd}\p{Pc}]
  ;
