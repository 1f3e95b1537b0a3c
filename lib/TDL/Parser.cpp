//===- Parser.cpp - Parse TDL source into the AST -------------------------===//
//
// This file runs the ANTLR-generated lexer and parser over a SourceMgr
// buffer, routes their syntax errors through the DiagnosticEngine, and turns
// the parse tree into the AST at once. It is the only file that sees ANTLR.
//
// The AST is built by typed builder functions, one per grammar level, rather
// than by the generated visitor: in runtime 4.9 copying an antlrcpp::Any that
// holds a move-only value silently yields null.
//
//===----------------------------------------------------------------------===//

#include "tofu/TDL/Parser.h"

#include "tofu/Support/Diagnostics.h"

#include "TDLLexer.h"
#include "TDLParser.h"

#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/ConvertUTF.h"
#include "llvm/Support/MemoryBuffer.h"

#include <set>

using namespace tofu;
using namespace tofu::tdl;
using tofu::grammar::TDLLexer;
using tofu::grammar::TDLParser;

namespace {

/// Rewrites ANTLR's token names in a syntax error into the words a user
/// knows.
std::string humanizeSyntaxMessage(std::string msg) {
  static const std::pair<StringRef, StringRef> replacements[] = {
      {"'<EOF>'", "end of file"}, {"<EOF>", "end of file"},
      {"IDENT", "identifier"},    {"FLOAT", "number"},
      {"INT", "integer"},         {"LAMBDA", "'lambda'"},
      {"OP", "'op'"},             {"UNKNOWN_CHAR", "character"},
      {"WHERE", "'where'"},       {"ELLIPSIS", "'...'"}};
  for (const auto &[from, to] : replacements) {
    size_t pos = 0;
    while ((pos = msg.find(from.str(), pos)) != std::string::npos) {
      msg.replace(pos, from.size(), to.str());
      pos += to.size();
    }
  }
  return msg;
}

/// Converts ANTLR (line, column) positions to SMLocs in one buffer.
class LocationMap {
public:
  LocationMap(llvm::SourceMgr &srcMgr, unsigned bufferId)
      : srcMgr(srcMgr), bufferId(bufferId) {}

  SMLoc get(size_t line, size_t charPositionInLine) const {
    return srcMgr.FindLocForLineAndColumn(bufferId, line,
                                          charPositionInLine + 1);
  }
  SMLoc get(const antlr4::Token *token) const {
    return token ? get(token->getLine(), token->getCharPositionInLine())
                 : SMLoc();
  }

private:
  llvm::SourceMgr &srcMgr;
  unsigned bufferId;
};

/// The type of the implicit token that the grammar spells `literal` (such
/// as "';'"), or INVALID_TYPE.
size_t getLiteralTokenType(const antlr4::dfa::Vocabulary &vocab,
                           StringRef literal) {
  for (size_t t = 1, e = vocab.getMaxTokenType(); t <= e; ++t)
    if (vocab.getLiteralName(t) == literal)
      return t;
  return antlr4::Token::INVALID_TYPE;
}

/// Reports ANTLR lexer and parser errors as located diagnostics and
/// remembers the token index of each, so that operators containing one are
/// dropped. Mistakes with a likely cause (a missing `;`, `x[j][i]`, `**`)
/// get a message that says what to write instead of ANTLR's.
class SyntaxErrorListener : public antlr4::BaseErrorListener {
public:
  SyntaxErrorListener(DiagnosticEngine &diags, const LocationMap &locs)
      : diags(diags), locs(locs) {}

  /// The (filled) token stream the parser reads, for the explanations.
  void setTokens(antlr4::BufferedTokenStream &stream) { tokens = &stream; }

  void syntaxError(antlr4::Recognizer *recognizer,
                   antlr4::Token *offendingSymbol, size_t line,
                   size_t charPositionInLine, const std::string &msg,
                   std::exception_ptr) override {
    SMLoc loc = locs.get(line, charPositionInLine);
    auto *parser = dynamic_cast<antlr4::Parser *>(recognizer);
    if (offendingSymbol &&
        offendingSymbol->getType() == TDLLexer::UNKNOWN_CHAR) {
      diags.error(loc, "unexpected character '" + offendingSymbol->getText() +
                           "'");
    } else if (parser && offendingSymbol && tokens &&
               explain(*parser, *offendingSymbol)) {
      return;
    } else {
      diags.error(loc, humanizeSyntaxMessage(msg));
    }
    if (offendingSymbol)
      errorTokens.insert(offendingSymbol->getTokenIndex());
    else
      sawLexerError = true;
  }

  /// True if a syntax error was reported at a token in [first, last].
  bool hasErrorIn(size_t first, size_t last) const {
    auto it = errorTokens.lower_bound(first);
    return it != errorTokens.end() && *it <= last;
  }
  bool hasErrors() const { return sawLexerError || !errorTokens.empty(); }

private:
  bool explain(antlr4::Parser &parser, antlr4::Token &offending);
  std::string suggestOneBracket(size_t closeIndex, size_t openIndex) const;
  /// The source text from the start of token `first` to the end of token
  /// `last`, spaces included.
  std::string getText(size_t first, size_t last) const {
    return tokens->getTokenSource()->getInputStream()->getText(
        antlr4::misc::Interval(tokens->get(first)->getStartIndex(),
                               tokens->get(last)->getStopIndex()));
  }
  /// The location just past the end of `token`.
  SMLoc getEndLoc(antlr4::Token *token) const {
    SMLoc start = locs.get(token);
    return start.isValid()
               ? SMLoc::getFromPointer(start.getPointer() +
                                       token->getText().size())
               : start;
  }

  DiagnosticEngine &diags;
  const LocationMap &locs;
  antlr4::BufferedTokenStream *tokens = nullptr;
  std::set<size_t> errorTokens;
  bool sawLexerError = false;
};

/// Reports the syntax error at `offending` with an explanation if it has a
/// likely cause; false if it has none.
bool SyntaxErrorListener::explain(antlr4::Parser &parser,
                                  antlr4::Token &offending) {
  size_t index = offending.getTokenIndex();
  if (index == 0 || index >= tokens->size())
    return false;
  antlr4::Token *prev = tokens->get(index - 1);
  const antlr4::dfa::Vocabulary &vocab = parser.getVocabulary();
  size_t type = offending.getType(), prevType = prev->getType();

  // The next operator (or the end of the file) where the current one still
  // wants its `;`: report it after the operator's last token, which the
  // error then belongs to (so the next operator is still checked).
  size_t semi = getLiteralTokenType(vocab, "';'");
  if ((type == TDLParser::OP || type == antlr4::Token::EOF) &&
      prevType != semi && parser.getExpectedTokens().contains(semi)) {
    diags.error(getEndLoc(prev), "expected ';' after operator definition");
    errorTokens.insert(index - 1);
    return true;
  }
  // `x[j][i]`: a second bracket right after a tensor read.
  if (type == getLiteralTokenType(vocab, "'['") &&
      prevType == getLiteralTokenType(vocab, "']'")) {
    diags.error(locs.get(&offending),
                "TDL indexes a tensor with one bracket: " +
                    suggestOneBracket(index - 1, index));
    errorTokens.insert(index);
    return true;
  }
  // `a ** b`: the second `*` of a power operator TDL does not have.
  size_t star = getLiteralTokenType(vocab, "'*'");
  if (type == star && prevType == star &&
      prev->getStopIndex() + 1 == offending.getStartIndex()) {
    diags.error(locs.get(prev), "TDL has no '**' operator: use pow(a, b)");
    errorTokens.insert(index);
    return true;
  }
  return false;
}

/// "write 'x[j, i]', not 'x[j][i]'" for the read whose first bracket pair
/// closes at token `closeIndex` and whose next one opens at `openIndex`.
std::string SyntaxErrorListener::suggestOneBracket(size_t closeIndex,
                                                   size_t openIndex) const {
  const std::string fallback = "write 'x[j, i]', not 'x[j][i]'";
  auto isBracket = [&](size_t i, StringRef text) {
    return i < tokens->size() && tokens->get(i)->getText() == text;
  };
  // Each bracket pair as (first index token, last index token).
  std::vector<std::pair<size_t, size_t>> groups;
  size_t depth = 0, first = closeIndex;
  for (;; --first) {
    depth += isBracket(first, "]");
    if (isBracket(first, "[") && --depth == 0)
      break;
    if (first == 0)
      return fallback;
  }
  if (first == 0 || tokens->get(first - 1)->getType() != TDLParser::IDENT)
    return fallback;
  groups.push_back({first + 1, closeIndex - 1});
  size_t last = closeIndex;
  for (size_t open = openIndex; isBracket(open, "["); open = last + 1) {
    depth = 0;
    for (last = open;; ++last) {
      if (last >= tokens->size())
        return fallback;
      depth += isBracket(last, "[");
      if (isBracket(last, "]") && --depth == 0)
        break;
    }
    groups.push_back({open + 1, last - 1});
  }
  std::string name = tokens->get(first - 1)->getText(), merged = name + "[";
  for (size_t g = 0; g != groups.size(); ++g) {
    if (groups[g].first > groups[g].second)
      return fallback;
    merged += (g ? ", " : "") + getText(groups[g].first, groups[g].second);
  }
  return "write '" + merged + "]', not '" + getText(first - 1, last) + "'";
}

/// Builds AST nodes from parse-tree contexts. Each function returns null
/// after reporting an error (or when ANTLR's recovery left a hole, which was
/// reported already); the enclosing operator is then dropped.
class ASTBuilder {
public:
  ASTBuilder(DiagnosticEngine &diags, const LocationMap &locs)
      : diags(diags), locs(locs) {}

  std::unique_ptr<OpDecl> buildOp(TDLParser::OpDefContext *ctx);

private:
  SMLoc loc(antlr4::ParserRuleContext *ctx) const {
    return locs.get(ctx->getStart());
  }
  SMLoc loc(antlr4::tree::TerminalNode *node) const {
    return locs.get(node->getSymbol());
  }

  bool buildParams(TDLParser::ParamListContext *ctx,
                   std::vector<std::unique_ptr<ParamDecl>> &params);
  bool buildVars(TDLParser::LambdaContext *ctx, IndexVarDecl::Role role,
                 IndexVarList &vars);
  ExprPtr buildBody(TDLParser::ExprContext *ctx);
  ExprPtr buildIndexArg(TDLParser::IndexArgContext *ctx);
  ExprPtr buildExpr(TDLParser::ExprContext *ctx);
  ExprPtr buildOr(TDLParser::OrExprContext *ctx);
  ExprPtr buildAnd(TDLParser::AndExprContext *ctx);
  ExprPtr buildCmp(TDLParser::CmpExprContext *ctx);
  ExprPtr buildAdd(TDLParser::AddExprContext *ctx);
  ExprPtr buildMul(TDLParser::MulExprContext *ctx);
  ExprPtr buildUnary(TDLParser::UnaryExprContext *ctx);
  ExprPtr buildPrimary(TDLParser::PrimaryContext *ctx);
  ExprPtr buildCall(TDLParser::CallContext *ctx);
  ExprPtr buildReduce(TDLParser::CallContext *ctx, Reducer reducer);

  /// Folds `operands[0] ops[0] operands[1] ...` left-associatively.
  template <typename OperandCtx, typename OpCtx, typename BuildFn,
            typename OpFn>
  ExprPtr foldLeft(const std::vector<OperandCtx *> &operands,
                   const std::vector<OpCtx *> &ops, BuildFn buildOperand,
                   OpFn opOf);

  DiagnosticEngine &diags;
  const LocationMap &locs;
};

} // namespace

std::unique_ptr<OpDecl> ASTBuilder::buildOp(TDLParser::OpDefContext *ctx) {
  if (!ctx->IDENT() || !ctx->body)
    return nullptr;
  std::vector<std::unique_ptr<ParamDecl>> params;
  if (ctx->params && !buildParams(ctx->params, params))
    return nullptr;
  unsigned position = 0;
  std::vector<std::unique_ptr<TensorDecl>> tensors;
  if (ctx->tensors)
    for (auto *id : ctx->tensors->IDENT())
      tensors.push_back(
          std::make_unique<TensorDecl>(id->getText(), loc(id), position++));

  ExprPtr guard;
  if (ctx->guard && !(guard = buildExpr(ctx->guard)))
    return nullptr;
  IndexVarList outputVars;
  if (!buildVars(ctx->body, IndexVarDecl::Role::Output, outputVars))
    return nullptr;
  ExprPtr body = buildBody(ctx->body->expr());
  if (!body)
    return nullptr;
  return std::make_unique<OpDecl>(ctx->IDENT()->getText(), loc(ctx->IDENT()),
                                  std::move(params), std::move(tensors),
                                  std::move(outputVars), std::move(body),
                                  std::move(guard));
}

bool ASTBuilder::buildParams(TDLParser::ParamListContext *ctx,
                             std::vector<std::unique_ptr<ParamDecl>> &params) {
  for (auto *paramCtx : ctx->paramDecl()) {
    antlr4::tree::TerminalNode *name = paramCtx->IDENT(0);
    if (!name)
      return false;
    ParamType type = ParamType::Int;
    if (paramCtx->type) {
      std::string spelling = paramCtx->type->getText();
      if (spelling == "real") {
        type = ParamType::Real;
      } else if (spelling != "int") {
        diags.error(locs.get(paramCtx->type),
                    "unknown param type '" + spelling +
                        "'; a param is 'int' (the default) or 'real'");
        return false;
      }
    }
    params.push_back(std::make_unique<ParamDecl>(
        name->getText(), loc(name), params.size(),
        type));
  }
  return true;
}

bool ASTBuilder::buildVars(TDLParser::LambdaContext *ctx,
                           IndexVarDecl::Role role, IndexVarList &vars) {
  for (auto *varCtx : ctx->lambdaVar()) {
    if (!varCtx->IDENT())
      return false;
    ExprPtr extent;
    if (varCtx->extent && !(extent = buildAdd(varCtx->extent)))
      return false;
    vars.push_back(std::make_unique<IndexVarDecl>(
        varCtx->IDENT()->getText(), loc(varCtx->IDENT()), role,
        std::move(extent), varCtx->ELLIPSIS() != nullptr));
  }
  return true;
}

/// The body of an operator's lambda: an expression, or the bare word
/// `opaque`, which stands for `opaque()`.
ExprPtr ASTBuilder::buildBody(TDLParser::ExprContext *ctx) {
  // One token, compared alone (the whole body's text would be built by
  // concatenating every subtree's, for every operator).
  if (ctx && ctx->getStart() == ctx->getStop() && ctx->getStart() &&
      ctx->getStart()->getText() == "opaque")
    return std::make_unique<CallExpr>(loc(ctx), "opaque",
                                      std::vector<ExprPtr>());
  return buildExpr(ctx);
}

ExprPtr ASTBuilder::buildIndexArg(TDLParser::IndexArgContext *ctx) {
  if (ctx->ELLIPSIS())
    return ctx->IDENT() ? std::make_unique<NameExpr>(
                              loc(ctx), ctx->IDENT()->getText(), true)
                        : nullptr;
  return buildExpr(ctx->expr());
}

template <typename OperandCtx, typename OpCtx, typename BuildFn, typename OpFn>
ExprPtr ASTBuilder::foldLeft(const std::vector<OperandCtx *> &operands,
                             const std::vector<OpCtx *> &ops,
                             BuildFn buildOperand, OpFn opOf) {
  if (operands.empty() || ops.size() + 1 != operands.size())
    return nullptr;
  ExprPtr result = buildOperand(operands[0]);
  for (size_t i = 0; result && i < ops.size(); ++i) {
    ExprPtr rhs = buildOperand(operands[i + 1]);
    if (!rhs)
      return nullptr;
    result = std::make_unique<BinaryExpr>(loc(ops[i]), opOf(ops[i]),
                                          std::move(result), std::move(rhs));
  }
  return result;
}

ExprPtr ASTBuilder::buildExpr(TDLParser::ExprContext *ctx) {
  return ctx && ctx->orExpr() ? buildOr(ctx->orExpr()) : nullptr;
}

ExprPtr ASTBuilder::buildOr(TDLParser::OrExprContext *ctx) {
  return foldLeft(
      ctx->andExpr(), ctx->orOp(), [&](auto *c) { return buildAnd(c); },
      [](TDLParser::OrOpContext *) { return BinaryOp::Or; });
}

ExprPtr ASTBuilder::buildAnd(TDLParser::AndExprContext *ctx) {
  return foldLeft(
      ctx->cmpExpr(), ctx->andOp(), [&](auto *c) { return buildCmp(c); },
      [](TDLParser::AndOpContext *) { return BinaryOp::And; });
}

ExprPtr ASTBuilder::buildCmp(TDLParser::CmpExprContext *ctx) {
  std::vector<TDLParser::CmpOpContext *> ops;
  if (ctx->cmpOp())
    ops.push_back(ctx->cmpOp());
  return foldLeft(
      ctx->addExpr(), ops, [&](auto *c) { return buildAdd(c); },
      [](TDLParser::CmpOpContext *op) {
        std::string text = op->getText();
        return llvm::StringSwitch<BinaryOp>(text)
            .Case("==", BinaryOp::Eq)
            .Case("!=", BinaryOp::Ne)
            .Case("<", BinaryOp::Lt)
            .Case("<=", BinaryOp::Le)
            .Case(">", BinaryOp::Gt)
            .Default(BinaryOp::Ge);
      });
}

ExprPtr ASTBuilder::buildAdd(TDLParser::AddExprContext *ctx) {
  return foldLeft(
      ctx->mulExpr(), ctx->addOp(), [&](auto *c) { return buildMul(c); },
      [](TDLParser::AddOpContext *op) {
        return op->getText() == "+" ? BinaryOp::Add : BinaryOp::Sub;
      });
}

ExprPtr ASTBuilder::buildMul(TDLParser::MulExprContext *ctx) {
  return foldLeft(
      ctx->unaryExpr(), ctx->mulOp(), [&](auto *c) { return buildUnary(c); },
      [](TDLParser::MulOpContext *op) {
        std::string text = op->getText();
        return text == "*" ? BinaryOp::Mul
                           : text == "/" ? BinaryOp::Div : BinaryOp::Rem;
      });
}

ExprPtr ASTBuilder::buildUnary(TDLParser::UnaryExprContext *ctx) {
  if (ctx->primary())
    return buildPrimary(ctx->primary());
  if (!ctx->unaryOp() || !ctx->unaryExpr())
    return nullptr;
  ExprPtr operand = buildUnary(ctx->unaryExpr());
  if (!operand)
    return nullptr;
  UnaryOp op = ctx->unaryOp()->getText() == "-" ? UnaryOp::Neg : UnaryOp::Not;
  return std::make_unique<UnaryExpr>(loc(ctx->unaryOp()), op,
                                     std::move(operand));
}

ExprPtr ASTBuilder::buildPrimary(TDLParser::PrimaryContext *ctx) {
  if (auto *lit = dynamic_cast<TDLParser::IntLiteralContext *>(ctx)) {
    int64_t value;
    if (StringRef(lit->getText()).getAsInteger(10, value)) {
      diags.error(loc(ctx), "integer literal '" + lit->getText() +
                                "' does not fit in 64 bits");
      return nullptr;
    }
    return std::make_unique<IntLiteralExpr>(loc(ctx), value);
  }
  if (auto *lit = dynamic_cast<TDLParser::FloatLiteralContext *>(ctx)) {
    double value;
    if (StringRef(lit->getText()).getAsDouble(value)) {
      diags.error(loc(ctx), "invalid floating-point literal '" +
                                lit->getText() + "'");
      return nullptr;
    }
    return std::make_unique<FloatLiteralExpr>(loc(ctx), value);
  }
  if (auto *read = dynamic_cast<TDLParser::TensorReadContext *>(ctx)) {
    if (!read->IDENT())
      return nullptr;
    std::vector<ExprPtr> indices;
    for (auto *indexCtx : read->indexArg()) {
      indices.push_back(buildIndexArg(indexCtx));
      if (!indices.back())
        return nullptr;
    }
    return std::make_unique<TensorReadExpr>(loc(ctx), read->IDENT()->getText(),
                                            std::move(indices));
  }
  if (auto *call = dynamic_cast<TDLParser::CallContext *>(ctx))
    return buildCall(call);
  if (auto *name = dynamic_cast<TDLParser::NameContext *>(ctx))
    return name->IDENT() ? std::make_unique<NameExpr>(loc(ctx), name->getText())
                         : nullptr;
  if (auto *paren = dynamic_cast<TDLParser::ParenContext *>(ctx))
    return buildExpr(paren->expr());
  return nullptr;
}

ExprPtr ASTBuilder::buildCall(TDLParser::CallContext *ctx) {
  if (!ctx->IDENT())
    return nullptr;
  std::string callee = ctx->IDENT()->getText();
  if (llvm::Optional<Reducer> reducer = lookupReducer(callee))
    return buildReduce(ctx, *reducer);

  std::vector<ExprPtr> args;
  for (auto *argCtx : ctx->callArg()) {
    if (argCtx->lambda()) {
      diags.error(loc(argCtx),
                  "a lambda is only allowed as the argument of a reducer "
                  "(Sum, Max, Min, Prod), not of '" + callee + "'");
      return nullptr;
    }
    args.push_back(buildExpr(argCtx->expr()));
    if (!args.back())
      return nullptr;
  }
  return std::make_unique<CallExpr>(loc(ctx), std::move(callee),
                                    std::move(args));
}

ExprPtr ASTBuilder::buildReduce(TDLParser::CallContext *ctx, Reducer reducer) {
  auto argCtxs = ctx->callArg();
  TDLParser::LambdaContext *lambda =
      argCtxs.size() == 1 ? argCtxs[0]->lambda() : nullptr;
  if (!lambda) {
    diags.error(loc(ctx), "reducer '" + getReducerName(reducer) +
                              "' must be applied to one lambda, as in '" +
                              getReducerName(reducer) + "(lambda k: ...)'");
    return nullptr;
  }
  if (lambda->lambdaVar().empty()) {
    diags.error(loc(lambda), "a reduction lambda needs at least one variable");
    return nullptr;
  }
  IndexVarList vars;
  if (!buildVars(lambda, IndexVarDecl::Role::Reduction, vars))
    return nullptr;
  ExprPtr body = buildExpr(lambda->expr());
  if (!body)
    return nullptr;
  return std::make_unique<ReduceExpr>(loc(ctx), reducer, std::move(vars),
                                      std::move(body));
}

bool tdl::parseBuffer(unsigned bufferId, DiagnosticEngine &diags,
                      Module &module) {
  llvm::SourceMgr &srcMgr = diags.getSourceMgr();
  const llvm::MemoryBuffer *buffer = srcMgr.getMemoryBuffer(bufferId);
  LocationMap locs(srcMgr, bufferId);
  unsigned errorsBefore = diags.getNumErrors();

  // The first byte that is not part of valid UTF-8 is where the error is.
  const auto *bytes =
      reinterpret_cast<const llvm::UTF8 *>(buffer->getBufferStart());
  if (!llvm::isLegalUTF8String(
          &bytes, reinterpret_cast<const llvm::UTF8 *>(buffer->getBufferEnd()))) {
    diags.error(SMLoc::getFromPointer(reinterpret_cast<const char *>(bytes)),
                "the file is not valid UTF-8 text");
    return false;
  }
  antlr4::ANTLRInputStream input;
  try {
    input.load(buffer->getBuffer().str());
  } catch (const std::exception &) {
    diags.error(SMLoc::getFromPointer(buffer->getBufferStart()),
                "the file is not valid UTF-8 text");
    return false;
  }
  SyntaxErrorListener listener(diags, locs);
  TDLLexer lexer(&input);
  lexer.removeErrorListeners();
  lexer.addErrorListener(&listener);
  antlr4::CommonTokenStream tokens(&lexer);
  tokens.fill();
  listener.setTokens(tokens);
  TDLParser parser(&tokens);
  parser.removeErrorListeners();
  parser.addErrorListener(&listener);

  TDLParser::FileContext *file = parser.file();
  ASTBuilder builder(diags, locs);
  for (auto *opCtx : file->opDef()) {
    if (diags.shouldStop())
      break;
    if (opCtx->exception || !opCtx->getStart() || !opCtx->getStop())
      continue;
    if (listener.hasErrorIn(opCtx->getStart()->getTokenIndex(),
                            opCtx->getStop()->getTokenIndex()))
      continue;
    if (std::unique_ptr<OpDecl> op = builder.buildOp(opCtx))
      module.addOp(std::move(op));
  }
  return diags.getNumErrors() == errorsBefore;
}

bool tdl::parseFile(StringRef path, DiagnosticEngine &diags, Module &module) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getFileOrSTDIN(path, /*IsText=*/true);
  if (std::error_code ec = buffer.getError()) {
    diags.error(SMLoc(), "cannot read '" + path + "': " + ec.message());
    return false;
  }
  unsigned bufferId =
      diags.getSourceMgr().AddNewSourceBuffer(std::move(*buffer), SMLoc());
  return parseBuffer(bufferId, diags, module);
}
