//===- NpyTest.cpp - Unit tests of the .npy reader and writer -------------===//

#include "tofu/Eval/Npy.h"

#include "gtest/gtest.h"

using namespace tofu;
using namespace tofu::eval;

namespace {

TEST(NpyTest, RoundTripsEveryDType) {
  for (DType dtype :
       {DType::F32, DType::F64, DType::I64, DType::I32, DType::I8,
        DType::Bool}) {
    Tensor t(dtype, {2, 3});
    for (int i = 0; i != 6; ++i)
      t.getData()[i] = dtype == DType::Bool ? i % 2 : i - 2;
    std::string bytes = formatNpy(t);
    EXPECT_EQ(bytes.find('\n') + 1, bytes.size() - 6 * [&] {
      switch (dtype) {
      case DType::F32: case DType::I32: return 4;
      case DType::Bool: case DType::I8: return 1;
      default: return 8;
      }
    }());
    EXPECT_EQ((bytes.find('\n') + 1) % 64, 0u);
    llvm::Expected<Tensor> back = parseNpy(bytes, "t.npy");
    ASSERT_TRUE(bool(back)) << llvm::toString(back.takeError());
    EXPECT_EQ(back->getDType(), dtype);
    EXPECT_EQ(back->getShape(), t.getShape());
    EXPECT_EQ(back->getData(), t.getData());
  }
}

TEST(NpyTest, StoresHalfPrecisionAsF32) {
  for (DType dtype : {DType::F16, DType::BF16}) {
    Tensor t(dtype, {2});
    t.getData()[0] = 0.5;
    t.getData()[1] = -3;
    llvm::Expected<Tensor> back = parseNpy(formatNpy(t), "t.npy");
    ASSERT_TRUE(bool(back)) << llvm::toString(back.takeError());
    EXPECT_EQ(back->getDType(), DType::F32);
    EXPECT_EQ(back->getData(), t.getData());
  }
}

TEST(NpyTest, HeaderSpellsShapesAsNumPyDoes) {
  EXPECT_NE(formatNpy(Tensor(DType::F32, {5})).find("'shape': (5,), }"),
            std::string::npos);
  EXPECT_NE(formatNpy(Tensor(DType::F32, {})).find("'shape': (), }"),
            std::string::npos);
  EXPECT_NE(formatNpy(Tensor(DType::I64, {2, 0})).find("'descr': '<i8'"),
            std::string::npos);
}

TEST(NpyTest, RejectsMalformedFiles) {
  auto error = [](StringRef bytes) {
    llvm::Expected<Tensor> t = parseNpy(bytes, "x.npy");
    return t ? std::string() : llvm::toString(t.takeError());
  };
  EXPECT_EQ(error("hello"), "'x.npy': not a .npy file (bad magic)");
  std::string bytes = formatNpy(Tensor(DType::F32, {2}));
  EXPECT_EQ(error(StringRef(bytes).drop_back(1)),
            "'x.npy': shape (2,) needs 8 bytes of data, found 7");
  std::string huge = bytes;
  huge.replace(huge.find("(2,)"), 4, "(99999999999, 99999999999)");
  // Rejected before anything is allocated.
  EXPECT_TRUE(StringRef(error(huge)).startswith(
      "'x.npy': shape (99999999999, 99999999999) needs more bytes of data"));
  std::string fortran = bytes;
  fortran.replace(fortran.find("False"), 5, "True ");
  EXPECT_EQ(error(fortran), "'x.npy': Fortran-order arrays are not supported");
  std::string u8 = bytes;
  u8.replace(u8.find("<f4"), 3, "|u1");
  EXPECT_EQ(error(u8), "'x.npy': unsupported dtype '|u1' (f32, f64, i64, "
                       "i32, i8 and bool are)");
}

} // namespace
