// Python 3 parser grammar for TLE: whole modules, LL-friendly, turned into our AST by src/Frontend/ASTBuilder.cpp.
//
// The structure follows the classic Python 3 grammar (statements, then expressions from lambda
// down to atoms, one rule per precedence level). Where the reference grammar needs unbounded
// lookahead (slices, dict vs set displays, parameter lists) the rules here are LL(1)-shaped and
// the AST builder checks the finer constraints, so errors stay cheap and precise.
parser grammar TLEParser;

options { tokenVocab = TLELexer; }

// ---------------------------------------------------------------------------------------------
// Modules and statements

file_input
  : ( NEWLINE | stmt )* EOF
  ;

// One expression on its own: a replacement field of an f-string, parsed from the field's text.
eval_input
  : testlist NEWLINE* EOF
  ;

stmt
  : simple_stmts
  | compound_stmt
  ;

simple_stmts
  : simple_stmt ( SEMI_COLON simple_stmt )* SEMI_COLON? NEWLINE
  ;

simple_stmt
  : expr_stmt
  | del_stmt
  | pass_stmt
  | break_stmt
  | continue_stmt
  | return_stmt
  | raise_stmt
  | yield_stmt
  | import_name
  | import_from
  | global_stmt
  | nonlocal_stmt
  | assert_stmt
  ;

// `a = b = value`, `a += value`, `a: T = value`, or a bare expression.
expr_stmt
  : testlist_star_expr
    ( annassign
    | augassign ( yield_expr | testlist )
    | ( ASSIGN assign_value )*
    )
  ;

assign_value
  : yield_expr
  | testlist_star_expr
  ;

annassign
  : COLON test ( ASSIGN assign_value )?
  ;

augassign
  : ADD_ASSIGN | SUB_ASSIGN | MULT_ASSIGN | AT_ASSIGN | DIV_ASSIGN | MOD_ASSIGN | AND_ASSIGN
  | OR_ASSIGN | XOR_ASSIGN | LEFT_SHIFT_ASSIGN | RIGHT_SHIFT_ASSIGN | POWER_ASSIGN | IDIV_ASSIGN
  ;

del_stmt      : DEL exprlist ;
pass_stmt     : PASS ;
break_stmt    : BREAK ;
continue_stmt : CONTINUE ;
return_stmt   : RETURN testlist_star_expr? ;
raise_stmt    : RAISE ( test ( FROM test )? )? ;
yield_stmt    : yield_expr ;
global_stmt   : GLOBAL NAME ( COMMA NAME )* ;
nonlocal_stmt : NONLOCAL NAME ( COMMA NAME )* ;
assert_stmt   : ASSERT test ( COMMA test )? ;

import_name
  : IMPORT dotted_as_name ( COMMA dotted_as_name )*
  ;

import_from
  : FROM ( import_dots* dotted_name | import_dots+ ) IMPORT
    ( STAR
    | OPEN_PAREN import_as_names COMMA? CLOSE_PAREN
    | import_as_names
    )
  ;

import_dots     : DOT | ELLIPSIS ;
import_as_name  : NAME ( AS NAME )? ;
dotted_as_name  : dotted_name ( AS NAME )? ;
import_as_names : import_as_name ( COMMA import_as_name )* ;
dotted_name     : NAME ( DOT NAME )* ;

compound_stmt
  : if_stmt
  | while_stmt
  | for_stmt
  | try_stmt
  | with_stmt
  | funcdef
  | classdef
  | decorated
  | async_stmt
  | match_stmt
  ;

if_stmt
  : IF namedexpr_test COLON block elif_clause* else_clause?
  ;

elif_clause : ELIF namedexpr_test COLON block ;
else_clause : ELSE COLON block ;

while_stmt
  : WHILE namedexpr_test COLON block else_clause?
  ;

for_stmt
  : FOR exprlist IN testlist COLON block else_clause?
  ;

try_stmt
  : TRY COLON block
    ( except_clause+ else_clause? finally_clause?
    | finally_clause
    )
  ;

except_clause  : EXCEPT STAR? ( test ( AS NAME )? )? COLON block ;
finally_clause : FINALLY COLON block ;

with_stmt
  : WITH ( OPEN_PAREN with_item ( COMMA with_item )* COMMA? CLOSE_PAREN
         | with_item ( COMMA with_item )*
         ) COLON block
  ;

with_item
  : test ( AS expr )?
  ;

// Python 3.10 structural pattern matching. `match` and `case` are soft keywords: the token source
// turns them into MATCH / CASE only where they start a match statement or a case block. Patterns
// are parsed as the expressions they resemble; the AST keeps the statement as an OtherStmt.
match_stmt
  : MATCH testlist_star_expr COLON NEWLINE INDENT case_block+ DEDENT
  ;

case_block
  : CASE pattern ( COMMA pattern )* COMMA? ( IF namedexpr_test )? COLON block
  ;

pattern
  : ( test | star_expr ) ( AS NAME )?
  ;

// The body of a compound statement: statements on the header line, or an indented block.
block
  : simple_stmts
  | NEWLINE INDENT stmt+ DEDENT
  ;

decorated
  : decorator+ ( funcdef | classdef | async_funcdef )
  ;

decorator
  : AT namedexpr_test NEWLINE
  ;

async_funcdef : ASYNC funcdef ;

async_stmt
  : ASYNC ( funcdef | with_stmt | for_stmt )
  ;

funcdef
  : DEF NAME OPEN_PAREN typedargslist? CLOSE_PAREN ( ARROW test )? COLON block
  ;

// Parameters of a `def`; ordering rules (defaults, `*`, `**`, `/`) are checked by the builder.
typedargslist
  : tparam ( COMMA tparam )* COMMA?
  ;

tparam
  : NAME ( COLON test )? ( ASSIGN test )?
  | STAR ( NAME ( COLON star_annotation )? )?
  | POWER NAME ( COLON test )?
  | DIV
  ;

star_annotation
  : test
  | star_expr
  ;

classdef
  : CLASS NAME ( OPEN_PAREN arglist? CLOSE_PAREN )? COLON block
  ;

// ---------------------------------------------------------------------------------------------
// Expressions, lowest precedence first

namedexpr_test
  : ( NAME WALRUS )? test
  ;

test
  : or_test ( IF or_test ELSE test )?
  | lambdef
  ;

lambdef
  : LAMBDA varargslist? COLON test
  ;

varargslist
  : vparam ( COMMA vparam )* COMMA?
  ;

vparam
  : NAME ( ASSIGN test )?
  | STAR NAME?
  | POWER NAME
  | DIV
  ;

or_test  : and_test ( OR and_test )* ;
and_test : not_test ( AND not_test )* ;

not_test
  : NOT not_test
  | comparison
  ;

comparison
  : expr ( comp_op expr )*
  ;

comp_op
  : LESS_THAN | GREATER_THAN | EQUALS | GT_EQ | LT_EQ | NOT_EQ_1 | NOT_EQ_2
  | IN | NOT IN | IS | IS NOT
  ;

star_expr : STAR expr ;

expr       : xor_expr ( OR_OP xor_expr )* ;
xor_expr   : and_expr ( XOR and_expr )* ;
and_expr   : shift_expr ( AND_OP shift_expr )* ;
shift_expr : arith_expr ( ( LEFT_SHIFT | RIGHT_SHIFT ) arith_expr )* ;
arith_expr : term ( ( ADD | MINUS ) term )* ;
term       : factor ( ( STAR | AT | DIV | MOD | IDIV ) factor )* ;

factor
  : ( ADD | MINUS | NOT_OP ) factor
  | power
  ;

// `**` binds tighter than a unary operator on its left and looser on its right: -a ** -b.
power
  : atom_expr ( POWER factor )?
  ;

atom_expr
  : AWAIT? atom trailer*
  ;

atom
  : OPEN_PAREN ( yield_expr | testlist_comp )? CLOSE_PAREN   # parenAtom
  | OPEN_BRACK testlist_comp? CLOSE_BRACK                    # listAtom
  | OPEN_BRACE dictorsetmaker? CLOSE_BRACE                   # braceAtom
  | NAME                                                     # nameAtom
  | ( DECIMAL_INTEGER | HEX_INTEGER | OCT_INTEGER | BIN_INTEGER
    | FLOAT_NUMBER | IMAG_NUMBER )                           # numberAtom
  | STRING+                                                  # stringAtom
  | ELLIPSIS                                                 # ellipsisAtom
  | NONE                                                     # noneAtom
  | TRUE                                                     # trueAtom
  | FALSE                                                    # falseAtom
  ;

testlist_comp
  : ( namedexpr_test | star_expr )
    ( comp_for
    | ( COMMA ( namedexpr_test | star_expr ) )* COMMA?
    )
  ;

trailer
  : OPEN_PAREN arglist? CLOSE_PAREN                          # callTrailer
  | OPEN_BRACK subscriptlist CLOSE_BRACK                     # subscriptTrailer
  | DOT NAME                                                 # attributeTrailer
  ;

subscriptlist
  : subscript ( COMMA subscript )* COMMA?
  ;

// An index or a slice `lower:upper:step` (every part optional).
subscript
  : test ( COLON test? sliceop? )?
  | COLON test? sliceop?
  | star_expr
  ;

sliceop
  : COLON test?
  ;

exprlist
  : ( expr | star_expr ) ( COMMA ( expr | star_expr ) )* COMMA?
  ;

testlist
  : test ( COMMA test )* COMMA?
  ;

testlist_star_expr
  : ( test | star_expr ) ( COMMA ( test | star_expr ) )* COMMA?
  ;

// Dict and set displays and comprehensions; key/value versus element consistency is checked
// by the builder.
dictorsetmaker
  : dictorset_item ( comp_for | ( COMMA dictorset_item )* COMMA? )
  ;

dictorset_item
  : test ( COLON test )?
  | POWER expr
  | star_expr
  ;

arglist
  : argument ( COMMA argument )* COMMA?
  ;

argument
  : NAME ASSIGN test
  | test ( comp_for | WALRUS test )?
  | POWER test
  | STAR test
  ;

comp_for
  : ASYNC? FOR exprlist IN or_test comp_iter?
  ;

comp_iter
  : comp_for
  | comp_if
  ;

comp_if
  : IF or_test comp_iter?
  ;

yield_expr
  : YIELD ( FROM test | testlist_star_expr )?
  ;
