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

TEST_F(DiagnosticsTest, LocationlessAndForeignDiagnosticsReachTheHandler) {
  DiagnosticEngine diags(srcMgr);
  diags.error(SMLoc(), "no location");
  // A location outside every buffer of this SourceMgr (another file's).
  std::string other = "elsewhere";
  diags.warning(SMLoc::getFromPointer(other.data()), "foreign location");
  EXPECT_EQ(diags.getNumErrors(), 1u);
  ASSERT_EQ(captured.messages.size(), 2u);
  // Line -1: nothing points into the buffer.
  EXPECT_EQ(captured.messages[0], "-1:0: no location");
  EXPECT_EQ(captured.messages[1], "-1:0: foreign location");
}

TEST(DiagnosticsPrintTest, LocationlessErrorsPrintWithoutAFileName) {
  llvm::SourceMgr bare;
  DiagnosticEngine diags(bare);
  ::testing::internal::CaptureStderr();
  diags.error(SMLoc(), "cannot read 'x.json'");
  EXPECT_EQ(::testing::internal::GetCapturedStderr(),
            "error: cannot read 'x.json'\n");
}

} // namespace
