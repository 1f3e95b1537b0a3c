// TDL.g4 - the grammar of the Tensor Description Language.
//
// The parse tree never leaves lib/TDL/Parser.cpp: it is turned into the
// project's own AST (include/tofu/TDL/AST.h) at once. Precedence is encoded
// by one rule per level, loosest first, so the AST builder can follow the
// levels one function each. See docs/TDL.md for the language reference.
grammar TDL;

file : opDef* EOF ;

opDef
  : OP name=IDENT ('<' params=paramList '>')? '(' tensors=identList? ')'
    (WHERE guard=expr)? '=' body=lambda ';'
  ;

// `stride`, `stride: int` or `eps: real`; the type is checked by the AST
// builder so that a misspelt type gets a clear message.
paramList : paramDecl (',' paramDecl)* ;

paramDecl : IDENT (':' type=IDENT)? ;

identList : IDENT (',' IDENT)* ;

// `lambda v1, v2 < EXTENT: body`; an operator over a rank-0 output has no
// variables (`lambda: ...`).
lambda : LAMBDA (lambdaVar (',' lambdaVar)*)? ':' expr ;

// `...i` is the ellipsis variable of a rank-polymorphic operator.
lambdaVar
  : ELLIPSIS IDENT
  | IDENT ('<' extent=addExpr)?
  ;

expr : orExpr ;

orExpr : andExpr (orOp andExpr)* ;

orOp : '||' ;

andExpr : cmpExpr (andOp cmpExpr)* ;

andOp : '&&' ;

cmpExpr : addExpr (cmpOp addExpr)? ;

cmpOp : '==' | '!=' | '<' | '<=' | '>' | '>=' ;

addExpr : mulExpr (addOp mulExpr)* ;

addOp : '+' | '-' ;

mulExpr : unaryExpr (mulOp unaryExpr)* ;

mulOp : '*' | '/' | '%' ;

unaryExpr
  : unaryOp unaryExpr
  | primary
  ;

unaryOp : '-' | '!' ;

primary
  : INT                                              # intLiteral
  | FLOAT                                            # floatLiteral
  | IDENT '[' (indexArg (',' indexArg)*)? ']'        # tensorRead
  | IDENT '(' (callArg (',' callArg)*)? ')'          # call
  | IDENT                                            # name
  | '(' expr ')'                                     # paren
  ;

// `...i` in a read stands for the ellipsis variables in order.
indexArg
  : ELLIPSIS IDENT
  | expr
  ;

// A lambda is only meaningful as the single argument of a reducer; the AST
// builder reports it anywhere else.
callArg : lambda | expr ;

OP : 'op' ;
LAMBDA : 'lambda' ;
WHERE : 'where' ;
ELLIPSIS : '...' ;
IDENT : [A-Za-z_] [A-Za-z0-9_]* ;
FLOAT
  : DIGITS '.' DIGITS? EXPONENT?
  | '.' DIGITS EXPONENT?
  | DIGITS EXPONENT
  ;
INT : DIGITS ;
fragment DIGITS : [0-9]+ ;
fragment EXPONENT : [eE] [+-]? DIGITS ;
COMMENT : '#' ~[\r\n]* -> skip ;
WS : [ \t\r\n]+ -> skip ;
// Any other character becomes a token of its own so the parser, not the
// lexer's console output, reports it.
UNKNOWN_CHAR : . ;
