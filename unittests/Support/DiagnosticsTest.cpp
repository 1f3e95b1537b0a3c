//===- DiagnosticsTest.cpp - Tests of DiagnosticEngine --------------------===//

#include "tofu/Support/Diagnostics.h"

#include "llvm/Support/MemoryBuffer.h"

#include "gtest/gtest.h"

using namespace tofu;

namespace {

struct Captured {
  std::vector<std::string> messages;
};

/// A SourceMgr over one buffer whose diagnostics are captured, not printed.
class DiagnosticsTest : public ::testing::Test {
protected:
  DiagnosticsTest() {
    srcMgr.AddNewSourceBuffer(
        llvm::MemoryBuffer::getMemBuffer("line one\nline two\n", "input.tdl"),
        SMLoc());
    srcMgr.setDiagHandler(
        [](const llvm::SMDiagnostic &d, void *ctx) {
          static_cast<Captured *>(ctx)->messages.push_back(
              (Twine(d.getLineNo()) + ":" + Twine(d.getColumnNo() + 1) + ": " +
               d.getMessage())
                  .str());
        },
        &captured);
  }
  SMLoc locAt(unsigned line, unsigned col) {
    return srcMgr.FindLocForLineAndColumn(1, line, col);
  }

  llvm::SourceMgr srcMgr;
  Captured captured;
};

TEST_F(DiagnosticsTest, CountsErrorsButNotWarnings) {
  DiagnosticEngine diags(srcMgr);
  diags.warning(locAt(1, 1), "just a warning");
  EXPECT_FALSE(diags.hasErrors());
  diags.error(locAt(2, 6), "bad thing");
  EXPECT_EQ(diags.getNumErrors(), 1u);
  ASSERT_EQ(captured.messages.size(), 2u);
  EXPECT_EQ(captured.messages[1], "2:6: bad thing");
}

TEST_F(DiagnosticsTest, StopsAtTheErrorLimitAndDropsTheirNotes) {
  DiagnosticEngine diags(srcMgr, /*errorLimit=*/2);
  diags.error(locAt(1, 1), "first");
  diags.note(locAt(1, 2), "note of first");
  EXPECT_FALSE(diags.shouldStop());
  diags.error(locAt(1, 3), "second");
  EXPECT_TRUE(diags.shouldStop());
  diags.error(locAt(1, 4), "third");
  diags.note(locAt(1, 5), "note of third");
  EXPECT_EQ(diags.getNumErrors(), 2u);
  EXPECT_EQ(captured.messages.size(), 3u);
}

} // namespace
